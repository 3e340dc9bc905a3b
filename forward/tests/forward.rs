use forward::{Dual, DualVec, Float, derivative, gradient, jacobian_rows, jvp};
use proptest::prelude::*;
use shared_ops::{Op, Unary};

#[test]
fn second_derivative_by_nesting() {
    // d²/dx² [sin x · eˣ] = 2 cos x · eˣ.
    let f = |x: Dual<Dual<f64>>| x.sin() * x.exp();
    let x = Dual::new(Dual::variable(0.7), Dual::from(1.0));
    let y = f(x);
    let exact = 2.0 * 0.7_f64.cos() * 0.7_f64.exp();
    assert!(
        (y.tangent.tangent - exact).abs() < 1e-14,
        "{}",
        y.tangent.tangent
    );
    // The mixed parts are the first derivative.
    let first = (0.7_f64.cos() + 0.7_f64.sin()) * 0.7_f64.exp();
    assert!((y.primal.tangent - first).abs() < 1e-15);
    assert!((y.tangent.primal - first).abs() < 1e-15);
}

#[test]
fn third_derivative_by_triple_nesting() {
    // d³/dx³ x⁵ = 60 x² at x = 1.5.
    let d3 = derivative(
        |x: Dual<Dual<f64>>| derivative(|y: Dual<Dual<Dual<f64>>>| y.powi(5), x).1,
        Dual::variable(1.5),
    );
    assert_eq!(d3.1.tangent, 60.0 * 1.5 * 1.5);
}

#[test]
fn no_perturbation_confusion() {
    // d/dx [x · (d/dy (x + y) at y = 1)] at x = 1: the inner derivative is 1, so the answer is 1.
    let (_, d) = derivative(
        |x: Dual<f64>| {
            let (_, inner) = derivative(|y: Dual<Dual<f64>>| Dual::from(x) + y, Dual::from(1.0));
            x * inner
        },
        1.0,
    );
    assert_eq!(d, 1.0);
}

#[test]
fn closure_drivers() {
    let (y, g) = gradient(|x| x[0] * x[1] + x[2].sin(), &[2.0_f64, 3.0, 0.5]);
    assert_eq!(y, 6.0 + 0.5_f64.sin());
    assert_eq!(g, vec![3.0, 2.0, 0.5_f64.cos()]);

    let (v, jv) = jvp(
        |x| vec![x[0].exp(), x[0] * x[1]],
        &[0.0_f64, 2.0],
        &[1.0, -1.0],
    )
    .unwrap();
    assert_eq!(v, vec![1.0, 0.0]);
    assert_eq!(jv, vec![1.0, 2.0]);
    let err = jvp(|x| x.to_vec(), &[1.0_f64, 2.0], &[1.0]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tangent seed has length 1, but must have length 2"
    );

    let (_, j) = jacobian_rows(|x| vec![x[0] * x[1], x[1].powi(3)], &[2.0_f64, 3.0]).unwrap();
    assert_eq!(j, vec![vec![3.0, 2.0], vec![0.0, 27.0]]);
    // An empty input is no error: the value and m empty rows.
    let (y, j) = jacobian_rows(
        |x: &[Dual<f64>]| vec![x.iter().copied().sum::<Dual<f64>>() + Dual::from(2.0)],
        &[],
    )
    .unwrap();
    assert_eq!((y, j), (vec![2.0], vec![vec![]]));
    // An f whose output length changes between sweeps is an error, not a ragged matrix.
    let calls = std::cell::Cell::new(0);
    let changing = |x: &[Dual<f64>]| {
        calls.set(calls.get() + 1);
        vec![x[0]; calls.get()]
    };
    let err = jacobian_rows(changing, &[1.0, 2.0]).unwrap_err();
    assert!(
        err.to_string()
            .contains("returned 2 outputs during forward sweep 2"),
        "{err}"
    );
}

#[test]
fn structural_zero_tangents() {
    // A constant's zero tangent times an infinite partial contributes nothing.
    let c = Dual::<f64>::constant(0.0);
    assert_eq!(c.sqrt().tangent, 0.0);
    let x = Dual::variable(2.0_f64);
    // powf with a constant negative base: ln(base) is NaN, but the base is constant.
    assert!(
        Dual::constant(-2.0).powf(x).tangent.is_nan(),
        "base -2: ∂/∂b is NaN, honestly"
    );
    assert_eq!(x.powf(Dual::constant(3.0)).tangent, 12.0);
    let neg = Dual::variable(-2.0_f64);
    assert_eq!(
        neg.powf(Dual::constant(2.0)).tangent,
        -4.0,
        "ln(a) NaN dropped: b is constant"
    );
    // atan2(0, 0) with one constant argument: only the variable's partial counts... and that
    // partial is NaN at the origin, honestly; with both constant there is no derivative at all.
    assert_eq!(
        Dual::<f64>::constant(0.0)
            .atan2(Dual::constant(0.0))
            .tangent,
        0.0
    );
    // sqrt at 0 of a variable: +∞, a real infinite derivative.
    assert_eq!(Dual::variable(0.0_f64).sqrt().tangent, f64::INFINITY);
    // A zero partial times an infinite tangent is zero too: d/dx |√x| ... at 0 through abs.
    let s = Dual::variable(0.0_f64).sqrt(); // tangent ∞
    assert_eq!(s.abs().tangent, 0.0, "abs'(0) = 0 kills the ∞");
}

#[test]
fn relu_at_zero_is_flat_at_every_nesting_level() {
    use shared_ops::rules::Relu;
    // y·relu(x) at (0, 0) with both levels seeded along (1, 1): the mixed second derivative is
    // relu'(0)·(…) = 0 whichever level is read, and the two orders of ε agree.
    let seed = |p: f64| Dual::new(Dual::new(p, 1.0), Dual::new(1.0, 0.0));
    let z = seed(0.0) * seed(0.0).apply1(Relu);
    assert_eq!(z.tangent.tangent, 0.0);
    assert_eq!(z.tangent.primal, z.primal.tangent);
    assert_eq!(
        seed(0.0).apply1(Relu).primal.tangent,
        0.0,
        "the inner level takes 0 too"
    );
}

#[test]
fn user_rule_in_nested_duals() {
    #[derive(Clone, Copy)]
    struct Sigmoid;
    impl Unary for Sigmoid {
        const NAME: &'static str = "sigmoid";
        fn eval<T: Op>(self, x: T) -> (T, T) {
            let s = T::one() / (T::one() + (-x).exp());
            (s, s * (T::one() - s))
        }
    }
    let s = |x: f64| 1.0 / (1.0 + (-x).exp());
    let x = 0.3;
    let (y, d) = derivative(|v| v.apply1(Sigmoid), x);
    assert_eq!(y, s(x));
    assert!((d - s(x) * (1.0 - s(x))).abs() < 1e-16);
    // Second derivative s(1−s)(1−2s), through the user's own derivative rule.
    let (_, d2) = derivative(|v: Dual<f64>| derivative(|w| w.apply1(Sigmoid), v).1, x);
    assert!((d2 - s(x) * (1.0 - s(x)) * (1.0 - 2.0 * s(x))).abs() < 1e-15);
}

#[test]
fn nalgebra_matrices_of_duals() {
    use nalgebra::{DMatrix, DVector};
    let a = DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 3.0, 4.0]).map(Dual::<f64>::from);
    let x = DVector::from_vec(vec![Dual::variable(1.0), Dual::from(2.0)]);
    let y = &a * &x;
    assert_eq!((y[0].primal, y[0].tangent), (5.0, 1.0));
    assert_eq!((y[1].primal, y[1].tangent), (11.0, 3.0));
}

fn test_fn<T: Op>(x: &[T]) -> Vec<T> {
    vec![
        x[0] * x[1].sin() + x[2].abs().max(x[0]),
        (x[1] * x[1] + x[2] * x[2]).sqrt().min(x[0].exp()),
        x[0].hypot(x[2]).tanh() * x[1],
    ]
}

proptest! {
    /// Whatever N, a DualVec gives exactly the single-tangent columns, at kinks too.
    #[test]
    fn dual_vec_equals_dual(x in prop::array::uniform3(prop_oneof![Just(0.0), Just(1.0), -2.0..2.0_f64])) {
        let (_, single) = jacobian_rows(test_fn, &x).unwrap();
        let lanes3: Vec<DualVec<f64, 3>> =
            x.iter().enumerate().map(|(j, &v)| DualVec::variable(v, j)).collect();
        let ys = test_fn(&lanes3);
        for (i, y) in ys.iter().enumerate() {
            for (t, s) in y.tangent.iter().zip(&single[i]) {
                prop_assert_eq!(t.to_bits(), s.to_bits());
            }
        }
        // N = 2 over two chunks.
        for chunk in 0..2 {
            let lanes2: Vec<DualVec<f64, 2>> = x
                .iter()
                .enumerate()
                .map(|(j, &v)| DualVec::variable(v, j.wrapping_sub(2 * chunk)))
                .collect();
            let ys = test_fn(&lanes2);
            for (i, y) in ys.iter().enumerate() {
                for l in 0..2 {
                    let j = 2 * chunk + l;
                    if j < 3 {
                        prop_assert_eq!(y.tangent[l].to_bits(), single[i][j].to_bits());
                    }
                }
            }
        }
    }
}

/// The convention where only the tangents are special: a NaN or an overflowed tangent times a
/// zero partial is zero, in a single dual and lane by lane, and the other lanes are untouched.
#[test]
fn special_tangents_meet_zero_partials() {
    let zero = Dual::<f64>::constant(0.0);
    // A NaN seeded by the user, multiplied by a constant 0.
    assert_eq!((Dual::new(2.0, f64::NAN) * zero).tangent, 0.0);
    assert!(
        (Dual::new(2.0, f64::NAN) * Dual::constant(3.0))
            .tangent
            .is_nan()
    );
    // A tangent that overflows to ∞ (finite partials), then a zero partial.
    let big = Dual::new(1e300_f64, 1e300);
    let sq = big * big;
    assert_eq!(sq.tangent, f64::INFINITY);
    assert_eq!((sq * zero).tangent, 0.0);
    assert_eq!(sq.signum().tangent, 0.0);
    // Lanes: one lane ∞, the others ordinary; each lane as a single dual gives it.
    let x = DualVec::<f64, 4>::new(0.0, [1.0, 0.0, -2.0, 0.0]);
    let y = x.sqrt() * DualVec::from(0.0) + x; // lanes 0 and 2: ∞·0 → 0, plus x's tangent
    assert_eq!(y.tangent, [1.0, 0.0, -2.0, 0.0]);
    for l in 0..4 {
        let d = Dual::new(0.0, x.tangent[l]);
        assert_eq!(
            (d.sqrt() * zero + d).tangent.to_bits(),
            y.tangent[l].to_bits()
        );
    }
}
