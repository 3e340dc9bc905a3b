//! Property tests: gradients against central finite differences.

use super::*;

/// Pairs of shapes that broadcast together, including scalars.
fn broadcast_pairs() -> Vec<(Vec<usize>, Vec<usize>)> {
    vec![
        (vec![3, 1], vec![1, 4]),
        (vec![2, 3], vec![3]),
        (vec![3], vec![2, 3]),
        (vec![], vec![2, 3]),
        (vec![2, 3], vec![]),
        (vec![], vec![]),
        (vec![4], vec![4]),
        (vec![2, 1, 3], vec![4, 1]),
        (vec![1], vec![3, 2]),
        (vec![3, 2], vec![3, 1]),
        (vec![1, 3], vec![2, 1]),
    ]
}

fn binary_case() -> impl Strategy<Value = (usize, ArrayD<f64>, ArrayD<f64>)> {
    prop::sample::select(broadcast_pairs()).prop_flat_map(|(sa, sb)| {
        (
            0..4usize,
            array_strategy(sa, -2.0..2.0),
            // Kept away from zero so that division is smooth.
            array_strategy(sb, away_from_zero(0.5, 2.0)),
        )
    })
}

fn apply_binary(op: usize, a: &Tensor, b: &Tensor) -> Tensor {
    match op {
        0 => a.try_add(b).unwrap(),
        1 => a.try_sub(b).unwrap(),
        2 => a.try_mul(b).unwrap(),
        _ => a.try_div(b).unwrap(),
    }
}

/// Unary steps that map [0.01, 4] into [0.01, 4], so any chain stays in the
/// smooth domain of every op (ln, sqrt, powf need positive inputs).
const UNARY_STEPS: usize = 12;

fn apply_unary(step: usize, x: &Tensor) -> Tensor {
    match step {
        0 => x.tanh(),
        1 => x.sigmoid(),
        2 => x.sqrt(),
        3 => (x + 1.0).ln(),
        4 => (-x).exp(),
        5 => (x + 1.0).powi(2) * 0.16,
        6 => (x + 1.0).powf(1.5) * 0.35,
        7 => (-x).abs(),
        8 => x.relu(),
        9 => x.exp() * 0.07,
        10 => 1.0 / (x + 1.0),
        _ => (x * 0.5 + 0.1).powi(-1) * 0.1, // 0.1 / (x/2 + 0.1), in (0.05, 1)
    }
}

/// A reduction (or softmax) chosen by `kind`, or the identity. Odd `axis` values name the
/// axis from the end (negative), even ones from the start.
fn apply_reduction(kind: usize, axis: usize, x: &Tensor) -> Tensor {
    let nd = x.ndim();
    let a = if nd == 0 {
        0
    } else if axis % 2 == 1 {
        (axis % nd) as isize - nd as isize
    } else {
        (axis % nd) as isize
    };
    match kind {
        1 => x.sum(),
        2 => x.mean(),
        3 if nd > 0 => x.sum_axis(a, false).unwrap(),
        4 if nd > 0 => x.sum_axis(a, true).unwrap(),
        5 if nd > 0 => x.mean_axis(a, false).unwrap(),
        6 if nd > 0 => x.mean_axis(a, true).unwrap(),
        7 if nd > 1 => x.sum_axes(&[0, -1], axis.is_multiple_of(2)).unwrap(),
        8 if nd > 1 => x.mean_axes(&[-1, 0], axis.is_multiple_of(2)).unwrap(),
        9 if nd > 0 => x.logsumexp(a, axis.is_multiple_of(3)).unwrap(),
        10 if nd > 0 => x.softmax(a).unwrap(),
        11 if nd > 0 => x.log_softmax(a).unwrap(),
        _ => x.clone(),
    }
}

fn single_shapes() -> Vec<Vec<usize>> {
    vec![
        vec![],
        vec![1],
        vec![3],
        vec![2, 3],
        vec![1, 4],
        vec![2, 1, 2],
        vec![3, 2, 2],
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn prop_binary_ops_with_broadcasting((op, a, b) in binary_case()) {
        check_gradients(&|t| apply_binary(op, &t[0], &t[1]), &[a, b])?;
    }

    #[test]
    fn prop_binary_ops_composed_with_self((op, a, b) in binary_case()) {
        // (a op b) * a: an input used twice, plus broadcasting.
        check_gradients(&|t| &apply_binary(op, &t[0], &t[1]) * &t[0], &[a, b])?;
    }

    #[test]
    fn prop_unary_chains_and_reductions(
        x in prop::sample::select(single_shapes())
            .prop_flat_map(|s| array_strategy(s, 0.1..3.0)),
        steps in prop::collection::vec(0..UNARY_STEPS, 1..5),
        reduction in 0..12usize,
        axis in 0..3usize,
    ) {
        let f = |t: &[Tensor]| {
            let y = steps.iter().fold(t[0].clone(), |acc, &s| apply_unary(s, &acc));
            apply_reduction(reduction, axis, &y)
        };
        check_gradients(&f, &[x])?;
    }

    #[test]
    fn prop_kinks_away_from_zero(
        x in prop::sample::select(single_shapes())
            .prop_flat_map(|s| array_strategy(s, away_from_zero(0.1, 2.0))),
    ) {
        // relu and abs on mixed signs, neg, and a reduction.
        check_gradients(&|t| (t[0].relu() * 2.0 - t[0].abs() + -&t[0]).powi(2).mean(), &[x])?;
    }

    #[test]
    fn prop_scalar_operands(
        x in prop::sample::select(single_shapes())
            .prop_flat_map(|s| array_strategy(s, away_from_zero(0.5, 2.0))),
        c in 0.5..2.0f64,
        op in 0..8usize,
    ) {
        let f = move |t: &[Tensor]| {
            let x = &t[0];
            match op {
                0 => x + c,
                1 => c + x,
                2 => x - c,
                3 => c - x,
                4 => x * c,
                5 => c * x,
                6 => x / c,
                _ => c / x,
            }
        };
        check_gradients(&f, &[x])?;
    }

    #[test]
    fn prop_matmul(
        (a, b) in (1..5usize, 1..5usize, 1..5usize, 0..4usize).prop_flat_map(|(m, n, p, case)| {
            let (sa, sb) = match case {
                0 => (vec![n], vec![n]),
                1 => (vec![m, n], vec![n]),
                2 => (vec![n], vec![n, p]),
                _ => (vec![m, n], vec![n, p]),
            };
            (array_strategy(sa, -2.0..2.0), array_strategy(sb, -2.0..2.0))
        }),
    ) {
        check_gradients(&|t| t[0].matmul(&t[1]).unwrap().tanh(), &[a, b])?;
    }

    #[test]
    fn prop_matmul_with_transposes(
        (a, b) in (1..5usize, 1..5usize, 1..5usize).prop_flat_map(|(m, n, p)| {
            (array_strategy(vec![n, m], -2.0..2.0), array_strategy(vec![p, n], -2.0..2.0))
        }),
    ) {
        // a^T b^T, on non-contiguous (transposed) data.
        check_gradients(&|t| t[0].t().matmul(&t[1].t()).unwrap(), &[a, b])?;
    }

    #[test]
    fn prop_shape_ops(
        (x, idx, start, end) in (1..5usize, 1..4usize).prop_flat_map(|(r, c)| {
            (
                array_strategy(vec![r, c], -2.0..2.0),
                prop::collection::vec(0..r, 0..6),
                0..=r,
                0..=r,
            )
        }),
        which in 0..4usize,
    ) {
        let (lo, hi) = (start.min(end), start.max(end));
        let f = move |t: &[Tensor]| {
            let x = &t[0];
            let (r, c) = (x.shape()[0], x.shape()[1]);
            match which {
                0 => x.select_rows(&idx).unwrap() * 1.5,
                1 => x.slice_rows(lo..hi).unwrap().exp(),
                2 => x.reshape(&[c, r]).unwrap().powi(3),
                _ => (x.t() * x.t()).reshape(&[r * c]).unwrap(),
            }
        };
        check_gradients(&f, &[x])?;
    }

    #[test]
    fn prop_two_layer_network(
        (x, w1, b1, w2) in (1..4usize, 1..4usize, 1..4usize).prop_flat_map(|(batch, d, h)| {
            (
                array_strategy(vec![batch, d], -1.0..1.0),
                array_strategy(vec![d, h], -1.0..1.0),
                array_strategy(vec![h], -1.0..1.0),
                array_strategy(vec![h, 1], -1.0..1.0),
            )
        }),
    ) {
        // The MLP loss: mean((tanh(x W1 + b1) W2 - 0.5)^2), gradients for all.
        let f = |t: &[Tensor]| {
            let hidden = (t[0].matmul(&t[1]).unwrap() + &t[2]).tanh();
            (hidden.matmul(&t[3]).unwrap() - 0.5).powi(2).mean()
        };
        check_gradients(&f, &[x, w1, b1, w2])?;
    }
}
