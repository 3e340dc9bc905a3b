//! [`Preparation`]: how a prepared object obtains the recording it sweeps at each call, and
//! [`PreparedPlan`]: what preparing did and cost.

use crate::plan::Compilation;
use core::fmt;

/// How a [`PreparedGradient`](crate::PreparedGradient), a
/// [`PreparedJacobian`](crate::PreparedJacobian) in reverse mode or a
/// [`PreparedSparseJacobian`](crate::sparse::PreparedSparseJacobian) by rows obtains the
/// recording it sweeps at each call. (A
/// [`PreparedSparseHessian`](crate::sparse::PreparedSparseHessian) reads it as the route of its
/// products: see its `with_preparation`.)
///
/// ```
/// use jacobian::Preparation;
/// assert_eq!(Preparation::default(), Preparation::Auto);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Preparation {
    /// [`Reevaluate`](Preparation::Reevaluate) where the interpreter's program fits in
    /// [`Preparation::EXTRA_BYTES`] (estimated as [`Preparation::PROGRAM_FACTOR`] times one
    /// recording), else [`Record`](Preparation::Record); with feature `jit`, a gradient is
    /// [`Compile`](Preparation::Compile)d instead where a compiled call is faster than a call
    /// of the other (both timed while preparing) and the object keeps at most `EXTRA_BYTES`
    /// more than by the other (a compiled gradient keeps what its code reads, not the
    /// recording).
    ///
    /// A `PreparedJacobian` (and a `PreparedSparseJacobian` by rows) re-evaluates, and
    /// (feature `jit`) compiles its recording once its calls have taken
    /// [`Preparation::COMPILE_AFTER`] in all, as a JIT compiles code that runs often: a
    /// Jacobian called that long is expected to be called as long again, which repays a
    /// compile time of that order. It keeps the code where the compiled calls are faster (both
    /// timed then), and its plan says so ([`Plan::compiled`](crate::Plan)).
    #[default]
    Auto,
    /// Record `f` once on a replayable tape, compile its program now, and re-evaluate it at
    /// each call (`f` does not run again while its branches go the same way). Pays where
    /// recording is the cost: many cheap operations on few inputs.
    Reevaluate,
    /// Record `f` afresh at each call, in buffers the object owns (no allocation, no page
    /// faults). The memory of one recording, prepared in the time of one; what large
    /// recordings need, whose calls are bound by memory traffic either way.
    Record,
    /// [`Reevaluate`](Preparation::Reevaluate), the recording compiled to machine code
    /// (feature `jit`), and compiled again when a guard makes a call record afresh. A
    /// `PreparedGradient` compiles its gradient alone (`reverse::Recording::compile_gradient`),
    /// which keeps the arrays its code reads in place of the recording. [`Auto`](Preparation::Auto) chooses it where the compiled calls
    /// are faster, and the plan says after how many calls the compile time is repaid. Without
    /// the feature, or where the recording cannot be compiled, it re-evaluates interpreted and
    /// the plan says why; a recording of more nodes than the compiler takes
    /// (`reverse::jit::MOST_NODES`) is recorded afresh at each call instead, as by `Record`.
    /// A `PreparedJacobian` (and a `PreparedSparseJacobian` by rows) compiles the recording's
    /// forward pass and its sweeps, scalar and vector (`reverse::Recording::compile_lanes`),
    /// and keeps the recording of any size.
    Compile,
}

impl Preparation {
    /// The most bytes [`Auto`](Preparation::Auto) lets a prepared program add to what the
    /// object keeps without it (the interpreter's program, estimated; or a compiled gradient,
    /// measured): 64 MiB.
    ///
    /// ```
    /// assert_eq!(jacobian::Preparation::EXTRA_BYTES, 64 << 20);
    /// ```
    pub const EXTRA_BYTES: usize = 64 << 20;

    /// The time a [`PreparedJacobian`](crate::PreparedJacobian) prepared by
    /// [`Auto`](Preparation::Auto) spends in interpreted calls before it compiles its
    /// recording: 0.1 s.
    ///
    /// ```
    /// assert_eq!(jacobian::Preparation::COMPILE_AFTER.as_millis(), 100);
    /// ```
    pub const COMPILE_AFTER: core::time::Duration = core::time::Duration::from_millis(100);

    /// A replayable recording's program and what re-evaluation and the sweeps derive from it,
    /// in bytes of one plain recording: 4, at least the ratio of every GradBench objective (an
    /// over-estimate keeps large recordings out of the budget).
    ///
    /// ```
    /// assert_eq!(jacobian::Preparation::PROGRAM_FACTOR, 4);
    /// ```
    pub const PROGRAM_FACTOR: usize = 4;
}

/// What preparing a [`PreparedGradient`](crate::PreparedGradient) did and cost: the strategy and why, the time, and
/// the memory kept against one plain recording's.
///
/// ```
/// use jacobian::{Function, Op, PreparedGradient, Preparation};
/// struct Square;
/// impl Function for Square {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         vec![x[0] * x[0]]
///     }
/// }
/// let p = PreparedGradient::new(Square, &[3.0])?;
/// let plan = p.plan();
/// // Re-evaluated: compiled (feature `jit`) if the compiled calls were faster.
/// assert!(matches!(plan.strategy, Preparation::Reevaluate | Preparation::Compile));
/// assert!(plan.kept_bytes >= plan.recording_bytes);
/// println!("{plan}");
/// # Ok::<(), jacobian::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct PreparedPlan {
    /// [`Preparation::Reevaluate`], [`Preparation::Record`] or [`Preparation::Compile`]
    /// (never `Auto`).
    pub strategy: Preparation,
    /// Bytes of one plain recording of `f` ([`reverse::TapeStats::bytes`]).
    pub recording_bytes: usize,
    /// Seconds one plain recording of `f` took, while preparing.
    pub recording_seconds: f64,
    /// Bytes the object keeps: its recording's capacities, with the program if it re-evaluates
    /// ([`reverse::Recording::kept_bytes`]), and the adjoints; or its compiled gradient
    /// (`reverse::jit::CompiledGradient::kept_bytes`).
    pub kept_bytes: usize,
    /// Seconds preparing took, including one call at the point it was prepared at (so that the
    /// first call of the user pays nothing more than any other).
    pub seconds: f64,
    /// Why this strategy.
    pub reason: String,
    /// What compiling made and repays, where the object tried ([`Preparation::Compile`], or
    /// [`Preparation::Auto`]: with feature `jit`, or where it re-evaluates); `None` where it
    /// did not.
    pub compilation: Option<Compilation>,
}

impl fmt::Display for PreparedPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mib = |b: usize| b as f64 / (1 << 20) as f64;
        let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
        let what = match self.strategy {
            Preparation::Record => "records f at each call in its own buffers",
            Preparation::Compile => "runs its recording compiled to machine code at each call",
            _ => "re-evaluates its recording at each call",
        };
        write!(
            f,
            "{what} ({}); keeps {:.1} MiB ({:.1}× one recording's {:.1} MiB); prepared in \
             {:.3} s ({:.1}× one recording's {:.3} s)",
            self.reason,
            mib(self.kept_bytes),
            ratio(self.kept_bytes as f64, self.recording_bytes as f64),
            mib(self.recording_bytes),
            self.seconds,
            ratio(self.seconds, self.recording_seconds),
            self.recording_seconds,
        )?;
        match &self.compilation {
            Some(c) => write!(f, "; {c}"),
            None => Ok(()),
        }
    }
}
