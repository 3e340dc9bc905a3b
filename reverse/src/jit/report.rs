//! What compiling reports: the figures of the code made, and why a recording was not
//! compiled.

use crate::replay::ReplayError;
use core::fmt;
use core::time::Duration;

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
    /// Guards the code checks after its forward pass (the others are checked by Rust).
    pub guards: usize,
    /// Dot products a gradient's code reads as two slices of consecutive values (and sweeps
    /// from them), counted per node.
    pub sliced: usize,
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
    /// The recording has more nodes than the compiler takes ([`MOST_NODES`](crate::jit::MOST_NODES)).
    TooManyNodes {
        /// Nodes of the recording.
        nodes: usize,
        /// The most the compiler takes.
        limit: usize,
    },
    /// A vector sweep of this many lanes is not compiled: an even number from 2 to
    /// [`MOST_LANES`](crate::jit::MOST_LANES) is.
    Lanes {
        /// Lanes asked for.
        lanes: usize,
        /// The most the compiler takes.
        limit: usize,
    },
    /// The code would pass [`MOST_INSTRUCTIONS`](crate::jit::MOST_INSTRUCTIONS): the recording repeats too little of itself
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
            CompileError::Lanes { lanes, limit } => write!(
                f,
                "a vector sweep of {lanes} lanes: an even number from 2 to {limit} is compiled; \
                 it runs interpreted"
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

/// The figures of a compilation, kept with its code.
pub(super) struct Stats(pub CodeStats);

impl crate::storage::derived::Derived for Stats {
    fn capacity_bytes(&self) -> usize {
        0
    }
    crate::storage::derived::derived_any!();
}
