//! Every pair of modes nests, with the levels kept apart by type: forward over forward (ff),
//! forward over reverse (fr), reverse over forward (rf) and reverse over reverse (rr).

use forward::{Dual, derivative};
use reverse::{Float, Tape, Var, gradient};
use shared_ops::Op;

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
