//! Why a re-evaluation is refused: a wrong input, a recording without a program, or a recorded
//! decision (a guard, see `storage::guard`) that goes the other way at the new point, in words.

use crate::storage::guard::Kind;
use crate::storage::op_code::OpCode;
use crate::storage::program::{CONST, Program};
use core::fmt;
use shared_ops::Compare;
use shared_ops::Op;

fn order_name(code: u64) -> &'static str {
    ["<", "=", ">", "unordered (NaN)"][code as usize & 3]
}

/// Why a recording cannot be evaluated again at a new point.
///
/// ```
/// let tape = reverse::Tape::replayable();
/// let x = tape.vars(&[1.0, 2.0]);
/// let _ = x[0] * x[1];
/// let mut rec = tape.finish();
/// let err = rec.reevaluate(&[1.0]).unwrap_err();
/// assert_eq!(err, reverse::ReplayError::InputLength { expected: 2, found: 1 });
/// assert!(err.to_string().contains("2 inputs"));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum ReplayError {
    /// The recording kept no program: it was made by [`Tape::new`](crate::Tape::new), not
    /// [`Tape::replayable`](crate::Tape::replayable) or [`Tape::traced`](crate::Tape::traced).
    NotReplayable,
    /// The new point has another number of inputs than the recording.
    InputLength {
        /// Inputs recorded.
        expected: usize,
        /// Values given.
        found: usize,
    },
    /// A node of [`Var::from_partials`](crate::Var::from_partials): its partials were given,
    /// not computed by a rule, so they cannot be computed again.
    Opaque {
        /// The node.
        node: u32,
    },
    /// A decision the recording depended on goes the other way at the new point: the function
    /// would run other operations there. The recording is left at its previous point.
    Guard(GuardFailure),
}

impl core::fmt::Display for ReplayError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "re-evaluation at a new point: ")?;
        match self {
            ReplayError::NotReplayable => write!(
                f,
                "the recording keeps no program; record on Tape::replayable() (or \
                 Tape::traced()) instead of Tape::new()"
            ),
            ReplayError::InputLength { expected, found } => write!(
                f,
                "the recording has {expected} inputs, but the new point has {found}"
            ),
            ReplayError::Opaque { node } => write!(
                f,
                "node {node} was made by Var::from_partials, whose partials cannot be computed \
                 again; record afresh"
            ),
            ReplayError::Guard(g) => write!(f, "{g}; record afresh"),
        }
    }
}

impl std::error::Error for ReplayError {}

/// A guard that does not hold at a new point: which decision, and how it went then and now.
///
/// ```
/// use reverse::Tape;
/// let tape = Tape::replayable();
/// let x = tape.var(1.0);
/// let y = if x > reverse::Var::constant(0.0) { x * x } else { -x };
/// let mut rec = tape.finish();
/// let err = rec.reevaluate(&[-2.0]).unwrap_err();
/// assert_eq!(err.to_string(), "re-evaluation at a new point: guard 0 failed: the comparison \
///     node 0 (x₀ = -2) > the constant 0 was true when recorded and is false now; record afresh");
/// # let _ = y;
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct GuardFailure {
    /// The guard's position among the recording's decisions.
    pub guard: usize,
    /// The node it concerns: the piecewise rule's node, or the comparison's first variable
    /// operand.
    pub node: u32,
    /// The decision, in words.
    pub what: String,
    /// The outcome when recorded, in words.
    pub recorded: String,
    /// The outcome now, in words.
    pub now: String,
}

impl fmt::Display for GuardFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "guard {} failed: {} was {} when recorded and is {} now",
            self.guard, self.what, self.recorded, self.now
        )
    }
}

/// Describes an operand for a message: `node 3 (x₃ = 0.5)` or `the constant 2`.
fn describe<T: Op>(p: &Program<T>, r: u32) -> String {
    if r & CONST != 0 {
        format!("the constant {}", p.operand_value(r).value())
    } else {
        let kind = if p.ops[r as usize] == OpCode::Input {
            "x"
        } else {
            "v"
        };
        format!(
            "node {r} ({kind}{} = {})",
            subscript(r),
            p.values[r as usize].value()
        )
    }
}

/// `12` as `₁₂` (names of nodes, here and in traces).
pub(crate) fn subscript(i: impl fmt::Display) -> String {
    i.to_string()
        .chars()
        .map(|c| char::from_u32(0x2080 + c.to_digit(10).unwrap_or(0)).unwrap_or(c))
        .collect()
}

/// The failure of guard `k` of `p`, whose outcome is `now` at the program's current values.
pub(crate) fn failure<T: Op>(p: &Program<T>, k: usize, now: u64) -> GuardFailure {
    let (node, what, recorded, now) = explain(p, k, now);
    GuardFailure {
        guard: k,
        node,
        what,
        recorded,
        now,
    }
}

/// Guard `k` of `p` in words: the node it concerns, the decision, and its outcome when recorded
/// and `now`.
pub(crate) fn explain<T: Op>(p: &Program<T>, k: usize, now: u64) -> (u32, String, String, String) {
    let g = p.guards[k];
    match g.kind {
        Kind::Compare { a, b, how } => {
            let node = if a & CONST == 0 { a } else { b };
            let (what, answer): (String, fn(u64) -> String) = match how {
                Compare::Order => (
                    format!(
                        "the comparison of {} with {}",
                        describe(p, a),
                        describe(p, b)
                    ),
                    |code| order_name(code).to_string(),
                ),
                how => (
                    format!(
                        "the comparison {} {} {}",
                        describe(p, a),
                        how.symbol(),
                        describe(p, b)
                    ),
                    |code| (code == 1).to_string(),
                ),
            };
            (node, what, answer(g.outcome), answer(now))
        }
        Kind::Test { a, test } => (
            a,
            format!("{} of {}", test.name(), describe(p, a)),
            (g.outcome == 1).to_string(),
            (now == 1).to_string(),
        ),
        Kind::Piece { node } => {
            let op = p.ops[node as usize];
            let words = |code: u64| match op {
                OpCode::Max | OpCode::Min => match code & 3 {
                    0 => "first < second",
                    1 => "a tie",
                    2 => "first > second",
                    _ => "with a NaN argument",
                }
                .to_string(),
                OpCode::Abs => {
                    ["negative", "zero", "positive", "NaN"][code as usize & 3].to_string()
                        + " argument"
                }
                OpCode::Relu => ["not positive", "positive"][code as usize & 1].to_string(),
                OpCode::Hypot => {
                    ["away from the origin", "at the origin"][code as usize & 1].to_string()
                }
                OpCode::Fract | OpCode::Rem => format!("integer part {}", f64::from_bits(code)),
                _ => format!("value {}", f64::from_bits(code)),
            };
            (
                node,
                format!("the piece of {} at node {node}", op.name()),
                words(g.outcome),
                words(now),
            )
        }
    }
}
