//! Prepared Hessian-vector products: one recording of the directional derivative, re-evaluated,
//! recorded afresh or compiled, the same bits each way; exact on polynomials, and equal to
//! forward over reverse (`jacobian::hvp`) to rounding on generated programs with branches.

use crate::common::{cases, input, rel_close};
use crate::replay::{First, bits, branchy};
use jacobian::{Function, Op, Preparation, PreparedHvp, Replay, hvp};
use proptest::prelude::*;

/// f = x₀²x₁ + x₁³x₂ + x₀x₂, whose Hessian is
/// [[2x₁, 2x₀, 1], [2x₀, 6x₁x₂, 3x₁²], [1, 3x₁², 0]].
pub(crate) struct Cubic;

impl Function for Cubic {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        vec![x[0] * x[0] * x[1] + x[1].powi(3) * x[2] + x[0] * x[2]]
    }
}

/// x₀ > 0: x₀³x₁; else x₁²·x₀.
pub(crate) struct Kink;

impl Function for Kink {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let y = if x[0] > T::zero() {
            x[0].powi(3) * x[1]
        } else {
            x[1] * x[1] * x[0]
        };
        vec![y]
    }
}

fn exact(x: &[f64], v: &[f64]) -> Vec<f64> {
    let h = [
        [2.0 * x[1], 2.0 * x[0], 1.0],
        [2.0 * x[0], 6.0 * x[1] * x[2], 3.0 * x[1] * x[1]],
        [1.0, 3.0 * x[1] * x[1], 0.0],
    ];
    h.iter()
        .map(|row| row.iter().zip(v).map(|(a, b)| a * b).sum())
        .collect()
}

/// Every preparation gives the exact product, gradient and value at integer points, for
/// several directions at each point.
#[test]
fn prepared_products_are_exact_on_a_polynomial() {
    use Preparation::*;
    for preparation in [Auto, Reevaluate, Record, Compile] {
        let mut p = PreparedHvp::with_preparation(Cubic, &[1.0, 1.0, 1.0], preparation).unwrap();
        for x in [[1.0, 2.0, 3.0], [-2.0, 0.5, 4.0]] {
            for v in [[1.0, 0.0, 0.0], [0.0, 1.0, -1.0], [2.0, -3.0, 0.5]] {
                let h = p.hvp(&x, &v).unwrap();
                assert_eq!(
                    h.product,
                    exact(&x, &v),
                    "{preparation:?} at {x:?} along {v:?}"
                );
                let (a, b, c) = (x[0], x[1], x[2]);
                let gradient = [2.0 * a * b + c, a * a + 3.0 * b * b * c, b.powi(3) + a];
                assert_eq!(h.gradient, gradient);
                assert_eq!(h.value, a * a * b + b.powi(3) * c + a * c);
                let replay = match preparation {
                    Record => Replay::Recorded,
                    _ => Replay::Reevaluated,
                };
                assert_eq!(p.last(), &replay, "{preparation:?}");
            }
        }
        let code = p.plan().compilation.as_ref().map(|c| c.code_bytes > 0);
        match preparation {
            Compile => assert_eq!(code, Some(cfg!(feature = "jit")), "{}", p.plan()),
            Auto => assert!(code != Some(true) || cfg!(feature = "jit"), "{}", p.plan()),
            _ => assert_eq!(code, None, "{}", p.plan()),
        }
    }
}

/// Where a branch flips the recording is made afresh (and compiled again): the product is
/// that of the new branch.
#[test]
fn a_flipped_branch_records_the_directional_derivative_afresh() {
    let mut p = PreparedHvp::with_preparation(Kink, &[1.0, 1.0], Preparation::Compile).unwrap();
    let h = p.hvp(&[2.0, 3.0], &[1.0, 0.0]).unwrap();
    assert_eq!(h.product, [6.0 * 2.0 * 3.0, 3.0 * 4.0]);
    assert_eq!(p.last(), &Replay::Reevaluated);
    let h = p.hvp(&[-2.0, 3.0], &[1.0, 0.0]).unwrap();
    assert_eq!(h.product, [0.0, 2.0 * 3.0]);
    assert!(matches!(p.last(), Replay::Rerecorded(_)), "{:?}", p.last());
    assert_eq!(p.rerecords(), 1);
    let c = p.plan().compilation.as_ref().expect("compiled on request");
    assert_eq!(c.code_bytes > 0, cfg!(feature = "jit"), "{c}");
}

/// Wrong sizes and a function of two outputs are errors that name them.
#[test]
fn bad_sizes_are_errors_naming_them() {
    let mut p = PreparedHvp::new(Cubic, &[1.0; 3]).unwrap();
    let e = p.hvp(&[1.0; 2], &[1.0; 3]).unwrap_err();
    assert_eq!(
        e.to_string(),
        jacobian::Error::InputLength {
            expected: 3,
            found: 2
        }
        .to_string()
    );
    let e = p.hvp(&[1.0; 3], &[1.0; 4]).unwrap_err();
    assert!(
        e.to_string().contains('4') && e.to_string().contains('3'),
        "{e}"
    );
    struct Two;
    impl Function for Two {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            vec![x[0], x[0] * x[0]]
        }
    }
    let e = PreparedHvp::new(Two, &[1.0]).err().expect("two outputs");
    assert_eq!(e, jacobian::Error::NotScalar { outputs: 2 });
}

/// A rule that picks its derivative's formula by its argument keeps the choice as a guard:
/// prepared at 10²⁰⁰, where atan's derivative is taken as 1/x², the calls at 1 record afresh
/// and are exact, where the kept formula would give a gradient of 1 and a product of −4.
#[test]
fn a_formula_picked_by_the_argument_is_not_kept_at_other_points() {
    struct Atan;
    impl Function for Atan {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            vec![x[0].atan()]
        }
    }
    use Preparation::*;
    for preparation in [Auto, Reevaluate, Compile] {
        let mut p = PreparedHvp::with_preparation(Atan, &[1e200], preparation).unwrap();
        // f′ = 1/(1 + x²) = ½ and f″ = −2x/(1 + x²)² = −½ at 1, along v = 2.
        let h = p.hvp(&[1.0], &[2.0]).unwrap();
        assert_eq!(
            (h.gradient, h.product),
            (vec![0.5], vec![-1.0]),
            "{preparation:?}"
        );
        assert!(matches!(p.last(), Replay::Rerecorded(_)), "{preparation:?}");
    }
}

/// `Auto` compiles the gradient of the directional derivative where its compiled calls are
/// faster (feature `jit`), and says so; the products keep the bits of a recording made afresh.
#[test]
fn auto_compiles_a_prepared_hvp_where_that_is_faster() {
    let x = [1.0, 2.0, 3.0];
    let v = [0.25, -1.0, 2.0];
    let mut p = PreparedHvp::new(Cubic, &x).unwrap();
    let mut recorded = PreparedHvp::with_preparation(Cubic, &x, Preparation::Record).unwrap();
    let plan = p.plan();
    let compiled = plan.compilation.as_ref().is_some_and(|c| c.code_bytes > 0);
    assert_eq!(plan.strategy == Preparation::Compile, compiled, "{plan}");
    assert!(
        compiled || plan.strategy == Preparation::Reevaluate,
        "{plan}"
    );
    if cfg!(feature = "jit") {
        let c = plan.compilation.as_ref().expect("timed while preparing");
        assert!(c.interpreted_call > 0.0 && c.compiled_call > 0.0, "{c:?}");
        assert_eq!(compiled, c.compiled_call < c.interpreted_call, "{c:?}");
    }
    for x in [x, [-1.0, 0.5, 2.0]] {
        let (got, want) = (p.hvp(&x, &v).unwrap(), recorded.hvp(&x, &v).unwrap());
        assert_eq!(bits(&got.product), bits(&want.product));
        assert_eq!(got.product, exact(&x, &v));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(200)))]

    /// On branchy programs, at points where the branches hold and where they flip: every
    /// preparation gives the bits of a recording made afresh, and the product, gradient and
    /// value equal forward over reverse's to rounding.
    #[test]
    fn prepared_products_equal_recorded_ones_and_forward_over_reverse(
        (f, x0, x1) in branchy(),
        v in prop::collection::vec(input(), 4),
    ) {
        let n = f.base.n;
        let (x0, x1, v) = (&x0[..n], &x1[..n], &v[..n]);
        let g = First(&f);
        let prepare = |preparation| PreparedHvp::with_preparation(&g, x0, preparation).unwrap();
        let mut recorded = prepare(Preparation::Record);
        let mut others = [Preparation::Auto, Preparation::Reevaluate, Preparation::Compile]
            .map(|preparation| (preparation, prepare(preparation)));
        for x in [x1, x0, x1] {
            let want = recorded.hvp(x, v).unwrap();
            for (preparation, p) in &mut others {
                let got = p.hvp(x, v).unwrap();
                prop_assert_eq!(bits(&got.product), bits(&want.product), "{:?}", preparation);
                prop_assert_eq!(bits(&got.gradient), bits(&want.gradient));
                prop_assert_eq!(bits(&[got.value]), bits(&[want.value]));
            }
            let other = hvp(&g, x, v).unwrap();
            prop_assert_eq!(bits(&[want.value]), bits(&[other.value]));
            // As between the four mode pairs (see mode_pairs.rs): where a first derivative is
            // infinite f has no second ones, and the pairs' non-finite entries differ; else
            // they round differently, to 1e-10 of the largest entry.
            if !other.gradient.iter().all(|g| g.is_finite()) {
                continue;
            }
            let scale = (other.product.iter().chain(&other.gradient))
                .filter(|v| v.is_finite())
                .fold(1.0_f64, |m, v| m.max(v.abs()));
            let pairs = want.product.iter().zip(&other.product)
                .chain(want.gradient.iter().zip(&other.gradient));
            for (a, b) in pairs {
                prop_assert!(
                    (a.is_nan() && b.is_nan()) || rel_close(*a, *b, 1e-10 * scale),
                    "{} vs {}", a, b
                );
            }
        }
    }
}
