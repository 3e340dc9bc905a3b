//! Prepared Hessians: the gradient's sweep recorded once (reverse over reverse), re-evaluated,
//! recorded afresh or compiled, with the bits of the one-shot reverse-over-reverse Hessian;
//! exact on polynomials, and equal to the other pairs to rounding on generated programs with
//! branches.

use crate::common::{cases, rel_close};
use crate::prepared_hvp::{Cubic, Kink};
use crate::replay::{First, bits, branchy};
use jacobian::{Function, Op, Pair, Preparation, PreparedHessian, Replay, hessian_with};
use proptest::prelude::*;

/// Every preparation gives the exact Hessian, gradient and value of `Cubic` (f = x₀²x₁ +
/// x₁³x₂ + x₀x₂, whose Hessian is [[2x₁, 2x₀, 1], [2x₀, 6x₁x₂, 3x₁²], [1, 3x₁², 0]]) at
/// integer points, and says how it obtained its recording; `Compile` compiles it where the
/// feature `jit` is on.
#[test]
fn prepared_hessians_are_exact_on_a_polynomial() {
    use Preparation::*;
    for preparation in [Auto, Reevaluate, Record, Compile] {
        let mut p = PreparedHessian::with_preparation(Cubic, &[1.0; 3], preparation).unwrap();
        assert_eq!(p.plan(), None);
        for x in [[1.0, 2.0, 3.0], [-2.0, 0.5, 4.0], [3.0, -1.0, 0.0]] {
            let h = p.hessian(&x).unwrap();
            let (a, b, c) = (x[0], x[1], x[2]);
            let want = [
                [2.0 * b, 2.0 * a, 1.0],
                [2.0 * a, 6.0 * b * c, 3.0 * b * b],
                [1.0, 3.0 * b * b, 0.0],
            ];
            for (i, row) in want.iter().enumerate() {
                for (j, &w) in row.iter().enumerate() {
                    assert_eq!(h.matrix[(i, j)], w, "{preparation:?} at {x:?}: ({i}, {j})");
                }
            }
            assert_eq!(
                h.gradient,
                [2.0 * a * b + c, a * a + 3.0 * b * b * c, b.powi(3) + a]
            );
            assert_eq!(h.value, a * a * b + b.powi(3) * c + a * c);
            assert_eq!(h.plan.pair, Pair::ReverseOverReverse);
            let replay = match preparation {
                Record => Replay::Recorded,
                _ => Replay::Reevaluated,
            };
            assert_eq!(p.last(), Some(&replay), "{preparation:?}");
        }
        let plan = p.plan().expect("called");
        let code = plan.compiled.as_ref().map(|c| c.code_bytes > 0);
        match preparation {
            Compile => assert_eq!(code, Some(cfg!(feature = "jit")), "{plan}"),
            Auto => assert!(code != Some(true) || cfg!(feature = "jit"), "{plan}"),
            _ => assert_eq!(code, None, "{plan}"),
        }
    }
}

/// Where a branch flips, the recording is made afresh (and compiled again): the Hessian is
/// that of the new branch, and the plans say so.
#[test]
fn a_flipped_branch_records_the_gradient_afresh() {
    let mut p = PreparedHessian::with_preparation(Kink, &[1.0, 1.0], Preparation::Compile).unwrap();
    let h = p.hessian(&[2.0, 3.0]).unwrap();
    assert_eq!(h.matrix.as_slice(), &[36.0, 12.0, 12.0, 0.0]);
    assert_eq!(p.last(), Some(&Replay::Reevaluated));
    let h = p.hessian(&[-2.0, 3.0]).unwrap();
    assert_eq!(h.matrix.as_slice(), &[0.0, 6.0, 6.0, -4.0]);
    assert!(
        matches!(p.last(), Some(Replay::Rerecorded(_))),
        "{:?}",
        p.last()
    );
    assert!(
        h.plan.reason.contains("recorded afresh"),
        "{}",
        h.plan.reason
    );
    assert_eq!(p.rerecords(), 1);
    let c = p.plan().and_then(|plan| plan.compiled.as_ref());
    let c = c.expect("compiled on request");
    assert_eq!(c.code_bytes > 0, cfg!(feature = "jit"), "{c}");
}

/// Wrong sizes and a function of other than one output are errors that name them.
#[test]
fn bad_sizes_are_errors_naming_them() {
    let mut p = PreparedHessian::new(Cubic, &[1.0; 3]).unwrap();
    let e = p.hessian(&[1.0; 2]).unwrap_err();
    assert_eq!(
        e,
        jacobian::Error::InputLength {
            expected: 3,
            found: 2
        }
    );
    struct Two;
    impl Function for Two {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            vec![x[0], x[0] * x[0]]
        }
    }
    let e = PreparedHessian::new(Two, &[1.0])
        .err()
        .expect("two outputs");
    assert_eq!(e, jacobian::Error::NotScalar { outputs: 2 });
    /// One output where x₀ > 0, two elsewhere.
    struct Grows;
    impl Function for Grows {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            match x[0] > T::zero() {
                true => vec![x[0] * x[0]],
                false => vec![x[0], x[0]],
            }
        }
    }
    let mut p = PreparedHessian::new(Grows, &[1.0]).unwrap();
    assert_eq!(p.hessian(&[2.0]).unwrap().matrix[(0, 0)], 2.0);
    let e = p.hessian(&[-1.0]).unwrap_err();
    assert_eq!(e, jacobian::Error::NotScalar { outputs: 2 });
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(200)))]

    /// On branchy programs, at points where the branches hold and where they flip: every
    /// preparation gives the bits of the one-shot reverse-over-reverse Hessian (value,
    /// gradient, matrix), and the matrix equals forward over reverse's to rounding.
    #[test]
    fn prepared_hessians_equal_reverse_over_reverse((f, x0, x1) in branchy()) {
        let n = f.base.n;
        let (x0, x1) = (&x0[..n], &x1[..n]);
        let g = First(&f);
        use Preparation::*;
        let mut prepared = [Auto, Reevaluate, Record, Compile]
            .map(|preparation| {
                (preparation, PreparedHessian::with_preparation(&g, x0, preparation).unwrap())
            });
        for x in [x1, x0, x1] {
            let want = hessian_with(&g, x, Pair::ReverseOverReverse).unwrap();
            for (preparation, p) in &mut prepared {
                let got = p.hessian(x).unwrap();
                prop_assert_eq!(
                    bits(got.matrix.as_slice()), bits(want.matrix.as_slice()), "{:?}", preparation
                );
                prop_assert_eq!(bits(&got.gradient), bits(&want.gradient));
                prop_assert_eq!(bits(&[got.value]), bits(&[want.value]));
            }
            // As between the four mode pairs (see mode_pairs.rs): where a first derivative is
            // infinite f has no second ones; else to 1e-10 of the largest entry.
            let other = hessian_with(&g, x, Pair::ForwardOverReverse).unwrap();
            if !other.gradient.iter().all(|g| g.is_finite()) {
                continue;
            }
            let scale = other.matrix.iter()
                .filter(|v| v.is_finite())
                .fold(1.0_f64, |m, v| m.max(v.abs()));
            for (a, b) in want.matrix.iter().zip(other.matrix.iter()) {
                prop_assert!(
                    (a.is_nan() && b.is_nan()) || rel_close(*a, *b, 1e-10 * scale),
                    "{} vs {}", a, b
                );
            }
        }
    }
}
