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
//!   Arithmetic with an `f64` constant on the right (`x * 2.0`, `x + 1.0`, …) is part of it,
//!   so that forward mode forms no zero tangent for the constant. `f64` implements it at zero
//!   cost; `forward::Dual<T>` and `reverse::Var` too.
//! * [`rules`]: the table of derivative rules, one line per elementary function, generic over the
//!   number type so that the same rule serves nested duals (higher derivatives), each row with
//!   its Taylor recurrence beside it.
//! * [`series`]: the Taylor-coefficient recurrences those rows call, O(N²) per operation for N
//!   coefficients (Taylor mode, `forward::Taylor`).
//! * [`Function`]: a vector function `Rⁿ → Rᵐ` written once and run in any mode.
//! * [`real`] (feature `nalgebra`, on by default, for nalgebra 0.35; `nalgebra_v0_34` for 0.33
//!   and 0.34): nalgebra's `RealField` for every AD number,
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
//!             a * a + b * b * 100.0
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
mod lift;
pub mod memory;
mod op;
#[cfg(any(feature = "nalgebra", feature = "nalgebra_v0_34"))]
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
    #[cfg(any(feature = "nalgebra", feature = "nalgebra_v0_34"))]
    pub use crate::Real;
    pub use crate::{Binary, Error, Function, Lift, Op, Unary};
    pub use num_traits::Float;
}

pub use error::Error;
pub use float_impl::Compare;
pub use function::Function;
pub use lift::Lift;
pub use num_traits;
pub use op::{Binary, Op, Unary, check_dot, dot_order};
#[cfg(any(feature = "nalgebra", feature = "nalgebra_v0_34"))]
pub use real::Real;
