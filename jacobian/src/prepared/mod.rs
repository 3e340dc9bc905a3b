//! Prepared drivers: a function recorded once and re-evaluated at every new point, for the
//! solvers and optimisers that ask for derivatives of one function thousands of times.
//!
//! The recording is made on a replayable tape ([`reverse::Tape::replayable`]); each call
//! re-evaluates it at the new `x` ([`reverse::Recording::reevaluate`]) and sweeps it, which
//! gives bit for bit what a fresh recording would, without running `f` again. Where a branch
//! of `f` goes the other way (a guard fails), the call records `f` afresh at that point, keeps
//! that recording for the next calls, and says so in its [`Replay`](crate::Replay). A
//! [`PreparedGradient`] may instead record `f` at every call in buffers of its own
//! ([`Preparation`]), where a compiled program would be large. [`PreparedHvp`] records the
//! directional derivative ∇f(x)·v of a function and sweeps it for Hessian-vector products, and
//! [`PreparedHessian`] records its gradient's sweep (reverse over reverse) and sweeps that for
//! the whole Hessian.
//!
//! When must a prepared object be made again? Never for correctness: a recording is re-used
//! only where every decision it depended on holds. Re-preparing pays only when `f` changes its
//! path for good (then every call records afresh); [`PreparedGradient::rerecords`] counts that.

pub(crate) mod compilation;
mod gradient;
mod hessian;
mod hvp;
mod jacobian;
mod preparation;
pub(crate) mod recording;

pub use gradient::PreparedGradient;
pub use hessian::PreparedHessian;
pub use hvp::PreparedHvp;
pub use jacobian::PreparedJacobian;
pub use preparation::{Preparation, PreparedPlan};
