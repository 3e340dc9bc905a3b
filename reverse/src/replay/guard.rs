//! Branch guards: every decision a recording depended on, and how it is checked at a new point.
//!
//! Two kinds of decisions shape a recording without showing in its edges' values:
//!
//! * a **comparison** of `Var`s (or of a `Var` with a constant) in the user's code, or a test
//!   of `Float` on a `Var` (`is_nan`, `is_sign_negative`, …), which picks the operations that
//!   follow;
//! * the **piece** a piecewise rule took: which argument `max`/`min` returned (it decides which
//!   edges the node has), the side of the kink of `abs`, `relu` and `hypot`, the integer that
//!   `floor`, `ceil`, `round`, `trunc`, `signum`, `fract` and `%` produced.
//!
//! Re-evaluation recomputes each decision from the new values and compares it with the recorded
//! one; the first that differs is the error (the operations after it may be the wrong ones).

use super::program::{CONST, Program};
use crate::replay::op_code::OpCode;
use core::cmp::Ordering;
use core::fmt;
use shared_ops::Op;

/// What a guard checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `partial_cmp` of two operands (node or constant references).
    Compare { a: u32, b: u32 },
    /// The piece taken by the rule of a node.
    Piece { node: u32 },
    /// A test of `Float` (`is_nan`, `is_sign_negative`, …) or `Zero::is_zero` on an operand.
    Test { a: u32, test: Test },
}

/// The tests of `Float` on one number, and `Zero::is_zero`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Test {
    Zero,
    Nan,
    Infinite,
    Finite,
    Normal,
    Subnormal,
    SignPositive,
    SignNegative,
}

impl Test {
    /// The test of the method `name`.
    pub fn named(name: &str) -> Option<Test> {
        Some(match name {
            "is_zero" => Test::Zero,
            "is_nan" => Test::Nan,
            "is_infinite" => Test::Infinite,
            "is_finite" => Test::Finite,
            "is_normal" => Test::Normal,
            "is_subnormal" => Test::Subnormal,
            "is_sign_positive" => Test::SignPositive,
            "is_sign_negative" => Test::SignNegative,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Test::Zero => "is_zero",
            Test::Nan => "is_nan",
            Test::Infinite => "is_infinite",
            Test::Finite => "is_finite",
            Test::Normal => "is_normal",
            Test::Subnormal => "is_subnormal",
            Test::SignPositive => "is_sign_positive",
            Test::SignNegative => "is_sign_negative",
        }
    }

    /// The test on a primal value (what the `Float` methods of every AD number test).
    fn of(self, x: f64) -> bool {
        match self {
            Test::Zero => x == 0.0,
            Test::Nan => x.is_nan(),
            Test::Infinite => x.is_infinite(),
            Test::Finite => x.is_finite(),
            Test::Normal => x.is_normal(),
            Test::Subnormal => x.is_subnormal(),
            Test::SignPositive => x.is_sign_positive(),
            Test::SignNegative => x.is_sign_negative(),
        }
    }
}

/// One recorded decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Guard {
    /// How many nodes were recorded when it was taken (where a trace shows it).
    pub at: u32,
    pub kind: Kind,
    /// The outcome as recorded (see [`outcome`](Guard::outcome)).
    pub outcome: u64,
}

/// `partial_cmp` as a number: Less, Equal, Greater, unordered.
pub(crate) fn order(o: Option<Ordering>) -> u64 {
    match o {
        Some(Ordering::Less) => 0,
        Some(Ordering::Equal) => 1,
        Some(Ordering::Greater) => 2,
        None => 3,
    }
}

fn order_name(code: u64) -> &'static str {
    ["<", "=", ">", "unordered (NaN)"][code as usize & 3]
}

/// True for the rules whose piece is guarded.
pub(crate) fn piecewise(op: OpCode) -> bool {
    use OpCode::*;
    matches!(
        op,
        Max | Min | Abs | Relu | Hypot | Floor | Ceil | Round | Trunc | Signum | Fract | Rem
    )
}

/// The piece of a piecewise rule at arguments `a`, `b` with value `y` (primal values).
pub(crate) fn piece(op: OpCode, a: f64, b: f64, y: f64) -> u64 {
    let sign = |x: f64| match x.partial_cmp(&0.0) {
        Some(o) => order(Some(o)),
        None => 3,
    };
    match op {
        // Which argument wins, and which is NaN (a NaN argument is ignored).
        OpCode::Max | OpCode::Min => {
            order(a.partial_cmp(&b)) | (a.is_nan() as u64) << 2 | (b.is_nan() as u64) << 3
        }
        OpCode::Abs => sign(a),
        OpCode::Relu => (a > 0.0) as u64,
        OpCode::Hypot => (a == 0.0 && b == 0.0) as u64,
        OpCode::Fract => a.trunc().to_bits(),
        OpCode::Rem => (a / b).trunc().to_bits(),
        _ => y.to_bits(),
    }
}

impl Guard {
    /// The decision at the program's current values.
    pub fn outcome<T: Op>(&self, p: &Program<T>) -> u64 {
        match self.kind {
            Kind::Compare { a, b } => order(p.operand_value(a).partial_cmp(&p.operand_value(b))),
            Kind::Test { a, test } => u64::from(test.of(p.operand_value(a).value())),
            Kind::Piece { node } => {
                let i = node as usize;
                let [a, b] = p.operands[i];
                piece(
                    p.ops[i],
                    p.operand_value(a).value(),
                    p.operand_value(b).value(),
                    p.values[i].value(),
                )
            }
        }
    }
}

/// A guard that does not hold at a new point: which decision, and how it went then and now.
///
/// ```
/// use reverse::Tape;
/// let tape = Tape::replayable();
/// let x = tape.var(1.0);
/// let y = if x > reverse::Var::constant(0.0) { x * x } else { -x };
/// let mut rec = tape.finish();
/// let err = rec.reevaluate(&[-2.0]).unwrap_err();
/// assert_eq!(err.to_string(), "re-evaluation at a new point: guard 0 failed: the comparison of \
///     node 0 (x₀ = -2) with the constant 0 was > when recorded and is < now; record afresh");
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
        Kind::Compare { a, b } => {
            let node = if a & CONST == 0 { a } else { b };
            (
                node,
                format!(
                    "the comparison of {} with {}",
                    describe(p, a),
                    describe(p, b)
                ),
                order_name(g.outcome).to_string(),
                order_name(now).to_string(),
            )
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
