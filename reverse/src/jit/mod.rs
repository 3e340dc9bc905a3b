//! Compiled recordings: a replayable recording of `f64` compiled to machine code with
//! Cranelift (feature `jit`), so that re-evaluating it and sweeping it cost no interpretation.
//!
//! [`Recording::compile`] turns the recording's program into two sets of functions: the
//! forward pass (every value and partial at a new point) and the sweep (every adjoint from the
//! seeds). From then on [`Recording::reevaluate`] and every scalar sweep of the recording
//! ([`gradient`](Recording::gradient), [`sweep`](Recording::sweep),
//! [`sweep_wrt`](Recording::sweep_wrt), …) run the machine code, and everything else about the
//! recording is as before: the guards are checked after the forward pass and a failed one
//! leaves the recording at its previous point, vector sweeps and traces use the interpreter.
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
//! user rules) by a call to the Rust function the interpreter calls; the sweep's terms in the
//! plain sweep's order, with its structural zeros. So values, partials and adjoints are the
//! interpreter's, bit for bit (NaNs aside: Rust leaves a NaN's sign and payload unspecified).
//!
//! # Loops
//!
//! A recording of a loop repeats its body, each turn's indices a constant step from the last
//! turn's. The compiler finds such stretches and compiles each as a loop over its turns: the
//! code grows with the number of distinct bodies, not with the recording. Within a turn, the
//! values and adjoints of the body's nodes are carried in registers; the rest of the recording
//! is compiled node by node. [`CodeStats`] says how much of the recording is in loops.
//!
//! # Cost
//!
//! Compiling takes time proportional to the code, and the code stays in memory with the
//! recording; `CodeStats` gives both. Compile a recording that is re-evaluated many times. The
//! interpreter stays the reference and the fallback: where Cranelift has no backend for the
//! processor, `compile` returns [`CompileError::Backend`] and the recording runs interpreted.

mod emit;
mod machine;
mod shape;

use crate::replay::ReplayError;
use crate::storage::TapeData;
use crate::storage::program::{Native, Program};
use crate::sweep::schedule::Schedule;
use crate::tape::Recording;
use core::any::Any;
use core::fmt;
use core::time::Duration;
use emit::Env;
use shape::{Forward, Index, Node, Region};
use shared_ops::Op;
use std::time::Instant;

/// The most instructions (estimated) in one compiled function: the register allocator's time
/// grows faster than linearly with a function's size, so long straight code is cut.
const FUNCTION: usize = 16_384;

/// What compiling a recording made.
///
/// ```
/// # #[cfg(feature = "jit")] {
/// let tape = reverse::Tape::replayable();
/// let x = tape.vars(&[1.0; 40]);
/// let mut y = x[0];
/// for w in x.windows(2) {
///     y = y + (w[1] - w[0] * w[0]) * (w[1] - w[0] * w[0]);
/// }
/// let code = tape.finish().compile()?;
/// assert!(code.looped > code.nodes / 2); // the loop's turns are found again
/// # }
/// # Ok::<(), reverse::jit::CompileError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct CodeStats {
    /// Bytes of machine code.
    pub bytes: usize,
    /// Time spent compiling (analysis, code generation, linking).
    pub time: Duration,
    /// Nodes of the recording.
    pub nodes: usize,
    /// Nodes compiled as turns of a loop.
    pub looped: usize,
    /// Loops.
    pub loops: usize,
    /// Functions the code was cut into.
    pub functions: usize,
}

/// Why a recording cannot be compiled.
///
/// ```
/// # #[cfg(feature = "jit")] {
/// let tape = reverse::Tape::new(); // keeps no program
/// let x = tape.var(1.0);
/// let _ = x * x;
/// let err = tape.finish().compile().unwrap_err();
/// assert!(err.to_string().contains("Tape::replayable"));
/// # }
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum CompileError {
    /// The recording cannot be re-evaluated (no program, or a node of
    /// [`Var::from_partials`](crate::Var::from_partials)).
    Replay(ReplayError),
    /// Only recordings of `f64` are compiled; this one is of another number type.
    NumberType(&'static str),
    /// Cranelift has no backend for this processor, or failed: the message says which.
    Backend(String),
    /// The recording has more nodes than the compiler takes ([`MOST_NODES`]).
    TooManyNodes {
        /// Nodes of the recording.
        nodes: usize,
        /// The most the compiler takes.
        limit: usize,
    },
    /// The code would pass [`MOST_INSTRUCTIONS`]: the recording repeats too little of itself
    /// for its loops to be found again (a recursion such as the determinant by minors), and
    /// code node by node would cost more to compile than it saves.
    TooMuchCode {
        /// Instructions estimated.
        instructions: usize,
        /// Nodes that are not turns of a loop.
        straight: usize,
        /// The most the compiler emits.
        limit: usize,
    },
}

/// The most instructions (estimated) the compiler emits for one recording: about a megabyte
/// of machine code.
pub const MOST_INSTRUCTIONS: usize = 1 << 18;

/// The most nodes of a recording the compiler takes: its analysis keeps about 100 bytes per
/// node while it runs.
pub const MOST_NODES: usize = 1 << 22;

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "compiling a recording: ")?;
        match self {
            CompileError::Replay(e) => write!(f, "{e}"),
            CompileError::NumberType(t) => write!(
                f,
                "only recordings of f64 are compiled, this one is of {t}; it runs interpreted"
            ),
            CompileError::Backend(m) => write!(f, "{m}; the recording runs interpreted"),
            CompileError::TooManyNodes { nodes, limit } => write!(
                f,
                "the recording has {nodes} nodes, more than the {limit} the compiler takes; it \
                 runs interpreted"
            ),
            CompileError::TooMuchCode {
                instructions,
                straight,
                limit,
            } => write!(
                f,
                "{straight} nodes repeat no loop body, about {instructions} instructions of \
                 code, more than the {limit} the compiler emits; it runs interpreted"
            ),
        }
    }
}

impl std::error::Error for CompileError {}

impl From<ReplayError> for CompileError {
    fn from(e: ReplayError) -> Self {
        CompileError::Replay(e)
    }
}

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

    /// Drops the machine code: the recording runs interpreted again (for one whose compiled
    /// code did not pay). Does nothing to a recording not compiled.
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
            let Some(mut p) = d.program.take() else {
                return;
            };
            if p.derived.take::<Native>().is_some() {
                p.derived.take::<Stats>();
                // The interpreter's sweep order, which compiling dropped.
                p.derived.put(Schedule::of(d));
            }
            d.program = Some(p);
        });
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

/// The figures of a compilation, kept with its code.
struct Stats(CodeStats);

impl crate::storage::derived::Derived for Stats {
    fn capacity_bytes(&self) -> usize {
        0
    }
    crate::storage::derived::derived_any!();
}

/// Compiles the program `p` of recording `d` (taken out of it) and keeps the code in it.
fn compile(d: &TapeData<f64>, p: &mut Program<f64>) -> Result<CodeStats, CompileError> {
    if d.len() > MOST_NODES {
        return Err(CompileError::TooManyNodes {
            nodes: d.len(),
            limit: MOST_NODES,
        });
    }
    // The interpreter's preparation: the constants after the nodes, the n-ary operands.
    p.compile(d)?;
    let nodes = shape::nodes(d, p);
    let regions = shape::regions(&nodes);
    let n = nodes.len();
    let lens = machine::Lens {
        nodes: n,
        values: p.values.len(),
        partials: d.partials().len(),
        parents: d.parents().len(),
        units: d.units().len(),
        args: p.args.len(),
        rules: p.rules.len(),
        calls: calls(&nodes),
    };
    for r in &regions {
        in_bounds(&nodes, r, &lens)
            .map_err(|m| CompileError::Backend(format!("internal error, nothing compiled: {m}")))?;
    }
    let instructions: usize = regions.iter().map(|r| emit::size(&nodes, r)).sum();
    if instructions > MOST_INSTRUCTIONS {
        let straight = regions
            .iter()
            .filter(|r| r.turns == 1)
            .map(|r| r.period)
            .sum();
        return Err(CompileError::TooMuchCode {
            instructions,
            straight,
            limit: MOST_INSTRUCTIONS,
        });
    }
    let mut b = machine::Builder::new().map_err(CompileError::Backend)?;
    // The regions cut into functions of a bounded size; the sweep runs them last to first.
    let mut cuts = vec![0];
    let mut size = 0;
    for (i, r) in regions.iter().enumerate() {
        let s = emit::size(&nodes, r);
        if size + s > FUNCTION && size > 0 {
            cuts.push(i);
            size = 0;
        }
        size += s;
    }
    cuts.push(regions.len());
    let rule = |f: Forward| lens.calls.iter().position(|&c| c == f).expect("listed") as i64;
    let (mut forward, mut reverse) = (Vec::new(), Vec::new());
    for w in cuts.windows(2) {
        let part = &regions[w[0]..w[1]];
        for backwards in [false, true] {
            let id = b
                .function(|fb, frame, eval, sweep| {
                    let [values, partials, adj] = Env::load_pointers(fb, frame);
                    let env = Env {
                        nodes: &nodes,
                        n,
                        frame,
                        values,
                        partials,
                        adj,
                        eval,
                        sweep,
                        rule: &rule,
                    };
                    if backwards {
                        part.iter().rev().for_each(|r| emit::reverse(fb, &env, r));
                    } else {
                        part.iter().for_each(|r| emit::forward(fb, &env, r));
                    }
                })
                .map_err(CompileError::Backend)?;
            if backwards {
                &mut reverse
            } else {
                &mut forward
            }
            .push(id);
        }
    }
    reverse.reverse();
    let loops: Vec<&Region> = regions.iter().filter(|r| r.turns > 1).collect();
    let stats = CodeStats {
        bytes: 0,
        time: Duration::ZERO,
        nodes: n,
        looped: loops.iter().map(|r| r.nodes().len()).sum(),
        loops: loops.len(),
        functions: forward.len() + reverse.len(),
    };
    let code = b
        .finish(&forward, &reverse, lens)
        .map_err(CompileError::Backend)?;
    let stats = CodeStats {
        bytes: crate::storage::program::Machine::code_bytes(&code),
        ..stats
    };
    p.derived.put(Native(Box::new(code)));
    // The compiled sweep replaces the schedule's.
    p.derived.take::<Schedule>();
    Ok(stats)
}

/// The rules evaluated by a call, each once: the table the calls index.
fn calls(nodes: &[Node]) -> Vec<Forward> {
    let mut out: Vec<Forward> = Vec::new();
    for nd in nodes {
        if matches!(nd.forward, Forward::Call { .. }) && !out.contains(&nd.forward) {
            out.push(nd.forward);
        }
    }
    out
}

/// Checks that every index region `r`'s code computes lies within the arrays of `lens`: the
/// invariant of the machine code, which reads and writes without bounds checks. The indices
/// are linear in the turn, so the first and the last turn bound them.
fn in_bounds(nodes: &[Node], r: &Region, l: &machine::Lens) -> Result<(), String> {
    use shape::{E, LO, Reverse};
    let last = r.turns as i64 - 1;
    for j in 0..r.period {
        let nd = &nodes[r.start + j];
        let step: &Index = &r.step[j];
        let within = |x: usize, extra: i64, len: usize| {
            [nd.at[x], nd.at[x] + last * step[x]]
                .iter()
                .all(|&i| i >= 0 && i.saturating_add(extra) <= len as i64)
        };
        let node_ok = r.start + j + r.period * (r.turns - 1) < l.nodes;
        let operands_ok = nd.operands().iter().all(|&x| within(x, 1, l.values));
        let edges = match nd.reverse {
            Reverse::Weighted(c) => {
                within(LO, c as i64, l.partials) && within(E, c as i64, l.partials)
            }
            Reverse::Unit(c, _) => within(LO, c as i64, l.units),
            Reverse::Call { unit, count } => {
                within(LO, count as i64, if unit { l.units } else { l.parents })
            }
        };
        let parents_ok = nd.parents().all(|x| within(x, 1, l.nodes));
        // (A call's own accesses are checked by Rust.)
        if !(node_ok && operands_ok && edges && parents_ok) {
            return Err(format!(
                "node {} of a region of {} turns of {} nodes from node {}: an index out of \
                 bounds ({nd:?}, checks {:?}, arrays {l:?})",
                r.start + j,
                r.turns,
                r.period,
                r.start,
                [node_ok, operands_ok, edges, parents_ok],
            ));
        }
    }
    Ok(())
}
