//! Second derivatives of generated programs in the four nested mode pairs: forward over forward
//! (ff, `Dual<Dual<f64>>`), forward over reverse (fr, a tape of `Dual<f64>`), reverse over
//! forward (rf, `Dual<Var<f64>>`) and reverse over reverse (rr, `Var<Var<f64>>`). All four give
//! the Hessian-vector product H·v and the full Hessian; they must agree with each other to
//! 1e-10 of the largest term (they round differently, and cancelling terms magnify it), and
//! with central differences of the gradient where those can be trusted.

use crate::common::{Binary, Instr, Program, Unary, program, rel_close};
use forward::Dual;
use jacobian::{Function, Op};
use proptest::prelude::*;
use reverse::Var;

/// The program's first output: the scalar function whose Hessian is taken.
fn f0<T: Op>(p: &Program, x: &[T]) -> T {
    p.eval(x)[0]
}

/// ff: n forward sweeps of `Dual<Dual<f64>>`, the inner tangent seeded with v and the outer one
/// with eᵢ; the tangent of the tangent is eᵢᵀ·H·v. Also returns ∇f·v (the inner tangent).
fn hv_ff(p: &Program, x: &[f64], v: &[f64]) -> (Vec<f64>, f64) {
    let mut gv = 0.0;
    let hv = (0..x.len())
        .map(|i| {
            let xs: Vec<Dual<Dual<f64>>> = x
                .iter()
                .zip(v)
                .enumerate()
                .map(|(k, (&xk, &vk))| {
                    let e = if k == i { 1.0 } else { 0.0 };
                    Dual::new(Dual::new(xk, vk), Dual::new(e, 0.0))
                })
                .collect();
            let y = f0(p, &xs);
            gv = y.primal.tangent;
            y.tangent.tangent
        })
        .collect();
    (hv, gv)
}

/// fr: an outer forward derivative seeded with v around an inner reverse gradient (the inner
/// tape holds `Dual<f64>`): the gradient's tangents are H·v. Also returns the gradient.
fn hv_fr(p: &Program, x: &[f64], v: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let xs: Vec<Dual<f64>> = x.iter().zip(v).map(|(&a, &b)| Dual::new(a, b)).collect();
    let (_, g) = reverse::gradient(|w: &[Var<Dual<f64>>]| f0(p, w), &xs);
    (
        g.iter().map(|d| d.tangent).collect(),
        g.iter().map(|d| d.primal).collect(),
    )
}

/// rf: the reverse gradient of the forward directional derivative ∇f·v (computed in
/// `Dual<Var<f64>>`), which is H·v.
fn hv_rf(p: &Program, x: &[f64], v: &[f64]) -> Vec<f64> {
    reverse::gradient(
        |w: &[Var]| {
            let d: Vec<Dual<Var>> = w
                .iter()
                .zip(v)
                .map(|(&wi, &vi)| Dual::new(wi, Var::constant(vi)))
                .collect();
            f0(p, &d).tangent
        },
        x,
    )
    .1
}

/// rr: the reverse gradient of ∇f·v, where ∇f is itself a reverse gradient on a tape of
/// `Var<f64>` (and the product with v is one `dot` node on the outer tape).
fn hv_rr(p: &Program, x: &[f64], v: &[f64]) -> Vec<f64> {
    reverse::gradient(
        |w: &[Var]| {
            let (_, g) = reverse::gradient(|u: &[Var<Var>]| f0(p, u), w);
            let vs: Vec<Var> = v.iter().map(|&c| Var::constant(c)).collect();
            Var::dot(&g, &vs)
        },
        x,
    )
    .1
}

/// Equal as numbers to `tol` relative (scaled by max(|a|, |b|, 1)), or both NaN.
fn same(a: f64, b: f64, tol: f64) -> bool {
    (a.is_nan() && b.is_nan()) || rel_close(a, b, tol)
}

/// H·v by all four pairs, checked against each other; returns the ff result.
fn hv_all(p: &Program, x: &[f64], v: &[f64]) -> Result<Vec<f64>, TestCaseError> {
    let (ff, gv) = hv_ff(p, x, v);
    let (fr, grad) = hv_fr(p, x, v);
    // With an infinite first derivative (acosh at 1, reached exactly: a saved case), f has no
    // second derivatives at x, and the pairs' non-finite entries differ: ff NaN, fr −∞, and rf
    // NaN even where the others give 0 (its tangents are tape variables, whose zeros are not
    // structural, so ∞·0 is NaN there). Not compared.
    if !grad.iter().all(|g| g.is_finite()) {
        return Err(TestCaseError::reject("an infinite first derivative"));
    }
    let rf = hv_rf(p, x, v);
    let rr = hv_rr(p, x, v);
    // The pairs round differently, and cancelling terms magnify it: 1e-10 of the largest
    // entry, as in hessian.rs (a CI case, saved as a regression: acosh near 1 behind two
    // `mul_add`s, ff −0.66485274258184 against rr −0.66485274258077, 1.6e-12 apart).
    let scale = ff
        .iter()
        .filter(|v| v.is_finite())
        .fold(1.0_f64, |m, v| m.max(v.abs()));
    for (name, other) in [("fr", &fr), ("rf", &rf), ("rr", &rr)] {
        for i in 0..x.len() {
            prop_assert!(
                same(ff[i], other[i], 1e-10 * scale),
                "(H·v)[{i}]: ff {} vs {name} {}\nff {ff:?}\nfr {fr:?}\nrf {rf:?}\nrr {rr:?}\n\
                 v = {v:?}\n{p:?} at {x:?}",
                ff[i],
                other[i]
            );
        }
    }
    // The first-order parts carried along agree too: ∇f·v from ff and from the fr gradient.
    let gv_fr: f64 = grad.iter().zip(v).map(|(g, v)| g * v).sum();
    if gv.is_finite() && gv_fr.is_finite() {
        prop_assert!(rel_close(gv, gv_fr, 1e-12), "∇f·v: ff {gv} vs fr {gv_fr}");
    }
    Ok(ff)
}

/// The reverse gradient in plain f64.
fn grad(p: &Program, x: &[f64]) -> Vec<f64> {
    reverse::gradient(|w: &[Var]| f0(p, w), x).1
}

/// H·v by central differences of the gradient along v, Richardson-extrapolated twice; `None`
/// if the two extrapolations disagree (a kink or a jump within the step).
fn fd_hv(p: &Program, x: &[f64], v: &[f64]) -> Option<Vec<f64>> {
    let scale = x.iter().fold(1.0_f64, |m, a| m.max(a.abs()));
    let central = |h: f64| -> Vec<f64> {
        let xp: Vec<f64> = x.iter().zip(v).map(|(a, b)| a + h * b).collect();
        let xm: Vec<f64> = x.iter().zip(v).map(|(a, b)| a - h * b).collect();
        let (gp, gm) = (grad(p, &xp), grad(p, &xm));
        gp.iter()
            .zip(&gm)
            .map(|(a, b)| (a - b) / (2.0 * h))
            .collect()
    };
    let h = 1e-3 * scale;
    let (d1, d2, d3) = (central(h), central(h / 2.0), central(h / 4.0));
    let rich = |a: &[f64], b: &[f64]| -> Vec<f64> {
        a.iter().zip(b).map(|(a, b)| (4.0 * b - a) / 3.0).collect()
    };
    let (r1, r2) = (rich(&d1, &d2), rich(&d2, &d3));
    let agree = r1
        .iter()
        .zip(&r2)
        .all(|(a, b)| (a - b).abs() <= 1e-7 * (1.0 + a.abs()));
    agree.then_some(r2)
}

/// A direction: entries in [-1, 1], sometimes exactly 0 (an input the direction leaves alone).
fn direction(n: usize) -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(prop_oneof![4 => -1.0..1.0_f64, 1 => Just(0.0)], n)
}

fn program_point_direction() -> impl Strategy<Value = (Program, Vec<f64>, Vec<f64>)> {
    program().prop_flat_map(|(p, x)| {
        let n = p.n;
        (Just(p), Just(x), direction(n))
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2048, max_global_rejects: 32768, ..ProptestConfig::default() })]

    /// H·v along a random direction, and vᵀ·H·v, agree in ff, fr, rf and rr.
    #[test]
    fn hessian_vector_products_agree_in_all_four_pairs((p, x, v) in program_point_direction()) {
        prop_assume!(f0(&p, &x).is_finite());
        let hv = hv_all(&p, &x, &v)?;
        // vᵀ·H·v, the second derivative along v: by ff in one sweep (both tangents seeded with
        // v), and as v·(H·v).
        let xs: Vec<Dual<Dual<f64>>> =
            x.iter().zip(&v).map(|(&a, &b)| Dual::new(Dual::new(a, b), Dual::new(b, 0.0))).collect();
        let vhv_ff = f0(&p, &xs).tangent.tangent;
        let vhv: f64 = hv.iter().zip(&v).map(|(h, v)| h * v).sum();
        // Relative to the terms of the sum, which may cancel, and to 1e-10 as between the
        // pairs (a saved case: 1.9e-12 of the scale apart).
        let scale = hv.iter().zip(&v).map(|(h, v)| (h * v).abs()).fold(vhv.abs().max(1.0), f64::max);
        prop_assert!(
            (vhv_ff.is_nan() && vhv.is_nan()) || (vhv_ff - vhv).abs() <= 1e-10 * scale,
            "vᵀHv: one sweep {vhv_ff} vs v·(H·v) {vhv}\n{p:?} at {x:?}"
        );
    }

    /// The full Hessian, column by column (v = eⱼ), in all four pairs, and against central
    /// differences of the gradient along a random v away from kinks.
    #[test]
    fn hessians_agree_and_match_finite_differences((p, x, v) in program_point_direction()) {
        prop_assume!(f0(&p, &x).is_finite());

        let n = x.len();
        let mut h = vec![vec![0.0; n]; n];
        for j in 0..n {
            let mut e = vec![0.0; n];
            e[j] = 1.0;
            let col = hv_all(&p, &x, &e)?;
            for i in 0..n {
                h[i][j] = col[i];
            }
        }
        // H·v is linear in v: the columns combine to the product along v (the pairs compute
        // it in one sweep, with the same partials, so only rounding separates them; to 1e-10 of
        // the terms, for the cancellations that `hv_all` describes: 1.5e-12 apart in its case).
        let hv = hv_all(&p, &x, &v)?;
        for i in 0..n {
            let comb: f64 = (0..n).map(|j| h[i][j] * v[j]).sum();
            let scale = (0..n).map(|j| (h[i][j] * v[j]).abs()).fold(1.0, f64::max);
            prop_assert!(
                (hv[i].is_nan() && comb.is_nan()) || (hv[i] - comb).abs() <= 1e-10 * scale,
                "(H·v)[{i}] = {} but Σⱼ H[{i}][j]·vⱼ = {comb}", hv[i]
            );
        }
        // Finite differences, where they can be trusted: no planted kink or tie point, every
        // value finite, and two extrapolations that agree.
        prop_assume!(x.iter().all(|a| a.abs() != 0.0 && a.abs() != 1.0));
        prop_assume!(hv.iter().all(|a| a.is_finite()));
        let fd = fd_hv(&p, &x, &v);
        prop_assume!(fd.is_some());
        let fd = fd.unwrap();
        for i in 0..n {
            prop_assert!(
                rel_close(hv[i], fd[i], 1e-6),
                "(H·v)[{i}] = {} but finite differences give {}\nH = {h:?}\nv = {v:?}\n{p:?} at {x:?}",
                hv[i],
                fd[i]
            );
        }
    }
}

/// A smooth fixed function with a known Hessian, as a sanity check of the helpers:
/// f(x) = x₀²·x₁ + sin(x₀·x₁), with a program of the generator's instructions.
#[test]
fn helpers_give_a_known_hessian() {
    // v2 = x0·x1, v3 = v2·x0 (= x0²x1), v4 = sin(v2), v5 = v3 + v4.
    let p = Program {
        n: 2,
        instrs: vec![
            Instr::Binary(Binary::Mul, 0, 1),
            Instr::Binary(Binary::Mul, 2, 0),
            Instr::Unary(Unary::Sin, 2),
            Instr::Binary(Binary::Add, 3, 4),
        ],
        outputs: vec![5],
    };
    let (a, b) = (0.7_f64, -1.3_f64);
    let s = (a * b).sin();
    let c = (a * b).cos();
    let h = [
        [2.0 * b - b * b * s, 2.0 * a + c - a * b * s],
        [2.0 * a + c - a * b * s, -a * a * s],
    ];
    let v = [0.25, -2.0];
    let want = [
        h[0][0] * v[0] + h[0][1] * v[1],
        h[1][0] * v[0] + h[1][1] * v[1],
    ];
    let got = hv_ff(&p, &[a, b], &v).0;
    let fr = hv_fr(&p, &[a, b], &v).0;
    let rf = hv_rf(&p, &[a, b], &v);
    let rr = hv_rr(&p, &[a, b], &v);
    for hv in [&got, &fr, &rf, &rr] {
        for i in 0..2 {
            assert!(rel_close(hv[i], want[i], 1e-14), "{hv:?} vs {want:?}");
        }
    }
}

/// ∂²(aᵇ)/∂a∂b = a^(b−1)·(1 + b·ln a), which is 1/a at b = 0. Every pair must give it, in both
/// orders (the Hessian is symmetric), as central differences do.
///
/// A regression test: the rule `shared_ops::rules::Powf` once returned `∂/∂a = T::zero()` for
/// every `b == 0` (the convention is meant only for 0·a⁻¹ at a = 0); for a nested `T` that
/// constant lost the derivative of ∂/∂a in b, and the Hessian came out asymmetric.
#[test]
fn powf_mixed_second_derivative_at_zero_exponent() {
    let p = Program {
        n: 2,
        instrs: vec![Instr::Binary(Binary::Powf, 0, 1)], // (1.5 + sin x₀)^(sin x₁)
        outputs: vec![2],
    };
    // At x = (0, 0): a = 1.5, b = 0, and a' = b' = 1, so H₀₁ = H₁₀ = 1/1.5.
    let x = [0.0, 0.0];
    let want = 1.0 / 1.5;
    for (j, i) in [(0, 1), (1, 0)] {
        let mut e = [0.0; 2];
        e[j] = 1.0;
        let results = [
            ("ff", hv_ff(&p, &x, &e).0[i]),
            ("fr", hv_fr(&p, &x, &e).0[i]),
            ("rf", hv_rf(&p, &x, &e)[i]),
            ("rr", hv_rr(&p, &x, &e)[i]),
        ];
        for (name, got) in results {
            assert!(
                rel_close(got, want, 1e-12),
                "{name}: H[{i}][{j}] = {got}, want {want}"
            );
        }
    }
}

/// f(x) = (∛x·0 + x)·x at x = 0: f′ = 0 and f″ = 2 (the ∛ term is multiplied by a constant 0,
/// whose structural zero must stop ∛'s infinite partial at 0, as the rule table's convention
/// says). A regression test: reverse over reverse once gave a NaN inner gradient, its sweep
/// multiplying the zero partial into a recorded zero instead of skipping it.
///
/// Cause: in a sweep of a `Tape<Var<f64>>` (reverse/src/sweep/kernel.rs, `scalar`), the edge of
/// the constant-zero partial multiplies a *recorded* adjoint (here x, a `Var` of the outer
/// tape): `Var::constant(0) * a` records a node of value 0 that is not a structural zero
/// (`Var::is_structural_zero` is true for constants only). The ∛ node's adjoint is then that recorded 0,
/// which passes the `!a.is_structural_zero()` test, and `∞ · 0` = NaN is added to x's adjoint.
#[test]
fn rr_structural_zero_behind_a_constant_zero_partial() {
    fn f<T: Op>(x: T) -> T {
        (x.cbrt() * T::constant(0.0) + x) * x
    }
    let plain = reverse::gradient(|u: &[Var]| f(u[0]), &[0.0]).1[0];
    let ff = forward::derivative(|x: Dual<f64>| forward::derivative(f, x).1, 0.0);
    let fr = forward::derivative(
        |x: Dual<f64>| reverse::gradient(|u| f(u[0]), &[x]).1[0],
        0.0,
    );
    let rf = reverse::gradient(|w: &[Var]| forward::derivative(f, w[0]).1, &[0.0]).1[0];
    let mut rr_inner = f64::NAN;
    let rr = reverse::gradient(
        |w: &[Var]| {
            let g = reverse::gradient(|u: &[Var<Var>]| f(u[0]), w).1[0];
            rr_inner = g.value();
            g
        },
        &[0.0],
    )
    .1[0];
    assert_eq!((plain, ff.0, fr.0), (0.0, 0.0, 0.0));
    assert_eq!((ff.1, fr.1, rf), (2.0, 2.0, 2.0));
    assert_eq!(rr_inner, 0.0, "rr: the inner gradient f′(0)");
    assert_eq!(rr, 2.0, "rr: f″(0)");
}
