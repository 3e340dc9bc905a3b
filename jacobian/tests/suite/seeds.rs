//! The four seed examples, each in both modes, against exact values.

use crate::common::Sigmoid;
use forward::{Dual, derivative};
use jacobian::{Function, Mode, Op, jacobian_with};
use reverse::Tape;

#[test]
fn seed_1_square_plus_three() {
    // x = 2, y = x², z = y + 3.
    fn z<T: Op>(x: T) -> T {
        let y = x * x;
        y + 3.0
    }
    assert_eq!(derivative(z, 2.0), (7.0, 4.0));
    let tape = Tape::new();
    let x = tape.var(2.0);
    let zv = z(x);
    assert_eq!((zv.value(), tape.gradient(zv).wrt(x)), (7.0, 4.0));
}

#[test]
fn seed_2_product_plus_one() {
    // a = 2, b = 3, c = a·b, d = c + 1.
    fn d<T: Op>(a: T, b: T) -> T {
        let c = a * b;
        c + T::one()
    }
    let da = d(Dual::variable(2.0), Dual::from(3.0)).tangent;
    let db = d(Dual::from(2.0), Dual::variable(3.0)).tangent;
    assert_eq!((da, db), (3.0, 2.0));
    let tape = Tape::new();
    let (a, b) = (tape.var(2.0), tape.var(3.0));
    let g = tape.gradient(d(a, b));
    assert_eq!((g.wrt(a), g.wrt(b)), (3.0, 2.0));
}

/// L(W, x) = Σ tanh(W·x), inputs packed as [W₀₀, W₀₁, W₁₀, W₁₁, x₀, x₁].
struct TanhLayer;
impl Function for TanhLayer {
    fn eval<T: Op>(&self, p: &[T]) -> Vec<T> {
        let (w, x) = p.split_at(4);
        let z0 = w[0] * x[0] + w[1] * x[1];
        let z1 = w[2] * x[0] + w[3] * x[1];
        vec![z0.tanh() + z1.tanh()]
    }
    fn sizes(&self) -> Option<(usize, usize)> {
        Some((6, 1))
    }
}

#[test]
fn seed_3_tanh_layer() {
    let (w, x) = ([1.0, 2.0, 3.0, 4.0], [2.0, 3.0]);
    // Exact: z = W·x = [8, 18], g = tanh′(z) = 1/cosh²(z); ∂L/∂x = Wᵀg, ∂L/∂W = g xᵀ. (Not
    // 1 − tanh²(z), which cancels: at z = 18 it is 4% off, so it passed while the rule erred.)
    let g = [8.0_f64.cosh().powi(-2), 18.0_f64.cosh().powi(-2)];
    let exact = [
        g[0] * x[0],
        g[0] * x[1],
        g[1] * x[0],
        g[1] * x[1],
        g[0] * w[0] + g[1] * w[2],
        g[0] * w[1] + g[1] * w[3],
    ];
    let input = [w[0], w[1], w[2], w[3], x[0], x[1]];
    for mode in [Mode::Forward, Mode::Reverse, Mode::Auto] {
        let j = jacobian_with(&TanhLayer, &input, mode).unwrap();
        for (k, e) in exact.iter().enumerate() {
            let got = j.matrix[(0, k)];
            assert!(
                (got - e).abs() <= 1e-12 * e.abs().max(1e-300),
                "{mode:?}: ∂L/∂p{k} = {got}, exact {e}"
            );
        }
    }
    // Auto follows the cost model; with 6 inputs one forward sweep of 8 tangents covers them.
    let plan = jacobian::jacobian(&TanhLayer, &input).unwrap().plan;
    let e = jacobian::estimate(6, 1);
    let cheaper = if e.forward <= e.reverse {
        Mode::Forward
    } else {
        Mode::Reverse
    };
    assert_eq!(plan.mode, cheaper);
}

#[test]
fn seed_4_user_defined_sigmoid() {
    let s = |x: f64| 1.0 / (1.0 + (-x).exp());
    let x0 = 0.8;
    let exact = s(x0) * (1.0 - s(x0));
    // Forward.
    let (y, d) = derivative(|x| x.apply1(Sigmoid), x0);
    assert_eq!(y, s(x0));
    assert!((d - exact).abs() < 1e-16);
    // Reverse: the tape records it as one node named by the user.
    let tape = Tape::new();
    let x = tape.var(x0);
    let y = x.apply1(Sigmoid);
    assert_eq!(tape.len(), 2);
    assert!((tape.gradient(y).wrt(x) - exact).abs() < 1e-16);
    // Nested: the second derivative s(1−s)(1−2s), differentiating the user's derivative.
    let (_, d2) = derivative(|v: Dual<f64>| derivative(|w| w.apply1(Sigmoid), v).1, x0);
    assert!((d2 - exact * (1.0 - 2.0 * s(x0))).abs() < 1e-16);
    // Forward over reverse would need a tape of duals; reverse over forward works today:
    // record the tangent of a Dual<Var>: d/dx [σ'(x)] by a reverse sweep.
    let tape = Tape::new();
    let x = tape.var(x0);
    let dx = Dual::variable(x).apply1(Sigmoid).tangent;
    assert!((tape.gradient(dx).wrt(x) - exact * (1.0 - 2.0 * s(x0))).abs() < 1e-16);
}
