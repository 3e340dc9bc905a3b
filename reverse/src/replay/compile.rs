//! The program prepared for re-evaluation, once per recording: each node's kernel and operands
//! as plain indices, and the nodes grouped so that one loop evaluates many.
//!
//! Evaluated in recording order, a node waits for the one before it, and each node pays a
//! dispatch on its operation. But most nodes do not read the node just before them (the terms
//! of Rosenbrock, a layer's units, a mixture's components are side by side), so the nodes are
//! put in *levels*: one more than the highest level among their operands. Nodes of one level
//! read only nodes of earlier levels; within a level, those of one kernel (and operation, and
//! form) make a group, evaluated by one loop with the kernel inlined and the rule known. Values
//! and partials are the same bits in any order that evaluates operands first, so this changes
//! the speed only (a user's rule is a function of its arguments, as `Unary` and `Binary`
//! require; one that kept state across calls would see its calls in another order). A user's
//! rule is a group of its own: its nodes are evaluated one call each.
//!
//! Levels are counted within windows of [`WINDOW`] nodes, windows in recording order, so that
//! the values a group reads stay in cache on long recordings.
//!
//! A group's nodes are often the turns of a loop that the recording unrolled (Rosenbrock's
//! terms, a layer's units): each node's operands, first edge and own index are the last one's
//! plus a constant step. A *run* of at least [`RUN`](runs::RUN) such nodes is a group of its
//! own with its step ([`Group::step`]); its loop computes each node's indices instead of
//! loading them.

use super::error::ReplayError;
use crate::storage::derived::{Derived, derived_any};
use crate::storage::op_code::OpCode;
use crate::storage::program::{CONST, Form, Program};
use crate::storage::{TapeData, UNIT};
use crate::sweep::runs::{self, Stepped};
use crate::sweep::schedule::Schedule;
use core::any::TypeId;
use shared_ops::Op;
use shared_ops::memory;

/// Nodes per window.
const WINDOW: usize = 4096;

/// What evaluating a node takes: the common arithmetic with its form has a kernel of its own
/// (the rule inlined); other rules go through their code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub(crate) enum Kernel {
    Input,
    Sum,
    Dot,
    MulAdd,
    Custom,
    /// A built-in one-argument rule, found by its code.
    Unary,
    /// A built-in two-argument rule, found by its code.
    Binary,
    Add,
    Sub,
    AddSame,
    SubSame,
    Neg,
    MulFirst,
    MulSecond,
    MulSame,
    MulBoth,
    DivFirst,
    DivSecond,
    DivBoth,
}

impl Kernel {
    pub(crate) fn of(op: OpCode, form: Form) -> Kernel {
        use {Form as F, OpCode as O};
        match (op, form) {
            (O::Input, _) => Kernel::Input,
            (O::Sum, _) => Kernel::Sum,
            (O::Dot, _) => Kernel::Dot,
            (O::MulAdd, _) => Kernel::MulAdd,
            (O::Custom, _) => Kernel::Custom,
            (O::Add, F::Value) => Kernel::Add,
            (O::Sub, F::Value) => Kernel::Sub,
            (O::Add, F::Same) => Kernel::AddSame,
            (O::Sub, F::Same) => Kernel::SubSame,
            (O::Neg, _) => Kernel::Neg,
            (O::Mul, F::First) => Kernel::MulFirst,
            (O::Mul, F::Second) => Kernel::MulSecond,
            (O::Mul, F::Same) => Kernel::MulSame,
            (O::Mul, F::Both) => Kernel::MulBoth,
            (O::Div, F::First) => Kernel::DivFirst,
            (O::Div, F::Second) => Kernel::DivSecond,
            (O::Div, F::Both) => Kernel::DivBoth,
            (op, _) if op.is_unary() => Kernel::Unary,
            _ => Kernel::Binary,
        }
    }
}

/// One node, ready to evaluate: its index, its operands as indices into the program's
/// `values` (where the constants follow the nodes; for `Many` forms a range of `args`, for
/// `powi` the exponent in `b`), and where its weighted edges start.
///
/// Kept as two `u64`s: the loops seem bound by the processor's memory operations, and two
/// loads per node instead of four shorten the re-evaluation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Code {
    /// `a | b << 32`
    ab: u64,
    /// `e | node << 32`
    en: u64,
}

impl Code {
    fn new(node: u32, a: u32, b: u32, e: u32) -> Code {
        Code {
            ab: a as u64 | (b as u64) << 32,
            en: e as u64 | (node as u64) << 32,
        }
    }

    /// `(a, b, e, node)`.
    #[inline(always)]
    pub fn parts(self) -> (usize, usize, usize, usize) {
        let (ab, en) = (self.ab, self.en);
        let low = |x: u64| x as u32 as usize;
        (low(ab), (ab >> 32) as usize, low(en), (en >> 32) as usize)
    }

    /// The code `step` further on.
    #[inline(always)]
    pub fn add(self, step: Code) -> Code {
        self.add_times(step, 1)
    }

    /// The code `times` steps further on.
    #[inline(always)]
    pub fn add_times(self, step: Code, times: usize) -> Code {
        let times = times as u64;
        Code {
            ab: self.ab.wrapping_add(step.ab.wrapping_mul(times)),
            en: self.en.wrapping_add(step.en.wrapping_mul(times)),
        }
    }
}

/// Nodes evaluated by one loop: one kernel, operation and form (and, for a user's rule, the
/// rule: its index in [`Program::rules`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Group {
    pub kernel: Kernel,
    pub op: OpCode,
    pub form: Form,
    pub rule: u32,
    /// Its nodes: `code[start..end]`.
    pub start: u32,
    pub end: u32,
    /// If each node's `(a, b, e, node)` is the one before it plus this step (the recording of
    /// a loop, as Rosenbrock's terms are): the loop computes its codes instead of loading them.
    pub step: Option<Code>,
}

/// The program prepared for re-evaluation.
#[derive(Clone, Debug, Default)]
pub(crate) struct Compiled<T> {
    /// The nodes, group by group.
    pub(super) code: Vec<Code>,
    /// The groups, in an order that evaluates every operand first.
    pub(super) groups: Vec<Group>,
    pub(crate) args: Vec<u32>,
    /// The node of each input, and the first if they are consecutive (as `Tape::vars` makes
    /// them): then they are written as one slice.
    pub(super) inputs: Vec<u32>,
    pub(super) first_input: Option<u32>,
    /// The point being left, to go back to after a failed guard.
    pub(super) previous: Vec<T>,
}

impl<T: Op> Derived for Compiled<T> {
    fn capacity_bytes(&self) -> usize {
        self.code.capacity() * size_of::<Code>()
            + self.groups.capacity() * size_of::<Group>()
            + (self.args.capacity() + self.inputs.capacity()) * 4
            + self.previous.capacity() * size_of::<T>()
    }
    derived_any!();
}

/// In `kind`: an input, which no group evaluates (the inputs are written first).
const INPUT: u32 = u32::MAX;

/// An operand as an index into `values` with the constants after the `n` nodes.
fn slot(r: u32, n: usize) -> u32 {
    if r & CONST != 0 {
        (r & !CONST) + n as u32
    } else {
        r
    }
}

impl<T: Op> Program<T> {
    /// Node `i`'s operands `(a, b)` as `Code` keeps them (see there).
    pub(crate) fn slots(&self, i: usize, n: usize) -> (u32, u32) {
        let [a, b] = self.operands[i];
        match self.forms[i] {
            Form::Input | Form::Many => (a, b),
            _ if self.ops[i] == OpCode::Powi => (slot(a, n), b),
            _ => (slot(a, n), slot(b, n)),
        }
    }

    /// The index of custom node `i`'s rule (the rules are kept in node order).
    pub(crate) fn rule_of(&self, i: usize) -> u32 {
        let k = self.rules.partition_point(|r| (r.node as usize) < i);
        match self.rules.get(k) {
            Some(r) if r.node as usize == i => k as u32,
            _ => panic!("reverse: custom node {i} has no rule of its own"),
        }
    }

    /// Prepares the re-evaluation (once per recording, see the module's text); the constants
    /// move behind the nodes' values.
    pub(crate) fn compile(&mut self, d: &TapeData<T>) -> Result<(), ReplayError> {
        if self.derived.get::<Compiled<T>>().is_some() {
            return Ok(());
        }
        let n = self.len();
        if let Some(i) = self.forms.iter().position(|&f| f == Form::Opaque) {
            return Err(ReplayError::Opaque { node: i as u32 });
        }
        let args: Vec<u32> = self.args.iter().map(|&r| slot(r, n)).collect();
        // Per node but the inputs: its kind (kernel, operation, form) and its level within its
        // window, in buffers this thread keeps (fresh pages cost more than this whole pass).
        let mut level: Vec<u32> = memory::take();
        let mut kind: Vec<u32> = memory::take();
        level.resize(n, 0);
        kind.resize(n, INPUT);
        let mut bases = vec![0u32; n.div_ceil(WINDOW) + 1];
        for i in 0..n {
            let (op, form) = (self.ops[i], self.forms[i]);
            let kernel = Kernel::of(op, form);
            if kernel == Kernel::Input {
                continue;
            }
            kind[i] = (kernel as u32) << 16 | (op as u32) << 8 | form as u32;
            let (a, b) = self.slots(i, n);
            // The operands that are nodes of this window.
            let operands: &[u32] = match form {
                Form::Many => &args[a as usize..(a + b) as usize],
                _ if op == OpCode::Powi => &[a],
                _ => &[a, b],
            };
            let window = (i / WINDOW * WINDOW) as u32;
            let below = operands
                .iter()
                .filter(|&&r| r >= window && (r as usize) < n)
                .map(|&r| level[r as usize])
                .max();
            level[i] = below.map_or(0, |l| l + 1);
            let w = i / WINDOW + 1;
            bases[w] = bases[w].max(level[i] + 1);
        }
        // Each node's bucket (in `level` from here on): its level, after every level of the
        // windows before its own. A counting sort by bucket (nodes keep their recording order
        // in it), then within each bucket a sort by kind, ties by recording order.
        for w in 1..bases.len() {
            bases[w] += bases[w - 1];
        }
        let mut starts = vec![0u32; *bases.last().expect("one base at least") as usize + 1];
        for i in (0..n).filter(|&i| kind[i] != INPUT) {
            level[i] += bases[i / WINDOW];
            starts[level[i] as usize + 1] += 1;
        }
        for b in 1..starts.len() {
            starts[b] += starts[b - 1];
        }
        let mut order: Vec<u32> = memory::take();
        order.resize(starts[starts.len() - 1] as usize, 0);
        let mut next = starts.clone();
        for i in (0..n).filter(|&i| kind[i] != INPUT) {
            let b = &mut next[level[i] as usize];
            order[*b as usize] = i as u32;
            *b += 1;
        }
        for b in starts.windows(2) {
            // One integer per node, in an unstable sort that allocates nothing.
            order[b[0] as usize..b[1] as usize]
                .sort_unstable_by_key(|&i| (kind[i as usize] as u64) << 32 | i as u64);
        }
        // The codes in that order; a group for each run of one bucket, kind and rule.
        let mut code = Vec::with_capacity(order.len());
        let mut groups: Vec<Group> = Vec::new();
        let mut last = None;
        for (k, &i) in order.iter().enumerate() {
            let i = i as usize;
            let (op, form) = (self.ops[i], self.forms[i]);
            let kernel = Kernel::of(op, form);
            let rule = match kernel {
                Kernel::Custom => self.rule_of(i),
                _ => 0,
            };
            let (a, b) = self.slots(i, n);
            code.push(Code::new(i as u32, a, b, d.starts()[i] & !UNIT));
            let key = (level[i], kind[i], rule);
            if last != Some(key) {
                last = Some(key);
                groups.push(Group {
                    kernel,
                    op,
                    form,
                    rule,
                    start: k as u32,
                    end: k as u32,
                    step: None,
                });
            }
            groups.last_mut().expect("pushed above").end = k as u32 + 1;
        }
        memory::give(level);
        memory::give(kind);
        memory::give(order);
        let groups = with_runs(&code, groups);
        let inputs: Vec<u32> = (0..n as u32)
            .filter(|&i| self.forms[i as usize] == Form::Input)
            .collect();
        let first_input = match inputs[..] {
            [first, .., last] if last - first + 1 == inputs.len() as u32 => Some(first),
            [only] => Some(only),
            _ => None,
        };
        self.values.extend_from_slice(&self.consts);
        self.derived.put(Compiled::<T> {
            code,
            groups,
            args,
            inputs,
            first_input,
            previous: Vec::new(),
        });
        // The order of the sweeps that follow: on a tape of `f64`, the one kernel with a
        // scheduled form.
        if TypeId::of::<T>() == TypeId::of::<f64>() {
            self.derived.put(Schedule::of(d));
        }
        Ok(())
    }
}

/// A node's code as a run's loop steps it: word by word.
impl Stepped for Code {
    fn delta(self, next: Code) -> Code {
        Code {
            ab: next.ab.wrapping_sub(self.ab),
            en: next.en.wrapping_sub(self.en),
        }
    }
    fn indices(self) -> [u32; 4] {
        let (a, b, e, node) = self.parts();
        [a, b, e, node].map(|i| i as u32)
    }
}

/// `groups` with each run of nodes whose codes step evenly (see [`runs`]) made a group of its
/// own: nodes of one group are independent, so any split of a group is as good.
fn with_runs(code: &[Code], groups: Vec<Group>) -> Vec<Group> {
    let mut out = Vec::with_capacity(groups.len());
    for g in groups {
        runs::longest_runs(
            |i| code[i],
            (g.start as usize, g.end as usize),
            |start, end, run| {
                out.push(Group {
                    start: start as u32,
                    end: end as u32,
                    step: run.then(|| code[start].delta(code[start + 1])),
                    ..g
                })
            },
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rosenbrock's terms side by side: each of a window's groups is one run (the first term
    /// that a window cuts makes groups of one node of its own), and every run's stored codes
    /// are its first plus its step, as the loops of `eval` assume.
    #[test]
    fn a_loop_is_compiled_into_runs_whose_codes_follow_their_step() {
        let (rec, _, _) = crate::testing::rosenbrock_replayed(1000);
        rec.with_data(|d| {
            let c = d
                .program
                .as_ref()
                .unwrap()
                .derived
                .get::<Compiled<f64>>()
                .unwrap();
            let mut in_runs = 0;
            for g in &c.groups {
                let codes = &c.code[g.start as usize..g.end as usize];
                if let Some(step) = g.step {
                    assert!(codes.len() >= runs::RUN);
                    assert!(codes.windows(2).all(|w| w[0].add(step) == w[1]));
                    in_runs += codes.len();
                }
            }
            // 7 nodes per term and the sum; out of runs, the sum and the 5 nodes of the term
            // cut by the window's end that fall in the second window (a group of one each).
            assert_eq!((c.code.len(), in_runs), (7 * 999 + 1, 7 * 999 - 5));
        });
    }

    /// Codes one step apart, with steps of every sign, make a run that splits where the step
    /// changes.
    #[test]
    fn runs_split_where_the_step_changes() {
        let code = |k: u32| Code::new(100 - k, 3 * k, 7, 2 * k + 1);
        let mut codes: Vec<Code> = (0..20).map(code).collect();
        codes[12] = Code::new(0, 0, 0, 0); // breaks the run after node 11
        let group = Group {
            kernel: Kernel::Add,
            op: OpCode::Add,
            form: Form::Value,
            rule: 0,
            start: 0,
            end: codes.len() as u32,
            step: None,
        };
        let runs = with_runs(&codes, vec![group]);
        let spans: Vec<_> = runs
            .iter()
            .map(|g| (g.start, g.end, g.step.is_some()))
            .collect();
        // 0..12 one run; 12 and 13 loose; 13..20 too short to be one (7 < RUN).
        assert_eq!(spans, [(0, 12, true), (12, 20, false)]);
        let step = runs[0].step.unwrap();
        assert!(codes[..12].windows(2).all(|w| w[0].add(step) == w[1]));
    }
}
