//! Reverse-mode automatic differentiation: a tape of adjoints.
//!
//! Running a function on [`Var`]s records its Wengert list on a [`Tape`]: each elementary
//! operation appends one node with an edge to each operand, holding the local partial `∂v/∂u`
//! (the rules of [`shared_ops::rules`]). A reverse sweep then pulls adjoints back from an output
//! in one loop over the nodes, `ū += ∂v/∂u · v̄`, giving the derivative of that output with
//! respect to *every* input at once. A gradient of `f: Rⁿ → R` costs one recording and one
//! sweep, whatever n; a full Jacobian of `f: Rⁿ → Rᵐ` costs one recording and m sweeps.
//!
//! ```
//! use reverse::Tape;
//! use shared_ops::Op;
//!
//! fn f<T: Op>(x: &[T]) -> T {
//!     (x[0] * x[1]).sin() + x[1].exp()
//! }
//!
//! let tape = Tape::new();
//! let x = tape.vars(&[1.0, 2.0]);
//! let y = f(&x);
//! let g = tape.gradient(y);
//! assert!((g.wrt(x[0]) - 2.0 * 2.0_f64.cos()).abs() < 1e-15);
//! assert!((g.wrt(x[1]) - (2.0_f64.cos() + 2.0_f64.exp())).abs() < 1e-15);
//! ```
//!
//! # The tape
//!
//! Flat arrays, no pointers and no allocation per operation: per node where its edges start
//! (4 bytes), per *weighted* edge the operand and the partial (4 + 8 bytes for `f64`), per *unit*
//! edge (the ±1 of sums and differences) the operand and a sign (4 bytes); see [`TapeStats`].
//! A node may have any number of edges: a `Sum` of `Var`s is one node, [`Op::dot`] one node,
//! and [`Var::from_partials`] pushes any node whose partials the caller knows. Values and
//! operations are kept only on a [`Tape::replayable`] tape, which can then be evaluated again at
//! new points ([`replay`]), and on a [`Tape::traced`] one, for the teaching views of [`trace`].
//!
//! # Nesting
//!
//! The tape is generic over its scalar: a `Tape<Dual<f64>>` (forward over reverse) sweeps
//! tangents along with the adjoints, a `Tape<Var<f64>>` (reverse over reverse) records its sweep
//! on an outer tape. The drivers [`gradient`], [`vjp`] and [`jacobian_rows`] take `&[T]` for any
//! `T: Op`, so they nest inside each other and inside `forward`'s, the levels kept apart by
//! type:
//!
//! ```
//! use forward::{Dual, derivative};
//! use reverse::{Float, Var, gradient};
//!
//! // f''(x) for f(x) = x³ by forward over reverse: 6x.
//! let (_, d2) = derivative(|x: Dual<f64>| gradient(|v: &[Var<Dual<f64>>]| v[0].powi(3), &[x]).1[0], 2.0);
//! assert_eq!(d2, 12.0);
//! ```
//!
//! # Memory
//!
//! A thread keeps the buffers of its last recordings for the next ones, under the one policy of
//! [`shared_ops::memory`] (a cap, and a call that frees them); [`warm_up`] readies them for a
//! recording's size.
//!
//! The tape of a long loop grows with the loop; [`checkpointed_gradient`] differentiates a
//! [`Recurrence`] keeping a few of its states and one step's tape instead, with the same gradient
//! bit for bit (the [`checkpoint`] module).
// `unsafe` is denied but where docs/unsafe.md lists it, with its invariant, its test and the
// measurement that pays for it (a test keeps the list and the code in step).
#![deny(unsafe_code)]
#![warn(missing_docs)]

/// Declares a cold function that returns into the hot path of recording.
///
/// Under the System V calling convention of x86-64 every vector register is caller-saved, so a
/// call that may return into the loop of a user's function (a buffer's growth, the lookup of an
/// outer tape), even one that never runs, makes the compiler keep that loop's floating-point
/// values in memory: each operation then waits on a store and a reload. The Windows convention
/// saves xmm6–xmm15 in the callee, so on x86-64 these functions use it and the values stay in
/// registers; elsewhere they are plain functions. The x86-64 ones are `extern "win64-unwind"`,
/// which lets their panics unwind. Cheap arithmetic gains the most, such as a chain `y = y·c`
/// recorded in a loop, where every node would otherwise wait on memory.
macro_rules! cold_path {
    ($(#[$attr:meta])* $vis:vis fn $name:ident $($rest:tt)*) => {
        $(#[$attr])*
        #[cfg(target_arch = "x86_64")]
        #[cold]
        #[inline(never)]
        #[allow(improper_ctypes_definitions)]
        $vis extern "win64-unwind" fn $name $($rest)*

        $(#[$attr])*
        #[cfg(not(target_arch = "x86_64"))]
        #[cold]
        #[inline(never)]
        $vis fn $name $($rest)*
    };
}

pub mod checkpoint;
mod drivers;
#[cfg(feature = "jit")]
pub mod jit;
pub mod replay;
mod storage;
mod sweep;
mod tape;
#[cfg(test)]
mod testing;
pub mod trace;

pub use checkpoint::{Recurrence, checkpointed_gradient};
pub use drivers::{gradient, jacobian_rows, vjp};
pub use replay::{GuardFailure, ReplayError};
#[cfg(any(feature = "nalgebra", feature = "nalgebra_v0_34"))]
pub use shared_ops::Real;
pub use shared_ops::num_traits::Float;
pub use shared_ops::{Error, Op};
pub use storage::Operands;
pub use sweep::{Adjoints, AdjointsVec};
pub use tape::warm_up::{warm_up, warm_up_for};
pub use tape::{Recording, Tape, TapeStats};

/// One `use` line for reverse mode: the tape and its variable, the drivers, and what they are
/// written against ([`Op`], the `Float` methods, `Function`).
///
/// ```
/// use reverse::prelude::*;
///
/// let tape = Tape::new();
/// let x = tape.var(0.5);
/// let y = x.sin() * x; // `sin` without guessing which `Float` to import
/// assert_eq!(tape.gradient(y).wrt(x), 0.5_f64.cos() * 0.5 + 0.5_f64.sin());
/// ```
pub mod prelude {
    pub use crate::{Recording, Tape, Var, gradient, jacobian_rows, vjp};
    pub use shared_ops::prelude::*;
}
pub use tape::Var;
