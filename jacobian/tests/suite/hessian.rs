//! The second-order API: `hessian` in all four pairs and `Auto`, `hvp`, `hvp_many`,
//! `second_directional` and the composable transforms, on generated programs (against each
//! other, finite differences of the gradient, and exact symmetry) and on functions with known
//! Hessians (1e-12).

use crate::common::{Program, cases, fd_column, program, rel_close};
use jacobian::{Error, Function, Grad, JacFwd, JacRev, Jvp, Mode, Op, Pair, Vjp};
use nalgebra::DMatrix;
use proptest::prelude::*;

/// The first output of a generated program, summed over every cyclic window of its inputs:
/// a scalar function of any n that mixes all pairs of neighbouring inputs, so that n > 8
/// exercises several chunks and the `Auto` switch.
struct Windows<'a> {
    p: &'a Program,
    n: usize,
}

impl Function for Windows<'_> {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let k = self.p.n;
        let terms = (0..self.n).map(|s| {
            let w: Vec<T> = (0..k).map(|i| x[(s + i) % self.n]).collect();
            self.p.eval(&w)[0]
        });
        vec![terms.sum()]
    }
    fn sizes(&self) -> Option<(usize, usize)> {
        Some((self.n, 1))
    }
}

fn same(a: f64, b: f64, tol: f64) -> bool {
    (a.is_nan() && b.is_nan()) || rel_close(a, b, tol)
}

fn assert_symmetric(h: &DMatrix<f64>) {
    for i in 0..h.nrows() {
        for j in 0..h.ncols() {
            assert!(
                h[(i, j)].to_bits() == h[(j, i)].to_bits() || h[(i, j)].is_nan(),
                "H[{i}][{j}] = {} but H[{j}][{i}] = {}",
                h[(i, j)],
                h[(j, i)]
            );
        }
    }
}

/// Rosenbrock's function and its exact (tridiagonal) Hessian.
struct Rosenbrock;
impl Function for Rosenbrock {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let hundred = T::constant(100.0);
        let terms = x.windows(2).map(|w| {
            let (a, b) = (T::one() - w[0], w[1] - w[0] * w[0]);
            a * a + hundred * b * b
        });
        vec![terms.sum()]
    }
}

fn rosenbrock_hessian(x: &[f64]) -> DMatrix<f64> {
    let n = x.len();
    let mut h = DMatrix::zeros(n, n);
    for i in 0..n - 1 {
        h[(i, i)] += 2.0 + 1200.0 * x[i] * x[i] - 400.0 * x[i + 1];
        h[(i + 1, i + 1)] += 200.0;
        h[(i, i + 1)] -= 400.0 * x[i];
        h[(i + 1, i)] -= 400.0 * x[i];
    }
    h
}

/// `f(x) = Σᵢⱼ Aᵢⱼ sin(xᵢ) xⱼ`, dense (each row one dot product), with its exact Hessian.
struct SinQuad(DMatrix<f64>);
impl Function for SinQuad {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let n = x.len();
        let terms = (0..n).map(|i| {
            let row: Vec<T> = (0..n).map(|j| T::constant(self.0[(i, j)])).collect();
            x[i].sin() * T::dot(&row, x)
        });
        vec![terms.sum()]
    }
}

impl SinQuad {
    fn new(n: usize) -> SinQuad {
        SinQuad(DMatrix::from_fn(n, n, |i, j| {
            ((i + 2 * j + 1) as f64).sin()
        }))
    }
    fn hessian(&self, x: &[f64]) -> DMatrix<f64> {
        let (a, n) = (&self.0, x.len());
        DMatrix::from_fn(n, n, |k, l| {
            let ax: f64 = (0..n).map(|j| a[(k, j)] * x[j]).sum();
            let diag = if k == l { -x[k].sin() * ax } else { 0.0 };
            diag + x[k].cos() * a[(k, l)] + x[l].cos() * a[(l, k)]
        })
    }
}

fn assert_matrix_close(got: &DMatrix<f64>, want: &DMatrix<f64>, tol: f64, what: &str) {
    let scale = want.iter().fold(1.0_f64, |m, v| m.max(v.abs()));
    for (k, (g, w)) in got.iter().zip(want.iter()).enumerate() {
        assert!(
            (g - w).abs() <= tol * scale,
            "{what}: entry {k} is {g}, want {w}"
        );
    }
}

#[test]
fn rosenbrock_hessian_is_exact_in_every_pair_and_size() {
    for n in [2, 3, 5, 8, 9, 16, 17, 40] {
        let x: Vec<f64> = (0..n).map(|i| 0.5 + 0.07 * i as f64).collect();
        let want = rosenbrock_hessian(&x);
        for pair in [Pair::Auto].into_iter().chain(Pair::ALL) {
            let h = jacobian::hessian_with(&Rosenbrock, &x, pair).unwrap();
            assert_matrix_close(&h.matrix, &want, 1e-12, &format!("{pair}, n = {n}"));
            assert_symmetric(&h.matrix);
            let (y, g) = jacobian::gradient(&Rosenbrock, &x).unwrap();
            assert!(rel_close(h.value, y, 1e-15), "{pair}: value");
            for (a, b) in h.gradient.iter().zip(&g) {
                assert!(
                    rel_close(*a, *b, 1e-13),
                    "{pair}, n = {n}: gradient {a} vs {b}"
                );
            }
        }
    }
}

#[test]
fn dense_hessian_is_exact_in_every_pair() {
    for n in [1, 4, 12, 24] {
        let f = SinQuad::new(n);
        let x: Vec<f64> = (0..n).map(|i| (0.3 * i as f64).cos()).collect();
        let want = f.hessian(&x);
        for pair in [Pair::Auto].into_iter().chain(Pair::ALL) {
            let h = jacobian::hessian_with(&f, &x, pair).unwrap();
            assert_matrix_close(&h.matrix, &want, 1e-12, &format!("{pair}, n = {n}"));
            assert_symmetric(&h.matrix);
        }
    }
}

#[test]
fn auto_plans_by_the_shape_of_the_tape() {
    // One chunk: forward over reverse, with no estimate needed.
    let h = jacobian::hessian(&Rosenbrock, &[0.5; 8]).unwrap();
    assert_eq!(h.plan.pair, Pair::ForwardOverReverse);
    assert_eq!((h.plan.sweeps, h.plan.lanes), (1, 8));
    assert!(h.plan.estimate.is_none());
    // Two inputs: duals of duals, one sweep and no tape.
    let h = jacobian::hessian(&Rosenbrock, &[0.5, 0.5]).unwrap();
    assert_eq!(h.plan.pair, Pair::ForwardOverForward);
    assert_eq!(h.plan.sweeps, 1);
    // A long chain of cheap operations: reverse over reverse after the first chunk.
    let x = vec![0.7; 100];
    let h = jacobian::hessian(&Rosenbrock, &x).unwrap();
    assert_eq!(h.plan.pair, Pair::ReverseOverReverse, "{}", h.plan);
    assert_eq!(h.plan.sweeps, 13);
    let e = h.plan.estimate.unwrap();
    assert!(e.cost(Pair::ReverseOverReverse) < e.cost(Pair::ForwardOverReverse));
    assert!(h.plan.to_string().contains("estimated"), "{}", h.plan);
    assert_matrix_close(&h.matrix, &rosenbrock_hessian(&x), 1e-12, "auto, n = 100");
    // Dot products (few nodes, many edges): forward over reverse.
    let f = SinQuad::new(64);
    let x = vec![0.3; 64];
    let h = jacobian::hessian(&f, &x).unwrap();
    assert_eq!(h.plan.pair, Pair::ForwardOverReverse, "{}", h.plan);
    assert_matrix_close(&h.matrix, &f.hessian(&x), 1e-12, "auto, SinQuad 64");
    // A forced pair says so, and has no estimate.
    let h = jacobian::hessian_with(&f, &x, Pair::ForwardOverForward).unwrap();
    assert_eq!(h.plan.sweeps, 36); // 8 chunks: 8·9/2 pairs of chunks
    assert!(h.plan.estimate.is_none());
    assert!(h.plan.to_string().contains("forced"), "{}", h.plan);
}

#[test]
fn errors_name_the_problem() {
    struct Two;
    impl Function for Two {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            vec![x[0], x[0] * x[0]]
        }
    }
    struct Declared;
    impl Function for Declared {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            vec![x[0] * x[1]]
        }
        fn sizes(&self) -> Option<(usize, usize)> {
            Some((2, 1))
        }
    }
    for pair in [Pair::Auto].into_iter().chain(Pair::ALL) {
        let e = jacobian::hessian_with(&Two, &[1.0, 2.0], pair).unwrap_err();
        assert_eq!(e, Error::NotScalar { outputs: 2 }, "{pair}");
        let e = jacobian::hessian_with(&Declared, &[1.0; 3], pair).unwrap_err();
        assert_eq!(
            e,
            Error::InputLength {
                expected: 2,
                found: 3
            }
        );
    }
    // Twelve inputs: the error comes from the first chunk, whatever the pair.
    let e = jacobian::hessian(&Two, &[1.0; 12]).unwrap_err();
    assert!(e.to_string().contains("returned 2"), "{e}");
    assert_eq!(
        jacobian::hvp(&Two, &[1.0], &[1.0]).unwrap_err(),
        Error::NotScalar { outputs: 2 }
    );
    let e = jacobian::hvp(&Declared, &[1.0, 2.0], &[1.0]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "tangent seed has length 1, but must have length 2"
    );
    let v = DMatrix::zeros(3, 2);
    let e = jacobian::hvp_many(&Declared, &[1.0, 2.0], &v).unwrap_err();
    assert_eq!(
        e,
        Error::SeedLength {
            seed: "tangent",
            expected: 2,
            found: 3
        }
    );
    let e = jacobian::second_directional(&Two, &[1.0], &[1.0, 2.0]).unwrap_err();
    assert_eq!(
        e,
        Error::SeedLength {
            seed: "tangent",
            expected: 1,
            found: 2
        }
    );
}

#[test]
fn kinks_and_non_finite_points_follow_the_rule_table() {
    struct Abs;
    impl Function for Abs {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            vec![x[0].abs() * x[1] + x[1].sqrt()]
        }
    }
    // |x₀| at 0 has derivative 0 by convention, so ∂²/∂x₀∂x₁ = 0 there; √x₁ at 0 has an
    // infinite second derivative: every pair reports −∞ in H[1][1], and nothing panics.
    for pair in [Pair::Auto].into_iter().chain(Pair::ALL) {
        let h = jacobian::hessian_with(&Abs, &[0.0, 0.0], pair).unwrap();
        assert_eq!(h.matrix[(0, 1)], 0.0, "{pair}");
        assert_eq!(h.matrix[(0, 0)], 0.0, "{pair}");
        assert!(
            h.matrix[(1, 1)].is_infinite() || h.matrix[(1, 1)].is_nan(),
            "{pair}"
        );
        // Away from the kink: d/dx₁ of sign(x₀)·x₁ is sign(x₀).
        let h = jacobian::hessian_with(&Abs, &[-2.0, 4.0], pair).unwrap();
        assert_eq!(h.matrix[(0, 1)], -1.0, "{pair}");
        assert!(rel_close(
            h.matrix[(1, 1)],
            -0.25 * 4.0_f64.powf(-1.5),
            1e-15
        ));
        // A NaN input gives NaN, not a panic.
        let h = jacobian::hessian_with(&Rosenbrock, &[f64::NAN, 1.0], pair).unwrap();
        assert!(h.matrix[(0, 0)].is_nan(), "{pair}");
    }
}

#[test]
fn transforms_compose_into_hessians() {
    let x: Vec<f64> = (0..11).map(|i| 0.4 + 0.05 * i as f64).collect();
    let want = rosenbrock_hessian(&x);
    let fr = jacobian::jacobian_with(&Grad(&Rosenbrock), &x, Mode::Forward).unwrap();
    let rr = jacobian::jacobian_with(&Grad(&Rosenbrock), &x, Mode::Reverse).unwrap();
    let ff = jacobian::jacobian_with(&JacFwd(&Rosenbrock), &x, Mode::Forward).unwrap();
    let jr = jacobian::jacobian_with(&JacRev(&Rosenbrock), &x, Mode::Forward).unwrap();
    for (what, h) in [
        ("fr", &fr),
        ("rr", &rr),
        ("ff", &ff),
        ("jacfwd(jacrev)", &jr),
    ] {
        assert_matrix_close(&h.matrix, &want, 1e-12, what);
    }
    // H·v three ways: the gradient of a JVP (reverse over forward), the JVP of a gradient
    // (forward over reverse), and hvp.
    let v: Vec<f64> = (0..11).map(|i| (i as f64).sin()).collect();
    let hv = &want * DMatrix::from_column_slice(11, 1, &v);
    let (_, rf) = jacobian::gradient(&Jvp::new(&Rosenbrock, &v), &x).unwrap();
    let (_, fr) = jacobian::jvp(&Grad(&Rosenbrock), &x, &v).unwrap();
    let p = jacobian::hvp(&Rosenbrock, &x, &v).unwrap();
    for got in [&rf, &fr, &p.product] {
        assert_matrix_close(&DMatrix::from_column_slice(11, 1, got), &hv, 1e-12, "H·v");
    }
    // The VJP of a gradient with weights w is wᵀH = (H·w)ᵀ.
    let wh = Vjp::new(Grad(&Rosenbrock), &v).eval(&x);
    assert_matrix_close(&DMatrix::from_column_slice(11, 1, &wh), &hv, 1e-12, "wᵀH");
    // Grad of Grad: f'' of a function of one input.
    struct Cubic;
    impl Function for Cubic {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            vec![x[0].powi(3) + x[0].sin()]
        }
    }
    let d2 = Grad(&Grad(&Cubic)).eval(&[0.7]);
    assert!(rel_close(d2[0], 6.0 * 0.7 - 0.7_f64.sin(), 1e-15));
    let d3 = Grad(&Grad(&Grad(&Cubic))).eval(&[0.7]);
    assert!(rel_close(d3[0], 6.0 - 0.7_f64.cos(), 1e-15));
}

#[test]
#[should_panic(expected = "Grad needs a function with 1 output, but this one returned 2")]
fn grad_of_a_vector_function_panics_with_the_count() {
    struct Two;
    impl Function for Two {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            vec![x[0], x[0]]
        }
    }
    Grad(&Two).eval(&[1.0]);
}

fn program_point_direction() -> impl Strategy<Value = (Program, Vec<f64>, Vec<f64>)> {
    program().prop_flat_map(|(p, x)| {
        let n = p.n;
        let v = prop::collection::vec(prop_oneof![4 => -1.0..1.0_f64, 1 => Just(0.0)], n);
        (Just(p), Just(x), v)
    })
}

/// The first output of a program, as a scalar function.
struct First<'a>(&'a Program);
impl Function for First<'_> {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        vec![self.0.eval(x)[0]]
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, max_global_rejects: 8192, ..ProptestConfig::default() })]

    /// All four pairs and `Auto` agree to 1e-10 of the largest entry and are exactly
    /// symmetric; `hvp` and `hvp_many` equal H·v and H·V; the gradient matches finite
    /// differences of the gradient to 1e-6 away from kinks.
    #[test]
    fn pairs_agree_on_generated_programs((p, x, v) in program_point_direction()) {
        let f = First(&p);
        prop_assume!(f.eval(&x)[0].is_finite());
        let auto = jacobian::hessian(&f, &x).unwrap();
        assert_symmetric(&auto.matrix);
        let n = x.len();
        // The pairs sum in different orders, and where terms cancel they differ by ulps of the
        // terms, not of the entry: 1e-10 of the largest entry, as across chunks below and in
        // mode_pairs.rs (the saved case: acosh at 1 + 1.6·10⁻⁸, an entry of 0.451 differing
        // by 1.8·10⁻¹² between reverse over forward and `Auto`).
        let scale = auto.matrix.iter().fold(1.0_f64, |m, v| if v.is_finite() { m.max(v.abs()) } else { m });
        for pair in Pair::ALL {
            let h = jacobian::hessian_with(&f, &x, pair).unwrap();
            assert_symmetric(&h.matrix);
            for i in 0..n {
                for j in 0..n {
                    prop_assert!(
                        same(h.matrix[(i, j)], auto.matrix[(i, j)], 0.0)
                            || (h.matrix[(i, j)] - auto.matrix[(i, j)]).abs() <= 1e-10 * scale,
                        "{pair}: H[{i}][{j}] = {} but auto gives {}\n{p:?} at {x:?}",
                        h.matrix[(i, j)], auto.matrix[(i, j)]
                    );
                }
            }
        }
        let hv = jacobian::hvp(&f, &x, &v).unwrap();
        let many = jacobian::hvp_many(&f, &x, &DMatrix::identity(n, n)).unwrap();
        for i in 0..n {
            let terms = (0..n).map(|j| auto.matrix[(i, j)] * v[j]);
            let row_scale = terms.clone().fold(1.0_f64, |m, t| m.max(t.abs()));
            let comb: f64 = terms.sum();
            // H·v in one sweep along v rounds differently from v scaling H's columns, and
            // second derivatives through cancelling terms (acosh near 1, powi(−2)) amplify
            // that: 1e-10 of the scale, as between pairs across chunks (a saved case differed
            // by 1.015e-12 of it).
            prop_assert!(
                (hv.product[i].is_nan() && comb.is_nan()) || (hv.product[i] - comb).abs() <= 1e-10 * row_scale,
                "(H·v)[{i}] = {} but Σ H·v = {comb}", hv.product[i]
            );
            // H·I by `hvp_many` against `hessian`: other sweeps, so 1e-10 of the largest entry
            // as between the pairs (a saved case: 3.0e-12 apart).
            for j in 0..n {
                prop_assert!(
                    same(many[(i, j)], auto.matrix[(i, j)], 0.0)
                        || (many[(i, j)] - auto.matrix[(i, j)]).abs() <= 1e-10 * scale,
                    "(H·I)[{i}][{j}] = {} but H gives {}", many[(i, j)], auto.matrix[(i, j)]
                );
            }
        }
        // Finite differences of the gradient, column by column, where they can be trusted.
        prop_assume!(x.iter().all(|a| a.abs() != 0.0 && a.abs() != 1.0));
        prop_assume!(auto.matrix.iter().all(|h| h.is_finite()));
        for j in 0..n {
            if let Some(col) = fd_column(&Grad(&f), &x, j) {
                for (i, fd) in col.iter().enumerate() {
                    prop_assert!(
                        rel_close(auto.matrix[(i, j)], *fd, 1e-6),
                        "H[{i}][{j}] = {} but finite differences give {fd}\n{p:?} at {x:?}",
                        auto.matrix[(i, j)]
                    );
                }
            }
        }
    }

    /// vᵀ∇²fᵢ v of every output of a vector program, against v·(H·v) of each output.
    #[test]
    fn second_directional_matches_each_outputs_hessian((p, x, v) in program_point_direction()) {
        prop_assume!(p.eval(&x).iter().all(|y| y.is_finite()));
        let d = jacobian::second_directional(&p, &x, &v).unwrap();
        let (y, jv) = jacobian::jvp(&p, &x, &v).unwrap();
        prop_assert_eq!(&d.value, &y);
        for (i, (a, b)) in d.first.iter().zip(&jv).enumerate() {
            prop_assert!(same(*a, *b, 1e-13), "(J·v)[{i}]: {a} vs {b}");
        }
        for (i, &second) in d.second.iter().enumerate() {
            struct Output<'a>(&'a Program, usize);
            impl Function for Output<'_> {
                fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
                    vec![self.0.eval(x)[self.1]]
                }
            }
            let hv = jacobian::hvp(&Output(&p, i), &x, &v).unwrap().product;
            let terms = hv.iter().zip(&v).map(|(h, v)| h * v);
            let scale = terms.clone().fold(1.0_f64, |m, t| m.max(t.abs()));
            let vhv: f64 = terms.sum();
            prop_assert!(
                (second.is_nan() && vhv.is_nan()) || (second - vhv).abs() <= 1e-10 * scale,
                "output {i}: vᵀHv = {second} in one sweep but v·(H·v) = {vhv}\n{p:?} at {x:?}"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(128), max_global_rejects: 8192, ..ProptestConfig::default() })]

    /// Many chunks: windows of a program over 11 or 19 inputs, every pair against `Auto`
    /// (which may switch to reverse over reverse after its first chunk). 128 programs: at 512
    /// this one test took 17 s of the test command (unoptimised); `PROPTEST_CASES` runs more.
    #[test]
    fn pairs_agree_across_chunks((p, x, _v) in program_point_direction(), n in prop_oneof![Just(11usize), Just(19)]) {
        let f = Windows { p: &p, n };
        let xs: Vec<f64> = (0..n).map(|i| x[i % x.len()] + 0.01 * i as f64).collect();
        prop_assume!(f.eval(&xs)[0].is_finite());
        let auto = jacobian::hessian(&f, &xs).unwrap();
        assert_symmetric(&auto.matrix);
        for pair in Pair::ALL {
            let h = jacobian::hessian_with(&f, &xs, pair).unwrap();
            for (k, (a, b)) in h.matrix.iter().zip(auto.matrix.iter()).enumerate() {
                let scale = auto.matrix.iter().fold(1.0_f64, |m, v| if v.is_finite() { m.max(v.abs()) } else { m });
                // Pairs sum in different orders: where large terms cancel they differ by a few
                // ulps of the terms, not of the result (the saved case: acosh at 1.0018, whose
                // second derivative there is −4.5·10³).
                prop_assert!(
                    (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= 1e-10 * scale,
                    "{pair}: entry {k} is {a} but auto gives {b}"
                );
            }
        }
    }
}
