//! What a `Var` tells a tape that keeps a program (replayable and traced tapes): each node's
//! rule and operands, the terms of sums, and every decision (comparisons, tests, pieces of
//! piecewise rules) as a guard. All of it out of line: a plain tape only tests a bit of its id.

use super::{Var, common_tape};
use crate::storage::TapeData;
use crate::storage::append::With;
use crate::storage::guard::{self, Guard};
use crate::storage::op_code::OpCode;
use crate::storage::program::{self, Form, Program};
use crate::tape::live::{self, PROGRAM};
use core::cmp::Ordering;
use shared_ops::Compare;
use shared_ops::Op;

impl<T: Op> Var<T> {
    /// This variable as an operand of a program.
    fn operand_of(self, p: &mut Program<T>) -> u32 {
        p.operand(self.node(), self.value)
    }

    /// The variable's node as an operand of a program, `None` for a constant.
    #[inline(always)]
    pub(crate) fn node(self) -> Option<u32> {
        (!self.is_constant()).then_some(self.index)
    }

    cold_path! {
    /// Keeps node `node` of a program (value `value`): the rule that made it from operands `a`
    /// and `b` (node indices, `None` for constants, with their values), how its edges map onto
    /// them, a user rule itself, and the piece a piecewise rule took.
    ///
    /// A cold path, as the tape's own (see `cold_path!`), taking scalars: a `Var` passed by
    /// value would be passed by reference, and the user's loop would then keep its `Var`s in
    /// memory, each operation waiting on a store and a reload.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn describe(
        tape: u64,
        node: u32,
        value: T,
        form: Form,
        code: OpCode,
        (a, av): (Option<u32>, T),
        (b, bv): (Option<u32>, T),
        param: Option<u32>,
        // A trait object, not a type parameter: one copy of this path per number type rather
        // than per (number type, rule).
        keep: &dyn Fn(u32) -> Option<program::Rule<T>>,
    ) {
        note(tape, |p: &mut Program<T>| {
            let ra = p.operand(a, av);
            let rb = match param {
                Some(n) => n,
                None => p.operand(b, bv),
            };
            p.push(code, form, [ra, rb], value);
            if let Some(rule) = keep(node) {
                p.rules.push(rule);
            }
            if guard::piecewise(code) {
                let mut g = Guard {
                    at: node + 1,
                    kind: guard::Kind::Piece { node },
                    outcome: 0,
                };
                g.outcome = g.outcome(p);
                p.guards.push(g);
            }
        });
    }
    }

    /// Compares the values, keeping the answer the code asked for (`how`) as a guard on a tape
    /// that keeps a program.
    pub(super) fn compare(&self, other: &Self, how: Compare) -> Option<Ordering> {
        let order = self.value.partial_cmp(&other.value);
        if (self.tape | other.tape) & PROGRAM != 0 {
            let (a, b) = (*self, *other);
            Self::guard_compare(
                (a.tape, a.index, a.value),
                (b.tape, b.index, b.value),
                how,
                how.answer(order),
            );
        }
        order
    }

    /// A test of `Float` (`is_nan`, …) with its result, kept as a guard on a tape that keeps a
    /// program.
    pub(super) fn test(self, name: &'static str, result: bool) -> bool {
        if self.tape & PROGRAM != 0 {
            Self::guard_test((self.tape, self.index, self.value), name, result);
        }
        result
    }

    cold_path! {
    /// Keeps a test of `(tape, node, value)` as a guard.
    fn guard_test(v: (u64, u32, T), name: &'static str, result: bool) {
        let Some(test) = guard::Test::named(name) else {
            return;
        };
        note(v.0, |p: &mut Program<T>| {
            let a = p.operand(Some(v.1), v.2);
            p.guards.push(Guard {
                at: p.len() as u32,
                kind: guard::Kind::Test { a, test },
                outcome: u64::from(result),
            });
        });
    }
    }

    cold_path! {
    /// Keeps a comparison of `(tape, node, value)` operands as a guard (scalars, as
    /// [`describe`](Var::describe)).
    fn guard_compare(a: (u64, u32, T), b: (u64, u32, T), how: Compare, answer: u64) {
        let (a, b) = (Var::on_tape(a.2, a.0, a.1), Var::on_tape(b.2, b.0, b.1));
        let Some(tape) = common_tape([a, b].into_iter()) else {
            return;
        };
        note(tape, |p: &mut Program<T>| {
            let (ra, rb) = (a.operand_of(p), b.operand_of(p));
            p.guards.push(Guard {
                at: p.len() as u32,
                kind: guard::Kind::Compare { a: ra, b: rb, how },
                outcome: answer,
            });
        });
    }
    }

    cold_path! {
    /// Keeps a term of a sum for its program, after the sum of the constants `before` it if it
    /// is the first variable.
    pub(super) fn keep_term(terms: &mut Vec<Var<T>>, (has_before, before): (bool, T), v: (u64, u32, T)) {
        if terms.is_empty() && has_before {
            terms.push(Var::constant(before));
        }
        terms.push(Var::on_tape(v.2, v.0, v.1));
    }
    }

    cold_path! {
    /// Keeps an n-ary node of a program: its operands in order.
    pub(super) fn describe_many(tape: u64, op: OpCode, operands: impl IntoIterator<Item = Var<T>>, value: T) {
        note(tape, |p: &mut Program<T>| {
            let first = p.args.len();
            for v in operands {
                let r = v.operand_of(p);
                p.args.push(r);
            }
            let count = p.args.len() - first;
            p.push(op, Form::Many, [first as u32, count as u32], value);
        });
    }
    }
}

/// Runs `f` on the program of the tape `tape` (which has one: its id carries
/// [`PROGRAM`]). Called from the cold paths of `Var`, into which it is inlined.
#[inline(always)]
fn note<T: Op>(tape: u64, f: impl FnOnce(&mut Program<T>)) {
    live::record(
        tape,
        With(|d: &mut TapeData<T>| {
            if let Some(p) = &mut d.program {
                f(p)
            }
        }),
    );
}
