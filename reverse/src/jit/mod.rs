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
//! [`Recording::compile_gradient`] compiles one gradient alone, for
//! [`Recording::gradient_at`]: it stores only what must pass through memory and computes the
//! partials of arithmetic again in the sweep, which makes it the faster of the two where only
//! the gradient is wanted (the `Compile` strategy of `jacobian::PreparedGradient` runs it).
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
    /// Loops in the code (a loop of loops counts itself and each loop in it once).
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
    /// The output whose gradient was asked for is a constant (it depends on no input): there
    /// is nothing to compile.
    Constant,
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
            CompileError::Constant => write!(
                f,
                "the output is a constant (it depends on no input): its gradient is zero"
            ),
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

    /// Drops the machine code (of [`compile`](Self::compile) and of `compile_gradient`): the
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
            let Some(mut p) = d.program.take() else {
                return;
            };
            p.derived.take::<Gradient>();
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

impl Recording<f64> {
    /// Compiles the gradient of `y` with respect to the inputs, for
    /// [`gradient_at`](Self::gradient_at): one function that computes the values and the
    /// adjoints a gradient needs and no more. Values read only within a turn of a loop stay
    /// in registers, and the sweep computes the partials of arithmetic again from them instead
    /// of storing and loading them; an adjoint that only the turn adds to is never stored.
    /// Same bits as the interpreter's gradient.
    ///
    /// # Errors
    ///
    /// As [`compile`](Self::compile).
    ///
    /// ```
    /// # #[cfg(feature = "jit")] {
    /// let tape = reverse::Tape::replayable();
    /// let x = tape.vars(&[1.0, 2.0]);
    /// let y = x[0] * x[1] + x[1];
    /// let mut rec = tape.finish();
    /// rec.compile_gradient(y)?;
    /// let mut g = [0.0; 2];
    /// assert_eq!(rec.gradient_at(&[3.0, 4.0], &mut g)?, 16.0);
    /// assert_eq!(g, [4.0, 4.0]);
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn compile_gradient(&mut self, y: crate::Var<f64>) -> Result<CodeStats, CompileError> {
        let start = Instant::now();
        let Some(node) = y.node() else {
            return Err(CompileError::Constant);
        };
        self.check_own(y);
        let y = node;
        let mut stats = self.with_data_mut(|d| {
            let mut p = d.program.take().ok_or(ReplayError::NotReplayable)?;
            let out = build(d, &mut p, Some(y)).map(|(code, stats)| {
                let inputs: Vec<u32> = (0..p.len() as u32)
                    .filter(|&i| p.forms[i as usize] == crate::storage::program::Form::Input)
                    .collect();
                p.derived.put(Gradient {
                    code,
                    y,
                    inputs,
                    values: p.values.clone(),
                    partials: vec![0.0; d.partials().len()],
                    adj: vec![0.0; d.len()],
                    stats: stats.clone(),
                });
                stats
            });
            d.program = Some(p);
            out
        })?;
        stats.time = start.elapsed();
        self.with_data_mut(|d| {
            let g = d
                .program
                .as_mut()
                .and_then(|p| p.derived.take::<Gradient>());
            if let Some(mut g) = g {
                g.stats.time = stats.time;
                d.program.as_mut().expect("taken from it").derived.put(g);
            }
        });
        Ok(stats)
    }

    /// The value of the compiled output `y` at `x` and its gradient (into `grad`, one per
    /// input) by the code of [`compile_gradient`](Self::compile_gradient); the interpreter's
    /// bits. The recording itself stays at its last point ([`value`](Self::value) and the
    /// sweeps read it): the code works in buffers of its own.
    ///
    /// # Errors
    ///
    /// As [`reevaluate`](Self::reevaluate): a wrong number of inputs, or a guard that fails
    /// at `x` (the same error, naming the node and the comparison).
    ///
    /// # Panics
    ///
    /// If `grad` does not hold one number per input, or no gradient was compiled.
    pub fn gradient_at(&mut self, x: &[f64], grad: &mut [f64]) -> Result<f64, ReplayError> {
        let inputs = self.with_data(|d| d.program.as_ref().map(|p| p.inputs as usize));
        let inputs = inputs.ok_or(ReplayError::NotReplayable)?;
        if x.len() != inputs {
            return Err(ReplayError::InputLength {
                expected: inputs,
                found: x.len(),
            });
        }
        assert_eq!(grad.len(), inputs, "a gradient of {inputs} inputs");
        let out = self.with_data_mut(|d| {
            let mut p = d.program.take().expect("checked above");
            let out = p.derived.take::<Gradient>().map(|mut g| {
                let out = g.run(d, &p, x, grad);
                p.derived.put(g);
                out
            });
            d.program = Some(p);
            out
        });
        match out {
            Some(Ok(value)) => Ok(value),
            // A guard failed: re-evaluating gives its error, and leaves the recording as it was.
            Some(Err(())) => self
                .reevaluate(x)
                .map(|()| unreachable!("a guard failed at x")),
            None => panic!("gradient_at: compile_gradient(y) first"),
        }
    }
}

/// A gradient's machine code and the buffers it works in.
struct Gradient {
    code: machine::Code,
    /// The output, and the input nodes.
    y: u32,
    inputs: Vec<u32>,
    /// Values (the constants after the nodes), partials of calls, adjoints.
    values: Vec<f64>,
    partials: Vec<f64>,
    adj: Vec<f64>,
    stats: CodeStats,
}

impl crate::storage::derived::Derived for Gradient {
    fn capacity_bytes(&self) -> usize {
        crate::storage::program::Machine::code_bytes(&self.code)
            + 8 * (self.values.capacity() + self.partials.capacity() + self.adj.capacity())
    }
    crate::storage::derived::derived_any!();
}

impl Gradient {
    /// The forward pass, the guards, the sweep; `Err` if a guard fails.
    fn run(
        &mut self,
        d: &TapeData<f64>,
        p: &Program<f64>,
        x: &[f64],
        grad: &mut [f64],
    ) -> Result<f64, ()> {
        let Gradient {
            code,
            y,
            inputs,
            values,
            partials,
            adj,
            ..
        } = self;
        match inputs[..] {
            // Consecutive, as `Tape::vars` makes them: two slices.
            [first, .., last] if (last - first) as usize + 1 == inputs.len() => {
                let at = first as usize..last as usize + 1;
                values[at.clone()].copy_from_slice(x);
                adj[at].fill(0.0);
            }
            _ => {
                for (&i, &v) in inputs.iter().zip(x) {
                    values[i as usize] = v;
                    adj[i as usize] = 0.0;
                }
            }
        }
        let args = &p
            .derived
            .get::<crate::replay::compile::Compiled<f64>>()
            .expect("prepared when compiled")
            .args;
        macro_rules! arrays {
            () => {
                machine::Arrays {
                    values: &mut *values,
                    partials: &mut *partials,
                    adj: &mut *adj,
                    args,
                    rules: &p.rules,
                    forms: &p.forms,
                    parents: d.parents(),
                    units: d.units(),
                }
            };
        }
        code.gradient(true, arrays!());
        if p.guards
            .iter()
            .any(|g| g.outcome_at(p, values) != g.outcome)
        {
            return Err(());
        }
        adj[*y as usize] += 1.0;
        code.gradient(false, arrays!());
        for (g, &i) in grad.iter_mut().zip(inputs.iter()) {
            *g = adj[i as usize];
        }
        Ok(values[*y as usize])
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
    let (code, stats) = build(d, p, None)?;
    p.derived.put(Native(Box::new(code)));
    // The compiled sweep replaces the schedule's.
    p.derived.take::<Schedule>();
    Ok(stats)
}

/// The machine code of program `p` of recording `d`: every value, partial and adjoint, or
/// (with `y`) the gradient of node `y`.
fn build(
    d: &TapeData<f64>,
    p: &mut Program<f64>,
    y: Option<u32>,
) -> Result<(machine::Code, CodeStats), CompileError> {
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
    // Loops of loops: the code is that of the nests; a gradient folds its loops' sums.
    let mut nests = shape::nest(&nodes, &regions);
    let mut nodes = nodes;
    if let Some(y) = y {
        fold_sums(d, p, &mut nodes, &mut nests, y);
    }
    let nodes = nodes;
    let instructions: usize = nests
        .iter()
        .flat_map(|nest| &nest.regions)
        .map(|r| emit::size(&nodes, r))
        .sum();
    if instructions > MOST_INSTRUCTIONS {
        let straight = nests
            .iter()
            .filter(|nest| nest.turns == 1)
            .flat_map(|nest| &nest.regions)
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
    // The nests cut into functions of a bounded size (the sweep runs them last to first).
    let mut cuts = vec![0];
    let mut size = 0;
    for (i, nest) in nests.iter().enumerate() {
        let s: usize = nest.regions.iter().map(|r| emit::size(&nodes, r)).sum();
        if size + s > FUNCTION && size > 0 {
            cuts.push(i);
            size = 0;
        }
        size += s;
    }
    cuts.push(nests.len());
    let rule = |f: Forward| lens.calls.iter().position(|&c| c == f).expect("listed") as i64;
    let flags = y.map(|y| gradient_flags(d, p, &nodes, &regions, y));
    let mode = match &flags {
        None => emit::Mode::Full,
        Some((keep, outside)) => emit::Mode::Gradient { keep, outside },
    };
    let (mut forward, mut reverse) = (Vec::new(), Vec::new());
    for w in cuts.windows(2) {
        let part = &nests[w[0]..w[1]];
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
                        mode,
                    };
                    let live =
                        |nest: &&shape::Nest| !nest.regions.iter().all(|r| inputs_only(&nodes, r));
                    if backwards {
                        for nest in part.iter().rev().filter(live) {
                            emit::nest(fb, &env, nest, true);
                        }
                    } else {
                        for nest in part.iter().filter(live) {
                            emit::nest(fb, &env, nest, false);
                        }
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
    let looped = nests
        .iter()
        .filter(|nest| nest.turns > 1)
        .map(|nest| nest.regions.iter().map(|r| r.nodes().len()).sum::<usize>() * nest.turns)
        .chain(
            nests
                .iter()
                .filter(|nest| nest.turns == 1)
                .flat_map(|nest| &nest.regions)
                .filter(|r| r.turns > 1)
                .map(|r| r.nodes().len()),
        )
        .sum();
    let loops = nests
        .iter()
        .map(|nest| {
            usize::from(nest.turns > 1) + nest.regions.iter().filter(|r| r.turns > 1).count()
        })
        .sum();
    let stats = CodeStats {
        bytes: 0,
        time: Duration::ZERO,
        nodes: n,
        looped,
        loops,
        functions: forward.len() + reverse.len(),
    };
    let code = b
        .finish(&forward, &reverse, lens)
        .map_err(CompileError::Backend)?;
    let stats = CodeStats {
        bytes: crate::storage::program::Machine::code_bytes(&code),
        ..stats
    };
    Ok((code, stats))
}

/// For the gradient of node `y`: which values must be in memory (`keep`: read through memory,
/// by a call or by a guard, and `y`'s), and which adjoints may receive a term through memory
/// (`outside`: added to by another turn or region or by a call, the inputs and `y`).
fn gradient_flags(
    d: &TapeData<f64>,
    p: &Program<f64>,
    nodes: &[Node],
    regions: &[Region],
    y: u32,
) -> (Vec<bool>, Vec<bool>) {
    use crate::storage::guard::Kind;
    use crate::storage::program::CONST;
    use shape::{Points, Reverse};
    let n = nodes.len();
    let (mut keep, mut outside) = (vec![false; n], vec![false; n]);
    let mark = |flags: &mut Vec<bool>, r: u32| {
        if r & CONST == 0 && (r as usize) < n {
            flags[r as usize] = true;
        }
    };
    mark(&mut keep, y);
    mark(&mut outside, y);
    for (i, nd) in nodes.iter().enumerate() {
        match nd.forward {
            // An input's adjoint is the gradient; a folded sum's is read by its loop.
            Forward::Input | Forward::Folded => outside[i] = true,
            // A call reads its operands from memory.
            Forward::Call { op, form, param } => {
                if form == crate::storage::program::Form::Many {
                    let [a, _] = p.operands[i];
                    for &r in &p.args[a as usize..(a + param) as usize] {
                        mark(&mut keep, r);
                    }
                } else {
                    let [a, b] = p.operands[i];
                    mark(&mut keep, a);
                    if op != crate::storage::op_code::OpCode::Powi {
                        mark(&mut keep, b);
                    }
                }
            }
            Forward::Inline(_) => {}
        }
        // A call's sweep adds through memory.
        if let Reverse::Call { unit, count } = nd.reverse {
            let lo = nd.at[shape::LO] as usize;
            let edges = lo..lo + count as usize;
            let reached = if unit {
                &d.units()[edges]
            } else {
                &d.parents()[edges]
            };
            for &q in reached {
                mark(&mut outside, q & !crate::storage::NEG);
            }
        }
    }
    for g in &p.guards {
        match g.kind {
            Kind::Compare { a, b, .. } => {
                mark(&mut keep, a);
                mark(&mut keep, b);
            }
            Kind::Test { a, .. } => mark(&mut keep, a),
            Kind::Piece { node } => {
                let [a, b] = p.operands[node as usize];
                mark(&mut keep, node);
                mark(&mut keep, a);
                mark(&mut keep, b);
            }
        }
    }
    // What the compiled code reads from memory, turn by turn.
    for r in regions {
        let carry =
            (0..r.period).all(|j| !matches!(nodes[r.start + j].reverse, Reverse::Call { .. }));
        for j in 0..r.period {
            let nd = &nodes[r.start + j];
            let memory = |x: usize| !matches!(r.points(nodes, j, x, n), Some(Points::Turn(_)));
            let operands: Vec<usize> = nd
                .operands()
                .iter()
                .copied()
                .filter(|&x| memory(x))
                .collect();
            let parents: Vec<usize> = nd.parents().filter(|&x| !carry || memory(x)).collect();
            for k in 0..r.turns as i64 {
                let at = |x: usize| nd.at[x] + k * r.step[j][x];
                for &x in &operands {
                    if (at(x) as usize) < n {
                        keep[at(x) as usize] = true;
                    }
                }
                for &x in &parents {
                    outside[at(x) as usize] = true;
                }
            }
        }
    }
    (keep, outside)
}

/// Folds into their loops the sums of one body node over every turn (see `Region::fold`):
/// where a loop of the top level (not in a loop of loops) has a body node read only by one
/// sum node, itself a region of its own, whose operands are exactly that node's values turn by
/// turn, and none of them is the output `y` (whose seed is another term).
fn fold_sums(
    d: &TapeData<f64>,
    p: &Program<f64>,
    nodes: &mut [Node],
    nests: &mut [shape::Nest],
    y: u32,
) {
    use crate::storage::program::CONST;
    let n = nodes.len();
    // Each node's only reader (NONE: none, or several).
    const NONE: u32 = u32::MAX;
    const MANY: u32 = u32::MAX - 1;
    let mut reader = vec![NONE; n];
    let (parent, unit) = (d.parents(), d.units());
    for (v, edges) in d.walk_back(n) {
        let read = match edges {
            crate::storage::Edges::Weighted(lo, hi) => &parent[lo..hi],
            crate::storage::Edges::Unit(lo, hi) => &unit[lo..hi],
        };
        for &u in read {
            let r = &mut reader[(u & !crate::storage::NEG) as usize];
            *r = if *r == NONE { v as u32 } else { MANY };
        }
    }
    // Nodes that are regions of their own at the top level.
    let mut alone = vec![false; n];
    for nest in nests.iter() {
        if let [r] = &nest.regions[..]
            && nest.turns == 1
            && r.turns == 1
        {
            alone[r.start] = true;
        }
    }
    for nest in nests.iter_mut().filter(|nest| nest.turns == 1) {
        let [r] = &mut nest.regions[..] else { continue };
        if r.turns < 2 {
            continue;
        }
        let found = (0..r.period).find_map(|j| {
            let sum = reader[r.start + j];
            let ok = (sum as usize) < n
                && alone[sum as usize]
                && sum as usize >= r.nodes().end
                && matches!(nodes[sum as usize].forward,
                    Forward::Call { op: crate::storage::op_code::OpCode::Sum, param, .. }
                        if param as usize == r.turns)
                && (0..r.turns).all(|k| {
                    let t = r.start + k * r.period + j;
                    reader[t] == sum && t != y as usize
                })
                && {
                    let [a, len] = p.operands[sum as usize];
                    let args = &p.args[a as usize..(a + len) as usize];
                    args.iter()
                        .enumerate()
                        .all(|(k, &x)| x & CONST == 0 && x as usize == r.start + k * r.period + j)
                };
            ok.then_some((j, sum as usize))
        });
        if let Some((j, sum)) = found {
            r.fold = Some((j, sum));
            nodes[sum].forward = Forward::Folded;
            nodes[sum].reverse = shape::Reverse::Unit(0, 0);
        }
    }
}

/// Whether region `r` holds inputs only, for which neither pass has anything to do (the
/// inputs' values are written before the code runs; they have no edges).
fn inputs_only(nodes: &[Node], r: &Region) -> bool {
    (0..r.period).all(|j| nodes[r.start + j].forward == Forward::Input)
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
