//! Re-evaluation: a finished recording evaluated again at a new point, without calling the
//! user's function, and guarded by every branch decision the recording depended on.
//!
//! A tape made by [`Tape::replayable`] keeps, beside what sweeps need, its *program*: each
//! node's operation, its operands (nodes or constants) and its value, the user rules it applied,
//! and every decision that shaped it (see [guards](#guards)). [`Recording::reevaluate`] (or
//! [`Tape::reevaluate`]) then runs that program at a new `x`: values and partials are computed
//! again by the same rules and written into the same edges, so every sweep that follows gives,
//! bit for bit, what a fresh recording at `x` would give (NaNs aside: where a derivative is
//! NaN, it is NaN in both, but Rust leaves the sign and payload of an arithmetic NaN
//! unspecified, and two sweeps may differ there).
//!
//! ```
//! use reverse::{Float, Tape};
//!
//! let tape = Tape::replayable();
//! let x = tape.vars(&[1.0, 2.0]);
//! let y = x[0].sin() * x[1];
//! let mut rec = tape.finish();
//!
//! rec.reevaluate(&[0.5, 3.0])?;
//! assert_eq!(rec.value(y), 0.5_f64.sin() * 3.0);
//! assert_eq!(rec.gradient(y).wrt_all(&x), vec![0.5_f64.cos() * 3.0, 0.5_f64.sin()]);
//! # Ok::<(), reverse::ReplayError>(())
//! ```
//!
//! # Guards
//!
//! A recording is the trace of *one* path through the user's code. At another point the code may
//! take another path, and replaying the old one would give a silently wrong derivative (the
//! known flaw of compiled tapes elsewhere). So the tape records every decision it can see:
//!
//! * comparisons of `Var`s, with each other or with constants (`<`, `==`, `partial_cmp`, …),
//!   and the tests of `Float` on a `Var` (`is_nan`, `is_finite`, `is_sign_negative`, …);
//! * the piece a piecewise rule took: the winner of `max`/`min`, the side of the kink of `abs`,
//!   `relu` and `hypot`, and the integer produced by `floor`, `ceil`, `round`, `trunc`,
//!   `signum`, `fract` and `%`.
//!
//! Re-evaluation checks each at the new values; if one differs it returns
//! [`ReplayError::Guard`] naming the node and the comparison, and leaves the recording at its
//! previous point. Record afresh there (the drivers of the `jacobian` crate do, and say so).
//!
//! What the tape cannot see: a branch on a number read out of a `Var` ([`Var::value`],
//! `to_f64`, `classify`) or on anything outside the function's inputs. Compare
//! `Var`s instead, or record afresh. Likewise the constants: a number the function did not get
//! as an input (captured data, a step index, a time) is replayed as recorded, so a function
//! whose constants change between calls must be recorded afresh, or take them as inputs.
//!
//! # Cost
//!
//! The first re-evaluation prepares the recording (once): each node's kernel and operands as
//! plain indices, the nodes grouped by level so that one loop evaluates many nodes of one
//! operation (see `compile.rs`), and, on a tape of `f64`, the *schedule* of its sweeps, the
//! edges by level so that independent edges run side by side while every adjoint's sum keeps
//! the plain sweep's order (see `sweep/schedule.rs`). Each re-evaluation is then one loop per
//! group, then the guards; every scalar sweep that follows runs by the schedule, with the plain
//! sweep's bits (NaNs aside, as above). Compiled to machine code (feature `jit`, see
//! `Recording::compile`), both run without interpretation, with the same bits.
//!
//! A replayable tape keeps `size_of::<T>() + 10` bytes more per node than a plain one (see
//! [`TapeStats`](crate::TapeStats)) and records more slowly; once prepared, about 16 bytes
//! more per node (its code, and a copy of the n-ary nodes' operands) and, for `f64`, 8 to 12
//! per edge (the schedule). Re-evaluating costs less than recording afresh. The figures (Rosenbrock, against echidna's re-evaluated bytecode
//! tape) are in benches/RESULTS.md.

pub(crate) mod compile;
pub(crate) mod error;
mod eval;

pub use error::{GuardFailure, ReplayError};
pub(crate) use eval::reevaluate_showing;

use crate::tape::Var;
use crate::tape::{Recording, Tape};
use shared_ops::Op;

/// The re-evaluation methods, identical for a live tape and a finished recording.
macro_rules! replay_methods {
    ($ty:ident, $make:literal) => {
        impl<T: Op> $ty<T> {
            /// Evaluates the recorded program again at `x` (one value per input, in the order
            /// the inputs were made): every value and partial is recomputed, and the sweeps
            /// that follow give the derivatives at `x`. The `Var`s keep their indices; read the
            /// new values with [`value`](Self::value).
            ///
            /// A `Var` keeps the value of the point it was recorded at, so a live [`Tape`]
            /// re-evaluated at a new point records no more: an operation on its `Var`s would mix
            /// the two points, and panics saying so. Read and sweep it as often as needed;
            /// [`Tape::clear`] starts a new recording.
            ///
            /// # Errors
            ///
            /// [`ReplayError`]: no program kept, a wrong number of values, a node of
            /// [`Var::from_partials`], or a guard that fails at `x`; then nothing changed.
            ///
            /// ```
            #[doc = $make]
            /// t.reevaluate(&[3.0])?;
            /// assert_eq!((t.value(y), t.gradient(y).wrt(x)), (9.0, 6.0));
            /// # Ok::<(), reverse::ReplayError>(())
            /// ```
            pub fn reevaluate(&mut self, x: &[T]) -> Result<(), ReplayError> {
                let out = self.with_data_mut(|d| eval::reevaluate(d, x));
                if out.is_ok() {
                    self.reevaluated();
                }
                out
            }

            /// The value of `v` at the last evaluation (recording or
            /// [`reevaluate`](Self::reevaluate)); a constant's own value. A tape that keeps no
            /// program knows only the recorded value, which `v` carries.
            ///
            /// ```
            #[doc = $make]
            /// assert_eq!(t.value(y), 4.0);
            /// ```
            pub fn value(&self, v: Var<T>) -> T {
                if v.is_constant() {
                    return v.value();
                }
                self.check_own(v);
                self.with_data(|d| {
                    d.program
                        .as_ref()
                        .zip(v.node())
                        .and_then(|(p, node)| p.values.get(node as usize).copied())
                        .unwrap_or(v.value())
                })
            }

            /// True if this recording keeps its program (and so can be re-evaluated).
            ///
            /// ```
            #[doc = $make]
            /// assert!(t.is_replayable());
            /// ```
            pub fn is_replayable(&self) -> bool {
                self.with_data(|d| d.program.is_some())
            }
        }
    };
}

replay_methods!(
    Tape,
    "let mut t = reverse::Tape::replayable();\nlet x = t.var(2.0);\nlet y = x * x;"
);
replay_methods!(
    Recording,
    "let tape = reverse::Tape::replayable();\nlet x = tape.var(2.0);\nlet y = x * x;\nlet mut t = tape.finish();"
);
