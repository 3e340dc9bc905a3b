//! Compiled recordings: a replayable recording of `f64` compiled to machine code with
//! Cranelift (feature `jit`), so that re-evaluating it and sweeping it cost no interpretation.
//!
//! [`Recording::compile`] turns the recording's program into two sets of functions: the
//! forward pass (every value and partial at a new point) and the sweep (every adjoint from the
//! seeds). From then on [`Recording::reevaluate`] and every scalar sweep of the recording
//! ([`gradient`](Recording::gradient), [`sweep`](Recording::sweep),
//! [`sweep_wrt`](Recording::sweep_wrt), …) run the machine code, and everything else about the
//! recording is as before: the guards are checked after the forward pass (by the code, see
//! below) and a failed one leaves the recording at its previous point, traces use the
//! interpreter, and so do vector sweeps unless their lanes are compiled too:
//! [`Recording::compile_lanes`] compiles the sweep of `Q` adjoints per node (a Jacobian's `Q`
//! rows in one pass), each lane the scalar sweep's bits.
//!
//! [`Recording::compile_gradient`] compiles one gradient alone, into a [`CompiledGradient`]
//! that keeps what its code reads and drops the rest of the recording. Its code stores only
//! what must pass through memory and computes the partials of arithmetic again in the sweep,
//! which makes it the faster of the two where only the gradient is wanted (the `Compile`
//! strategy of `jacobian::PreparedGradient` runs it).
//!
//! Both check the recording's guards in their code after the forward pass: comparisons (every
//! operator) and the pieces of `max`, `min`, `abs` and `relu`, a run of them recorded turn by
//! turn as a loop; the rarer guards (tests of `Float`, the integers of `floor`, `%`, …) are
//! checked by Rust after the code ([`CodeStats::guards`] counts the compiled ones). Where one
//! fails, the interpreter finds and names it: the same error as without the code.
//!
//! ```
//! # #[cfg(feature = "jit")] {
//! use reverse::{Float, Tape};
//!
//! let tape = Tape::replayable();
//! let x = tape.vars(&[1.0, 2.0]);
//! let y = x[0].sin() * x[1] + x[1] / x[0];
//! let mut rec = tape.finish();
//! let code = rec.compile()?;
//! assert!(code.bytes > 0);
//!
//! rec.reevaluate(&[0.5, 3.0])?;
//! let (a, b) = (0.5_f64, 3.0_f64);
//! assert_eq!(rec.value(y), a.sin() * b + b / a);
//! let g = rec.gradient(y).wrt_all(&x);
//! assert!((g[0] - (a.cos() * b - b / (a * a))).abs() < 1e-12);
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Same bits
//!
//! The compiled code performs the interpreter's operations in the interpreter's order: the
//! arithmetic (`+`, `−`, `·`, `/`, negation) inline, which Cranelift neither fuses into
//! multiply-adds nor reassociates; every other rule (elementary functions, sums, dot products,
//! user rules) by a call to the Rust function the interpreter calls, but for a compiled
//! gradient's dot products of a few pairs, which its code sums in that function's order, and
//! its `max` and `min`, which it compares as `f64::max` and `f64::min` do (calling them for
//! the order of `+0` and `−0`, which Rust leaves open); the sweep's terms in the plain sweep's
//! order, with its structural zeros. Where it departs from
//! the letter of an operation, the result is the same number: a division by a power of two is
//! a multiplication by its reciprocal (both round the same real number), and a gradient's
//! adjoint held in a register starts at its first term rather than at `+0 + term`, which
//! differs at most in the sign of a zero no stored adjoint shows. So values, partials and
//! adjoints are the interpreter's, bit for bit (NaNs aside: Rust leaves a NaN's sign and
//! payload unspecified).
//!
//! # Loops
//!
//! A recording of a loop repeats its body, each turn's indices a constant step from the last
//! turn's. The compiler finds such stretches and compiles each as a loop over its turns: the
//! code grows with the number of distinct bodies, not with the recording. Within a turn, the
//! values and adjoints of the body's nodes are carried in registers, and so are the adjoints
//! of what the loop reads from before it (its inputs, its parameters), from one turn to the
//! next; a compiled gradient also adds up in the loop a sum taken over its turns (the terms of
//! Rosenbrock's function), in the sum's order. The rest of the recording is compiled node by
//! node. [`CodeStats`] says how much of
//! the recording is in loops. A recording that repeats too little of itself (a recursion, such
//! as the determinant by minors; loops nested in loops, which are found one level deep) would
//! need more code than [`MOST_INSTRUCTIONS`]: it is refused, and runs interpreted.
//!
//! # Cost
//!
//! Compiling takes time proportional to the code, and the code stays in memory with the
//! recording; `CodeStats` gives both. Compile a recording that is re-evaluated many times. The
//! interpreter stays the reference and the fallback: where Cranelift has no backend for the
//! processor, `compile` returns [`CompileError::Backend`] and the recording runs interpreted.

mod build;
mod cells;
mod dots;
mod emit;
mod flags;
mod gradient;
mod guards;
mod ir;
mod layout;
mod machine;
mod nodes;
mod pages;
mod pass;
mod report;
mod shape;
mod slots;
mod sweep;

pub use build::{MOST_INSTRUCTIONS, MOST_LANES, MOST_NODES};
pub use gradient::{CompiledGradient, NotCompiled, RunError};
pub use report::{CodeStats, CompileError};

use crate::replay::ReplayError;
use crate::storage::TapeData;
use crate::storage::program::{Native, NativeLanes};
use crate::tape::Recording;
use build::{Target, build, compile};
use core::any::Any;
use report::Stats;
use shared_ops::Op;
use std::time::Instant;

impl<T: Op> Recording<T> {
    /// Compiles this recording to machine code: from now on, re-evaluating it and its scalar
    /// sweeps run the code (see [the module](crate::jit)), with the interpreter's results bit
    /// for bit. Compiling again does nothing and returns the first compilation's figures.
    ///
    /// # Errors
    ///
    /// [`CompileError`]: the recording cannot be re-evaluated, is not of `f64`, or Cranelift
    /// has no backend here. The recording is unchanged and runs interpreted.
    ///
    /// ```
    /// # #[cfg(feature = "jit")] {
    /// let tape = reverse::Tape::replayable();
    /// let x = tape.var(2.0);
    /// let y = x * x;
    /// let mut rec = tape.finish();
    /// rec.compile()?;
    /// assert!(rec.code().is_some());
    /// rec.reevaluate(&[3.0])?;
    /// assert_eq!((rec.value(y), rec.gradient(y).wrt(x)), (9.0, 6.0));
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn compile(&mut self) -> Result<CodeStats, CompileError> {
        if let Some(c) = self.code() {
            return Ok(c);
        }
        let start = Instant::now();
        let mut stats = self.with_data_mut(|d| {
            let d = (d as &mut dyn Any)
                .downcast_mut::<TapeData<f64>>()
                .ok_or(CompileError::NumberType(core::any::type_name::<T>()))?;
            let mut p = d.program.take().ok_or(ReplayError::NotReplayable)?;
            let out = compile(d, &mut p);
            d.program = Some(p);
            out
        })?;
        stats.time = start.elapsed();
        self.with_data_mut(|d| {
            let p = d.program.as_mut().expect("compiled above");
            p.derived.put(Stats(stats.clone()));
        });
        Ok(stats)
    }

    /// Drops the machine code (of [`compile`](Self::compile) and of
    /// [`compile_lanes`](Self::compile_lanes)): the
    /// recording runs interpreted again (for one whose compiled code did not pay). Does
    /// nothing to a recording not compiled.
    ///
    /// ```
    /// # #[cfg(feature = "jit")] {
    /// let tape = reverse::Tape::replayable();
    /// let x = tape.var(2.0);
    /// let y = x * x;
    /// let mut rec = tape.finish();
    /// rec.compile()?;
    /// rec.forget_code();
    /// assert!(rec.code().is_none());
    /// rec.reevaluate(&[3.0])?;
    /// assert_eq!(rec.gradient(y).wrt(x), 6.0);
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn forget_code(&mut self) {
        self.with_data_mut(|d| {
            if let Some(p) = d.program.as_mut() {
                p.derived.take::<Native>();
                p.derived.take::<NativeLanes>();
                p.derived.take::<Stats>();
            }
        });
    }

    /// Compiles the vector sweep of `lanes` adjoints per node as well (compiling the
    /// recording first, as [`compile`](Self::compile), if it was not): from now on
    /// [`sweep_vec`](Self::sweep_vec) and [`sweep_vec_into`](Self::sweep_vec_into) of that many
    /// lanes run machine code, each lane the scalar sweep's bits. Returns the figures of the
    /// sweep's code alone; compiling the same lanes again does nothing and returns zero bytes.
    ///
    /// # Errors
    ///
    /// As [`compile`](Self::compile), and [`CompileError::Lanes`] for a count of lanes that
    /// is odd or more than [`MOST_LANES`] (the code holds two lanes in each vector register). The recording is unchanged and its vector sweeps run
    /// interpreted.
    ///
    /// ```
    /// # #[cfg(feature = "jit")] {
    /// use reverse::Float;
    /// let tape = reverse::Tape::replayable();
    /// let x = tape.var(2.0);
    /// let (y1, y2) = (x * x, x.sin());
    /// let mut rec = tape.finish();
    /// let code = rec.compile_lanes(2)?;
    /// assert!(code.bytes > 0);
    /// rec.reevaluate(&[3.0])?;
    /// let adj = rec.sweep_vec(&[(y1, [1.0, 0.0]), (y2, [0.0, 1.0])]);
    /// assert_eq!(adj.wrt(x), [6.0, 3.0_f64.cos()]);
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn compile_lanes(&mut self, lanes: usize) -> Result<CodeStats, CompileError> {
        if !(2..=MOST_LANES).contains(&lanes) || lanes % 2 == 1 {
            return Err(CompileError::Lanes {
                lanes,
                limit: MOST_LANES,
            });
        }
        self.compile()?;
        let start = Instant::now();
        let mut stats = self.with_data_mut(|d| {
            let d = (d as &mut dyn Any)
                .downcast_mut::<TapeData<f64>>()
                .expect("compiled above, so of f64");
            let mut p = d.program.take().expect("compiled above");
            let compiled = p
                .derived
                .get::<NativeLanes>()
                .is_some_and(|c| c.0.iter().any(|m| m.lanes() == lanes));
            let out = if compiled {
                Ok(None)
            } else {
                build(d, &mut p, Target::Lanes(lanes)).map(|(code, stats, ..)| Some((code, stats)))
            };
            let out = out.map(|made| match made {
                Some((code, stats)) => {
                    let mut all = p
                        .derived
                        .take::<NativeLanes>()
                        .unwrap_or(NativeLanes(vec![]));
                    all.0.push(Box::new(machine::Lanes(code)));
                    p.derived.put(all);
                    stats
                }
                None => CodeStats {
                    bytes: 0,
                    functions: 0,
                    ..p.derived.get::<Stats>().expect("compiled above").0.clone()
                },
            });
            d.program = Some(p);
            out
        })?;
        stats.time = start.elapsed();
        Ok(stats)
    }

    /// What [`compile`](Self::compile) made, if this recording was compiled.
    ///
    /// ```
    /// let tape = reverse::Tape::replayable();
    /// let x = tape.var(2.0);
    /// let _ = x * x;
    /// assert!(tape.finish().code().is_none());
    /// ```
    pub fn code(&self) -> Option<CodeStats> {
        self.with_data(|d| {
            let p = d.program.as_ref()?;
            p.derived.get::<Native>()?;
            p.derived.get::<Stats>().map(|s| s.0.clone())
        })
    }
}

impl Recording<f64> {
    /// Compiles the gradient of `y` with respect to the inputs into a [`CompiledGradient`]:
    /// one function that computes the values and the adjoints a gradient needs and no more.
    /// Values read only within a turn of a loop stay in registers, and the sweep computes the
    /// partials of arithmetic again from them instead of storing and loading them; an adjoint
    /// that only the turn adds to is never stored. Same bits as the interpreter's gradient.
    ///
    /// The recording is consumed: the compiled gradient keeps the arrays its code reads (the
    /// n-ary operands its calls read, the user rules, a value and an adjoint for each node
    /// whose value or adjoint passes through memory, and of the edges those of its calls, laid
    /// out anew) and the rest is dropped, so that it holds little more memory than the
    /// recording it came from.
    ///
    /// # Errors
    ///
    /// [`NotCompiled`]: the reason (as for [`compile`](Self::compile), or
    /// [`CompileError::Constant`] for an output that is a constant) and the recording, unchanged.
    ///
    /// ```
    /// # #[cfg(feature = "jit")] {
    /// let tape = reverse::Tape::replayable();
    /// let x = tape.vars(&[1.0, 2.0]);
    /// let y = x[0] * x[1] + x[1];
    /// let mut g = tape.finish().compile_gradient(y)?;
    /// let mut grad = [0.0; 2];
    /// assert_eq!(g.gradient(&[3.0, 4.0], &mut grad)?, 16.0);
    /// assert_eq!(grad, [4.0, 4.0]);
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn compile_gradient(mut self, y: crate::Var<f64>) -> Result<CompiledGradient, NotCompiled> {
        let start = Instant::now();
        let Some(node) = y.node() else {
            return Err(NotCompiled {
                error: CompileError::Constant,
                recording: Box::new(self),
            });
        };
        self.check_own(y);
        let built = self.with_data_mut(|d| {
            let mut p = d.program.take().ok_or(ReplayError::NotReplayable)?;
            let out = build(d, &mut p, Target::Gradient(node));
            d.program = Some(p);
            out
        });
        match built {
            Ok((code, stats, layout)) => Ok(CompiledGradient::take(
                &mut self, code, layout, node, stats, start,
            )),
            Err(error) => Err(NotCompiled {
                error,
                recording: Box::new(self),
            }),
        }
    }
}
