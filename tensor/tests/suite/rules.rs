//! The tensor ops follow the rule table exactly as the scalar tape does: gradients compared
//! elementwise with `reverse::Var` on generated inputs that sit on kinks and edges (0, ±1,
//! ties), user rules applied with no second backward, the structural-zero convention, the
//! version counter, and `f32` against `f64`.

use super::*;
use reverse::{Float, Tape, Var};
use shared_ops::{Binary, Op, Unary, rules};
use tensor::Element;

/// softplus, a user rule: every mode and the tensors take it from this one definition.
#[derive(Clone, Copy)]
struct Softplus;
impl Unary for Softplus {
    const NAME: &'static str = "softplus";
    fn eval<T: Op>(self, x: T) -> (T, T) {
        (x.exp().ln_1p(), (T::one() + (-x).exp()).recip())
    }
}

/// A user's two-argument rule with a kink: `|a| · b`.
#[derive(Clone, Copy)]
struct AbsTimes;
impl Binary for AbsTimes {
    const NAME: &'static str = "abs_times";
    fn eval<T: Op>(self, a: T, b: T) -> (T, T, T) {
        (
            a.abs() * b,
            a.signum() * b * if a.is_zero() { T::zero() } else { T::one() },
            a.abs(),
        )
    }
}

/// Values on the kinks and edges of the rules (0, ±1, the bounds of `clamp`) or near them.
fn edgy() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.0),
        Just(-0.0),
        Just(1.0),
        Just(-1.0),
        Just(0.5),
        Just(2.0),
        -3.0..3.0,
    ]
}

const UNARY: usize = 14;

/// The same unary step on a tensor (of either element type) and on a scalar tape variable.
fn unary_tensor<T: Element>(k: usize, x: &Tensor<T>) -> Tensor<T> {
    match k {
        0 => x.exp(),
        1 => x.ln(),
        2 => x.sin(),
        3 => x.cos(),
        4 => x.tanh(),
        5 => x.sigmoid(),
        6 => x.relu(),
        7 => x.sqrt(),
        8 => x.abs(),
        9 => x.powi(3),
        10 => x.powf(0.5),
        11 => x.clamp(-1.0, 0.5),
        12 => x.apply1(Softplus),
        _ => x.log(),
    }
}

fn unary_var(k: usize, x: Var) -> Var {
    let c = Var::constant;
    match k {
        0 => x.exp(),
        1 => x.ln(),
        2 => x.sin(),
        3 => x.cos(),
        4 => x.tanh(),
        5 => x.apply1(rules::Sigmoid),
        6 => x.apply1(rules::Relu),
        7 => x.sqrt(),
        8 => x.abs(),
        9 => x.powi(3),
        10 => x.powf(c(0.5)),
        11 => x.max(c(-1.0)).min(c(0.5)),
        12 => x.apply1(Softplus),
        _ => x.ln(),
    }
}

const BINARY: usize = 8;

fn binary_tensor(k: usize, a: &Tensor, b: &Tensor) -> Tensor {
    match k {
        0 => a.try_add(b),
        1 => a.try_sub(b),
        2 => a.try_mul(b),
        3 => a.try_div(b),
        4 => a.maximum(b),
        5 => a.minimum(b),
        6 => a.apply2(b, rules::Hypot),
        _ => a.apply2(b, AbsTimes),
    }
    .unwrap()
}

fn binary_var(k: usize, a: Var, b: Var) -> Var {
    match k {
        0 => a + b,
        1 => a - b,
        2 => a * b,
        3 => a / b,
        4 => a.max(b),
        5 => a.min(b),
        6 => a.hypot(b),
        _ => a.apply2(b, AbsTimes),
    }
}

/// Equal, or both NaN, or within `1e-12` of the larger magnitude, and of 1 below it: the
/// inputs and weights are of order one, so a gradient that sums terms of order one into a small
/// number (a saved case: w₀₀ − w₀₁ + ½w₀₃, about −8·10⁻⁵) carries their rounding, which the
/// tensor and the tape commit in different orders.
fn same(a: f64, b: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan()) || (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// `sum(f(x) · w)` by tensor and by tape, element by element.
    #[test]
    fn unary_rules_match_the_scalar_tape(k in 0..UNARY, x in array_strategy(vec![2, 3], edgy())) {
        let w = weights(&[2, 3]);
        let t = Tensor::new(x.clone(), true);
        let y = unary_tensor(k, &t);
        (&y * &Tensor::new(w.clone(), false)).sum().backward().unwrap();
        let g = grad_of(&t);
        for ((&xi, &wi), (&yi, &gi)) in x.iter().zip(&w).zip(y.data().iter().zip(&g)) {
            let tape = Tape::new();
            let v = tape.var(xi);
            let out = unary_var(k, v) * Var::constant(wi);
            let expected = tape.gradient(out).wrt(v);
            prop_assert!(same(yi * wi, out.value()), "step {k} at {xi}: value {} vs {}", yi * wi, out.value());
            prop_assert!(same(gi, expected), "step {k} at {xi}: tensor {gi} vs tape {expected}");
        }
    }

    /// Broadcast binary ops: each input's gradient sums over the broadcast axes, as the tape
    /// accumulates the adjoint of a variable used several times.
    #[test]
    fn binary_rules_match_the_scalar_tape(
        k in 0..BINARY,
        a in array_strategy(vec![3, 1], edgy()),
        b in array_strategy(vec![1, 4], edgy()),
    ) {
        let w = weights(&[3, 4]);
        let (ta, tb) = (Tensor::new(a.clone(), true), Tensor::new(b.clone(), true));
        let y = binary_tensor(k, &ta, &tb);
        (&y * &Tensor::new(w.clone(), false)).sum().backward().unwrap();

        let tape = Tape::new();
        let va: Vec<Var> = a.iter().map(|&v| tape.var(v)).collect();
        let vb: Vec<Var> = b.iter().map(|&v| tape.var(v)).collect();
        let mut terms = Vec::new();
        for i in 0..3 {
            for j in 0..4 {
                let yij = binary_var(k, va[i], vb[j]);
                prop_assert!(same(y.data()[[i, j]], yij.value()));
                terms.push(yij * Var::constant(w[[i, j]]));
            }
        }
        let loss: Var = terms.into_iter().sum();
        let grads = tape.gradient(loss);
        for (&got, &v) in grad_of(&ta).iter().zip(&va) {
            prop_assert!(same(got, grads.wrt(v)), "op {k}, a = {a}, b = {b}: {got} vs {}", grads.wrt(v));
        }
        for (&got, &v) in grad_of(&tb).iter().zip(&vb) {
            prop_assert!(same(got, grads.wrt(v)), "op {k}, a = {a}, b = {b}: {got} vs {}", grads.wrt(v));
        }
    }

    /// The element type is generic: `f32` follows `f64` to single precision.
    #[test]
    fn f32_follows_f64(k in 0..UNARY, x in array_strategy(vec![4], 0.1..2.0)) {
        let t64 = Tensor::new(x.clone(), true);
        let t32 = Tensor::new(x.mapv(|v| v as f32), true);
        let y64 = unary_tensor(k, &t64).try_mul(&t64).unwrap().sum();
        let y32 = unary_tensor(k, &t32).try_mul(&t32).unwrap().sum();
        y64.backward().unwrap();
        y32.backward().unwrap();
        let (g64, g32) = (grad_of(&t64), t32.grad().unwrap());
        let close = |a: f64, b: f32| (a - b as f64).abs() <= 1e-5 * a.abs().max(1.0);
        prop_assert!(close(y64.item().unwrap(), y32.item().unwrap()));
        for (&a, &b) in g64.iter().zip(&g32) {
            prop_assert!(close(a, b), "step {k}: f64 {a} vs f32 {b}");
        }
    }
}

#[test]
fn a_zero_gradient_through_an_infinite_partial_is_zero_as_in_the_scalar_modes() {
    let x = Tensor::new(array![0.0, 4.0], true);
    (x.sqrt() * 0.0).sum().backward().unwrap();
    assert_eq!(grad_of(&x), array![0.0, 0.0].into_dyn());

    let tape = Tape::new();
    let v = tape.var(0.0);
    assert_eq!(tape.gradient(v.sqrt() * Var::constant(0.0)).wrt(v), 0.0);

    // A nonzero gradient still meets the infinite partial.
    let y = Tensor::new(array![0.0], true);
    y.sqrt().sum().backward().unwrap();
    assert_eq!(grad_of(&y)[0], f64::INFINITY);
}

#[test]
fn changing_saved_data_before_backward_is_an_error_naming_the_op_and_tensor() {
    let x = Tensor::new(array![1.0, 2.0], true);
    let loss = (&x * &x).sum();
    x.set_data(array![10.0, 20.0]).unwrap();
    let err = loss.backward().unwrap_err();
    assert_eq!(
        err,
        TensorError::Modified {
            op: "mul".into(),
            which: "input 0".into(),
            tensor: "leaf of shape [2]".into(),
            saved: 0,
            version: 1,
        }
    );
    let message = err.to_string();
    assert!(
        message.contains("mul") && message.contains("[2]"),
        "{message}"
    );
    assert!(
        x.grad().is_none(),
        "no gradient may be added before the error"
    );

    // Recomputed after the change, the graph differentiates the new data.
    let loss = (&x * &x).sum();
    loss.backward().unwrap();
    assert_eq!(grad_of(&x), array![20.0, 40.0].into_dyn());
}

/// Each parent's version is kept with it, the third and later ones too (`cat` of three), and
/// a version that was not 0 when the op was recorded.
#[test]
fn the_versions_of_every_parent_are_checked() {
    let (a, b, c) = (
        Tensor::new(array![1.0], true),
        Tensor::new(array![2.0], true),
        Tensor::new(array![3.0], true),
    );
    // The op, input, saved and current version the error names.
    let modified = |loss: Tensor| match loss.backward() {
        Err(TensorError::Modified {
            op,
            which,
            saved,
            version,
            ..
        }) => (op, which, saved, version),
        other => panic!("expected Modified, got {other:?}"),
    };
    c.set_data(array![4.0]).unwrap();
    let loss = Tensor::cat(&[&a, &b, &c], 0).unwrap().sum();
    c.set_data(array![5.0]).unwrap();
    assert_eq!(modified(loss), ("cat".into(), "input 2".into(), 1, 2));
    let loss = (&a * &b).sum();
    b.sgd_step(0.1);
    assert_eq!(modified(loss), ("mul".into(), "input 1".into(), 0, 1));
    // Recorded after the changes, the graph differentiates.
    let loss = Tensor::cat(&[&a, &b, &c], 0).unwrap().sum();
    loss.backward().unwrap();
    assert_eq!(grad_of(&c), array![1.0].into_dyn());
}

#[test]
fn an_optimiser_step_and_a_changed_result_count_too() {
    let w = Tensor::new(array![1.0], true);
    let y = w.exp();
    let loss = (&y * 2.0).sum();
    w.sgd_step(0.1);
    assert_eq!(w.version(), 1);
    assert!(matches!(loss.backward(), Err(TensorError::Modified { ref op, .. }) if op == "exp"));

    let w = Tensor::new(array![1.0], true);
    let y = w.exp();
    let loss = (&y * 2.0).sum();
    y.update(|mut d, _| d[0] = 5.0);
    match loss.backward() {
        Err(TensorError::Modified { op, which, .. }) => {
            // Both `exp` (its result) and `mul` (its input 0) saw it change; the check goes
            // from the inputs up and names the first.
            assert_eq!((op.as_str(), which.as_str()), ("exp", "the result"));
        }
        other => panic!("expected Modified, got {other:?}"),
    }
}

/// A tensor applies a rule's slice form compiled for the CPU's widest vectors (AVX-512 here):
/// the same bits as the slice form built for the baseline, which this test crate calls, in
/// values and kept partials, for `tanh` (a vectorised kernel) and `exp` (point by point); and
/// `tanh` within 2 ulps of the scalar modes' `libm` value (each is within 1 of the exact value:
/// at −0.4783 they sit on either side of it).
#[test]
fn dispatched_kernels_give_the_baseline_bits() {
    let n = 1037; // not a multiple of any vector width
    let x: Vec<f64> = (0..n)
        .map(|i| (i as f64 - 500.0) * 0.0371 + 1e-3 * (i % 7) as f64)
        .collect();
    fn check<R: Unary>(rule: R, x: &[f64], ulps_from_eval: Option<u64>) {
        let t = Tensor::new(ndarray::Array1::from(x.to_vec()), true);
        let y = t.apply1(rule);
        y.sum().backward().unwrap();
        let (mut v, mut d) = (vec![0.0; x.len()], vec![0.0; x.len()]);
        rule.eval_slice(x, &mut v, Some(&mut d));
        let got: Vec<f64> = y.data().iter().copied().collect();
        let grad: Vec<f64> = t.grad().unwrap().iter().copied().collect();
        for i in 0..x.len() {
            assert_eq!(
                got[i].to_bits(),
                v[i].to_bits(),
                "{}({}): value",
                R::NAME,
                x[i]
            );
            assert_eq!(
                grad[i].to_bits(),
                d[i].to_bits(),
                "{}({}): partial",
                R::NAME,
                x[i]
            );
            if let Some(max) = ulps_from_eval {
                let want = rule.eval(x[i]).0;
                let ulps = (got[i].to_bits() as i64).abs_diff(want.to_bits() as i64);
                assert!(
                    ulps <= max || got[i] == want,
                    "{}({}): {} against {want}",
                    R::NAME,
                    x[i],
                    got[i]
                );
            }
        }
    }
    check(rules::Tanh, &x, Some(2));
    check(rules::Exp, &x, Some(0));
}

/// Gradients of 1 037 elements go through their partials in the dispatched loop (compiled for
/// the CPU's widest vectors): the structural-zero convention holds there as in the scalar
/// modes, element by element; and a bias's gradient, 300 rows summed, has the bits of adding
/// the rows one after another.
#[test]
fn wide_backward_loops_keep_the_convention_and_the_bits() {
    let n = 1037;
    let x: Vec<f64> = (0..n)
        .map(|i| match i % 5 {
            0 => 0.0,
            1 => f64::INFINITY,
            2 => f64::NAN,
            _ => 0.37 * i as f64,
        })
        .collect();
    let w: Vec<f64> = (0..n)
        .map(|i| {
            if i % 3 == 0 {
                0.0
            } else {
                1.0 + (i % 11) as f64
            }
        })
        .collect();
    let t = Tensor::new(ndarray::Array1::from(x.clone()), true);
    let weights = Tensor::new(ndarray::Array1::from(w.clone()), false);
    (&t.sqrt() * &weights).sum().backward().unwrap();
    let g = grad_of(&t);
    for i in 0..n {
        let tape = Tape::new();
        let v = tape.var(x[i]);
        let want = tape.gradient(v.sqrt() * Var::constant(w[i])).wrt(v);
        assert!(
            g[i].to_bits() == want.to_bits() || (g[i].is_nan() && want.is_nan()),
            "at x = {}, w = {}: tensor {} vs tape {want}",
            x[i],
            w[i],
            g[i]
        );
    }
    // At x = 0 the partial is infinite: a zero weight (x₀) gives 0, not NaN; w₅ = 6 gives ∞.
    assert_eq!((g[0], g[5]), (0.0, f64::INFINITY));

    let (rows, width) = (300, 4);
    let upstream = ndarray::Array2::from_shape_fn((rows, width), |(i, j)| {
        ((i * 7 + j) as f64 * 0.61).sin() * 1e3
    });
    let bias = Tensor::new(ndarray::Array1::zeros(width), true);
    let z = &Tensor::new(ndarray::Array2::zeros((rows, width)), false) + &bias;
    (&z * &Tensor::new(upstream.clone(), false))
        .sum()
        .backward()
        .unwrap();
    let got = grad_of(&bias);
    for j in 0..width {
        let want = (0..rows).fold(0.0, |acc, i| acc + upstream[[i, j]]);
        assert_eq!(got[j].to_bits(), want.to_bits(), "column {j}");
    }
}
