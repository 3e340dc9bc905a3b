//! The tracer's arithmetic: every rule applied to tracers, finished inline where the operands
//! are constants or sets held in the tracers, else in the detection's arena.

use super::arena::{PLAIN, insert_held, with};
use super::number::{Curvature, EMPTY, FLAT, Form, NONE, Tracer, and_input, curvature, rule_is};
use shared_ops::num_traits::{One, Zero};
use shared_ops::{Binary, Op, Unary};

/// A rule's value, out of line: inlined, the optimiser evaluates `exp` and the like before the
/// test of `local` and throws the result away in global detection.
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

    /// The value, read by the function: global detection carries none, so reading that of a
    /// number that depends on the inputs refuses it (as a comparison does), since a branch on
    /// it could take the wrong way.
    fn value(&self) -> f64 {
        if !self.is_input_free() {
            with(|arena| {
                arena.refuse(|| "a read of the value of a number that depends on the inputs (Op::value, to_f64, …)".into())
            });
        }
        self.carried()
    }

    fn is_structural_zero(&self) -> bool {
        self.is_input_free() && self.carried() == 0.0
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
        self.carried() == 0.0
    }
}

impl One for Tracer {
    fn one() -> Self {
        Tracer::from(1.0)
    }
}

shared_ops::impl_float_via_rules!(
    impl [] for Tracer, inner f64, primal |t| t.carried(),
    // A sum is one union, not a chain of growing ones.
    sum |iter| {
        let terms: Vec<Tracer> = iter.collect();
        let value = terms.iter().map(|t| t.carried()).sum();
        let node = if terms.iter().all(|t| t.is_input_free()) {
            NONE
        } else {
            with(|a| if a.refused.is_some() { NONE } else { a.union(&terms) })
        };
        Tracer::node(node, value)
    },
    compare |a, b, _how| {
        if !(a.is_input_free() && b.is_input_free()) {
            with(|arena| arena.refuse(|| "a comparison of values (<, >, ==, max by hand, …)".into()));
        }
        a.carried().partial_cmp(&b.carried())
    },
    test |x, name, result| {
        if !x.is_input_free() {
            with(|arena| arena.refuse(|| format!("a test of a value ({name})")));
        }
        result
    }
);

// Arithmetic with `f64` constants, by `Op::constant`: a constant adds no input to a set.
shared_ops::impl_constant_ops!(impl [] for Tracer, by constant);
