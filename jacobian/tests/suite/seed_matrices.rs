//! Seed matrices (`jvp_matrix`, `vjp_matrix`) and prepared forward Jacobians: each column or
//! row equals its single-direction product bit for bit, every lane count gives the same
//! matrix, and the products match finite differences.

use crate::common::{central, program, rel_close};
use jacobian::{Function, Mode, Op, PreparedJacobian, jacobian_with};
use nalgebra::DMatrix;
use proptest::prelude::*;

/// Equal bits, or both NaN, or both zero (a zero's sign may differ between a scalar and a
/// vector sweep, which sum their contributions in a different order).
fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()) || (a == 0.0 && b == 0.0)
}

/// n×k directions: the unit vectors first (so J itself is inside J·V), then dense ones.
fn directions(n: usize, k: usize) -> DMatrix<f64> {
    DMatrix::from_fn(n, k, |j, c| {
        if c < n {
            f64::from(u8::from(j == c))
        } else {
            ((3 * j + 7 * c) as f64).sin()
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, max_global_rejects: 4096, ..ProptestConfig::default() })]

    /// Column c of J·V is the jvp along V's column c, and the unit columns are J's.
    #[test]
    fn jvp_matrix_columns_are_jvps((p, x) in program(), extra in 0usize..12) {
        let k = p.n + extra;
        let v = directions(p.n, k);
        let jacobian::Products { value: y, matrix: jv, .. } = jacobian::jvp_matrix(&p, &x, &v).unwrap();
        prop_assert_eq!(jv.shape(), (p.outputs.len(), k));
        let fwd = jacobian_with(&p, &x, Mode::Forward).unwrap();
        prop_assert!(y.iter().zip(&fwd.value).all(|(a, b)| same(*a, *b)));
        for c in 0..k {
            let col: Vec<f64> = v.column(c).iter().copied().collect();
            let (_, single) = jacobian::jvp(&p, &x, &col).unwrap();
            for i in 0..jv.nrows() {
                prop_assert!(same(jv[(i, c)], single[i]), "({i}, {c}): {} vs {}", jv[(i, c)], single[i]);
                if c < p.n {
                    prop_assert!(same(jv[(i, c)], fwd.matrix[(i, c)]));
                }
            }
        }
    }

    /// Row c of Wᵀ·J is the vjp along W's column c.
    #[test]
    fn vjp_matrix_rows_are_vjps((p, x) in program(), k in 1usize..12) {
        let m = p.outputs.len();
        let w = directions(m, k);
        let jacobian::Products { value: y, matrix: wj, .. } = jacobian::vjp_matrix(&p, &x, &w).unwrap();
        prop_assert_eq!(wj.shape(), (k, p.n));
        for c in 0..k {
            let col: Vec<f64> = w.column(c).iter().copied().collect();
            let (y1, single) = jacobian::vjp(&p, &x, &col).unwrap();
            prop_assert!(y.iter().zip(&y1).all(|(a, b)| same(*a, *b)));
            for j in 0..p.n {
                prop_assert!(rel_close(wj[(c, j)], single[j], 1e-13), "({c}, {j}): {} vs {}", wj[(c, j)], single[j]);
            }
        }
    }

    /// The prepared products (`jvp_matrix_into`, `vjp_matrix_into`, over one result reused
    /// from call to call) equal the one-shot ones bit for bit, at the point prepared and at a
    /// second one; threads off and on give the same bits, and the plan counts the products.
    #[test]
    fn prepared_products_equal_one_shot_ones((p, x) in program(), k in 1usize..10) {
        let m = p.outputs.len();
        let (v, w) = (directions(p.n, k), directions(m, k));
        let x2: Vec<f64> = x.iter().map(|v| v * 0.75 + 0.125).collect();
        let bits = |a: &DMatrix<f64>, b: &DMatrix<f64>| {
            a.shape() == b.shape() && a.iter().zip(b.iter()).all(|(u, v)| same(*u, *v))
        };
        for mode in [Mode::Forward, Mode::Reverse] {
            let mut prepared = PreparedJacobian::with_mode(p.clone(), &x, mode).unwrap();
            let (mut jv, mut wj) = (jacobian::Products::new(), jacobian::Products::new());
            for (at, threads) in [(&x, false), (&x2, true)] {
                prepared.set_threads(threads);
                prepared.jvp_matrix_into(at, &v, &mut jv).unwrap();
                prepared.vjp_matrix_into(at, &w, &mut wj).unwrap();
                let (a, b) = (
                    jacobian::jvp_matrix_with(&p, at, &v, threads).unwrap(),
                    jacobian::vjp_matrix_with(&p, at, &w, !threads).unwrap(),
                );
                prop_assert!(bits(&jv.matrix, &a.matrix), "{mode:?} J·V");
                prop_assert!(bits(&wj.matrix, &b.matrix), "{mode:?} Wᵀ·J");
                prop_assert_eq!((jv.plan.products, wj.plan.products), (k, k));
                prop_assert_eq!((jv.plan.mode, wj.plan.mode), (jacobian::Direction::Forward, jacobian::Direction::Reverse));
                if !threads {
                    prop_assert_eq!((jv.plan.threads, wj.plan.threads, a.plan.threads), (1, 1, 1));
                }
            }
        }
    }

    /// Every lane count gives the forward Jacobian bit for bit, through `jacobian` and through
    /// `jacobian_into` over an earlier result.
    #[test]
    fn every_lane_count_gives_the_same_jacobian((p, x) in program()) {
        let want = jacobian_with(&p, &x, Mode::Forward).unwrap();
        let mut reused = None;
        for lanes in [1, 2, 3, 4, 8, 16, 32] {
            let mut prepared = PreparedJacobian::with_lanes(p.clone(), &x, lanes).unwrap();
            let j = prepared.jacobian(&x).unwrap();
            prop_assert_eq!(j.plan.lanes, lanes);
            prop_assert_eq!(j.plan.sweeps, p.n.div_ceil(lanes));
            for (a, b) in j.matrix.iter().zip(want.matrix.iter()) {
                prop_assert!(same(*a, *b), "lanes = {lanes}: {a} vs {b}");
            }
            // Over the previous lane count's result: the same bits, its plan updated.
            let mut into = reused.take().unwrap_or_else(|| j.clone());
            prepared.jacobian_into(&x, &mut into).unwrap();
            prop_assert_eq!(into.plan.lanes, lanes);
            prop_assert!(into.matrix.iter().zip(j.matrix.iter()).all(|(a, b)| a.to_bits() == b.to_bits()));
            prop_assert_eq!(&into.value, &j.value);
            reused = Some(into);
        }
    }
}

/// A smooth function of 3 inputs and 2 outputs.
struct Smooth;
impl Function for Smooth {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        vec![
            x[0] * x[1].sin() + x[2].exp(),
            (x[0] * x[2]).atan() - x[1] * x[1],
        ]
    }
}

#[test]
fn seed_products_match_finite_differences() {
    let x = [0.7, -1.3, 0.4];
    let v = DMatrix::from_row_slice(3, 2, &[1.0, 0.5, -2.0, 0.25, 0.3, -1.0]);
    let jacobian::Products {
        value: _,
        matrix: jv,
        ..
    } = jacobian::jvp_matrix(&Smooth, &x, &v).unwrap();
    for c in 0..2 {
        // The derivative of t ↦ f(x + t·v) at 0, by central differences of a shifted copy.
        let h = 1e-5;
        let at = |t: f64| -> Vec<f64> {
            let xt: Vec<f64> = (0..3).map(|j| x[j] + t * v[(j, c)]).collect();
            Smooth.eval(&xt)
        };
        let (fp, fm) = (at(h), at(-h));
        for i in 0..2 {
            let fd = (fp[i] - fm[i]) / (2.0 * h);
            assert!(
                (jv[(i, c)] - fd).abs() < 1e-8,
                "({i}, {c}): {} vs {fd}",
                jv[(i, c)]
            );
        }
    }
    // Wᵀ·J against the finite-difference Jacobian: (wᵀJ)ⱼ = Σᵢ wᵢ ∂fᵢ/∂xⱼ.
    let w = DMatrix::from_row_slice(2, 1, &[2.0, -3.0]);
    let jacobian::Products {
        value: _,
        matrix: wj,
        ..
    } = jacobian::vjp_matrix(&Smooth, &x, &w).unwrap();
    for j in 0..3 {
        let col = central(&Smooth, &x, j, 1e-5);
        let fd = 2.0 * col[0] - 3.0 * col[1];
        assert!(
            (wj[(0, j)] - fd).abs() < 1e-8,
            "{j}: {} vs {fd}",
            wj[(0, j)]
        );
    }
}

#[test]
fn exact_values_and_errors() {
    // f(x) = (x₀x₁, x₀ + x₁): J = [[x₁, x₀], [1, 1]].
    struct F;
    impl Function for F {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            vec![x[0] * x[1], x[0] + x[1]]
        }
    }
    let v = DMatrix::from_row_slice(2, 1, &[3.0, -1.0]);
    let jacobian::Products {
        value: _,
        matrix: jv,
        ..
    } = jacobian::jvp_matrix(&F, &[2.0, 5.0], &v).unwrap();
    assert_eq!(jv.as_slice(), &[5.0 * 3.0 - 2.0, 2.0]);
    // No directions: an m×0 product, and the value.
    let jacobian::Products {
        value: y,
        matrix: none,
        ..
    } = jacobian::jvp_matrix(&F, &[2.0, 5.0], &DMatrix::zeros(2, 0)).unwrap();
    assert_eq!((y, none.shape()), (vec![10.0, 7.0], (2, 0)));
    let e = jacobian::jvp_matrix(&F, &[2.0, 5.0], &DMatrix::zeros(3, 2)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "tangent matrix seed has length 3, but must have length 2"
    );
    let e = jacobian::vjp_matrix(&F, &[2.0, 5.0], &DMatrix::zeros(1, 2)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "weight matrix seed has length 1, but must have length 2"
    );
    let mut p = PreparedJacobian::with_lanes(F, &[1.0, 1.0], 16).unwrap();
    let mut j = p.jacobian(&[1.0, 1.0]).unwrap();
    assert!(p.jacobian_into(&[1.0], &mut j).is_err());
    p.jacobian_into(&[2.0, 5.0], &mut j).unwrap();
    assert_eq!(j.matrix.as_slice(), &[5.0, 1.0, 2.0, 1.0]);
}

/// A prepared Jacobian's plan, call after call (new results and results written over), says
/// what the one-shot driver's says in the same mode: the reason and estimate it keeps from the
/// first call, the sweeps and lanes of each. Both modes, chosen by the plan and forced.
#[test]
fn a_prepared_jacobians_plan_is_the_one_shot_drivers() {
    /// Three outputs of n inputs: forward for small n, reverse for large.
    struct F;
    impl Function for F {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            let s: T = x.iter().map(|&v| v.sin()).sum();
            vec![s, x[0] * x[x.len() - 1], x.iter().copied().product()]
        }
    }
    for (n, mode) in [
        (4, Mode::Auto),
        (40, Mode::Auto),
        (4, Mode::Reverse),
        (40, Mode::Forward),
    ] {
        let at = |k: f64| -> Vec<f64> { (0..n).map(|i| 0.5 + 0.01 * (k + i as f64)).collect() };
        let mut p = PreparedJacobian::with_mode(F, &at(0.0), mode).unwrap();
        let mut into = p.jacobian(&at(0.0)).unwrap();
        for k in 1..4 {
            let x = at(k as f64);
            let want = jacobian_with(&F, &x, mode).unwrap().plan;
            let got = p.jacobian(&x).unwrap().plan;
            p.jacobian_into(&x, &mut into).unwrap();
            for plan in [&got, &into.plan] {
                let what = |p: &jacobian::Plan| {
                    (
                        p.mode,
                        p.sweeps,
                        p.lanes,
                        p.n,
                        p.m,
                        p.estimate,
                        p.reason.clone(),
                    )
                };
                assert_eq!(what(plan), what(&want), "n = {n}, {mode:?}, call {k}");
            }
        }
    }
}

/// A prepared Jacobian keeps its lifted inputs between calls and takes only the new primals:
/// a function that panics in a later sweep must not leave that sweep's seeds behind for the
/// next call (they are cleared on unwinding too; where one sweep takes the whole Jacobian,
/// lanes 3, 8 and 16 here, the identity seeds stay on purpose and must be exactly those).
/// Every call, at every lane count, equals a fresh one-shot Jacobian bit for bit.
#[test]
fn a_prepared_jacobian_is_clean_after_a_panic_in_f() {
    use std::panic::{AssertUnwindSafe, catch_unwind};
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Panics in its `k`-th evaluation when armed with `k`.
    struct Flaky(AtomicUsize);
    impl Function for Flaky {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            let y = vec![x[0] * x[1] + x[2].sin(), x[2] * x[0] - x[1]];
            let left = self.0.load(Ordering::Relaxed);
            self.0.store(left.saturating_sub(1), Ordering::Relaxed);
            assert!(left != 1, "f fails in this evaluation");
            y
        }
    }
    let at = [[0.5, 2.0, -1.0], [1.5, -3.0, 0.25], [2.0, 1.0, 4.0]];
    for lanes in [1, 2, 3, 8, 16] {
        let mut p =
            PreparedJacobian::with_lanes(Flaky(AtomicUsize::new(0)), &at[0], lanes).unwrap();
        let mut j = p.jacobian(&at[0]).unwrap();
        let sweeps = 3_usize.div_ceil(lanes);
        for x in &at[1..] {
            // The last sweep fails (the first where there is only one).
            p.function().0.store(sweeps, Ordering::Relaxed);
            let failed = catch_unwind(AssertUnwindSafe(|| p.jacobian_into(x, &mut j)));
            assert!(failed.is_err(), "the function panicked");
            p.jacobian_into(x, &mut j).unwrap();
            let fresh = jacobian_with(&Flaky(AtomicUsize::new(0)), x, Mode::Forward).unwrap();
            assert_eq!(j.matrix, fresh.matrix, "lanes = {lanes}, x = {x:?}");
            assert_eq!(j.value, fresh.value);
        }
    }
}

/// `jvp` builds its duals in a buffer the thread keeps: a longer input leaves entries past a
/// shorter one's end, and a jvp run inside the function being differentiated finds the
/// buffer taken. Each result is the analytic one.
#[test]
fn jvps_of_other_lengths_and_nested_jvps() {
    // f(x) = [Σ xᵢ², x₀·c], with c = ∂(t₀t₁)/∂t₀ at t = (2, 3) along e₀ (a nested jvp): 3.
    struct F;
    impl Function for F {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            struct Inner;
            impl Function for Inner {
                fn eval<T: Op>(&self, t: &[T]) -> Vec<T> {
                    vec![t[0] * t[1]]
                }
            }
            let (_, c) = jacobian::jvp(&Inner, &[2.0, 3.0], &[1.0, 0.0]).unwrap();
            let sum = x.iter().fold(T::zero(), |s, &xi| s + xi * xi);
            vec![sum, x[0] * c[0]]
        }
    }
    for n in [9, 2, 5, 1, 9] {
        let x: Vec<f64> = (0..n).map(|i| 0.5 + i as f64).collect();
        let v: Vec<f64> = (0..n).map(|i| 1.0 - 0.25 * i as f64).collect();
        let (y, jv) = jacobian::jvp(&F, &x, &v).unwrap();
        let dot: f64 = x.iter().zip(&v).map(|(a, b)| 2.0 * a * b).sum();
        assert_eq!(
            y,
            vec![x.iter().map(|a| a * a).sum(), 3.0 * x[0]],
            "n = {n}"
        );
        assert_eq!(jv, vec![dot, 3.0 * v[0]], "n = {n}");
    }
}
