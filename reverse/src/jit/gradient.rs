//! A gradient compiled alone ([`Recording::compile_gradient`]): its machine code and the
//! arrays that code reads, kept apart from the recording, which is dropped.

use super::build::Layout;
use super::machine;
use super::report::{CodeStats, CompileError};
use super::slots::Slots;
use crate::replay::compile::{Operands, slot};
use crate::replay::{GuardFailure, error};
use crate::storage::guard::Guard;
use crate::storage::op_code::OpCode;
use crate::storage::program::{Form, Machine, Rule};
use crate::tape::Recording;
use core::fmt;

/// The gradient of one output of a recording of `f64`, compiled to machine code: one function
/// that computes, at a new point, the values and the adjoints the gradient needs and checks
/// the recording's guards. Made by [`Recording::compile_gradient`], which gives it the arrays
/// its code reads (the n-ary operands, user rules, the edges of its calls) and drops the rest
/// of the recording: it keeps a value and an adjoint for each node whose value or adjoint
/// passes through memory (see [`Recording::compile_gradient`]), and of the edges only
/// the partials its calls write (and those of `max` and `min`) and the edges its calls sweep.
///
/// Bit for bit the interpreter's gradient (see [the module](crate::jit)). Where a guard fails
/// it returns [`RunError::Guard`]: record the function afresh at that point (its operations
/// differ there), and [`failed_guard`](Self::failed_guard) names the guard as re-evaluation
/// would.
///
/// ```
/// # #[cfg(feature = "jit")] {
/// use reverse::Tape;
///
/// let tape = Tape::replayable();
/// let x = tape.vars(&[1.0, 2.0]);
/// let y = x[0] * x[1] + x[1];
/// let mut g = tape.finish().compile_gradient(y)?;
/// let mut grad = [0.0; 2];
/// assert_eq!(g.gradient(&[3.0, 4.0], &mut grad)?, 16.0);
/// assert_eq!(grad, [4.0, 4.0]);
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct CompiledGradient {
    code: machine::Code,
    /// The output's and the inputs' places in the values and adjoints.
    y: u32,
    inputs: Inputs,
    /// Values (the constants after the nodes), partials (of calls, and the recorded ones of
    /// `max` and `min`), adjoints.
    values: Vec<f64>,
    partials: Vec<f64>,
    adj: Vec<f64>,
    /// The recording's arrays the code reads: n-ary operands (indices into `values`), user
    /// rules, forms (of calls), weighted edges' parents, unit edges.
    args: Vec<u32>,
    rules: Vec<Rule<f64>>,
    forms: Vec<Form>,
    parents: Vec<u32>,
    units: Vec<u32>,
    /// The guards the code leaves to Rust, each with what its outcome reads.
    unchecked: Vec<Unchecked>,
    stats: CodeStats,
}

/// A guard checked by Rust, with the operation and operands of its node if it is a piece's,
/// and where the values hold what it reads (by operand, as the guard names it).
struct Unchecked {
    guard: Guard,
    piece: Option<(OpCode, [u32; 2])>,
    at: [(u32, u32); 3],
}

/// Where the inputs' values and adjoints are: consecutive (as `Tape::vars` records them, and a
/// gradient's slots keep them), or each apart.
enum Inputs {
    Run(core::ops::Range<usize>),
    Each(Vec<u32>),
}

impl Inputs {
    /// The inputs of a recording whose nodes' forms are `forms`, by node or in `slots`.
    fn of(forms: &[Form], slots: Option<&Slots>) -> Inputs {
        let nodes: Vec<u32> = (0..forms.len() as u32)
            .filter(|&i| forms[i as usize] == Form::Input)
            .collect();
        let count = nodes.len();
        let at = |i: u32| slots.map_or(i, |s| s.of_u32(i));
        let run = match nodes[..] {
            [first, .., last] if (last - first) as usize + 1 == count => match slots {
                Some(s) => s.over((i64::from(first), (1, 0)), count, 1),
                None => Some((i64::from(first), (1, 0))),
            },
            _ => None,
        };
        match run {
            Some((first, (1, _))) => Inputs::Run(first as usize..first as usize + count),
            _ => Inputs::Each(nodes.into_iter().map(at).collect()),
        }
    }

    fn len(&self) -> usize {
        match self {
            Inputs::Run(at) => at.len(),
            Inputs::Each(at) => at.len(),
        }
    }

    /// The `u32`s kept.
    fn kept(&self) -> usize {
        match self {
            Inputs::Run(_) => 0,
            Inputs::Each(at) => at.capacity(),
        }
    }
}

/// Why a [`CompiledGradient`] gave no gradient at a point.
///
/// ```
/// # #[cfg(feature = "jit")] {
/// let tape = reverse::Tape::replayable();
/// let x = tape.var(2.0);
/// let y = x * x;
/// let mut g = tape.finish().compile_gradient(y)?;
/// let err = g.gradient(&[1.0, 2.0], &mut [0.0]).unwrap_err();
/// assert!(err.to_string().contains("1 input"), "{err}");
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RunError {
    /// The point or the gradient's buffer does not hold one number per input.
    Length {
        /// Inputs of the recording.
        inputs: usize,
        /// Numbers of the point.
        x: usize,
        /// Numbers of the gradient's buffer.
        grad: usize,
    },
    /// A decision the recording depended on goes the other way at the point: the function
    /// runs other operations there. [`CompiledGradient::failed_guard`] names it.
    Guard,
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Length { inputs, x, grad } => write!(
                f,
                "a compiled gradient of {inputs} input(s) was given a point of {x} and a \
                 gradient buffer of {grad}"
            ),
            RunError::Guard => write!(
                f,
                "a guard of the compiled gradient failed: the function takes another branch at \
                 this point (record it there)"
            ),
        }
    }
}

impl std::error::Error for RunError {}

/// A recording whose gradient was not compiled, given back with the reason.
///
/// ```
/// # #[cfg(feature = "jit")] {
/// let tape = reverse::Tape::replayable();
/// let x = tape.var(2.0);
/// let _ = x * x;
/// let not = tape.finish().compile_gradient(reverse::Var::constant(1.0)).err().unwrap();
/// assert_eq!(not.error, reverse::jit::CompileError::Constant);
/// assert_eq!(not.recording.len(), 2);
/// # }
/// ```
pub struct NotCompiled {
    /// Why.
    pub error: CompileError,
    /// The recording, unchanged: it runs interpreted (boxed: a recording is a large value).
    pub recording: Box<Recording<f64>>,
}

impl fmt::Debug for NotCompiled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NotCompiled")
            .field("error", &self.error)
            .finish_non_exhaustive()
    }
}

impl fmt::Display for NotCompiled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.error.fmt(f)
    }
}

impl std::error::Error for NotCompiled {}

impl CompiledGradient {
    /// Takes from `rec`, just compiled to `code`, what the code reads, and drops the rest.
    pub(super) fn take(
        rec: &mut Recording<f64>,
        code: machine::Code,
        layout: Layout,
        y: u32,
        mut stats: CodeStats,
        start: std::time::Instant,
    ) -> CompiledGradient {
        let Layout {
            edges,
            slots,
            args: keeps_args,
        } = layout;
        rec.with_data_mut(|d| {
            let mut p = d.program.take().expect("compiled, so replayable");
            let n = d.len();
            // Where the code finds each value index (a node, or a constant after them): its
            // slot, or itself.
            let at = |i: u32| slots.as_ref().map_or(i, |s| s.of_u32(i));
            let inputs = Inputs::of(&p.forms, slots.as_ref());
            let mut args = p
                .derived
                .take::<Operands>()
                .expect("prepared when compiled")
                .args;
            if !keeps_args {
                args = Vec::new();
            }
            // (An operand without a slot is one no call reads: `NONE`, past the values.)
            if slots.is_some() {
                args.iter_mut().for_each(|a| *a = at(*a));
            }
            let unchecked: Vec<Unchecked> = code
                .unchecked()
                .iter()
                .map(|&k| {
                    let guard = p.guards[k as usize];
                    use crate::storage::guard::Kind;
                    let piece = match guard.kind {
                        Kind::Piece { node } => {
                            Some((p.ops[node as usize], p.operands[node as usize]))
                        }
                        _ => None,
                    };
                    let reads = match guard.kind {
                        Kind::Compare { a, b, .. } => [a, b, b],
                        Kind::Test { a, .. } => [a; 3],
                        Kind::Piece { node } => {
                            let [a, b] = p.operands[node as usize];
                            [a, b, node]
                        }
                    };
                    let at = reads.map(|r| (r, at(slot(r, n))));
                    Unchecked { guard, piece, at }
                })
                .collect();
            let mut values = core::mem::take(&mut p.values);
            match &slots {
                Some(s) => s.gather(&mut values),
                None => values.shrink_to_fit(),
            }
            let mut forms = core::mem::take(&mut p.forms);
            forms.shrink_to_fit();
            let rules = core::mem::take(&mut p.rules);
            d.program = Some(p);
            // The edges the code reads (the recorded partials among them: those of `max` and
            // `min` stay valid while their guards hold; calls overwrite their own), where the
            // compiler laid them out, else the recording's.
            let (partials, mut parents, mut units) = match edges {
                Some(e) => {
                    d.take_edges();
                    (e.partials, e.parents, e.units)
                }
                None => {
                    let partials = d.partials().to_vec();
                    let (parents, units) = d.take_edges();
                    (partials, parents, units)
                }
            };
            if slots.is_some() {
                // (A parent without a slot is one no sweep reads: padding.)
                parents.iter_mut().for_each(|q| *q = at(*q));
                for q in &mut units {
                    *q = at(*q & !crate::storage::NEG) | (*q & crate::storage::NEG);
                }
            }
            let adj = vec![0.0; slots.as_ref().map_or(n, |s| s.count())];
            let y = at(y);
            stats.time = start.elapsed();
            CompiledGradient {
                code,
                y,
                inputs,
                values,
                partials,
                adj,
                args,
                rules,
                forms,
                parents,
                units,
                unchecked,
                stats,
            }
        })
    }

    /// The value of the output at `x`, and its gradient into `grad` (one number per input):
    /// the interpreter's bits.
    ///
    /// # Errors
    ///
    /// [`RunError::Length`] for a point or a buffer of another length; [`RunError::Guard`]
    /// where a guard fails at `x` (`grad` is then unchanged).
    ///
    /// ```
    /// # #[cfg(feature = "jit")] {
    /// use reverse::{Tape, Var, jit::RunError};
    ///
    /// let tape = Tape::replayable();
    /// let x = tape.var(2.0);
    /// let y = if x > Var::constant(0.0) { x * x } else { -x };
    /// let mut g = tape.finish().compile_gradient(y)?;
    /// let mut grad = [0.0];
    /// assert_eq!(g.gradient(&[3.0], &mut grad)?, 9.0);
    /// assert_eq!(grad, [6.0]);
    /// assert_eq!(g.gradient(&[-1.0], &mut grad), Err(RunError::Guard));
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn gradient(&mut self, x: &[f64], grad: &mut [f64]) -> Result<f64, RunError> {
        let CompiledGradient {
            code,
            y,
            inputs,
            values,
            partials,
            adj,
            args,
            rules,
            forms,
            parents,
            units,
            unchecked,
            ..
        } = self;
        if x.len() != inputs.len() || grad.len() != inputs.len() {
            return Err(RunError::Length {
                inputs: inputs.len(),
                x: x.len(),
                grad: grad.len(),
            });
        }
        match inputs {
            Inputs::Run(at) => {
                values[at.clone()].copy_from_slice(x);
                adj[at.clone()].fill(0.0);
            }
            Inputs::Each(at) => {
                for (&i, &v) in at.iter().zip(x) {
                    values[i as usize] = v;
                    adj[i as usize] = 0.0;
                }
            }
        }
        macro_rules! arrays {
            () => {
                machine::Arrays {
                    values: &mut *values,
                    partials: &mut *partials,
                    adj: &mut *adj,
                    args,
                    rules,
                    forms,
                    parents,
                    units,
                }
            };
        }
        code.gradient(true, arrays!());
        let held = code.checks_hold(arrays!())
            && unchecked.iter().all(|u| {
                let at = |r: u32| u.at.iter().find(|a| a.0 == r).expect("listed").1;
                let value = |r: u32| values[at(r) as usize];
                let piece = |_| u.piece.expect("a piece's guard");
                u.guard.outcome_with(value, piece) == u.guard.outcome
            });
        if !held {
            return Err(RunError::Guard);
        }
        adj[*y as usize] += 1.0;
        code.gradient(false, arrays!());
        match inputs {
            Inputs::Run(at) => grad.copy_from_slice(&adj[at.clone()]),
            Inputs::Each(at) => {
                for (g, &i) in grad.iter_mut().zip(at.iter()) {
                    *g = adj[i as usize];
                }
            }
        }
        Ok(values[*y as usize])
    }

    /// The guard that failed where [`gradient`](Self::gradient) returned [`RunError::Guard`],
    /// named as [`Recording::reevaluate`] names it, given `fresh`: the same function recorded
    /// afresh (on [`Tape::replayable`](crate::Tape::replayable)) at that point. The first guard
    /// whose outcome differs between the two recordings is the one that failed (the operations
    /// before it are the same); `None` where none differs.
    ///
    /// ```
    /// # #[cfg(feature = "jit")] {
    /// use reverse::{Tape, Var};
    ///
    /// let kink = |tape: &Tape, x: f64| {
    ///     let x = tape.var(x);
    ///     if x > Var::constant(0.0) { x * x } else { -x }
    /// };
    /// let tape = Tape::replayable();
    /// let y = kink(&tape, 2.0);
    /// let mut g = tape.finish().compile_gradient(y)?;
    /// assert!(g.gradient(&[-1.0], &mut [0.0]).is_err());
    /// let tape = Tape::replayable();
    /// kink(&tape, -1.0);
    /// let failed = g.failed_guard(&tape.finish()).expect("a guard differs");
    /// assert_eq!((failed.guard, failed.recorded.as_str(), failed.now.as_str()), (0, "true", "false"));
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn failed_guard(&self, fresh: &Recording<f64>) -> Option<GuardFailure> {
        fresh.with_data(|d| {
            let p = d.program.as_ref()?;
            let old = self.code.outcomes();
            let k = old
                .iter()
                .zip(&p.guards)
                .position(|(&o, g)| o != g.outcome)?;
            // Described at the fresh recording's values, with the outcomes the other way round:
            // its outcome is the new one.
            let (node, what, now, recorded) = error::explain(p, k, old[k]);
            Some(GuardFailure {
                guard: k,
                node,
                what,
                recorded,
                now,
            })
        })
    }

    /// Inputs of the gradient.
    ///
    /// ```
    /// # #[cfg(feature = "jit")] {
    /// let tape = reverse::Tape::replayable();
    /// let x = tape.vars(&[1.0, 2.0, 3.0]);
    /// let y = x[0] * x[2];
    /// assert_eq!(tape.finish().compile_gradient(y)?.inputs(), 3);
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn inputs(&self) -> usize {
        self.inputs.len()
    }

    /// What compiling made: the code's bytes, the compile time, the loops.
    ///
    /// ```
    /// # #[cfg(feature = "jit")] {
    /// let tape = reverse::Tape::replayable();
    /// let x = tape.var(2.0);
    /// let y = x * x;
    /// assert!(tape.finish().compile_gradient(y)?.code().bytes > 0);
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn code(&self) -> &CodeStats {
        &self.stats
    }

    /// Bytes kept: the machine code and the guards' outcomes, the values, partials and
    /// adjoints, and the arrays of the recording the code reads.
    ///
    /// ```
    /// # #[cfg(feature = "jit")] {
    /// let tape = reverse::Tape::replayable();
    /// let x = tape.vars(&[1.0; 100]);
    /// let y = x.iter().fold(x[0], |s, &v| s * v);
    /// let g = tape.finish().compile_gradient(y)?;
    /// // A value and an adjoint for each input and each product (the next turn reads it).
    /// assert!(g.kept_bytes() >= 2 * 8 * 200);
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn kept_bytes(&self) -> usize {
        self.code.kept_bytes()
            + 8 * (self.values.capacity() + self.partials.capacity() + self.adj.capacity())
            + 4 * (self.inputs.kept()
                + self.args.capacity()
                + self.parents.capacity()
                + self.units.capacity())
            + self.forms.capacity()
            + self.rules.capacity() * size_of::<Rule<f64>>()
            + self.unchecked.capacity() * size_of::<Unchecked>()
    }
}
