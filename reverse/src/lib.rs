//! Reverse-mode automatic differentiation: a tape of adjoints.
//!
//! Running a function on [`Var`]s records its Wengert list on a [`Tape`]: each elementary
//! operation appends one node holding its value, its parents and its local partials (the rules
//! of [`shared_ops::rules`]). A reverse sweep then pulls adjoints back from an output in one
//! loop over the nodes, `ū += ∂v/∂u · v̄`, giving the derivative of that output with respect to
//! *every* input at once. A gradient of `f: Rⁿ → R` costs one recording and one sweep, whatever n;
//! a full Jacobian of `f: Rⁿ → Rᵐ` costs one recording and m sweeps.
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
//! Array-valued reverse mode in the style of PyTorch (a [`tensor::Tensor`] that records its own
//! graph, on `ndarray`) is in the [`tensor`] module.
// One audited unsafe boundary: the registry of recording tapes (tape/live.rs), with its invariants.
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod drivers;
mod sweep;
mod tape;
pub mod tensor;
pub mod trace;
mod var;

pub use drivers::{gradient, jacobian, vjp};
pub use shared_ops::num_traits::Float;
pub use shared_ops::{Error, Op};
pub use sweep::{Adjoints, AdjointsVec};
pub use tape::memory::{
    DEFAULT_SPARE_LIMIT, release_memory, set_spare_limit, spare_bytes, spare_limit,
};
pub use tape::{Recording, Tape, TapeStats};
pub use var::Var;
