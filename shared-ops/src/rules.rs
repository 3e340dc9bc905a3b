//! The derivative rules: one line per elementary function, written once for both modes.
//!
//! A rule maps the primal input(s) to the value and the local partial derivatives. It is generic
//! over the number type `T: Op`, so the same rule serves `f64`, and `Dual<f64>` inside a nested
//! dual (second derivatives come for free). Forward mode multiplies the partials by the input
//! tangents; reverse mode stores them on the tape and multiplies them by the output adjoint.
//! Where the value makes the partial cheaper, the rule uses it (`d exp = y`, `d tanh = 1 − y²`).
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
//! # Structural zeros
//!
//! A partial may be infinite or NaN (√ at 0, `ln` of a non-positive base in `powf`, `atan2` at
//! the origin). Both modes multiply a partial by a tangent (forward) or an adjoint (reverse), and
//! both apply one convention there: **a zero factor gives exactly zero**, not `0 · ∞ = NaN`. So a
//! constant (zero tangent; not even on the tape in reverse mode), an input that is not being
//! seeded, an output that does not depend on a node (zero adjoint) and a zero partial all
//! contribute nothing, and forward and reverse agree at these points too.
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

use crate::Op;

/// A one-argument rule: value and derivative at `x`.
///
/// `Copy` so that rules with parameters (such as [`Powi`]) travel by value.
///
/// ```
/// use shared_ops::{rules::Tanh, Unary};
/// let (y, dy) = Tanh.eval(0.5_f64);
/// assert!((dy - (1.0 - y * y)).abs() < 1e-16);
/// ```
pub trait Unary: Copy {
    /// Name shown in traces and graph exports.
    const NAME: &'static str;
    /// Compact operation code stored on the tape; user rules keep [`OpCode::Custom`].
    const CODE: OpCode = OpCode::Custom;
    /// Returns `(f(x), f'(x))`.
    fn eval<T: Op>(self, x: T) -> (T, T);
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
    ($($(#[$doc:meta])* $name:ident $code:ident |$x:ident| $body:expr;)*) => {$(
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
        }
    )*};
}

macro_rules! binary {
    ($($(#[$doc:meta])* $name:ident $code:ident |$a:ident, $b:ident| $body:expr;)*) => {$(
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

unary! {
    /// −a.
    Neg Neg |x| (-x, -T::one());
    /// 1/a; the derivative −1/a² is −y².
    Recip Recip |x| { let y = x.recip(); (y, -(y * y)) };
    /// √a; at a = 0 the derivative is +∞.
    Sqrt Sqrt |x| { let y = x.sqrt(); (y, (y + y).recip()) };
    /// ∛a; at a = 0 the derivative is +∞.
    Cbrt Cbrt |x| { let y = x.cbrt(); (y, (c::<T>(3.0) * y * y).recip()) };
    /// eᵃ; the derivative is the value.
    Exp Exp |x| { let y = x.exp(); (y, y) };
    /// 2ᵃ.
    Exp2 Exp2 |x| { let y = x.exp2(); (y, y * c(core::f64::consts::LN_2)) };
    /// eᵃ − 1, accurate near 0.
    ExpM1 ExpM1 |x| { let y = x.exp_m1(); (y, y + T::one()) };
    /// ln a.
    Ln Ln |x| (x.ln(), x.recip());
    /// log₂ a.
    Log2 Log2 |x| (x.log2(), (x * c(core::f64::consts::LN_2)).recip());
    /// log₁₀ a.
    Log10 Log10 |x| (x.log10(), (x * c(core::f64::consts::LN_10)).recip());
    /// ln(1 + a), accurate near 0.
    Ln1p Ln1p |x| (x.ln_1p(), (T::one() + x).recip());
    /// sin a.
    Sin Sin |x| x.sin_cos();
    /// cos a.
    Cos Cos |x| { let (s, co) = x.sin_cos(); (co, -s) };
    /// tan a; the derivative 1 + tan² a.
    Tan Tan |x| { let y = x.tan(); (y, T::one() + y * y) };
    /// asin a.
    Asin Asin |x| (x.asin(), (T::one() - x * x).sqrt().recip());
    /// acos a.
    Acos Acos |x| (x.acos(), -(T::one() - x * x).sqrt().recip());
    /// atan a.
    Atan Atan |x| (x.atan(), (T::one() + x * x).recip());
    /// sinh a.
    Sinh Sinh |x| (x.sinh(), x.cosh());
    /// cosh a.
    Cosh Cosh |x| (x.cosh(), x.sinh());
    /// tanh a; the derivative 1 − y².
    Tanh Tanh |x| { let y = x.tanh(); (y, T::one() - y * y) };
    /// asinh a.
    Asinh Asinh |x| (x.asinh(), (x * x + T::one()).sqrt().recip());
    /// acosh a; at a = 1 the derivative is +∞.
    Acosh Acosh |x| (x.acosh(), (x * x - T::one()).sqrt().recip());
    /// atanh a.
    Atanh Atanh |x| (x.atanh(), (T::one() - x * x).recip());
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
    };
    /// ⌊a⌋, derivative 0 almost everywhere.
    Floor Floor |x| (x.floor(), T::zero());
    /// ⌈a⌉, derivative 0 almost everywhere.
    Ceil Ceil |x| (x.ceil(), T::zero());
    /// Rounding half away from zero, derivative 0 almost everywhere.
    Round Round |x| (x.round(), T::zero());
    /// Truncation toward zero, derivative 0 almost everywhere.
    Trunc Trunc |x| (x.trunc(), T::zero());
    /// The sign (±1, NaN for NaN), derivative 0 almost everywhere.
    Signum Signum |x| (x.signum(), T::zero());
    /// a − trunc(a), derivative 1 almost everywhere.
    Fract Fract |x| (x.fract(), T::one());
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
    };
    /// max(a, 0); the derivative at 0 is 0 (a NaN input gives 0, as `f64::max` ignores it). The
    /// value is a branch, not `max`: through `max`, nested numbers would take the tie's ½ at 0 in
    /// their inner levels and 0 in the outer one, so their mixed derivatives would disagree.
    Relu Relu |x| {
        if x > T::zero() {
            (x, T::one())
        } else {
            (T::zero(), T::zero())
        }
    };
}

binary! {
    /// a + b.
    Add Add |a, b| (a + b, T::one(), T::one());
    /// a − b.
    Sub Sub |a, b| (a - b, T::one(), -T::one());
    /// a · b.
    Mul Mul |a, b| (a * b, b, a);
    /// a / b (the value by a true division, as `f64`); ∂/∂b = −a/b² is −y/b.
    Div Div |a, b| { let y = a / b; let r = b.recip(); (y, r, -(y * r)) };
    /// The truncated remainder a − b·trunc(a/b) (Rust's `%`).
    Rem Rem |a, b| (a % b, T::one(), -(a / b).trunc());
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
    };
    /// log_b a = ln a / ln b.
    Log Log |a, b| {
        let lb = b.ln();
        let y = a.ln() / lb;
        (y, (a * lb).recip(), -y / (b * lb))
    };
    /// atan2(a, b), the angle of the point (b, a). At the origin the partials are NaN.
    Atan2 Atan2 |a, b| {
        let r2 = a * a + b * b;
        (a.atan2(b), b / r2, -a / r2)
    };
    /// √(a² + b²) without overflow. At the origin both partials are 0 (the kink, like `abs`).
    Hypot Hypot |a, b| {
        let y = a.hypot(b);
        if y == T::zero() { (y, T::zero(), T::zero()) } else { (y, a / y, b / y) }
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
    };
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
    };
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
