//! Prepared sparse Hessians by each route: forward over reverse recorded afresh, or one
//! Hessian-vector product per colour, re-evaluated or compiled. Exact on polynomials, the
//! prepared products the same bits re-evaluated and compiled, and equal to forward over reverse
//! to rounding and to finite differences of the gradient.

use crate::common::{cases, fd_column, rel_close};
use crate::replay::{First, bits, branchy};
use jacobian::sparse::{PreparedSparseHessian, SparseHessian, SparseOptions};
use jacobian::{Function, Grad, Op, Preparation, hessian};
use proptest::prelude::*;

/// f = Σ xᵢ²xᵢ₊₁ + xᵢ³: a tridiagonal Hessian of 3 star colours, exact at integer points.
struct Chain;

impl Function for Chain {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let pairs = x.windows(2).map(|w| w[0] * w[0] * w[1] + w[0].powi(3));
        vec![pairs.sum()]
    }
}

/// The dense Hessian of `h`, its gradient and value: what each route must give.
fn dense(h: &SparseHessian) -> (Vec<f64>, Vec<f64>, f64) {
    let d = h.to_dense();
    (d.as_slice().to_vec(), h.gradient.clone(), h.value)
}

fn prepare<F: Function>(f: F, x: &[f64], preparation: Preparation) -> PreparedSparseHessian<F> {
    PreparedSparseHessian::with_preparation(f, x, SparseOptions::default(), preparation).unwrap()
}

/// Every preparation gives the exact Hessian, gradient, value and diagonal at integer points,
/// and its plan says which route ran: compiled products (feature `jit`) one per colour, with
/// both routes timed; forward over reverse otherwise.
#[test]
fn every_route_is_exact_on_a_polynomial() {
    use Preparation::*;
    let n = 30;
    for preparation in [Auto, Record, Reevaluate, Compile] {
        let mut p = prepare(Chain, &vec![1.0; n], preparation);
        for x in [
            (0..n).map(|i| i as f64 - 9.0).collect::<Vec<_>>(),
            (0..n).map(|i| ((i * 7) % 5) as f64 * 0.5).collect(),
        ] {
            let h = p.hessian(&x).unwrap();
            let want = hessian(&Chain, &x).unwrap();
            assert_eq!(h.to_dense(), want.matrix, "{preparation:?}");
            assert_eq!((h.value, &h.gradient), (want.value, &want.gradient));
            let d = p.diagonal(&x).unwrap();
            let diagonal: Vec<f64> = (0..n).map(|i| want.matrix[(i, i)]).collect();
            assert_eq!((d.diagonal, d.gradient), (diagonal, want.gradient));
            let plan = &h.plan;
            let ran = match preparation {
                Compile if cfg!(feature = "jit") => Compile,
                Reevaluate => Reevaluate,
                _ => Record,
            };
            assert_eq!((plan.preparation, plan.colours), (ran, 3), "{plan}");
            let sweeps = if ran == Record { (1, 3) } else { (3, 1) };
            assert_eq!((plan.sweeps, plan.lanes), sweeps, "{plan}");
            match (preparation, &plan.compiled) {
                (Compile, Some(c)) if cfg!(feature = "jit") => {
                    assert!(c.code_bytes > 0 && c.declined.is_none(), "{plan}");
                    assert!(c.interpreted_call > 0.0 && c.compiled_call > 0.0, "{plan}");
                    assert!(plan.to_string().contains("one compiled product per colour"));
                }
                (Compile, Some(c)) => {
                    let why = c.declined.as_deref().unwrap_or_default();
                    assert!(why.contains("forward over reverse runs instead"), "{why}");
                }
                (Compile, None) => panic!("compiling was asked for: {plan}"),
                (_, c) => assert_eq!(c, &None, "{plan}"),
            }
        }
    }
}

/// f = Σ |xᵢ|·xᵢ·xᵢ₊₁: where a sign flips, the prepared products record `∇f·v` afresh, and
/// every route is exact on both sides.
#[test]
fn a_flipped_sign_gives_the_hessian_of_the_new_side() {
    struct Signed;
    impl Function for Signed {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            vec![x.windows(2).map(|w| w[0].abs() * w[0] * w[1]).sum()]
        }
    }
    for preparation in [Preparation::Record, Preparation::Compile] {
        let mut p = prepare(Signed, &[1.0; 8], preparation);
        for x in [
            [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
            [-1.0, 2.0, -3.0, 4.0, 5.0, -6.0, 7.0, 8.0],
        ] {
            let h = p.hessian(&x).unwrap();
            assert_eq!(
                h.to_dense(),
                hessian(&Signed, &x).unwrap().matrix,
                "{preparation:?}"
            );
            // ∂²f/∂x₀² = 2 sign(x₀)·x₁.
            assert_eq!(h.to_dense()[(0, 0)], 2.0 * x[0].signum() * x[1]);
        }
    }
}

/// Elementary functions: the compiled products equal forward over reverse to rounding and
/// central differences of the gradient to their error.
#[test]
fn compiled_products_of_elementary_functions_match_differences() {
    struct Heavy;
    impl Function for Heavy {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            let terms = x
                .windows(2)
                .map(|w| w[0].exp() * w[1].sin() + (w[0] * w[0] + T::one()).ln() * w[1].tanh());
            vec![terms.sum()]
        }
    }
    let n = 12;
    let x: Vec<f64> = (0..n).map(|i| 0.3 * i as f64 - 1.4).collect();
    let got = prepare(Heavy, &x, Preparation::Compile)
        .hessian(&x)
        .unwrap();
    let want = prepare(Heavy, &x, Preparation::Record).hessian(&x).unwrap();
    let (a, b) = (dense(&got), dense(&want));
    let scale = b.0.iter().fold(1.0_f64, |m, v| m.max(v.abs()));
    for (u, v) in a.0.iter().zip(&b.0).chain(a.1.iter().zip(&b.1)) {
        assert!(rel_close(*u, *v, 1e-12 * scale), "{u} vs {v}");
    }
    assert_eq!(a.2.to_bits(), b.2.to_bits());
    let d = got.to_dense();
    for j in 0..n {
        let column = fd_column(&Grad(&Heavy), &x, j).expect("smooth");
        for (i, c) in column.iter().enumerate() {
            assert!(
                (d[(i, j)] - c).abs() <= 1e-6 * scale,
                "H[{i}, {j}] = {} vs {c}",
                d[(i, j)]
            );
        }
    }
}

/// A wrong-sized point is an error naming both sizes; a full pattern takes the dense Hessian,
/// and a plan asked to compile says so.
#[test]
fn bad_points_and_full_patterns() {
    let mut p = prepare(Chain, &[1.0; 5], Preparation::Compile);
    let e = p.hessian(&[1.0; 4]).unwrap_err();
    assert_eq!(
        e,
        jacobian::Error::InputLength {
            expected: 5,
            found: 4
        }
    );
    struct Full;
    impl Function for Full {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            vec![x.iter().copied().sum::<T>().powi(3)]
        }
    }
    let mut p = prepare(Full, &[1.0; 4], Preparation::Compile);
    let h = p.hessian(&[1.0, 2.0, 3.0, 4.0]).unwrap();
    assert!(!h.plan.compressed);
    assert_eq!(h.to_dense()[(0, 3)], 60.0); // 6·Σx
    let c = h.plan.compiled.as_ref().expect("asked for");
    assert_eq!(
        (c.code_bytes, c.declined.as_deref()),
        (0, Some("the pattern is full: the dense Hessian runs"))
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(100)))]

    /// On branchy programs, prepared at one point and called where the branches hold and
    /// where they flip: the compiled products are the re-evaluated ones' bits, and equal
    /// forward over reverse's (recorded afresh) to rounding. Where compiling declined (no
    /// feature `jit`, or a directional derivative that is a constant at the first point),
    /// forward over reverse runs, with its bits.
    #[test]
    fn compiled_products_equal_reevaluated_ones_and_forward_over_reverse(
        (f, x0, x1) in branchy(),
    ) {
        let n = f.base.n;
        let (x0, x1) = (&x0[..n], &x1[..n]);
        let g = First(&f);
        let mut record = prepare(&g, x0, Preparation::Record);
        let mut reevaluate = prepare(&g, x0, Preparation::Reevaluate);
        let mut compile = prepare(&g, x0, Preparation::Compile);
        for x in [x1, x0] {
            let want = dense(&record.hessian(x).unwrap());
            let again = dense(&reevaluate.hessian(x).unwrap());
            let h = compile.hessian(x).unwrap();
            let got = dense(&h);
            let route = match h.plan.preparation {
                Preparation::Compile => &again,
                _ => &want,
            };
            prop_assert_eq!(bits(&got.0), bits(&route.0), "{}", h.plan);
            prop_assert_eq!(bits(&got.1), bits(&route.1), "{}", h.plan);
            prop_assert_eq!(bits(&[got.2]), bits(&[want.2]));
            // Where a first derivative is infinite f has no second ones, and the routes'
            // non-finite entries differ; else they round differently.
            if !want.1.iter().all(|g| g.is_finite()) {
                continue;
            }
            let scale = (want.0.iter().chain(&want.1))
                .filter(|v| v.is_finite())
                .fold(1.0_f64, |m, v| m.max(v.abs()));
            for (a, b) in got.0.iter().zip(&want.0).chain(got.1.iter().zip(&want.1)) {
                prop_assert!(
                    (a.is_nan() && b.is_nan()) || rel_close(*a, *b, 1e-10 * scale),
                    "{} vs {}", a, b
                );
            }
        }
    }
}
