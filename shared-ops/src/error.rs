use core::fmt;

/// What a driver returns when its input is wrong. Every message names the sizes involved.
///
/// ```
/// use shared_ops::Error;
/// let e = Error::InputLength { expected: 3, found: 2 };
/// assert_eq!(e.to_string(), "input has length 2, but the function takes 3 inputs");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The input length differs from the length the function declares.
    InputLength {
        /// What the function declares ([`Function::sizes`](crate::Function::sizes)).
        expected: usize,
        /// What was passed.
        found: usize,
    },
    /// The function returned another number of outputs than it declares
    /// ([`Function::sizes`](crate::Function::sizes)).
    OutputLength {
        /// The length it declares.
        declared: usize,
        /// The length it returned.
        found: usize,
        /// Which evaluation returned it (e.g. "the reverse recording", "forward sweep 3").
        during: String,
    },
    /// The function returned another number of outputs than at an earlier evaluation.
    OutputChanged {
        /// The length it returned first.
        first: usize,
        /// The length it returned now.
        found: usize,
        /// Which evaluation returned it (e.g. "the reverse recording", "forward sweep 3").
        during: String,
    },
    /// A gradient was asked of a function that does not have exactly one output.
    NotScalar {
        /// The number of outputs the function returned.
        outputs: usize,
    },
    /// A seed (tangent or adjoint direction) has the wrong length.
    SeedLength {
        /// Which seed: "tangent" (length n) or "adjoint" (length m).
        seed: &'static str,
        /// The length it must have.
        expected: usize,
        /// What was passed.
        found: usize,
    },
    /// An argument besides the input vector (a loop's initial state or parameters) has the wrong
    /// length.
    ArgumentLength {
        /// Which argument, as the message names it ("the initial state").
        argument: &'static str,
        /// The length the function declares.
        expected: usize,
        /// What was passed.
        found: usize,
    },
    /// Checkpointing was given no slot: one is needed for the initial state.
    NoCheckpointSlots {
        /// The number of steps of the loop.
        steps: usize,
    },
    /// A pattern that must be square and symmetric (a Hessian's) is not.
    NotSymmetric {
        /// Its rows.
        rows: usize,
        /// Its columns.
        cols: usize,
        /// A nonzero `(i, j)` whose mirror `(j, i)` is missing, if it is square.
        missing: Option<(usize, usize)>,
    },
    /// An index lies outside the range it indexes (a sparsity pattern's column, a colour).
    IndexOutOfRange {
        /// What is indexed, as the message names it ("column of row 3").
        what: String,
        /// The index given.
        index: usize,
        /// The number of valid indices.
        len: usize,
    },
    /// Global sparsity detection met a decision that needs a value (a comparison, `is_nan`, …):
    /// its numbers carry no values, so it cannot follow a branch.
    NeedsValues {
        /// The decision, as the message names it ("a comparison of two variables").
        what: String,
    },
    /// A forward sweep was asked to carry a number of tangents it has no lanes for.
    Lanes {
        /// The number asked for.
        requested: usize,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InputLength { expected, found } => {
                write!(
                    f,
                    "input has length {found}, but the function takes {expected} inputs"
                )
            }
            Error::OutputLength {
                declared,
                found,
                during,
            } => write!(
                f,
                "the function declares {declared} outputs (Function::sizes), but returned {found} during {during}"
            ),
            Error::OutputChanged {
                first,
                found,
                during,
            } => write!(
                f,
                "the function returned {found} outputs during {during}, but {first} before: its output length must not change"
            ),
            Error::NotScalar { outputs } => write!(
                f,
                "a gradient needs a function with 1 output, but this one returned {outputs}: use a Jacobian or a vector-Jacobian product"
            ),
            Error::SeedLength {
                seed,
                expected,
                found,
            } => {
                write!(
                    f,
                    "{seed} seed has length {found}, but must have length {expected}"
                )
            }
            Error::ArgumentLength {
                argument,
                expected,
                found,
            } => write!(
                f,
                "{argument} has length {found}, but the function declares {expected}"
            ),
            Error::NoCheckpointSlots { steps } => write!(
                f,
                "checkpointing a loop of {steps} steps needs at least 1 slot (it holds the initial state), but 0 were given"
            ),
            Error::NotSymmetric {
                rows,
                cols,
                missing,
            } => match missing {
                Some((i, j)) => write!(
                    f,
                    "the {rows}×{cols} pattern is not symmetric: ({i}, {j}) is a nonzero but ({j}, {i}) is not"
                ),
                None => write!(f, "the pattern is {rows}×{cols}, not square"),
            },
            Error::IndexOutOfRange { what, index, len } => {
                write!(f, "{what} is {index}, outside 0..{len}")
            }
            Error::NeedsValues { what } => write!(
                f,
                "global sparsity detection met {what}, which needs values it does not carry: use local detection (Detection::Local), whose pattern holds at this x"
            ),
            Error::Lanes { requested } => write!(
                f,
                "{requested} tangents per sweep: a forward sweep carries 1, 2, 3, 4, 8, 16 or 32"
            ),
        }
    }
}

impl Error {
    /// `Ok` if a seed has the `expected` length, else [`Error::SeedLength`]: the one check every
    /// driver that takes a direction makes.
    ///
    /// ```
    /// use shared_ops::Error;
    /// assert!(Error::check_seed("tangent", 3, 3).is_ok());
    /// let e = Error::check_seed("tangent", 3, 2).unwrap_err();
    /// assert_eq!(e.to_string(), "tangent seed has length 2, but must have length 3");
    /// ```
    pub fn check_seed(seed: &'static str, expected: usize, found: usize) -> Result<(), Error> {
        if expected == found {
            Ok(())
        } else {
            Err(Error::SeedLength {
                seed,
                expected,
                found,
            })
        }
    }
}

impl std::error::Error for Error {}
