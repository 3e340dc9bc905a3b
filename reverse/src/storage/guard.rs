//! Branch guards: every decision a recording depended on, and its outcome at the program's
//! current values.
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
//! Re-evaluation (`replay`) recomputes each decision from the new values and compares it with
//! the recorded one; the first that differs is the error (the operations after it may be the
//! wrong ones).

use super::op_code::OpCode;
use core::cmp::Ordering;
use shared_ops::Compare;

/// What a guard checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A comparison of two operands (node or constant references), as the code asked for it:
    /// its answer is the guard's outcome.
    Compare { a: u32, b: u32, how: Compare },
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

    pub fn name(self) -> &'static str {
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
    pub fn of(self, x: f64) -> bool {
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

/// True for the rules whose piece is guarded.
pub(crate) fn piecewise(op: OpCode) -> bool {
    use OpCode::*;
    matches!(
        op,
        Max | Min | Abs | Relu | Hypot | Floor | Ceil | Round | Trunc | Signum | Fract | Rem
    )
}

/// The bits of an integer a piece is named by, every NaN as one: a NaN's sign and payload are
/// unspecified, and may differ between the recording and a re-evaluation of the same operations.
fn bits(x: f64) -> u64 {
    if x.is_nan() {
        f64::NAN.to_bits()
    } else {
        x.to_bits()
    }
}

/// The piece of a piecewise rule at arguments `a`, `b` with value `y` (primal values).
pub(crate) fn piece(op: OpCode, a: f64, b: f64, y: f64) -> u64 {
    let order = |o: Option<Ordering>| Compare::Order.answer(o);
    let sign = |x: f64| order(x.partial_cmp(&0.0));
    match op {
        // Which argument wins, and which is NaN (a NaN argument is ignored).
        OpCode::Max | OpCode::Min => {
            order(a.partial_cmp(&b)) | (a.is_nan() as u64) << 2 | (b.is_nan() as u64) << 3
        }
        OpCode::Abs => sign(a),
        OpCode::Relu => (a > 0.0) as u64,
        OpCode::Hypot => (a == 0.0 && b == 0.0) as u64,
        OpCode::Fract => bits(a.trunc()),
        OpCode::Rem => bits((a / b).trunc()),
        _ => bits(y),
    }
}
