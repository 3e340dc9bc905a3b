//! The derivative rules: one line per elementary function, written once for both modes.
//!
//! A rule maps the primal input(s) to the value and the local partial derivatives. It is generic
//! over the number type `T: Op`, so the same rule serves `f64`, and `Dual<f64>` inside a nested
//! dual (second derivatives come for free). Forward mode multiplies the partials by the input
//! tangents; reverse mode stores them on the tape and multiplies them by the output adjoint.
//! Where the value makes the partial cheaper, the rule uses it (`d exp = y`, `d tanh = 1 − y²`).
//! Beside each rule sits its Taylor recurrence (see [Taylor recurrences](#taylor-recurrences)).
//!
//! | rule | value | ∂/∂a | ∂/∂b | convention at kinks and edges |
//! |---|---|---|---|---|
//! | [`Add`] | a + b | 1 | 1 | |
//! | [`Sub`] | a − b | 1 | −1 | |
//! | [`Mul`] | a · b | b | a | |
//! | [`Div`] | a / b | 1/b | −y/b | |
//! | [`Rem`] | a % b | 1 | −trunc(a/b) | almost everywhere (jumps where a/b is an integer) |
//! | [`Neg`] | −a | −1 | | |
//! | [`Recip`] | 1/a | −y² | | |
//! | [`Powi`]`(n)` | aⁿ | n·aⁿ⁻¹ | | n = 0: 0 |
//! | [`Powf`] | aᵇ | b·aᵇ⁻¹ | y·ln a | a = b = 0: ∂/∂a = 0; y = 0 (a = 0, b > 0): ∂/∂b = 0; a < 0: ∂/∂b = NaN |
//! | [`Sqrt`] | √a | 1/(2y) | | a = 0: +∞ |
//! | [`Cbrt`] | ∛a | 1/(3y²) | | a = 0: +∞ |
//! | [`Exp`] | eᵃ | y | | |
//! | [`Exp2`] | 2ᵃ | y·ln 2 | | |
//! | [`ExpM1`] | eᵃ − 1 | y + 1 | | |
//! | [`Ln`] | ln a | 1/a | | a = 0: +∞; a < 0: value NaN |
//! | [`Log`] | log_b a | 1/(a ln b) | −y/(b ln b) | |
//! | [`Log2`] | log₂ a | 1/(a ln 2) | | |
//! | [`Log10`] | log₁₀ a | 1/(a ln 10) | | |
//! | [`Ln1p`] | ln(1 + a) | 1/(1 + a) | | |
//! | [`Sin`] | sin a | cos a | | |
//! | [`Cos`] | cos a | −sin a | | |
//! | [`Tan`] | tan a | 1 + y² | | |
//! | [`Asin`] | asin a | 1/√(1 − a²) | | \|a\| = 1: +∞ |
//! | [`Acos`] | acos a | −1/√(1 − a²) | | \|a\| = 1: −∞ |
//! | [`Atan`] | atan a | 1/(1 + a²) | | |
//! | [`Atan2`] | atan2(a, b) | b/(a² + b²) | −a/(a² + b²) | (0, 0): NaN (a jump: no derivative) |
//! | [`Sinh`] | sinh a | cosh a | | |
//! | [`Cosh`] | cosh a | sinh a | | |
//! | [`Tanh`] | tanh a | 1 − y² | | |
//! | [`Asinh`] | asinh a | 1/√(a² + 1) | | |
//! | [`Acosh`] | acosh a | 1/√(a² − 1) | | a = 1: +∞ |
//! | [`Atanh`] | atanh a | 1/(1 − a²) | | \|a\| = 1: ±∞ |
//! | [`Hypot`] | √(a² + b²) | a/y | b/y | (0, 0): 0 and 0 (the kink, as `abs`) |
//! | [`Abs`] | \|a\| | sign a | | a = 0 (and −0): 0, the midpoint of the subgradient |
//! | [`Max`] | max(a, b) | 1 if a > b | 1 if b > a | tie: ½ and ½; a NaN argument is ignored (as `f64::max`) and gets 0 |
//! | [`Min`] | min(a, b) | 1 if a < b | 1 if b < a | tie: ½ and ½; a NaN argument is ignored and gets 0 |
//! | [`mul_add`] | a·b + c | b | a | ∂/∂c = 1 |
//! | [`Floor`], [`Ceil`], [`Round`], [`Trunc`], [`Signum`] | | 0 | | almost everywhere (at the jumps too) |
//! | [`Fract`] | a − trunc a | 1 | | almost everywhere |
//! | [`Sigmoid`] | 1/(1 + e⁻ᵃ) | y(1 − y) | | |
//! | [`Relu`] | max(a, 0) | 1 if a > 0 | | a = 0: 0 |
//!
//! # Taylor recurrences
//!
//! Each row also carries, in its `taylor` clause beside the rule, the recurrence that maps the
//! Taylor coefficients of the argument(s) to those of the value ([`Unary::taylor`],
//! [`Binary::taylor`], [`mul_add_taylor`]; the formulas are in [`series`]): O(N²) for N
//! coefficients, where nesting N − 1 duals costs O(2^N). Products, quotients and `√` by
//! convolution; `exp`, `ln`, the logarithms, real powers, `sin`/`cos` and `sinh`/`cosh` by their
//! differential equations; the inverse functions (`asin` … `atanh`) and `atan2` by integrating
//! the derivative; `tan`, `tanh`, `sigmoid`, `exp2` and `exp_m1` by integrating it order by order
//! with the value it depends on. The last column holds at every order, as for nested duals: the
//! piecewise-linear rules (`abs`, `max`, `min`, `relu`, `floor` … `signum`, `fract`, `rem`) keep
//! the rule's slope, so `abs` and `relu` at 0 give a constant 0, a tie of `max`/`min` the
//! average of both series, `floor` a constant series; `hypot` at the origin is the constant 0;
//! `powi` and `powf` at 0 multiply instead of dividing by 0 (`powf` then costs O(N³)); `√`, `∛`
//! and `ln` at 0 give ∞ or NaN coefficients, as the derivatives are.
//!
//! # Structural zeros
//!
//! A partial may be infinite or NaN (√ at 0, `ln` of a non-positive base in `powf`, `atan2` at
//! the origin). Both modes multiply a partial by a tangent (forward) or an adjoint (reverse), and
//! both apply one convention there: **a zero factor gives exactly zero**, not `0 · ∞ = NaN`. So a
//! constant (zero tangent; not even on the tape in reverse mode), an input that is not being
//! seeded, an output that does not depend on a node (zero adjoint) and a zero partial all
//! contribute nothing, and forward and reverse agree at these points too. Taylor mode applies it
//! to every coefficient product of its recurrences.
//!
//! # Writing a rule
//!
//! ```
//! use shared_ops::{Op, Unary};
//!
//! /// softplus(x) = ln(1 + eˣ), with derivative the logistic function.
//! #[derive(Clone, Copy)]
//! struct Softplus;
//! impl Unary for Softplus {
//!     const NAME: &'static str = "softplus";
//!     fn eval<T: Op>(self, x: T) -> (T, T) {
//!         (x.exp().ln_1p(), T::one() / (T::one() + (-x).exp()))
//!     }
//! }
//! assert_eq!(Softplus.eval(0.0_f64), (2.0_f64.ln(), 0.5));
//! ```

use crate::{Op, series};

/// A one-argument rule: value and derivative at `x`, and optionally its Taylor recurrence.
///
/// `Copy` so that rules with parameters (such as [`Powi`]) travel by value.
///
/// ```
/// use shared_ops::{rules::Tanh, Unary};
/// let (y, dy) = Tanh.eval(0.5_f64);
/// assert!((dy - (1.0 - y * y)).abs() < 1e-16);
/// ```
///
/// # Taylor mode
///
/// A Taylor number (`forward::Taylor<T, N>`) carries N coefficients of a curve `x(t)` and asks
/// [`taylor`](Unary::taylor) for the coefficients of `f(x(t))`. Every built-in rule answers with
/// a recurrence of [`series`], O(N²). A user's rule may leave the provided `None`: the Taylor
/// number then evaluates [`eval`](Unary::eval) *on the series itself*, which gives the series
/// `d(t)` of `f'(x(t))`, and integrates it: `y₀ = f(x₀)`, `y_k = (1/k) Σ_{j=1..k} j·x_j·d_{k−j}`
/// ([`series::integrate`]). That needs what nested duals need: the derivative written with `Op`
/// operations. Only the order-0 coefficient of the value is used, so the value may be computed
/// any way (even from `x.value()`), but `eval` must not apply the rule itself to its argument
/// (that would recurse). Each operation inside the derivative costs O(N²) in turn.
///
/// ```
/// use shared_ops::{Op, Unary};
///
/// /// softplus, without a recurrence of its own: Taylor numbers integrate its derivative.
/// #[derive(Clone, Copy)]
/// struct Softplus;
/// impl Unary for Softplus {
///     const NAME: &'static str = "softplus";
///     fn eval<T: Op>(self, x: T) -> (T, T) {
///         (x.exp().ln_1p(), (T::one() + (-x).exp()).recip())
///     }
/// }
/// assert!(Softplus.taylor(&[0.0_f64, 1.0]).is_none());
/// ```
pub trait Unary: Copy {
    /// Name shown in traces and graph exports.
    const NAME: &'static str;
    /// Compact operation code stored on the tape; user rules keep [`OpCode::Custom`].
    const CODE: OpCode = OpCode::Custom;
    /// Returns `(f(x), f'(x))`.
    fn eval<T: Op>(self, x: T) -> (T, T);

    /// The Taylor coefficients of `f(x(t))` from those of `x(t)`, or `None` to let the Taylor
    /// number integrate the derivative series (see [Taylor mode](Unary#taylor-mode)).
    ///
    /// ```
    /// use shared_ops::{rules::Exp, Unary};
    /// // e^t = 1 + t + t²/2.
    /// assert_eq!(Exp.taylor(&[0.0_f64, 1.0, 0.0]), Some([1.0, 1.0, 0.5]));
    /// ```
    fn taylor<T: Op, const N: usize>(self, x: &[T; N]) -> Option<[T; N]> {
        let _ = x;
        None
    }
}

/// A two-argument rule: value and both partial derivatives at `(a, b)`.
///
/// ```
/// use shared_ops::{rules::Mul, Binary};
/// assert_eq!(Mul.eval(2.0_f64, 3.0), (6.0, 3.0, 2.0));
/// ```
pub trait Binary: Copy {
    /// Name shown in traces and graph exports.
    const NAME: &'static str;
    /// Compact operation code stored on the tape; user rules keep [`OpCode::Custom`].
    const CODE: OpCode = OpCode::Custom;
    /// Returns `(f(a, b), ∂f/∂a, ∂f/∂b)`.
    fn eval<T: Op>(self, a: T, b: T) -> (T, T, T);

    /// The Taylor coefficients of `f(a(t), b(t))`, or `None` to let the Taylor number evaluate
    /// [`eval`](Binary::eval) on the series and integrate `y' = ∂f/∂a·a' + ∂f/∂b·b'`
    /// ([`series::integrate2`]), as for [`Unary`].
    ///
    /// ```
    /// use shared_ops::{rules::Mul, Binary};
    /// // (1 + t)(2 + t) = 2 + 3t + t².
    /// assert_eq!(Mul.taylor(&[1.0_f64, 1.0, 0.0], &[2.0, 1.0, 0.0]), Some([2.0, 3.0, 1.0]));
    /// ```
    fn taylor<T: Op, const N: usize>(self, a: &[T; N], b: &[T; N]) -> Option<[T; N]> {
        let _ = (a, b);
        None
    }
}

macro_rules! op_codes {
    ($($code:ident => $name:literal),* $(,)?) => {
        /// The operation that made a tape node: one byte, kept for traces, graph export and replay.
        ///
        /// ```
        /// use shared_ops::OpCode;
        /// assert_eq!(OpCode::Sin.name(), "sin");
        /// assert_eq!(core::mem::size_of::<OpCode>(), 1);
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u8)]
        #[allow(missing_docs)]
        pub enum OpCode { $($code),* }

        impl OpCode {
            /// The operation's name as shown in traces.
            pub const fn name(self) -> &'static str {
                match self { $(OpCode::$code => $name),* }
            }
        }
    };
}

op_codes! {
    Input => "input", Custom => "custom", Sum => "sum", Dot => "dot", Node => "node",
    Add => "+", Sub => "-", Mul => "*", Div => "/", Rem => "%", Neg => "neg",
    Recip => "recip", Powi => "powi", Powf => "powf", Sqrt => "sqrt", Cbrt => "cbrt",
    Exp => "exp", Exp2 => "exp2", ExpM1 => "exp_m1", Ln => "ln", Log => "log", Log2 => "log2",
    Log10 => "log10", Ln1p => "ln_1p", Sin => "sin", Cos => "cos", Tan => "tan", Asin => "asin",
    Acos => "acos", Atan => "atan", Atan2 => "atan2", Sinh => "sinh", Cosh => "cosh",
    Tanh => "tanh", Asinh => "asinh", Acosh => "acosh", Atanh => "atanh", Hypot => "hypot",
    Abs => "abs", Max => "max", Min => "min", MulAdd => "mul_add", Floor => "floor",
    Ceil => "ceil", Round => "round", Trunc => "trunc", Signum => "signum", Fract => "fract",
    Sigmoid => "sigmoid", Relu => "relu",
}

macro_rules! unary {
    ($(
        $(#[$doc:meta])* $name:ident $code:ident |$x:ident| $body:expr,
        taylor |$s:ident| $series:expr;
    )*) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct $name;
        impl Unary for $name {
            const NAME: &'static str = OpCode::$code.name();
            const CODE: OpCode = OpCode::$code;
            #[inline(always)]
            fn eval<T: Op>(self, $x: T) -> (T, T) {
                $body
            }
            #[inline]
            fn taylor<T: Op, const N: usize>(self, $s: &[T; N]) -> Option<[T; N]> {
                Some($series)
            }
        }
    )*};
}

macro_rules! binary {
    ($(
        $(#[$doc:meta])* $name:ident $code:ident |$a:ident, $b:ident| $body:expr,
        taylor |$sa:ident, $sb:ident| $series:expr;
    )*) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct $name;
        impl Binary for $name {
            const NAME: &'static str = OpCode::$code.name();
            const CODE: OpCode = OpCode::$code;
            #[inline(always)]
            fn eval<T: Op>(self, $a: T, $b: T) -> (T, T, T) {
                $body
            }
            #[inline]
            fn taylor<T: Op, const N: usize>(self, $sa: &[T; N], $sb: &[T; N]) -> Option<[T; N]> {
                Some($series)
            }
        }
    )*};
}

#[inline(always)]
fn c<T: Op>(x: f64) -> T {
    T::constant(x)
}

/// ½, the share of each argument of `max`/`min` at a tie.
#[inline(always)]
fn half<T: Op>() -> T {
    c(0.5)
}

/// The series of `s + σ·x²` (σ = ±1): the radicand or denominator of the inverse functions,
/// its value computed as the rule computes it (`1 − x·x`).
fn quadratic<T: Op, const N: usize>(s: f64, sigma: f64, x: &[T; N]) -> [T; N] {
    let sq = series::square(x);
    core::array::from_fn(|k| match (k, sigma > 0.0) {
        (0, true) => c::<T>(s) + sq[0],
        (0, false) => c::<T>(s) - sq[0],
        (_, true) => sq[k],
        (_, false) => -sq[k],
    })
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
    let mut y = ln.map(|v| v / c(ln_b));
    y[0] = y0;
    y
}

unary! {
    /// −a.
    Neg Neg |x| (-x, -T::one()),
        taylor |x| x.map(|v| -v);
    /// 1/a; the derivative −1/a² is −y².
    Recip Recip |x| { let y = x.recip(); (y, -(y * y)) },
        taylor |x| series::div(&series::constant(T::one()), x);
    /// √a; at a = 0 the derivative is +∞.
    Sqrt Sqrt |x| { let y = x.sqrt(); (y, (y + y).recip()) },
        taylor |x| series::sqrt(x);
    /// ∛a; at a = 0 the derivative is +∞.
    Cbrt Cbrt |x| { let y = x.cbrt(); (y, (c::<T>(3.0) * y * y).recip()) },
        taylor |x| series::cbrt(x);
    /// eᵃ; the derivative is the value.
    Exp Exp |x| { let y = x.exp(); (y, y) },
        taylor |x| series::exp(x);
    /// 2ᵃ.
    Exp2 Exp2 |x| { let y = x.exp2(); (y, y * c(core::f64::consts::LN_2)) },
        taylor |x| series::integrate_with(x, Self.eval(x[0]), |y, m| {
            y[m] * c(core::f64::consts::LN_2)
        });
    /// eᵃ − 1, accurate near 0.
    ExpM1 ExpM1 |x| { let y = x.exp_m1(); (y, y + T::one()) },
        taylor |x| series::integrate_with(x, Self.eval(x[0]), |y, m| y[m]);
    /// ln a.
    Ln Ln |x| (x.ln(), x.recip()),
        taylor |x| series::ln(x);
    /// log₂ a.
    Log2 Log2 |x| (x.log2(), (x * c(core::f64::consts::LN_2)).recip()),
        taylor |x| log_base(x[0].log2(), series::ln(x), core::f64::consts::LN_2);
    /// log₁₀ a.
    Log10 Log10 |x| (x.log10(), (x * c(core::f64::consts::LN_10)).recip()),
        taylor |x| log_base(x[0].log10(), series::ln(x), core::f64::consts::LN_10);
    /// ln(1 + a), accurate near 0.
    Ln1p Ln1p |x| (x.ln_1p(), (T::one() + x).recip()),
        taylor |x| log_base(x[0].ln_1p(), series::ln(&shift(1.0, x)), 1.0);
    /// sin a.
    Sin Sin |x| x.sin_cos(),
        taylor |x| series::sin_cos(x).0;
    /// cos a.
    Cos Cos |x| { let (s, co) = x.sin_cos(); (co, -s) },
        taylor |x| series::sin_cos(x).1;
    /// tan a; the derivative 1 + tan² a.
    Tan Tan |x| { let y = x.tan(); (y, T::one() + y * y) },
        taylor |x| series::integrate_with(x, Self.eval(x[0]), |y, m| series::square_at(y, m));
    /// asin a.
    Asin Asin |x| (x.asin(), (T::one() - x * x).sqrt().recip()),
        taylor |x| series::integrate(x, x[0].asin(), &rsqrt(&quadratic(1.0, -1.0, x)));
    /// acos a.
    Acos Acos |x| (x.acos(), -(T::one() - x * x).sqrt().recip()),
        taylor |x| {
            let d = rsqrt(&quadratic(1.0, -1.0, x)).map(|v| -v);
            series::integrate(x, x[0].acos(), &d)
        };
    /// atan a.
    Atan Atan |x| (x.atan(), (T::one() + x * x).recip()),
        taylor |x| series::integrate(x, x[0].atan(), &recip(&quadratic(1.0, 1.0, x)));
    /// sinh a.
    Sinh Sinh |x| (x.sinh(), x.cosh()),
        taylor |x| series::sinh_cosh(x).0;
    /// cosh a.
    Cosh Cosh |x| (x.cosh(), x.sinh()),
        taylor |x| series::sinh_cosh(x).1;
    /// tanh a; the derivative 1 − y².
    Tanh Tanh |x| { let y = x.tanh(); (y, T::one() - y * y) },
        taylor |x| series::integrate_with(x, Self.eval(x[0]), |y, m| -series::square_at(y, m));
    /// asinh a.
    Asinh Asinh |x| (x.asinh(), (x * x + T::one()).sqrt().recip()),
        taylor |x| series::integrate(x, x[0].asinh(), &rsqrt(&quadratic(1.0, 1.0, x)));
    /// acosh a; at a = 1 the derivative is +∞.
    Acosh Acosh |x| (x.acosh(), (x * x - T::one()).sqrt().recip()),
        taylor |x| series::integrate(x, x[0].acosh(), &rsqrt(&quadratic(-1.0, 1.0, x)));
    /// atanh a.
    Atanh Atanh |x| (x.atanh(), (T::one() - x * x).recip()),
        taylor |x| series::integrate(x, x[0].atanh(), &recip(&quadratic(1.0, -1.0, x)));
    /// |a|; the derivative at 0 (and −0) is 0, the midpoint of the subgradient [−1, 1].
    Abs Abs |x| {
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
    Floor Floor |x| (x.floor(), T::zero()),
        taylor |x| series::linear(x, Self.eval(x[0]));
    /// ⌈a⌉, derivative 0 almost everywhere.
    Ceil Ceil |x| (x.ceil(), T::zero()),
        taylor |x| series::linear(x, Self.eval(x[0]));
    /// Rounding half away from zero, derivative 0 almost everywhere.
    Round Round |x| (x.round(), T::zero()),
        taylor |x| series::linear(x, Self.eval(x[0]));
    /// Truncation toward zero, derivative 0 almost everywhere.
    Trunc Trunc |x| (x.trunc(), T::zero()),
        taylor |x| series::linear(x, Self.eval(x[0]));
    /// The sign (±1, NaN for NaN), derivative 0 almost everywhere.
    Signum Signum |x| (x.signum(), T::zero()),
        taylor |x| series::linear(x, Self.eval(x[0]));
    /// a − trunc(a), derivative 1 almost everywhere.
    Fract Fract |x| (x.fract(), T::one()),
        taylor |x| series::linear(x, Self.eval(x[0]));
    /// The logistic function 1/(1 + e⁻ᵃ), evaluated without overflow on either side; the
    /// derivative is y(1 − y). Not a `Float` method: the tensor module uses it, and scalar code
    /// can call `x.apply1(Sigmoid)`.
    Sigmoid Sigmoid |x| {
        let y = if x >= T::zero() {
            (T::one() + (-x).exp()).recip()
        } else {
            let e = x.exp();
            e / (T::one() + e)
        };
        (y, y * (T::one() - y))
    },
        taylor |x| series::integrate_with(x, Self.eval(x[0]), |y, m| {
            y[m] - series::square_at(y, m)
        });
    /// max(a, 0); the derivative at 0 is 0 (a NaN input gives 0, as `f64::max` ignores it). The
    /// value is a branch, not `max`: through `max`, nested numbers would take the tie's ½ at 0 in
    /// their inner levels and 0 in the outer one, so their mixed derivatives would disagree.
    Relu Relu |x| {
        if x > T::zero() {
            (x, T::one())
        } else {
            (T::zero(), T::zero())
        }
    },
        taylor |x| series::linear(x, Self.eval(x[0]));
}

binary! {
    /// a + b.
    Add Add |a, b| (a + b, T::one(), T::one()),
        taylor |a, b| core::array::from_fn(|k| a[k] + b[k]);
    /// a − b.
    Sub Sub |a, b| (a - b, T::one(), -T::one()),
        taylor |a, b| core::array::from_fn(|k| a[k] - b[k]);
    /// a · b.
    Mul Mul |a, b| (a * b, b, a),
        taylor |a, b| series::mul(a, b);
    /// a / b (the value by a true division, as `f64`); ∂/∂b = −a/b² is −y/b.
    Div Div |a, b| { let y = a / b; let r = b.recip(); (y, r, -(y * r)) },
        taylor |a, b| series::div(a, b);
    /// The truncated remainder a − b·trunc(a/b) (Rust's `%`).
    Rem Rem |a, b| (a % b, T::one(), -(a / b).trunc()),
        taylor |a, b| series::linear2(a, b, Self.eval(a[0], b[0]));
    /// aᵇ with both arguments variable. ∂/∂a is 0 at a = b = 0 (where b·aᵇ⁻¹ would be 0·∞); ∂/∂b
    /// is 0 where aᵇ = 0, and NaN for a < 0, where aᵇ is not differentiable in b.
    Powf Powf |a, b| {
        let y = a.powf(b);
        // b·aᵇ⁻¹ is 0 at b = 0 for any a ≠ 0, and so is computed, so that nested numbers keep
        // its derivative in b (1/a); only 0·∞ at a = b = 0 takes the convention.
        let da = if b == T::zero() && a == T::zero() {
            T::zero()
        } else {
            b * a.powf(b - T::one())
        };
        let db = if y == T::zero() { T::zero() } else { y * a.ln() };
        (y, da, db)
    },
        taylor |a, b| series::pow(a, b);
    /// log_b a = ln a / ln b.
    Log Log |a, b| {
        let lb = b.ln();
        let y = a.ln() / lb;
        (y, (a * lb).recip(), -y / (b * lb))
    },
        taylor |a, b| series::div(&series::ln(a), &series::ln(b));
    /// atan2(a, b), the angle of the point (b, a). At the origin the partials are NaN.
    Atan2 Atan2 |a, b| {
        let r2 = a * a + b * b;
        (a.atan2(b), b / r2, -a / r2)
    },
        taylor |a, b| {
            let (a2, b2) = (series::square(a), series::square(b));
            let r2 = core::array::from_fn(|k| a2[k] + b2[k]);
            let (da, db) = (series::div(b, &r2), series::div(a, &r2).map(|v| -v));
            series::integrate2(a, b, a[0].atan2(b[0]), &da, &db)
        };
    /// √(a² + b²) without overflow. At the origin both partials are 0 (the kink, like `abs`).
    Hypot Hypot |a, b| {
        let y = a.hypot(b);
        if y == T::zero() { (y, T::zero(), T::zero()) } else { (y, a / y, b / y) }
    },
        taylor |a, b| {
            let first = Self.eval(a[0], b[0]);
            if first.0 == T::zero() {
                series::linear2(a, b, first)
            } else {
                series::hypot(a, b, first.0)
            }
        };
    /// max(a, b). At a tie each argument gets ½; a NaN argument is ignored (as `f64::max`).
    Max Max |a, b| {
        let y = a.max(b);
        if a > b || b.is_nan() {
            (y, T::one(), T::zero())
        } else if a < b || a.is_nan() {
            (y, T::zero(), T::one())
        } else {
            (y, half(), half())
        }
    },
        taylor |a, b| series::linear2(a, b, Self.eval(a[0], b[0]));
    /// min(a, b). At a tie each argument gets ½; a NaN argument is ignored (as `f64::min`).
    Min Min |a, b| {
        let y = a.min(b);
        if a < b || b.is_nan() {
            (y, T::one(), T::zero())
        } else if a > b || a.is_nan() {
            (y, T::zero(), T::one())
        } else {
            (y, half(), half())
        }
    },
        taylor |a, b| series::linear2(a, b, Self.eval(a[0], b[0]));
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
    const NAME: &'static str = OpCode::Powi.name();
    const CODE: OpCode = OpCode::Powi;
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

/// The fused a·b + c: returns the value and the partials `[∂/∂a, ∂/∂b, ∂/∂c] = [b, a, 1]`.
///
/// The only three-argument rule, so it is a function rather than a trait.
///
/// ```
/// assert_eq!(shared_ops::rules::mul_add(2.0_f64, 3.0, 1.0), (7.0, [3.0, 2.0, 1.0]));
/// ```
#[inline(always)]
pub fn mul_add<T: Op>(a: T, b: T, c: T) -> (T, [T; 3]) {
    (a.mul_add(b, c), [b, a, T::one()])
}

/// The Taylor coefficients of a·b + c: the product series plus c, the value fused as in
/// [`mul_add`].
///
/// ```
/// // (1 + t)(2 + t) + t = 2 + 4t + t².
/// let y = shared_ops::rules::mul_add_taylor(&[1.0_f64, 1.0, 0.0], &[2.0, 1.0, 0.0], &[0.0, 1.0, 0.0]);
/// assert_eq!(y, [2.0, 4.0, 1.0]);
/// ```
pub fn mul_add_taylor<T: Op, const N: usize>(a: &[T; N], b: &[T; N], c: &[T; N]) -> [T; N] {
    let mut y = series::mul(a, b);
    y[0] = a[0].mul_add(b[0], c[0]);
    for k in 1..N {
        y[k] += c[k];
    }
    y
}
