//! The one-argument rows of the table, each with its Taylor recurrence beside it.

use super::{c, within};
use crate::Unary;
use crate::{Op, series};

/// The series of `s + σ·x²` (s, σ = ±1): the radicand or denominator of the inverse functions.
/// A difference of squares takes its value as ±(1 − x₀)(1 + x₀), which does not cancel.
fn quadratic<T: Op, const N: usize>(s: f64, sigma: f64, x: &[T; N]) -> [T; N] {
    let sq = series::square(x);
    core::array::from_fn(|k| match (k, sigma > 0.0) {
        (0, _) if s * sigma < 0.0 => c::<T>(s) * one_minus_square(x[0]),
        (0, true) => c::<T>(s) + sq[0],
        (0, false) => c::<T>(s) - sq[0],
        (_, true) => sq[k],
        (_, false) => -sq[k],
    })
}

/// 1 − a², as (1 − a)(1 + a): one factor is exact where the other would cancel.
#[inline(always)]
fn one_minus_square<T: Op>(x: T) -> T {
    (T::one() - x) * (T::one() + x)
}

/// The series of `1/u`.
fn recip<T: Op, const N: usize>(u: &[T; N]) -> [T; N] {
    series::div(&series::constant(T::one()), u)
}

/// The series of `1/√u`, its value `√u₀` then reciprocal as in the rules.
fn rsqrt<T: Op, const N: usize>(u: &[T; N]) -> [T; N] {
    series::powf(u, c(-0.5), u[0].sqrt().recip())
}

/// `x` plus the constant `s`.
fn shift<T: Op, const N: usize>(s: f64, x: &[T; N]) -> [T; N] {
    let mut y = *x;
    y[0] = c::<T>(s) + x[0];
    y
}

/// The logarithm to base b from the series of `ln`: value `y0`, coefficients divided by `ln b`.
fn log_base<T: Op, const N: usize>(y0: T, ln: [T; N], ln_b: f64) -> [T; N] {
    let mut y = ln.map(|v| v / ln_b);
    y[0] = y0;
    y
}

unary! {
    /// −a.
    Neg "neg" unit |x| (-x, -T::one()),
        taylor |x| x.map(|v| -v);
    /// 1/a; the derivative −1/a² is −y².
    Recip "recip" |x| { let y = x.recip(); (y, -(y * y)) },
        taylor |x| series::div(&series::constant(T::one()), x);
    /// √a; at a = 0 the derivative is +∞.
    Sqrt "sqrt" |x| { let y = x.sqrt(); (y, (y + y).recip()) },
        taylor |x| series::sqrt(x);
    /// ∛a; at a = 0 the derivative is +∞.
    Cbrt "cbrt" |x| { let y = x.cbrt(); (y, (c::<T>(3.0) * y * y).recip()) },
        taylor |x| series::cbrt(x);
    /// eᵃ; the derivative is the value.
    Exp "exp" |x| { let y = x.exp(); (y, y) },
        taylor |x| series::exp(x);
    /// 2ᵃ.
    Exp2 "exp2" |x| { let y = x.exp2(); (y, y * core::f64::consts::LN_2) },
        taylor |x| series::integrate_with(x, Self.eval(x[0]), |y, m| {
            y[m] * core::f64::consts::LN_2
        });
    /// eᵃ − 1, accurate near 0. The derivative eᵃ is y + 1 where that does not cancel
    /// (y ≥ −½), else eᵃ itself.
    ExpM1 "exp_m1" |x| {
        let y = x.exp_m1();
        (y, if x >= c(-core::f64::consts::LN_2) { y + T::one() } else { x.exp() })
    },
        taylor |x| series::integrate_with(x, Self.eval(x[0]), |y, m| y[m]);
    /// ln a.
    Ln "ln" |x| (x.ln(), x.recip()),
        taylor |x| series::ln(x);
    /// log₂ a.
    Log2 "log2" |x| (x.log2(), x.recip() * core::f64::consts::LOG2_E),
        taylor |x| log_base(x[0].log2(), series::ln(x), core::f64::consts::LN_2);
    /// log₁₀ a.
    Log10 "log10" |x| (x.log10(), x.recip() * core::f64::consts::LOG10_E),
        taylor |x| log_base(x[0].log10(), series::ln(x), core::f64::consts::LN_10);
    /// ln(1 + a), accurate near 0.
    Ln1p "ln_1p" |x| (x.ln_1p(), (T::one() + x).recip()),
        taylor |x| log_base(x[0].ln_1p(), series::ln(&shift(1.0, x)), 1.0);
    /// sin a.
    Sin "sin" |x| sin_cos(x),
        taylor |x| series::sin_cos(x).0;
    /// cos a.
    Cos "cos" |x| { let (s, co) = sin_cos(x); (co, -s) },
        taylor |x| series::sin_cos(x).1;
    /// tan a; the derivative 1 + tan² a.
    Tan "tan" |x| { let y = x.tan(); (y, T::one() + y * y) },
        taylor |x| series::integrate_with(x, Self.eval(x[0]), |y, m| series::square_at(y, m));
    /// asin a; 1 − a² as (1 − a)(1 + a), which does not cancel as |a| → 1.
    Asin "asin" |x| (x.asin(), one_minus_square(x).sqrt().recip()),
        taylor |x| series::integrate(x, x[0].asin(), &rsqrt(&quadratic(1.0, -1.0, x)));
    /// acos a; 1 − a² as (1 − a)(1 + a).
    Acos "acos" |x| (x.acos(), -one_minus_square(x).sqrt().recip()),
        taylor |x| {
            let d = rsqrt(&quadratic(1.0, -1.0, x)).map(|v| -v);
            series::integrate(x, x[0].acos(), &d)
        };
    /// atan a; beyond |a| = 10¹⁵⁰, where a² would overflow, the derivative is 1/a².
    Atan "atan" |x| {
        let d = if within(x, 1e150) {
            (T::one() + x * x).recip()
        } else {
            let r = x.recip();
            r * r
        };
        (x.atan(), d)
    },
        taylor |x| series::integrate(x, x[0].atan(), &recip(&quadratic(1.0, 1.0, x)));
    /// sinh a.
    Sinh "sinh" |x| (x.sinh(), x.cosh()),
        taylor |x| series::sinh_cosh(x).0;
    /// cosh a.
    Cosh "cosh" |x| (x.cosh(), x.sinh()),
        taylor |x| series::sinh_cosh(x).1;
    /// tanh a; the derivative 1 − y² for |a| < 0.55, and 4p/(1 + p)² with p = e^(−2|a|)
    /// beyond, where 1 − y² cancels as tanh saturates (at a = 20 it would be 0 instead of
    /// 1.7e-17). One `exp`, where 1/cosh² a would take a `cosh` (two) and overflow to 0 past
    /// |a| = 355 while the derivative is still normal.
    Tanh "tanh" |x| {
        let y = x.tanh();
        let d = if within(x, 0.55) {
            T::one() - y * y
        } else {
            let p = (x.abs() * -2.0).exp();
            let q = T::one() + p;
            c::<T>(4.0) * p / (q * q)
        };
        (y, d)
    },
        slice tanh tanh_f32,
        taylor |x| series::integrate_with(x, Self.eval(x[0]), |y, m| -series::square_at(y, m));
    /// asinh a; √(a² + 1) as `hypot`, which does not overflow.
    Asinh "asinh" |x| (x.asinh(), x.hypot(T::one()).recip()),
        taylor |x| series::integrate(x, x[0].asinh(), &rsqrt(&quadratic(1.0, 1.0, x)));
    /// acosh a; √(a² − 1) as √(a − 1)·√(a + 1), which neither cancels near 1 nor overflows.
    /// At a = 1 the derivative is +∞.
    Acosh "acosh" |x| (x.acosh(), ((x - T::one()).sqrt() * (x + T::one()).sqrt()).recip()),
        taylor |x| series::integrate(x, x[0].acosh(), &rsqrt(&quadratic(-1.0, 1.0, x)));
    /// atanh a; 1 − a² as (1 − a)(1 + a).
    Atanh "atanh" |x| (x.atanh(), one_minus_square(x).recip()),
        taylor |x| series::integrate(x, x[0].atanh(), &recip(&quadratic(1.0, -1.0, x)));
    /// |a|; the derivative at 0 (and −0) is 0, the midpoint of the subgradient [−1, 1].
    Abs "abs" |x| {
        let d = if x > T::zero() {
            T::one()
        } else if x < T::zero() {
            -T::one()
        } else if x == T::zero() {
            T::zero()
        } else {
            T::nan()
        };
        (x.abs(), d)
    },
        taylor |x| series::linear(x, Self.eval(x[0]));
    /// ⌊a⌋, derivative 0 almost everywhere.
    Floor "floor" flat |x| (x.floor(), T::zero()),
        taylor |x| series::linear(x, Self.eval(x[0]));
    /// ⌈a⌉, derivative 0 almost everywhere.
    Ceil "ceil" flat |x| (x.ceil(), T::zero()),
        taylor |x| series::linear(x, Self.eval(x[0]));
    /// Rounding half away from zero, derivative 0 almost everywhere.
    Round "round" flat |x| (x.round(), T::zero()),
        taylor |x| series::linear(x, Self.eval(x[0]));
    /// Truncation toward zero, derivative 0 almost everywhere.
    Trunc "trunc" flat |x| (x.trunc(), T::zero()),
        taylor |x| series::linear(x, Self.eval(x[0]));
    /// The sign (±1, NaN for NaN), derivative 0 almost everywhere.
    Signum "signum" flat |x| (x.signum(), T::zero()),
        taylor |x| series::linear(x, Self.eval(x[0]));
    /// a − trunc(a), derivative 1 almost everywhere.
    Fract "fract" unit |x| (x.fract(), T::one()),
        taylor |x| series::linear(x, Self.eval(x[0]));
    /// The logistic function 1/(1 + e⁻ᵃ), evaluated without overflow on either side; the
    /// derivative y(1 − y) is e/(1 + e)² for e = e^−|a|, which does not cancel where y
    /// saturates. Not a `Float` method: the tensor module uses it, and scalar code can call
    /// `x.apply1(Sigmoid)`.
    Sigmoid "sigmoid" |x| {
        if x >= T::zero() {
            let e = (-x).exp();
            let y = (T::one() + e).recip();
            (y, e * y * y)
        } else {
            let e = x.exp();
            let q = (T::one() + e).recip();
            (e / (T::one() + e), e * q * q)
        }
    },
        taylor |x| series::integrate_with(x, Self.eval(x[0]), |y, m| {
            y[m] - series::square_at(y, m)
        });
    /// max(a, 0); the derivative at 0 is 0 (a NaN input gives 0, as `f64::max` ignores it). The
    /// value is a branch, not `max`: through `max`, nested numbers would take the tie's ½ at 0 in
    /// their inner levels and 0 in the outer one, so their mixed derivatives would disagree.
    Relu "relu" |x| {
        if x > T::zero() {
            (x, T::one())
        } else {
            (T::zero(), T::zero())
        }
    },
        taylor |x| series::linear(x, Self.eval(x[0]));
}

/// aⁿ for an integer n (the exponent is not differentiated).
///
/// ```
/// use shared_ops::{rules::Powi, Unary};
/// assert_eq!(Powi(3).eval(2.0_f64), (8.0, 12.0));
/// assert_eq!(Powi(0).eval(0.0_f64), (1.0, 0.0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Powi(pub i32);

impl Unary for Powi {
    const NAME: &'static str = "powi";
    #[inline(always)]
    fn eval<T: Op>(self, x: T) -> (T, T) {
        let n = self.0;
        match n {
            0 => (T::one(), T::zero()),
            1 => (x, T::one()),
            2 => (x * x, x + x),
            // The value by `powi` itself, so it is bit-identical to the plain float's.
            _ => (x.powi(n), c::<T>(n as f64) * x.powi(n - 1)),
        }
    }
    /// The recurrence of a real power, except at x₀ = 0 (where it would divide by 0) and for
    /// n = 2: there repeated multiplication, exact as nested duals are.
    #[inline]
    fn taylor<T: Op, const N: usize>(self, x: &[T; N]) -> Option<[T; N]> {
        let n = self.0;
        Some(match n {
            0 | 1 => series::linear(x, self.eval(x[0])),
            _ if n == 2 || x[0] == T::zero() => series::powi(x, n),
            _ => series::powf(x, c(n as f64), x[0].powi(n)),
        })
    }
}

/// `(sin x, cos x)`, computed together. Without the barrier the optimiser may move the call
/// that only the derivative needs past forward mode's test of the partial, into another
/// block, where it can no longer merge the two into one `sincos` call (which slows the dense
/// tanh layer's forward Jacobian). Both values are
/// used wherever a rule is evaluated (tangents, tapes), so the barrier costs no dead call.
#[inline(always)]
fn sin_cos<T: Op>(x: T) -> (T, T) {
    core::hint::black_box(x.sin_cos())
}
