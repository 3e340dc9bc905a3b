//! `logsumexp`, `softmax`, `log_softmax` and `cross_entropy` against the scalar tape (the
//! same formulas written with `Var`) and against finite differences.

use super::*;
use reverse::{Float, Tape, Var};

/// `ln Σ eˣ` of a row of tape variables, shifted by its largest value.
fn lse(row: &[Var]) -> Var {
    let m = row
        .iter()
        .map(|v| v.value())
        .fold(f64::NEG_INFINITY, f64::max);
    let m = Var::constant(m);
    row.iter().map(|&v| (v - m).exp()).sum::<Var>().ln() + m
}

/// Rows of a (rows, cols) array as tape variables.
fn rows(tape: &Tape, x: &ArrayD<f64>) -> Vec<Vec<Var>> {
    x.outer_iter()
        .map(|r| r.iter().map(|&v| tape.var(v)).collect())
        .collect()
}

#[track_caller]
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// `Σ w · op(x)` along the last axis, by tensor and by tape, for the three row-wise ops.
    #[test]
    fn row_ops_match_the_scalar_tape(
        kind in 0..3usize,
        x in array_strategy(vec![3, 4], -30.0..30.0),
    ) {
        let w = weights(&[3, 4]);
        let t = Tensor::new(x.clone(), true);
        let y = match kind {
            0 => t.logsumexp(-1, true).unwrap(),
            1 => t.softmax(1).unwrap(),
            _ => t.log_softmax(-1).unwrap(),
        };
        let wt = if kind == 0 { weights(&[3, 1]) } else { w.clone() };
        (&y * &Tensor::new(wt.clone(), false)).sum().backward().unwrap();

        let tape = Tape::new();
        let xs = rows(&tape, &x);
        let mut terms = Vec::new();
        for (i, row) in xs.iter().enumerate() {
            let l = lse(row);
            match kind {
                0 => terms.push(l * Var::constant(wt[[i, 0]])),
                1 => {
                    for (j, &v) in row.iter().enumerate() {
                        terms.push((v - l).exp() * Var::constant(wt[[i, j]]));
                    }
                }
                _ => {
                    for (j, &v) in row.iter().enumerate() {
                        terms.push((v - l) * Var::constant(wt[[i, j]]));
                    }
                }
            }
        }
        let grads = tape.gradient(terms.into_iter().sum::<Var>());
        let g = grad_of(&t);
        for (i, row) in xs.iter().enumerate() {
            for (j, &v) in row.iter().enumerate() {
                prop_assert!(close(g[[i, j]], grads.wrt(v)), "kind {kind} [{i}, {j}]: {} vs {}", g[[i, j]], grads.wrt(v));
            }
        }
    }

    #[test]
    fn cross_entropy_matches_the_tape_and_log_softmax(
        x in array_strategy(vec![4, 3], -5.0..5.0),
        targets in prop::collection::vec(0..3usize, 4),
    ) {
        let t = Tensor::new(x.clone(), true);
        let loss = t.cross_entropy(&targets).unwrap();
        loss.backward().unwrap();

        // The composition it replaces.
        let u = Tensor::new(x.clone(), true);
        let picked: Vec<Tensor> = targets
            .iter()
            .enumerate()
            .map(|(i, &c)| u.log_softmax(-1).unwrap().select_rows(&[i]).unwrap().reshape(&[3]).unwrap().select_rows(&[c]).unwrap())
            .collect();
        let composed = -picked.iter().fold(Tensor::scalar(0.0), |a, p| &a + &p.sum()) / 4.0;
        composed.backward().unwrap();
        prop_assert!(close(loss.item().unwrap(), composed.item().unwrap()));

        let tape = Tape::new();
        let xs = rows(&tape, &x);
        let total: Var = xs.iter().zip(&targets).map(|(row, &c)| lse(row) - row[c]).sum();
        let l = total / Var::constant(4.0);
        prop_assert!(close(loss.item().unwrap(), l.value()));
        let grads = tape.gradient(l);
        let (g, gu) = (grad_of(&t), grad_of(&u));
        for (i, row) in xs.iter().enumerate() {
            for (j, &v) in row.iter().enumerate() {
                prop_assert!(close(g[[i, j]], grads.wrt(v)));
                prop_assert!(close(g[[i, j]], gu[[i, j]]));
            }
        }
    }

    #[test]
    fn row_ops_against_finite_differences(
        kind in 0..4usize,
        x in array_strategy(vec![2, 3], -3.0..3.0),
    ) {
        let f = move |ts: &[Tensor]| match kind {
            0 => ts[0].logsumexp(0, false).unwrap(),
            1 => ts[0].softmax(-1).unwrap(),
            2 => ts[0].log_softmax(0).unwrap(),
            _ => ts[0].cross_entropy(&[2, 0]).unwrap(),
        };
        check_gradients(&f, &[x])?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// `max_axis`/`min_axis` against a fold of `max`/`min` on the tape, and against finite
    /// differences, where each lane's extreme leads the runner-up by 10⁻³: not at a tie (the
    /// tensor shares a tie's gradient, the fold gives it to one; shrinking makes ties) nor
    /// within a finite difference's step of one.
    #[test]
    fn extremes_match_the_tape(
        min in any::<bool>(),
        axis in 0..2usize,
        x in array_strategy(vec![3, 4], -5.0..5.0),
    ) {
        let ax = ndarray::Axis(if axis == 1 { 1 } else { 0 });
        for lane in x.lanes(ax) {
            let mut v: Vec<f64> = lane.to_vec();
            v.sort_by(f64::total_cmp);
            let lead = if min { v[1] - v[0] } else { v[v.len() - 1] - v[v.len() - 2] };
            prop_assume!(lead > 1e-3);
        }
        let t = Tensor::new(x.clone(), true);
        let a = if axis == 1 { -1 } else { 0 };
        let y = if min { t.min_axis(a, false) } else { t.max_axis(a, false) }.unwrap();
        let w = weights(&y.shape());
        (&y * &Tensor::new(w.clone(), false)).sum().backward().unwrap();

        let tape = Tape::new();
        let v = x.mapv(|e| tape.var(e));
        let lanes: Vec<Vec<Var>> = if axis == 1 {
            v.outer_iter().map(|r| r.iter().copied().collect()).collect()
        } else {
            v.t().outer_iter().map(|c| c.iter().copied().collect()).collect()
        };
        let loss: Var = lanes
            .iter()
            .zip(w.iter())
            .map(|(lane, &wi)| {
                let e = lane.iter().copied().reduce(|p, q| if min { p.min(q) } else { p.max(q) }).unwrap();
                e * Var::constant(wi)
            })
            .sum();
        let grads = tape.gradient(loss);
        for (&g, &var) in grad_of(&t).iter().zip(v.iter()) {
            prop_assert!(close(g, grads.wrt(var)), "{} vs {}", g, grads.wrt(var));
        }
        let f = move |ts: &[Tensor]| if min { ts[0].min_axis(a, false) } else { ts[0].max_axis(a, false) }.unwrap();
        check_gradients(&f, &[x])?;
    }
}

#[test]
fn ties_share_the_gradient_equally() {
    let x = Tensor::new(array![2.0, 2.0, 1.0, 2.0], true);
    x.max_axis(0, false).unwrap().backward().unwrap();
    let third = 1.0 / 3.0;
    assert_eq!(grad_of(&x), array![third, third, 0.0, third].into_dyn());
    let only_nan = Tensor::new(array![f64::NAN, f64::NAN], false);
    assert!(
        only_nan
            .min_axis(0, false)
            .unwrap()
            .item()
            .unwrap()
            .is_nan()
    );
    assert!(x.max_axis(1, false).is_err());
}

#[test]
fn infinities_in_logsumexp_and_softmax() {
    let x = Tensor::new(
        array![
            [f64::NEG_INFINITY, f64::NEG_INFINITY],
            [f64::INFINITY, 0.0],
            [f64::NEG_INFINITY, 1.0]
        ],
        false,
    );
    let l = x.logsumexp(-1, false).unwrap();
    assert_eq!(
        l.data(),
        array![f64::NEG_INFINITY, f64::INFINITY, 1.0].into_dyn()
    );
    let p = x.softmax(-1).unwrap();
    assert_eq!(p.data()[[2, 0]], 0.0);
    assert_eq!(p.data()[[2, 1]], 1.0);
    assert!(
        p.data()[[0, 0]].is_nan(),
        "softmax of only −∞ is 0/0, as in PyTorch"
    );
}

#[test]
fn bad_axes_and_targets_are_errors_naming_the_sizes() {
    let x = Tensor::<f64>::zeros(&[2, 3]);
    let e = x.softmax(2).unwrap_err();
    assert_eq!(
        e,
        TensorError::Axis {
            op: "softmax",
            axis: 2,
            shape: vec![2, 3]
        }
    );
    assert!(e.to_string().contains("axes -2 to 1"), "{e}");
    assert!(x.logsumexp(-3, false).is_err());
    let e = x.cross_entropy(&[0]).unwrap_err();
    assert!(
        e.to_string().contains("[2, 3]") && e.to_string().contains("1 targets"),
        "{e}"
    );
    let e = x.cross_entropy(&[0, 3]).unwrap_err();
    assert!(e.to_string().contains("index 3"), "{e}");
    assert!(
        Tensor::<f64>::zeros(&[2, 3, 4])
            .cross_entropy(&[0, 0])
            .is_err()
    );
}
