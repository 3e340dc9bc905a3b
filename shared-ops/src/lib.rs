//! The contract shared by forward and reverse mode.
//!
//! Every differentiable program is a list of elementary operations (a *Wengert list*). Each
//! elementary operation knows its value and its **local partial derivatives**. Forward mode pushes
//! tangents through the list in program order, `v̇ = Σ ∂v/∂u · u̇`; reverse mode records the list
//! and pulls adjoints back in reverse order, `ū += ∂v/∂u · v̄`. Both use the same local partials,
//! so this crate writes them once:
//!
//! * [`Op`]: the number interface user functions are generic over. It is
//!   [`num_traits::Float`] plus the assign operators, `Sum`, `Product`, formatting and `'static`,
//!   plus what AD needs: lifting an `f64` constant ([`Op::constant`]), reading the innermost
//!   value ([`Op::value`]) and applying a derivative rule ([`Op::apply1`], [`Op::apply2`]).
//!   `f32` and `f64` implement it at zero cost; `forward::Dual<T>` and `reverse::Var` too.
//!   An operand known to be a constant can say so ([`Op::scale`], [`Op::shift`],
//!   [`Op::sub_from`]: `c·x`, `x + c`, `c − x`), which spares forward mode the products with its
//!   zero tangent.
//! * [`rules`]: the table of derivative rules, one line per elementary function, generic over the
//!   number type so that the same rule serves nested duals (higher derivatives), each row with
//!   its Taylor recurrence beside it.
//! * [`series`]: the Taylor-coefficient recurrences those rows call, O(N²) per operation for N
//!   coefficients (Taylor mode, `forward::Taylor`).
//! * [`Function`]: a vector function `Rⁿ → Rᵐ` written once and run in any mode.
//! * [`real`] (feature `nalgebra`, on by default): nalgebra's `RealField` for every AD number,
//!   and [`Real<T>`] to reach it from code generic over `T: Op`, so that norms, inverses and
//!   decompositions differentiate.
//! * [`Error`]: what the drivers return when the input is wrong.
//! * [`memory`]: the buffers every crate of the library keeps between calls, under one cap.
//! * [`impl_float_via_rules!`] and [`impl_real_field!`]: the whole `Float` (and nalgebra)
//!   surface of a new number type, generated from its `apply1` and `apply2`, so that every
//!   method goes through the rule of the table.
//!
//! # Writing a function once
//!
//! ```
//! use shared_ops::Op;
//!
//! /// Rosenbrock's banana, for any number type.
//! fn rosenbrock<T: Op>(x: &[T]) -> T {
//!     x.windows(2)
//!         .map(|w| {
//!             let a = T::one() - w[0];
//!             let b = w[1] - w[0] * w[0];
//!             a * a + T::constant(100.0) * b * b
//!         })
//!         .sum()
//! }
//!
//! // With f64 it is the plain function, nothing else runs.
//! assert_eq!(rosenbrock(&[1.0_f64, 1.0, 1.0]), 0.0);
//! ```
//!
//! # A user-defined operation
//!
//! An operation the library does not know is added by writing its rule, without editing the
//! library; every mode then differentiates it, including nested duals.
//!
//! ```
//! use shared_ops::{Op, Unary};
//!
//! #[derive(Clone, Copy)]
//! struct Sigmoid;
//!
//! impl Unary for Sigmoid {
//!     const NAME: &'static str = "sigmoid";
//!     fn eval<T: Op>(self, x: T) -> (T, T) {
//!         let s = T::one() / (T::one() + (-x).exp());
//!         (s, s * (T::one() - s)) // the derivative, written by the user
//!     }
//! }
//!
//! let y: f64 = 0.0_f64.apply1(Sigmoid);
//! assert_eq!(y, 0.5);
//! ```
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod error;
mod float_impl;
mod function;
pub mod memory;
#[cfg(feature = "nalgebra")]
pub mod real;
pub mod rules;
pub mod series;

/// One `use` line for code written against the number interface: [`Op`], the [`Float`]
/// methods (`sin`, `exp`, …), [`Function`], the rule traits and [`Error`] (and [`Real`] with
/// the `nalgebra` feature).
///
/// [`Float`]: num_traits::Float
///
/// ```
/// use shared_ops::prelude::*;
///
/// fn f<T: Op>(x: T) -> T {
///     x.sin() * x.exp()
/// }
/// assert_eq!(f(0.0_f64), 0.0);
/// ```
pub mod prelude {
    #[cfg(feature = "nalgebra")]
    pub use crate::Real;
    pub use crate::{Binary, Error, Function, Op, Unary};
    pub use num_traits::Float;
}

pub use error::Error;
pub use function::Function;
pub use num_traits;
#[cfg(feature = "nalgebra")]
pub use real::Real;
pub use rules::{Binary, Unary};

use core::fmt::{Debug, Display};
use core::iter::{Product, Sum};
use num_traits::{Float, NumAssign};

/// The number interface that user functions are written against.
///
/// Write `fn f<T: Op>(x: &[T]) -> Vec<T>` once; call it with `f64` for the value, with
/// `forward::Dual<f64>` for a tangent, with `reverse::Var` to record a tape.
///
/// Zero has two meanings here, kept apart. [`num_traits::Zero::is_zero`] answers as it does for
/// `f64`: is the primal value zero? That is what user code and nalgebra branch on (a decision,
/// kept as a branch guard on a replayable tape). [`Op::is_structural_zero`] is the AD notion:
/// zero in every component and independent of every input, so that a product with it can be
/// skipped (see [`rules`]). Every number is `Send + Sync`, as a nalgebra scalar must be.
///
/// ```
/// use shared_ops::Op;
///
/// fn f<T: Op>(x: T) -> T {
///     x.sin() * T::constant(2.0) + x.powi(2)
/// }
/// assert_eq!(f(0.0_f64), 0.0);
/// assert_eq!(f(1.5_f32).value(), f(1.5_f32) as f64);
/// ```
pub trait Op:
    Float + NumAssign + Sum + Product + Debug + Display + Default + Send + Sync + 'static
{
    /// Lifts an `f64` constant (its derivative is zero in every mode).
    fn constant(c: f64) -> Self;

    /// The innermost `f64` value (the primal), whatever the nesting.
    fn value(&self) -> f64;

    /// True only for a number that is exactly zero in every component (value and every
    /// derivative it carries) and does not depend on any input: a constant zero, an unseeded
    /// tangent, an adjoint that nothing has reached. The structural-zero convention of
    /// [`rules`] skips products with it, so `0 · ∞` contributes nothing, and a tape never
    /// records such a product. For `f32` and `f64` it is `== 0`; a tape variable of value 0 is
    /// not one (its derivatives live on the tape), nor a dual whose tangent is not zero.
    ///
    /// ```
    /// use shared_ops::Op;
    /// assert!(0.0_f64.is_structural_zero() && (-0.0_f64).is_structural_zero());
    /// assert!(!1e-300_f64.is_structural_zero());
    /// ```
    fn is_structural_zero(&self) -> bool;

    /// Applies a one-argument derivative rule: the value of `rule` at `self`, carrying the
    /// derivative in whatever way this number type carries it.
    fn apply1<R: Unary>(self, rule: R) -> Self;

    /// Applies a two-argument derivative rule to `(self, other)`.
    fn apply2<R: Binary>(self, other: Self, rule: R) -> Self;

    /// `c·self` for an `f64` constant `c`: the product with [`Op::constant`]`(c)`, told that
    /// the factor is a constant.
    ///
    /// The value and derivatives are those of `self * T::constant(c)` (a zero derivative may
    /// differ in sign, and a Taylor coefficient that the product's recurrence would make NaN
    /// through `∞·0` is the convention's value). What changes is the work: a constant's
    /// tangent is zero, but forward mode cannot skip the product `0 · value` it would meet in
    /// `self * T::constant(c)`, since `0 · ∞` is not 0 in floating point; here the constant's
    /// tangent is never formed. Duals, their lanes and Taylor numbers scale their components;
    /// a tape records the node it records for the product (`f32`, `f64` and tape variables
    /// take this default).
    ///
    /// Measured on Rosenbrock at n = 1000 (criterion, `rosenbrock_n=1000/jvp_eval`): written
    /// with `scale` and [`Op::sub_from`], f on the duals of a jvp took 1.85 µs against 2.33 µs
    /// with `T::constant` (0.80×); see the README, *Forward mode*.
    ///
    /// ```
    /// use shared_ops::Op;
    /// fn f<T: Op>(x: T) -> T {
    ///     (x * x).scale(3.0) // 3x²
    /// }
    /// assert_eq!(f(2.0_f64), 12.0);
    /// ```
    #[inline(always)]
    fn scale(self, c: f64) -> Self {
        self * Self::constant(c)
    }

    /// `self + c` for an `f64` constant `c`: the sum with [`Op::constant`]`(c)`, its
    /// derivatives `self`'s (see [`Op::scale`] for why it is cheaper).
    ///
    /// ```
    /// use shared_ops::Op;
    /// assert_eq!(2.0_f64.shift(0.5), 2.5);
    /// ```
    #[inline(always)]
    fn shift(self, c: f64) -> Self {
        self + Self::constant(c)
    }

    /// `c − self` for an `f64` constant `c`: the difference with [`Op::constant`]`(c)`, its
    /// derivatives those of `−self` (see [`Op::scale`] for why it is cheaper).
    ///
    /// ```
    /// use shared_ops::Op;
    /// assert_eq!(0.25_f64.sub_from(1.0), 0.75); // 1 − x
    /// ```
    #[inline(always)]
    fn sub_from(self, c: f64) -> Self {
        Self::constant(c) - self
    }

    /// Whether forward-mode numbers built on this type skip tangents that are structural zeros
    /// ([`Op::is_structural_zero`]) instead of multiplying and adding them. That changes no
    /// value (a zero tangent contributes exactly zero by the convention of [`rules`]), only the
    /// sign of a zero tangent and the work: `true` (the default) for numbers whose arithmetic
    /// is recorded or costly, such as tape variables, which would otherwise record every zero
    /// tangent of a reverse-over-forward sweep; `false` for `f32` and `f64`, where a vectorised
    /// multiply is cheaper than a test. Duals and Taylor numbers inherit it from the type one
    /// level down (measured: testing the zero lanes of `DualVec<DualVec<f64, 8>, 8>` made
    /// forward-over-forward Hessians 1.6× slower).
    ///
    /// ```
    /// use shared_ops::Op;
    /// assert!(!f64::SPARSE_TANGENTS);
    /// ```
    const SPARSE_TANGENTS: bool = true;

    /// Whether any component is NaN: the value and, for a number that carries derivatives,
    /// every derivative it carries (for `f32` and `f64`, [`Float::is_nan`]).
    ///
    /// Forward mode computes each operation's tangents as plain multiply-adds and tests this
    /// once on the result: only a NaN can hide a product that the structural-zero convention
    /// of [`rules`] changes (`0·∞`, `0·NaN`), so only then are the products taken one by one.
    /// A number type that carries derivatives must override it to look at them too.
    ///
    /// ```
    /// use shared_ops::Op;
    /// assert!(f64::NAN.has_nan());
    /// assert!(!f64::INFINITY.has_nan());
    /// ```
    #[inline(always)]
    fn has_nan(&self) -> bool {
        self.is_nan()
    }

    /// The dot product `Σ aᵢ·bᵢ`, summed in order from the first product.
    ///
    /// One elementary operation with `2k` operands: on a reverse tape it is one node (∂/∂aᵢ = bᵢ,
    /// ∂/∂bᵢ = aᵢ) instead of `2k − 1`, which is where most of the time of linear algebra goes.
    /// Every other number type computes the plain sum of products.
    ///
    /// # Panics
    ///
    /// If `a` and `b` differ in length.
    ///
    /// ```
    /// use shared_ops::Op;
    /// assert_eq!(f64::dot(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]), 32.0);
    /// assert_eq!(f64::dot(&[], &[]), 0.0);
    /// ```
    fn dot(a: &[Self], b: &[Self]) -> Self {
        check_dot(a.len(), b.len());
        a.iter().zip(b).map(|(&x, &y)| x * y).sum()
    }
}

/// The length check of [`Op::dot`], shared by its implementations.
#[doc(hidden)]
#[track_caller]
#[inline]
pub fn check_dot(a: usize, b: usize) {
    if a != b {
        dot_lengths(a, b)
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn dot_lengths(a: usize, b: usize) -> ! {
    panic!("Op::dot of slices of lengths {a} and {b}: they must have the same length")
}

macro_rules! plain_float {
    ($($t:ty),*) => {$(
        /// The plain float: the rule's value, nothing else (its partials are dead code).
        impl Op for $t {
            const SPARSE_TANGENTS: bool = false;
            #[inline(always)]
            fn constant(c: f64) -> Self {
                c as $t
            }
            #[inline(always)]
            fn value(&self) -> f64 {
                *self as f64
            }
            #[inline(always)]
            fn is_structural_zero(&self) -> bool {
                *self == 0.0
            }
            #[inline(always)]
            fn apply1<R: Unary>(self, rule: R) -> Self {
                rule.eval(self).0
            }
            #[inline(always)]
            fn apply2<R: Binary>(self, other: Self, rule: R) -> Self {
                rule.eval(self, other).0
            }
        }
    )*};
}
plain_float!(f32, f64);
