//! Every derivative rule against central finite differences at several points, the value
//! against `f64`'s own method, and the documented conventions at kinks and edges.

use shared_ops::rules::*;
use shared_ops::{Binary, Unary};

/// Central difference with a step scaled to x; error O(h²) ≈ 1e-10 relative.
fn fd(f: impl Fn(f64) -> f64, x: f64) -> f64 {
    let h = 1e-5 * x.abs().max(1.0);
    (f(x + h) - f(x - h)) / (2.0 * h)
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
}

fn check_unary<R: Unary>(rule: R, reference: fn(f64) -> f64, points: &[f64]) {
    for &x in points {
        let (y, d) = rule.eval(x);
        assert_eq!(
            y.to_bits(),
            reference(x).to_bits(),
            "{} value at {x}",
            R::NAME
        );
        let num = fd(|t| rule.eval(t).0, x);
        assert!(
            close(d, num, 1e-7),
            "{}'({x}) = {d}, finite differences {num}",
            R::NAME
        );
    }
}

fn check_binary<R: Binary>(rule: R, reference: fn(f64, f64) -> f64, points: &[(f64, f64)]) {
    for &(a, b) in points {
        let (y, da, db) = rule.eval(a, b);
        assert_eq!(
            y.to_bits(),
            reference(a, b).to_bits(),
            "{} value at ({a}, {b})",
            R::NAME
        );
        let na = fd(|t| rule.eval(t, b).0, a);
        let nb = fd(|t| rule.eval(a, t).0, b);
        assert!(
            close(da, na, 1e-7),
            "∂{}/∂a at ({a}, {b}) = {da}, fd {na}",
            R::NAME
        );
        assert!(
            close(db, nb, 1e-7),
            "∂{}/∂b at ({a}, {b}) = {db}, fd {nb}",
            R::NAME
        );
    }
}

const ALL: &[f64] = &[-2.3, -0.7, 0.3, 1.1, 4.5];
const POS: &[f64] = &[0.2, 0.9, 1.7, 6.0];
const UNIT: &[f64] = &[-0.9, -0.4, 0.1, 0.6];

#[test]
fn unary_rules_match_finite_differences() {
    check_unary(Neg, |x| -x, ALL);
    check_unary(Recip, f64::recip, &[-2.0, -0.5, 0.3, 3.0]);
    check_unary(Powi(3), |x| x.powi(3), ALL);
    check_unary(Powi(-2), |x| x.powi(-2), &[-1.5, 0.5, 2.0]);
    check_unary(Powi(1), |x| x.powi(1), ALL);
    check_unary(Powi(2), |x| x.powi(2), ALL);
    check_unary(Sqrt, f64::sqrt, POS);
    check_unary(Cbrt, f64::cbrt, &[-3.0, -0.5, 0.4, 8.0]);
    check_unary(Exp, f64::exp, ALL);
    check_unary(Exp2, f64::exp2, ALL);
    check_unary(ExpM1, f64::exp_m1, ALL);
    check_unary(Ln, f64::ln, POS);
    check_unary(Log2, f64::log2, POS);
    check_unary(Log10, f64::log10, POS);
    check_unary(Ln1p, f64::ln_1p, &[-0.5, 0.0, 0.3, 5.0]);
    check_unary(Sin, f64::sin, ALL);
    check_unary(Cos, f64::cos, ALL);
    check_unary(Tan, f64::tan, &[-1.2, -0.3, 0.5, 1.4]);
    check_unary(Asin, f64::asin, UNIT);
    check_unary(Acos, f64::acos, UNIT);
    check_unary(Atan, f64::atan, ALL);
    check_unary(Sinh, f64::sinh, ALL);
    check_unary(Cosh, f64::cosh, ALL);
    check_unary(Tanh, f64::tanh, ALL);
    check_unary(Asinh, f64::asinh, ALL);
    check_unary(Acosh, f64::acosh, &[1.1, 2.0, 7.5]);
    check_unary(Atanh, f64::atanh, UNIT);
    check_unary(Abs, f64::abs, ALL);
    // Piecewise-constant and fractional parts, away from their jumps.
    let smooth = &[-2.3, -0.7, 0.3, 1.2, 4.4];
    check_unary(Floor, f64::floor, smooth);
    check_unary(Ceil, f64::ceil, smooth);
    check_unary(Round, f64::round, smooth);
    check_unary(Trunc, f64::trunc, smooth);
    check_unary(Signum, f64::signum, smooth);
    check_unary(Fract, f64::fract, smooth);
    check_unary(
        Sigmoid,
        |x| {
            if x >= 0.0 {
                1.0 / (1.0 + (-x).exp())
            } else {
                x.exp() / (1.0 + x.exp())
            }
        },
        ALL,
    );
    check_unary(Relu, |x| x.max(0.0), smooth);
}

#[test]
fn binary_rules_match_finite_differences() {
    let pairs = &[(-1.3, 0.4), (0.5, 2.0), (2.2, -0.7), (3.0, 3.5)];
    check_binary(Add, |a, b| a + b, pairs);
    check_binary(Sub, |a, b| a - b, pairs);
    check_binary(Mul, |a, b| a * b, pairs);
    check_binary(Div, |a, b| a / b, pairs);
    check_binary(Rem, |a, b| a % b, &[(5.3, 2.0), (-7.1, 3.0), (1.3, 0.4)]);
    check_binary(
        Powf,
        f64::powf,
        &[(0.5, 2.0), (2.2, -0.7), (3.0, 3.5), (1.5, 0.0)],
    );
    check_binary(Log, f64::log, &[(0.5, 2.0), (3.0, 10.0), (7.0, 0.5)]);
    check_binary(Atan2, f64::atan2, pairs);
    check_binary(Hypot, f64::hypot, pairs);
    check_binary(Max, f64::max, pairs);
    check_binary(Min, f64::min, pairs);
}

#[test]
fn mul_add_partials() {
    let (y, [da, db, dc]) = mul_add(2.0_f64, 3.0, 0.5);
    assert_eq!((y, da, db, dc), (6.5, 3.0, 2.0, 1.0));
    let num = fd(|t| mul_add(t, 3.0, 0.5).0, 2.0);
    assert!(close(da, num, 1e-9));
}

#[test]
fn kink_conventions() {
    // abs at 0 and -0: 0, the midpoint of the subgradient; NaN stays NaN.
    assert_eq!(Abs.eval(0.0_f64), (0.0, 0.0));
    assert_eq!(Abs.eval(-0.0_f64).1, 0.0);
    assert!(Abs.eval(f64::NAN).1.is_nan());
    // max/min of equal arguments: half to each.
    assert_eq!(Max.eval(1.5_f64, 1.5), (1.5, 0.5, 0.5));
    assert_eq!(Min.eval(-2.0_f64, -2.0), (-2.0, 0.5, 0.5));
    // A NaN argument is ignored, as f64::max does, and gets no derivative.
    assert_eq!(Max.eval(f64::NAN, 2.0), (2.0, 0.0, 1.0));
    assert_eq!(Min.eval(3.0, f64::NAN), (3.0, 1.0, 0.0));
    // sqrt and cbrt at 0: +∞.
    assert_eq!(Sqrt.eval(0.0_f64), (0.0, f64::INFINITY));
    assert_eq!(Cbrt.eval(0.0_f64), (0.0, f64::INFINITY));
    // powf: b = 0 gives ∂/∂a = 0 even at a = 0; a = 0 < b gives ∂/∂b = 0; a < 0 gives NaN in b.
    assert_eq!(Powf.eval(0.0_f64, 0.0), (1.0, 0.0, f64::NEG_INFINITY));
    assert_eq!(Powf.eval(0.0_f64, 2.0), (0.0, 0.0, 0.0));
    assert_eq!(Powf.eval(0.0_f64, 0.5).1, f64::INFINITY);
    let (y, da, db) = Powf.eval(-2.0_f64, 2.0);
    assert_eq!((y, da), (4.0, -4.0));
    assert!(db.is_nan());
    // atan2 at the origin has no derivative; hypot at the origin takes the kink's 0.
    let (_, da, db) = Atan2.eval(0.0_f64, 0.0);
    assert!(da.is_nan() && db.is_nan());
    assert_eq!(Hypot.eval(0.0_f64, 0.0), (0.0, 0.0, 0.0));
    // powi(0) is the constant 1.
    assert_eq!(Powi(0).eval(5.0_f64), (1.0, 0.0));
    // Infinite inputs follow IEEE arithmetic.
    assert_eq!(Exp.eval(f64::NEG_INFINITY), (0.0, 0.0));
    assert_eq!(Tanh.eval(f64::INFINITY), (1.0, 0.0));
    assert_eq!(Ln.eval(0.0_f64), (f64::NEG_INFINITY, f64::INFINITY));
    assert_eq!(Acosh.eval(1.0_f64), (0.0, f64::INFINITY));
    // Piecewise-constant functions have derivative 0 at their jumps too; fract has 1.
    assert_eq!(Floor.eval(2.0_f64), (2.0, 0.0));
    assert_eq!(Round.eval(0.5_f64), (1.0, 0.0));
    assert_eq!(Fract.eval(3.0_f64), (0.0, 1.0));
    // relu at 0 takes 0; the sigmoid does not overflow far out on either side.
    assert_eq!(Relu.eval(0.0_f64), (0.0, 0.0));
    assert_eq!(Sigmoid.eval(-800.0_f64), (0.0, 0.0));
    assert_eq!(Sigmoid.eval(800.0_f64), (1.0, 0.0));
    assert_eq!(Rem.eval(7.0_f64, 2.0), (1.0, 1.0, -3.0));
}

#[test]
fn the_plain_float_is_the_plain_function() {
    use shared_ops::Op;
    assert_eq!(2.0_f64.apply1(Sin), 2.0_f64.sin());
    assert_eq!(2.0_f64.apply2(3.0, Powf), 2.0_f64.powf(3.0));
    assert_eq!(f64::constant(0.1), 0.1_f64);
    assert_eq!(1.5_f64.value(), 1.5);
    // The arithmetic with f64 constants that `Op` asks for is the plain arithmetic.
    fn affine<T: Op>(x: T) -> T {
        (x * 2.0 + 1.0 - 0.5) / 4.0
    }
    assert_eq!(affine(3.0_f64), (3.0 * 2.0 + 1.0 - 0.5) / 4.0);
}
