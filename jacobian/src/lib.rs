//! Full Jacobians of `f: Rⁿ → Rᵐ`, by the cheaper of forward and reverse mode.
//!
//! A forward sweep gives one **column** of the Jacobian (or N columns with an N-tangent dual);
//! a reverse sweep gives one **row**. So a full Jacobian costs about ⌈n/N⌉ forward sweeps or one
//! recording plus m reverse sweeps. [`jacobian`] plans which, runs it, and returns the value,
//! the m×n matrix and the [`Plan`] with the reason in words.
//!
//! Write the function once with the [`Function`] trait:
//!
//! ```
//! use jacobian::{Function, Mode, Op, jacobian, jacobian_with};
//!
//! /// f(x) = [x₀·x₁, sin x₀, x₁²]: 2 inputs, 3 outputs.
//! struct F;
//! impl Function for F {
//!     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
//!         vec![x[0] * x[1], x[0].sin(), x[1].powi(2)]
//!     }
//! }
//!
//! let j = jacobian(&F, &[1.0, 2.0])?;
//! assert_eq!(j.plan.mode, Mode::Forward); // n = 2 ≤ m = 3
//! assert_eq!(j.matrix[(0, 1)], 1.0);
//! assert_eq!(j.matrix[(2, 1)], 4.0);
//!
//! // Forcing the other mode gives the same matrix.
//! let r = jacobian_with(&F, &[1.0, 2.0], Mode::Reverse)?;
//! assert_eq!(r.matrix, j.matrix);
//! println!("{}", j.plan);
//! # Ok::<(), jacobian::Error>(())
//! ```
// `unsafe` is denied but where docs/unsafe.md lists it, with its invariant, its test and the
// measurement that pays for it (a test keeps the list and the code in step).
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod dense;
mod hessian;
mod lanes;
mod plan;
mod prepared;
mod report;
pub mod solvers;
pub mod sparse;
mod sweeps;
pub mod transforms;

pub use dense::{
    Jacobian, Options, Products, gradient, jacobian, jacobian_with, jacobian_with_options, jvp,
    jvp_matrix, jvp_matrix_with, vjp, vjp_matrix, vjp_matrix_with,
};
pub use hessian::{
    Hessian, HessianPlan, Hvp, Pair, PairEstimate, SecondDirectional, estimate_hessian, hessian,
    hessian_cost, hessian_with, hvp, hvp_many, second_directional,
};
/// The nalgebra of the drivers' signatures (`DMatrix`), so that a user needs no version pin.
pub use nalgebra;
pub use plan::{Compilation, Direction, Estimate, Mode, Plan, Replay, cost, estimate};
pub use prepared::{
    Preparation, PreparedGradient, PreparedHessian, PreparedHvp, PreparedJacobian, PreparedPlan,
};
#[allow(unused_imports)]
pub use report::*;
pub use shared_ops::{Error, Function, Lift, Op, Real};
pub use transforms::{Grad, JacFwd, JacRev, Jvp, Vjp};

/// One `use` line for user code: [`Function`], [`Op`] and the `Float` methods, [`Real`], the
/// drivers, the modes, the derivative transforms, and the number types of both modes.
///
/// ```
/// use jacobian::prelude::*;
///
/// struct F;
/// impl Function for F {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         vec![x[0].sin() * x[1]]
///     }
/// }
/// let j = jacobian(&F, &[0.0, 2.0])?;
/// assert_eq!(j.matrix[(0, 0)], 2.0);
/// // `.sin()` on a `Var` and on a `Dual`, with nothing else imported.
/// let tape = Tape::new();
/// assert_eq!(tape.var(0.0).sin().value(), 0.0);
/// assert_eq!(Dual::variable(0.0_f64).sin().tangent, 1.0);
/// # Ok::<(), jacobian::Error>(())
/// ```
pub mod prelude {
    pub use crate::{
        Direction, Grad, JacFwd, JacRev, Jvp, Mode, PreparedGradient, PreparedHessian, PreparedHvp,
        PreparedJacobian, Vjp, gradient, hessian, hvp, jacobian, jacobian_with, jvp, vjp,
    };
    pub use forward::{Dual, DualVec, Taylor};
    pub use reverse::{Tape, Var};
    pub use shared_ops::prelude::*;
}
