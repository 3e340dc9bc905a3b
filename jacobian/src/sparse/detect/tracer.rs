//! Sparsity detection by a number type: a [`Tracer`] carries the set of inputs it depends on,
//! and (for Hessians) every nonlinear operation adds the pairs of inputs it couples.
//!
//! Without values (*global* detection) the sets hold for every x, but a branch on a value
//! cannot be followed: the first one is kept as the reason to refuse (and no rule is evaluated
//! on a tracer that reads an input: its value is NaN). With values (*local*
//! detection) comparisons follow the point's branches, and the sets hold where the branches
//! are the same. A piecewise-constant result (`floor`, `signum`, `round`, …) has an empty set,
//! its derivative being zero, but its value depends on its inputs: global detection refuses a
//! branch on it as on them. The sets live in a thread-local arena for the duration of one
//! detection; in global detection of a Jacobian a set of up to four inputs lives in the tracer
//! itself, so that a stencil's row is built without touching the arena.

mod arena;

use super::Counts;
use arena::{ARENA, Arena, PLAIN, Spare, insert_held, with};
use core::any::TypeId;
use shared_ops::num_traits::{One, Zero};
use shared_ops::{Binary, Error, Function, Op, Unary, memory, rules};
use std::fmt;

/// The node of a constant: it depends on no input.
const NONE: u32 = u32::MAX;

/// The node of a piecewise-constant function of inputs (`floor`, `signum`, …): no input in its
/// set, but its value depends on them, so a branch on it is refused like one on its inputs.
const FLAT: u32 = u32::MAX - 1;

/// An unused slot of a set held in a tracer: the largest number, so it sorts last.
const EMPTY: u32 = u32::MAX;

/// The second word of a tracer that names a node (and carries a value), not a set: no input
/// has this index.
const NODE: u32 = u32::MAX - 1;

/// The upper word of a node's value that names one more input (the lower word), in global
/// detection of a Jacobian: a NaN, as every value there is. A stencil's row (a node) minus a
/// term of its centre is one, which the output loop then unites without a call to the arena
/// (a 100×100 grid's detection: 349 → 296 µs, criterion). Arithmetic that keeps such a NaN's
/// payload names an input of one of its operands: a true dependence still; where it matters,
/// the value is kept explicitly (`apply2_named`), as a NaN's payload is not promised.
const AND_INPUT: u64 = 0x7FFD_0000;

/// The input that a node's `value` names besides the node, if it names one (only meant in
/// global detection of a Jacobian).
#[inline(always)]
fn and_input(value: f64) -> Option<u32> {
    let bits = value.to_bits();
    (bits >> 32 == AND_INPUT).then_some(bits as u32)
}

/// A number for sparsity detection: which inputs it depends on (in global detection of a
/// Jacobian up to four are held in the tracer itself, more in a node of the detection's arena)
/// and, in local detection, its value. Only the detection drivers create inputs; a
/// `Tracer` made by [`Op::constant`] is a constant.
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
    // Four 32-bit words in two 64-bit halves: 16 bytes, passed in two registers (a tracer that
    // held seven inputs in 40 bytes passed through memory, and detection took twice as long).
    // Either a node, a marker and a value: `[node, NODE]`, `value.to_bits()` (in global
    // detection of a Jacobian the value, a NaN, may name one more input: `AND_INPUT`); or, in
    // global detection of a Jacobian only, a set of one to four inputs, increasing, then
    // `EMPTY`s.
    head: u64,
    tail: u64,
}

/// What a [`Tracer`] holds.
enum Form {
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
enum Curvature {
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
        false $(|| TypeId::of::<$r>() == TypeId::of::<rules::$rule>())*
    };
}

/// The curvature of a rule; a user's rule is taken as nonlinear.
fn curvature<R: 'static>() -> Curvature {
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
    fn node(node: u32, value: f64) -> Tracer {
        Tracer {
            head: u64::from(node) | u64::from(NODE) << 32,
            tail: value.to_bits(),
        }
    }

    /// Node `node` and input `x`, in global detection of a Jacobian.
    #[inline(always)]
    fn node_and(node: u32, x: u32) -> Tracer {
        Tracer {
            head: u64::from(node) | u64::from(NODE) << 32,
            tail: AND_INPUT << 32 | u64::from(x),
        }
    }

    #[inline(always)]
    fn set(set: [u32; 4]) -> Tracer {
        let pair = |a: u32, b: u32| u64::from(a) | u64::from(b) << 32;
        Tracer {
            head: pair(set[0], set[1]),
            tail: pair(set[2], set[3]),
        }
    }

    #[inline(always)]
    fn form(self) -> Form {
        let (w0, w1) = (self.head as u32, (self.head >> 32) as u32);
        if w1 == NODE {
            Form::Node(w0, f64::from_bits(self.tail))
        } else {
            Form::Set([w0, w1, self.tail as u32, (self.tail >> 32) as u32])
        }
    }

    /// The inputs of a set held in a tracer.
    #[inline(always)]
    fn inputs(set: &[u32; 4]) -> &[u32] {
        // The `EMPTY`s are last: count them without a branch.
        let len = set.iter().filter(|&&k| k != EMPTY).count();
        &set[..len]
    }

    #[inline(always)]
    fn is_input_free(self) -> bool {
        matches!(self.form(), Form::Node(NONE, _))
    }

    /// The `a·b + c` of `mul_add`.
    pub fn fused_mul_add(self, a: Self, b: Self) -> Self {
        self * a + b
    }
}

/// A rule's value, out of line: inlined, the optimiser evaluated `exp` and the like before the
/// test of `local` and threw the result away in global detection (4% of a grid's detection).
#[inline(never)]
fn value_of<R: Unary>(rule: R, x: f64) -> f64 {
    rule.eval(x).0
}

/// [`value_of`] for a two-argument rule (`powf`, `atan2`, …).
#[inline(never)]
fn value_of2<R: Binary>(rule: R, a: f64, b: f64) -> f64 {
    rule.eval(a, b).0
}

impl Op for Tracer {
    fn constant(c: f64) -> Self {
        Tracer::from(c)
    }

    fn value(&self) -> f64 {
        match self.form() {
            Form::Node(_, value) => value,
            Form::Set(_) => f64::NAN,
        }
    }

    fn is_structural_zero(&self) -> bool {
        self.is_input_free() && self.value() == 0.0
    }

    #[inline(always)]
    fn apply1<R: Unary>(self, rule: R) -> Self {
        // Finished here, without the arena: a constant; in global detection of a Jacobian, a
        // set held in the tracer (its operand's set). A node asks the arena.
        match self.form() {
            Form::Node(NONE, value) => Tracer::from(rule.eval(value).0),
            Form::Set(_) if R::FLAT => Tracer::node(FLAT, f64::NAN),
            Form::Set(_) => self,
            Form::Node(..) => self.apply1_node(rule),
        }
    }

    #[inline(always)]
    fn apply2<R: Binary>(self, other: Self, rule: R) -> Self {
        // Finished here, without the arena: two constants; in global detection of a Jacobian,
        // an input added to a set held in a tracer (a stencil's row, term by term) and a
        // constant added to one. The rest asks the arena.
        let constant = rule_is!(R: Add Sub Mul);
        match (self.form(), other.form()) {
            (Form::Node(NONE, a), Form::Node(NONE, b)) => return Tracer::from(rule.eval(a, b).0),
            (Form::Set(s), Form::Set([x, EMPTY, ..]))
            | (Form::Set([x, EMPTY, ..]), Form::Set(s))
                if !R::FLAT =>
            {
                return match insert_held(s, x) {
                    Ok(set) => Tracer::set(set),
                    // Five inputs: a node of the arena, written as they are.
                    Err(five) => with(|arena| arena.five(&five)),
                };
            }
            (Form::Set(_), Form::Node(NONE, _)) if constant => return self,
            (Form::Node(NONE, _), Form::Set(_)) if constant => return other,
            _ => {}
        }
        self.apply2_rest(other, rule)
    }
}

impl Tracer {
    /// [`Op::apply1`] of a tracer that names a node.
    #[inline(always)]
    fn apply1_node<R: Unary>(self, rule: R) -> Self {
        let Form::Node(node, value) = self.form() else {
            unreachable!("a set held in a tracer is handled inline")
        };
        if PLAIN.get() {
            // The same set: the node, and the input its value may name.
            return if R::FLAT {
                Tracer::node(FLAT, f64::NAN)
            } else {
                self
            };
        }
        // After a refusal the result is an error: skip the work.
        let (node, local) = with(|a| {
            let node = match curvature::<R>() {
                _ if a.refused.is_some() => NONE,
                _ if R::FLAT => FLAT,
                Curvature::Nonlinear => {
                    a.couple(node, node);
                    node
                }
                _ => node,
            };
            (node, a.local)
        });
        let value = if local {
            value_of(rule, value)
        } else {
            f64::NAN
        };
        Tracer::node(node, value)
    }

    /// [`Op::apply2`] for the cases it does not finish itself: a held set that outgrows four
    /// inputs or meets a node, and two nodes.
    #[inline(always)]
    fn apply2_rest<R: Binary>(self, other: Self, rule: R) -> Self {
        let (a, b) = match (self.form(), other.form()) {
            // Only global detection of a Jacobian holds sets: a node that names no other input,
            // or this one, names it, without the arena.
            (Form::Node(k, v), Form::Set([x, EMPTY, ..]))
            | (Form::Set([x, EMPTY, ..]), Form::Node(k, v))
                if k < FLAT && !R::FLAT && and_input(v).is_none_or(|y| y == x) =>
            {
                return Tracer::node_and(k, x);
            }
            // A set held in a tracer: global detection of a Jacobian.
            (Form::Set(_), _) | (_, Form::Set(_)) => {
                return with(|arena| arena.union_of_sets::<R>(self, other));
            }
            (Form::Node(a, x), Form::Node(b, y)) => ((a, x), (b, y)),
        };
        if and_input(a.1).is_some() || and_input(b.1).is_some() {
            return Tracer::apply2_named(a, b, rule);
        }
        Tracer::apply2_nodes(a, b, rule)
    }

    /// [`Op::apply2`] of two nodes (with their values).
    #[inline(always)]
    fn apply2_nodes<R: Binary>(a: (u32, f64), b: (u32, f64), rule: R) -> Self {
        // `x ± c`, `c ± x`, `c·x`: x's set, and nothing to couple. Without the arena: NaN (a
        // global detection's value) stays NaN through these three, a local value is computed.
        if (a.0 == NONE || b.0 == NONE) && rule_is!(R: Add Sub Mul) {
            return Tracer::node(a.0.min(b.0), rule.eval(a.1, b.1).0);
        }
        let (node, local) = with(|arena| (arena.union_for::<R>(a.0, b.0), arena.local));
        let value = if local {
            value_of2(rule, a.1, b.1)
        } else {
            f64::NAN
        };
        Tracer::node(node, value)
    }

    /// [`apply2_nodes`](Self::apply2_nodes) where a value names an input besides its node (in
    /// global detection of a Jacobian; elsewhere a NaN that looks so is taken as a value). Out
    /// of line, so that the usual paths keep their size.
    #[inline(never)]
    fn apply2_named<R: Binary>(a: (u32, f64), b: (u32, f64), rule: R) -> Self {
        // `x ± c`, `c ± x`, `c·x`: x's node and input, as they are.
        let kept = if a.0 == NONE { b } else { a };
        if (a.0 == NONE || b.0 == NONE) && rule_is!(R: Add Sub Mul) && and_input(kept.1).is_some() {
            return Tracer::node(kept.0, kept.1);
        }
        let (ja, jb) = with(|arena| (arena.joined(a.0, a.1), arena.joined(b.0, b.1)));
        Tracer::apply2_nodes((ja, a.1), (jb, b.1), rule)
    }
}

impl Zero for Tracer {
    fn zero() -> Self {
        Tracer::from(0.0)
    }
    /// A test of the value: refused in global detection unless the tracer reads no input.
    fn is_zero(&self) -> bool {
        if !self.is_input_free() {
            with(|arena| arena.refuse(|| "a test of a value (is_zero)".into()));
        }
        self.value() == 0.0
    }
}

impl One for Tracer {
    fn one() -> Self {
        Tracer::from(1.0)
    }
}

shared_ops::impl_float_via_rules!(
    impl [] for Tracer, inner f64, primal |t| t.value(),
    // A sum is one union, not a chain of growing ones.
    sum |iter| {
        let terms: Vec<Tracer> = iter.collect();
        let value = terms.iter().map(Op::value).sum();
        let node = if terms.iter().all(|t| t.is_input_free()) {
            NONE
        } else {
            with(|a| if a.refused.is_some() { NONE } else { a.union(&terms) })
        };
        Tracer::node(node, value)
    },
    compare |a, b| {
        if !(a.is_input_free() && b.is_input_free()) {
            with(|arena| arena.refuse(|| "a comparison of values (<, >, ==, max by hand, …)".into()));
        }
        a.value().partial_cmp(&b.value())
    },
    test |x, name, result| {
        if !x.is_input_free() {
            with(|arena| arena.refuse(|| format!("a test of a value ({name})")));
        }
        result
    }
);

/// Which sparsity detection to run.
///
/// | | `Global` | `Local` |
/// |---|---|---|
/// | how | [`Tracer`]s without values | a recording at x (Jacobians), or [`Tracer`]s with values (Hessians) |
/// | holds | at every x | at x, and wherever `f` takes the same branches |
/// | branches on values | refused with [`Error::NeedsValues`] | followed |
/// | `max`, `min`, `abs` | both operands | both (`Tracer`), the winner (recording) |
///
/// `Auto` (the default) runs `Global` and falls back to `Local` if `f` branches on a value; the
/// plan says which ran.
///
/// ```
/// assert_eq!(jacobian::sparse::Detection::default(), jacobian::sparse::Detection::Auto);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Detection {
    /// Global, else local.
    #[default]
    Auto,
    /// Valid for every x; refuses functions that branch on values.
    Global,
    /// Valid at x (and where the branches are the same).
    Local,
}

/// The sets a traced evaluation left: per output its inputs, in compressed rows (row i is
/// `indices[offsets[i]..offsets[i + 1]]`, sorted); and the coupled pairs `(i, j)`, `i ≤ j`.
pub(crate) struct Traced {
    pub offsets: Vec<usize>,
    pub indices: Vec<usize>,
    /// The Jacobian pattern's counts, taken as the output loop writes it, if asked for.
    pub counts: Option<Counts>,
    pub pairs: Vec<(usize, usize)>,
}

/// What a [`trace`] takes from its outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Take {
    /// A Jacobian's pattern.
    Pattern,
    /// A Jacobian's pattern and its [`Counts`], for a colouring: taken as it is written.
    CountedPattern,
    /// A Hessian's coupled pairs.
    Pairs,
}

/// Evaluates `f` on tracers, with values if `local`, for what it should `take`.
pub(crate) fn trace<F: Function>(
    f: &F,
    x: &[f64],
    local: bool,
    take: Take,
) -> Result<Traced, Error> {
    let hessian = take == Take::Pairs;
    let n = x.len();
    assert!(
        n < NODE as usize,
        "sparsity detection of {n} inputs: at most 2³² − 3 (a tracer's sets are 32-bit)"
    );
    let Spare {
        bounds,
        items,
        inputs: mut xs,
    } = memory::take();
    let arena = Arena::new(bounds, items, n, local, hessian);
    let previous = ARENA.with(|a| a.replace(Some(arena)));
    let plain = !local && !hessian;
    let was_plain = PLAIN.replace(plain);
    xs.clear();
    xs.extend(x.iter().enumerate().map(|(k, &v)| match (plain, local) {
        (true, _) => Tracer::set([k as u32, EMPTY, EMPTY, EMPTY]),
        (false, true) => Tracer::node(k as u32, v),
        (false, false) => Tracer::node(k as u32, f64::NAN),
    }));
    let ys = f.eval(&xs);
    PLAIN.set(was_plain);
    let arena = ARENA
        .with(|a| a.replace(previous))
        .expect("the detection's arena");
    if let Some(what) = arena.refused {
        return Err(Error::NeedsValues { what });
    }
    let mut offsets = Vec::with_capacity(ys.len() + 1);
    let mut indices = Vec::new();
    let mut joined = Vec::new();
    let count = take == Take::CountedPattern;
    let mut counts = count.then(|| Counts::new(n));
    offsets.push(0);
    for y in &ys {
        let form = y.form();
        let set = match &form {
            Form::Node(node, value) => match and_input(*value).filter(|_| plain && *node < FLAT) {
                // A node and an input: their union, without writing it to the arena.
                Some(x) => {
                    let set = arena.set(*node);
                    match set.binary_search(&x) {
                        Ok(_) => set,
                        Err(at) => {
                            joined.clear();
                            joined.extend_from_slice(&set[..at]);
                            joined.push(x);
                            joined.extend_from_slice(&set[at..]);
                            &joined
                        }
                    }
                }
                None => arena.set(*node),
            },
            Form::Set(set) => Tracer::inputs(set),
        };
        if let Some(counts) = counts.as_mut() {
            counts.add_row(set);
        }
        indices.extend(set.iter().map(|&k| k as usize));
        offsets.push(indices.len());
    }
    if let Some(counts) = counts.as_mut() {
        counts.finish(indices.len());
    }
    memory::give(Spare {
        bounds: arena.bounds,
        items: arena.items,
        inputs: xs,
    });
    let mut pairs: Vec<(usize, usize)> = arena
        .pairs
        .unwrap_or_default()
        .into_iter()
        .map(|(i, j)| (i as usize, j as usize))
        .collect();
    pairs.sort_unstable();
    pairs.dedup();
    Ok(Traced {
        offsets,
        indices,
        counts,
        pairs,
    })
}
