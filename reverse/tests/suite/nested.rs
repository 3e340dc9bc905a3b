//! Every pair of modes nests, with the levels kept apart by type: forward over forward (ff),
//! forward over reverse (fr), reverse over forward (rf) and reverse over reverse (rr).

use forward::{Dual, derivative};
use proptest::prelude::*;
use reverse::{Float, ReplayError, Tape, Var, gradient};
use shared_ops::Op;
use test_support::{Outputs, Program, Shape, cases, input, programs};

/// d/dx [x · d/dy (x + y) at y = 1] at x = 1. The inner derivative is 1, so the answer is 1; a
/// tool that confuses the two perturbations answers 2.
#[test]
fn no_perturbation_confusion_in_any_pair() {
    let ff = derivative(
        |x: Dual<f64>| x * derivative(|y: Dual<Dual<f64>>| Dual::from(x) + y, Dual::from(1.0)).1,
        1.0,
    )
    .1;
    let fr = derivative(
        |x: Dual<f64>| {
            x * gradient(
                |y: &[Var<Dual<f64>>]| Var::constant(x) + y[0],
                &[Dual::from(1.0)],
            )
            .1[0]
        },
        1.0,
    )
    .1;
    let rf = gradient(
        |x: &[Var]| x[0] * derivative(|y: Dual<Var>| Dual::from(x[0]) + y, Var::constant(1.0)).1,
        &[1.0],
    )
    .1[0];
    let rr = gradient(
        |x: &[Var]| {
            x[0] * gradient(
                |y: &[Var<Var>]| Var::constant(x[0]) + y[0],
                &[Var::constant(1.0)],
            )
            .1[0]
        },
        &[1.0],
    )
    .1[0];
    assert_eq!([ff, fr, rf, rr], [1.0; 4]);
}

/// The same function's second derivative, f(x) = x³ sin x, by each pair.
#[test]
fn second_derivative_in_every_pair() {
    fn f<T: Op>(x: T) -> T {
        x.powi(3) * x.sin()
    }
    let x0 = 0.7_f64;
    let exact = 6.0 * x0 * x0.sin() + 6.0 * x0 * x0 * x0.cos() - x0.powi(3) * x0.sin();
    let ff = derivative(|x: Dual<f64>| derivative(f, x).1, x0).1;
    let fr = derivative(|x: Dual<f64>| gradient(|v| f(v[0]), &[x]).1[0], x0).1;
    let rf = gradient(|v: &[Var]| derivative(f, v[0]).1, &[x0]).1[0];
    let rr = gradient(
        |v: &[Var]| gradient(|w: &[Var<Var>]| f(w[0]), &[v[0]]).1[0],
        &[x0],
    )
    .1[0];
    for (name, d2) in [("ff", ff), ("fr", fr), ("rf", rf), ("rr", rr)] {
        assert!(
            (d2 - exact).abs() <= 1e-13 * exact.abs(),
            "{name}: {d2} vs {exact}"
        );
    }
}

/// A tape of `Dual<f64>`: one reverse sweep gives the gradient and, in its tangents, the
/// Hessian-vector product (forward over reverse).
#[test]
fn tape_of_duals_gives_hessian_vector_products() {
    // f(x, y) = x² y + y³: H = [[2y, 2x], [2x, 6y]].
    let (x, y) = (1.5, -0.5);
    let v = [1.0, 2.0];
    let tape: Tape<Dual<f64>> = Tape::new();
    let xs = tape.vars(&[Dual::new(x, v[0]), Dual::new(y, v[1])]);
    let out = xs[0] * xs[0] * xs[1] + xs[1].powi(3);
    let g = tape.gradient(out).wrt_all(&xs);
    assert_eq!(g[0].primal, 2.0 * x * y);
    assert_eq!(g[1].primal, x * x + 3.0 * y * y);
    assert_eq!(g[0].tangent, 2.0 * y * v[0] + 2.0 * x * v[1]);
    assert_eq!(g[1].tangent, 2.0 * x * v[0] + 6.0 * y * v[1]);
}

/// A rule that picks its derivative's formula by its argument (atan beyond |a| = 10¹⁵⁰, tanh
/// beyond |a| = 0.55, exp_m1 below −ln 2, atan2 by r²) picks it by comparisons a tape keeps as
/// guards when the rule runs on tape variables (reverse over forward). A recording re-evaluated
/// on the other side fails its guard; one re-evaluated on the same side gives a fresh
/// recording's bits. Kept unguarded, the formula recorded at 10²⁰⁰ (1/a²) would give atan's
/// derivative at 1 as 1 instead of ½.
#[test]
fn nested_rules_guard_the_formula_they_pick() {
    type Rule = fn(Dual<Var>, Dual<Var>) -> Dual<Var>;
    /// A rule, where it is recorded, a point across its bound and one on the same side.
    type Case = (&'static str, Rule, [f64; 2], [f64; 2], [f64; 2]);
    let rules: [Case; 5] = [
        (
            "atan",
            |a, _| a.atan(),
            [1e200, 0.0],
            [1.0, 0.0],
            [2e200, 0.0],
        ),
        ("tanh", |a, _| a.tanh(), [2.0, 0.0], [0.1, 0.0], [3.0, 0.0]),
        (
            "exp_m1",
            |a, _| a.exp_m1(),
            [-1.0, 0.0],
            [0.5, 0.0],
            [-2.0, 0.0],
        ),
        (
            "atan2 by r²",
            |a, b| a.atan2(b),
            [1e-170, 1e-170],
            [0.5, 2.0],
            [3e-170, 1e-171],
        ),
        (
            "atan2 at 0",
            |a, b| a.atan2(b),
            [0.0, 0.0],
            [0.5, 2.0],
            [0.0, 0.0],
        ),
    ];
    // The derivative of the rule along (1, 1) at a point: the tangent, on a tape.
    let record = |rule: Rule, at: [f64; 2]| {
        let tape = Tape::replayable();
        let x = tape.vars(&[at[0], at[1], 1.0, 1.0]);
        let d = rule(Dual::new(x[0], x[2]), Dual::new(x[1], x[3])).tangent;
        (tape.finish(), x, d)
    };
    let with_directions = |at: [f64; 2]| [at[0], at[1], 1.0, 1.0];
    for (name, rule, at, other_side, same_side) in rules {
        let (mut rec, _, _) = record(rule, at);
        let err = rec.reevaluate(&with_directions(other_side));
        assert!(matches!(err, Err(ReplayError::Guard(_))), "{name}: {err:?}");
        let (mut rec, x, d) = record(rule, at);
        rec.reevaluate(&with_directions(same_side)).unwrap();
        let (fresh, xf, df) = record(rule, same_side);
        assert_eq!(rec.value(d).to_bits(), fresh.value(df).to_bits(), "{name}");
        let (g, gf) = (rec.gradient(d).wrt_all(&x), fresh.gradient(df).wrt_all(&xf));
        let bits = |g: &[f64]| g.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&g), bits(&gf), "{name}");
    }
    // atan's derivative at 1, recorded at 10²⁰⁰ and recorded afresh where the guard fails.
    let (mut rec, _, d) = record(rules[0].1, [1e200, 0.0]);
    if rec.reevaluate(&with_directions([1.0, 0.0])).is_ok() {
        assert_eq!(rec.value(d), 0.5, "a formula kept across its boundary");
    }
    let (fresh, _, d) = record(rules[0].1, [1.0, 0.0]);
    assert_eq!(fresh.value(d), 0.5);
}

/// Forward over a tape takes a product with a constant-zero partial (the loser of `max`) as
/// zero by structure, not by the recorded product's value: re-evaluated where the tangent is
/// infinite it stays 0 (0·∞ is 0 by the convention), as a fresh recording gives, not NaN.
#[test]
fn nested_zero_partials_stay_zero_where_a_tangent_becomes_infinite() {
    // The tangent of max(x₀, x₁) along (v₀, v₁) with x₀ < x₁: 0·v₀ + 1·v₁.
    let record = |v0: f64| {
        let tape = Tape::replayable();
        let x = tape.vars(&[1.0, 2.0, v0, 3.0]);
        let d = Dual::new(x[0], x[2]).max(Dual::new(x[1], x[3])).tangent;
        (tape.finish(), x, d)
    };
    for v0 in [f64::INFINITY, f64::NAN] {
        let (mut rec, _, d) = record(0.5);
        rec.reevaluate(&[1.0, 2.0, v0, 3.0]).unwrap();
        let (fresh, _, df) = record(v0);
        assert_eq!(fresh.value(df), 3.0);
        assert_eq!(rec.value(d), 3.0, "re-evaluated at v₀ = {v0}");
    }
}

/// The drivers' programs (every rule, sums and dot products) returning their last value, a
/// point x₀ to record at, a point x₁ near it or far from it, and a direction.
fn two_points() -> impl Strategy<Value = (Program, Vec<f64>, Vec<f64>, Vec<f64>)> {
    let shape = Shape {
        nary: true,
        outputs: Outputs::Last,
        ..Shape::drivers()
    };
    programs(shape).prop_flat_map(|p| {
        let n = p.n;
        let points = prop::collection::vec(input(), 3 * n);
        (Just(p), points, any::<bool>()).prop_map(move |(p, w, near)| {
            let (x0, rest) = w.split_at(n);
            let (far, v) = rest.split_at(n);
            let x1 = match near {
                true => x0.iter().zip(far).map(|(a, b)| a + 1e-3 * b).collect(),
                false => far.to_vec(),
            };
            (p, x0.to_vec(), x1, v.to_vec())
        })
    })
}

/// `∇f(x)·v` recorded on a replayable tape (reverse over forward) at `x ‖ v`.
fn record_tangent(p: &Program, x: &[f64], v: &[f64]) -> (reverse::Recording, Vec<Var>, Var) {
    let tape = Tape::replayable();
    let xv: Vec<f64> = x.iter().chain(v).copied().collect();
    let w = tape.vars(&xv);
    let (xs, vs) = w.split_at(x.len());
    let duals: Vec<Dual<Var>> = xs.iter().zip(vs).map(|(&a, &b)| Dual::new(a, b)).collect();
    let d = p.last(&duals).tangent;
    (tape.finish(), w, d)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(1000)))]

    /// Reverse over forward on generated programs: the directional derivative recorded at x₀
    /// and re-evaluated at x₁ fails a guard, or has the bits of a recording made at x₁, its
    /// value and its gradient (H·v and ∇f). No rule's choice escapes the guards.
    #[test]
    fn nested_recordings_reevaluate_to_a_fresh_recordings_bits((p, x0, x1, v) in two_points()) {
        let (mut rec, w, d) = record_tangent(&p, &x0, &v);
        let xv1: Vec<f64> = x1.iter().chain(&v).copied().collect();
        match rec.reevaluate(&xv1) {
            Err(ReplayError::Guard(_)) => return Ok(()),
            other => other.unwrap(),
        }
        let (fresh, wf, df) = record_tangent(&p, &x1, &v);
        let bits = |g: &[f64]| g.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        prop_assert_eq!(rec.value(d).to_bits(), fresh.value(df).to_bits());
        prop_assert_eq!(
            bits(&rec.gradient(d).wrt_all(&w)),
            bits(&fresh.gradient(df).wrt_all(&wf))
        );
    }
}
