//! The derivative rules: one line per elementary function, written once for both modes.
//!
//! A rule maps the primal input(s) to the value and the local partial derivatives. It is generic
//! over the number type `T: Op`, so the same rule serves `f64`, and `Dual<f64>` inside a nested
//! dual (second derivatives come for free). Forward mode multiplies the partials by the input
//! tangents; reverse mode stores them on the tape and multiplies them by the output adjoint.
//! Where the value makes the partial cheaper, the rule uses it (`d exp = y`), but never where it
//! would cancel: `d tanh = 1 − y²` only for |a| < 0.55. Every partial is within 4 ulps of a
//! 200-bit reference over the whole domain, tails and edges included (checked by
//! `tests/accuracy.rs` against the table of `tests/reference/partials.py`). The column "∂/∂a"
//! gives the formula as computed. Beside each rule sits its Taylor recurrence (see
//! [Taylor recurrences](#taylor-recurrences)).
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
//! | [`ExpM1`] | eᵃ − 1 | y + 1 (a ≥ −ln 2), eᵃ | | |
//! | [`Ln`] | ln a | 1/a | | a = 0: +∞; a < 0: value NaN |
//! | [`Log`] | log_b a | 1/(a ln b) | −y/(b ln b) | |
//! | [`Log2`] | log₂ a | (1/a)·log₂ e | | |
//! | [`Log10`] | log₁₀ a | (1/a)·log₁₀ e | | |
//! | [`Ln1p`] | ln(1 + a) | 1/(1 + a) | | |
//! | [`Sin`] | sin a | cos a | | |
//! | [`Cos`] | cos a | −sin a | | |
//! | [`Tan`] | tan a | 1 + y² | | |
//! | [`Asin`] | asin a | 1/√((1 − a)(1 + a)) | | \|a\| = 1: +∞ |
//! | [`Acos`] | acos a | −1/√((1 − a)(1 + a)) | | \|a\| = 1: −∞ |
//! | [`Atan`] | atan a | 1/(1 + a²); (1/a)² for \|a\| ≥ 10¹⁵⁰ | | |
//! | [`Atan2`] | atan2(a, b) | b/(a² + b²); b/r/r, r = hypot(a, b), where a² + b² leaves the normal range | −a/(a² + b²) | (0, 0): NaN (a jump: no derivative) |
//! | [`Sinh`] | sinh a | cosh a | | |
//! | [`Cosh`] | cosh a | sinh a | | |
//! | [`Tanh`] | tanh a | 1 − y² (\|a\| < 0.55), 1/cosh² a | | |
//! | [`Asinh`] | asinh a | 1/hypot(a, 1) | | |
//! | [`Acosh`] | acosh a | 1/(√(a − 1)·√(a + 1)) | | a = 1: +∞ |
//! | [`Atanh`] | atanh a | 1/((1 − a)(1 + a)) | | \|a\| = 1: ±∞ |
//! | [`Hypot`] | √(a² + b²) | a/y | b/y | (0, 0): 0 and 0 (the kink, as `abs`) |
//! | [`Abs`] | \|a\| | sign a | | a = 0 (and −0): 0, the midpoint of the subgradient |
//! | [`Max`] | max(a, b) | 1 if a > b | 1 if b > a | tie: ½ and ½; a NaN argument is ignored (as `f64::max`) and gets 0 |
//! | [`Min`] | min(a, b) | 1 if a < b | 1 if b < a | tie: ½ and ½; a NaN argument is ignored and gets 0 |
//! | [`mul_add`] | a·b + c | b | a | ∂/∂c = 1 |
//! | [`Floor`], [`Ceil`], [`Round`], [`Trunc`], [`Signum`] | | 0 | | almost everywhere (at the jumps too) |
//! | [`Fract`] | a − trunc a | 1 | | almost everywhere |
//! | [`Sigmoid`] | 1/(1 + e⁻ᵃ) | e/(1 + e)², e = e^−\|a\| | | |
//! | [`Relu`] | max(a, 0) | 1 if a > 0 | | a = 0: 0 |
//!
//! # Taylor recurrences
//!
//! Each row also carries, in its `taylor` clause beside the rule, the recurrence that maps the
//! Taylor coefficients of the argument(s) to those of the value ([`Unary::taylor`](crate::Unary::taylor),
//! [`Binary::taylor`](crate::Binary::taylor), [`mul_add_taylor`]; the formulas are in [`series`](crate::series)): O(N²) for N
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
//! to every coefficient product of its recurrences. "Zero" here is structural
//! ([`Op::is_structural_zero`]): a tape variable whose value happens to be 0 still carries
//! derivatives, and is multiplied like any other.
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

macro_rules! unary {
    ($(
        $(#[$doc:meta])* $name:ident $label:literal $($marker:ident)? |$x:ident| $body:expr,
        $(slice $kernel:ident $kernel_f32:ident,)?
        taylor |$s:ident| $series:expr;
    )*) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct $name;
        impl $crate::Unary for $name {
            const NAME: &'static str = $label;
            $(marker!($marker);)?
            #[inline(always)]
            fn eval<T: Op>(self, $x: T) -> (T, T) {
                $body
            }
            #[inline]
            fn taylor<T: Op, const N: usize>(self, $s: &[T; N]) -> Option<[T; N]> {
                Some($series)
            }
            $(
                // Inlined, so that a caller compiled for wider vectors (`reverse`'s tensors
                // dispatch on the CPU) vectorises the kernel with them.
                #[inline(always)]
                fn eval_slice<T: Op>(self, x: &[T], y: &mut [T], mut d: Option<&mut [T]>) {
                    $crate::op::check_lengths(x.len(), y.len(), d.as_deref().map(<[T]>::len));
                    if !$crate::rules::slices::$kernel(x, y, d.as_deref_mut()) {
                        $crate::op::each(self, x, y, d);
                    }
                }
                #[inline(always)]
                fn eval_slice_f32(self, x: &[f32], y: &mut [f32], d: Option<&mut [f32]>) {
                    $crate::op::check_lengths(x.len(), y.len(), d.as_deref().map(<[f32]>::len));
                    $crate::rules::slices::$kernel_f32(x, y, d);
                }
            )?
        }
    )*};
}

macro_rules! binary {
    ($(
        $(#[$doc:meta])* $name:ident $label:literal $($marker:ident)? |$a:ident, $b:ident| $body:expr,
        taylor |$sa:ident, $sb:ident| $series:expr;
    )*) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct $name;
        impl $crate::Binary for $name {
            const NAME: &'static str = $label;
            $(marker!($marker);)?
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

/// The marker in a row of the table: `unit`, the rule's partials are ±1; `flat`, the rule is
/// piecewise constant.
macro_rules! marker {
    (unit) => {
        const UNIT_PARTIALS: bool = true;
    };
    (flat) => {
        const FLAT: bool = true;
    };
}

#[inline(always)]
fn c<T: Op>(x: f64) -> T {
    T::constant(x)
}

/// |x| < `bound`, by two comparisons of `x` itself. A rule that picks its derivative's formula
/// by its argument asks this way, never through [`Op::value`]: on tape variables (a rule inside
/// reverse over forward) a comparison is kept as a guard, so a re-evaluated recording cannot
/// keep a formula picked on the other side of the bound.
#[inline(always)]
fn within<T: Op>(x: T, bound: f64) -> bool {
    x > c(-bound) && x < c(bound)
}

/// ½, the share of each argument of `max`/`min` at a tie.
#[inline(always)]
fn half<T: Op>() -> T {
    c(0.5)
}

mod binary;
mod slices;
mod unary;

pub use binary::*;
pub use unary::*;
