//! The tracer as a number: what it holds (a node of the arena and a value, or a small set of
//! inputs held in itself) and how each rule's second derivatives couple its operands.

use std::fmt;

/// The node of a constant: it depends on no input.
pub(super) const NONE: u32 = u32::MAX;

/// The node of a piecewise-constant function of inputs (`floor`, `signum`, …): no input in its
/// set, but its value depends on them, so a branch on it is refused like one on its inputs.
pub(super) const FLAT: u32 = u32::MAX - 1;

/// An unused slot of a set held in a tracer: the largest number, so it sorts last.
pub(super) const EMPTY: u32 = u32::MAX;

/// The second word of a tracer that names a node (and carries a value), not a set: no input
/// has this index.
pub(super) const NODE: u32 = u32::MAX - 1;

/// The upper word of a node's value that names one more input (the lower word), in global
/// detection of a Jacobian: a NaN, as every value there is. A stencil's row (a node) minus a
/// term of its centre is one, which the output loop then unites without a call to the arena,
/// a saving on every stencil of a grid. Arithmetic that keeps such a NaN's
/// payload names an input of one of its operands: a true dependence still; where it matters,
/// the value is kept explicitly (`apply2_named`), as a NaN's payload is not promised.
pub(super) const AND_INPUT: u64 = 0x7FFD_0000;

/// The input that a node's `value` names besides the node, if it names one (only meant in
/// global detection of a Jacobian).
#[inline(always)]
pub(super) fn and_input(value: f64) -> Option<u32> {
    let bits = value.to_bits();
    (bits >> 32 == AND_INPUT).then_some(bits as u32)
}

/// A number for sparsity detection: which inputs it depends on (in global detection of a
/// Jacobian up to four are held in the tracer itself, more in a node of the detection's arena)
/// and, in local detection, its value. Only the detection drivers create inputs; a
/// `Tracer` made by [`Op::constant`](shared_ops::Op::constant) is a constant.
///
/// ```
/// use jacobian::sparse::{Detection, jacobian_pattern};
/// use jacobian::{Function, Op};
/// struct F;
/// impl Function for F {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         vec![x[0] * x[2], x[1].floor(), x[1].sin() + x[2]]
///     }
/// }
/// let p = jacobian_pattern(&F, &[1.0, 2.0, 3.0], Detection::Global)?;
/// assert_eq!((p.row(0), p.row(1), p.row(2)), (&[0, 2][..], &[][..], &[1, 2][..]));
/// # Ok::<(), jacobian::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Tracer {
    // Four 32-bit words in two 64-bit halves: 16 bytes, passed in two registers (a tracer of
    // seven inputs in 40 bytes would pass through memory, and slow detection down).
    // Either a node, a marker and a value: `[node, NODE]`, `value.to_bits()` (in global
    // detection of a Jacobian the value, a NaN, may name one more input: `AND_INPUT`); or, in
    // global detection of a Jacobian only, a set of one to four inputs, increasing, then
    // `EMPTY`s.
    pub(super) head: u64,
    pub(super) tail: u64,
}

/// What a [`Tracer`] holds.
pub(super) enum Form {
    /// A node of the arena (or `NONE`, `FLAT`), and the value.
    Node(u32, f64),
    /// A set of one to four inputs, increasing, then `EMPTY`s (its value is NaN).
    Set([u32; 4]),
}

impl Default for Tracer {
    fn default() -> Self {
        Tracer::from(0.0)
    }
}

impl From<f64> for Tracer {
    fn from(value: f64) -> Self {
        Tracer::node(NONE, value)
    }
}

impl fmt::Display for Tracer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.form() {
            Form::Node(NONE, value) => write!(f, "{value}"),
            Form::Node(FLAT, _) => write!(f, "tracer (piecewise constant)"),
            Form::Node(node, _) => write!(f, "tracer #{node}"),
            Form::Set(set) => write!(f, "tracer of inputs {:?}", Tracer::inputs(&set)),
        }
    }
}

/// How an operation's second derivatives couple its operands (a piecewise-constant rule,
/// [`Unary::FLAT`] or [`Binary::FLAT`], has no dependence at all).
pub(super) enum Curvature {
    /// Linear, or piecewise linear (`abs`, `max`, `%`): first-order dependence only.
    Linear,
    /// `a·b`: only the cross term.
    Product,
    /// `a / b`: the cross term and `b` with itself.
    Quotient,
    /// Anything else: every pair.
    Nonlinear,
}

/// Whether the rule type `R` is one of the listed built-in rules (constant `TypeId`s: the
/// optimiser folds the test away). A user's rule is never one of them, whatever its name.
macro_rules! rule_is {
    ($r:ty: $($rule:ident)*) => {
        false $(|| core::any::TypeId::of::<$r>() == core::any::TypeId::of::<shared_ops::rules::$rule>())*
    };
}
pub(super) use rule_is;

/// The curvature of a rule; a user's rule is taken as nonlinear.
pub(super) fn curvature<R: 'static>() -> Curvature {
    if rule_is!(R: Add Sub Neg Abs Relu Fract Max Min Rem) {
        Curvature::Linear
    } else if rule_is!(R: Mul) {
        Curvature::Product
    } else if rule_is!(R: Div) {
        Curvature::Quotient
    } else {
        Curvature::Nonlinear
    }
}

impl Tracer {
    #[inline(always)]
    pub(super) fn node(node: u32, value: f64) -> Tracer {
        Tracer {
            head: u64::from(node) | u64::from(NODE) << 32,
            tail: value.to_bits(),
        }
    }

    /// Node `node` and input `x`, in global detection of a Jacobian.
    #[inline(always)]
    pub(super) fn node_and(node: u32, x: u32) -> Tracer {
        Tracer {
            head: u64::from(node) | u64::from(NODE) << 32,
            tail: AND_INPUT << 32 | u64::from(x),
        }
    }

    #[inline(always)]
    pub(super) fn set(set: [u32; 4]) -> Tracer {
        let pair = |a: u32, b: u32| u64::from(a) | u64::from(b) << 32;
        Tracer {
            head: pair(set[0], set[1]),
            tail: pair(set[2], set[3]),
        }
    }

    #[inline(always)]
    pub(super) fn form(self) -> Form {
        let (w0, w1) = (self.head as u32, (self.head >> 32) as u32);
        if w1 == NODE {
            Form::Node(w0, f64::from_bits(self.tail))
        } else {
            Form::Set([w0, w1, self.tail as u32, (self.tail >> 32) as u32])
        }
    }

    /// The value carried (local detection), NaN where none is (global detection, a set held in
    /// the tracer). For the tracer's own arithmetic; code that reads a value goes through
    /// `Op::value`, which global detection refuses.
    #[inline(always)]
    pub(super) fn carried(self) -> f64 {
        match self.form() {
            Form::Node(_, value) => value,
            Form::Set(_) => f64::NAN,
        }
    }

    /// The inputs of a set held in a tracer.
    #[inline(always)]
    pub(super) fn inputs(set: &[u32; 4]) -> &[u32] {
        // The `EMPTY`s are last: count them without a branch.
        let len = set.iter().filter(|&&k| k != EMPTY).count();
        &set[..len]
    }

    #[inline(always)]
    pub(super) fn is_input_free(self) -> bool {
        matches!(self.form(), Form::Node(NONE, _))
    }

    /// The `a·b + c` of `mul_add`.
    pub fn fused_mul_add(self, a: Self, b: Self) -> Self {
        self * a + b
    }
}
