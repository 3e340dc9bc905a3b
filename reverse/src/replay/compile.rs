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
//! require; one that kept state across calls would see its calls in another order). Levels
//! are counted within windows of [`WINDOW`] nodes, windows in recording order, so that the
//! values a group reads stay in cache on long recordings.
//!
//! The interpreter stops there: the recording's machine code (feature `jit`) is the fast path,
//! and this the reference it is checked against and the fallback where it is not compiled.

use super::error::ReplayError;
use crate::storage::derived::{Derived, derived_any};
use crate::storage::op_code::OpCode;
use crate::storage::program::{CONST, Form, Program};
use crate::storage::{TapeData, UNIT};
use crate::sweep::schedule::Schedule;
use core::any::TypeId;
use shared_ops::Op;

/// Nodes per window: levels are counted within one, so that the values a group reads stay in
/// cache on long recordings.
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Code {
    pub a: u32,
    pub b: u32,
    pub e: u32,
    pub node: u32,
}

impl Code {
    /// `(a, b, e, node)` as indices.
    #[inline(always)]
    pub fn parts(self) -> (usize, usize, usize, usize) {
        (
            self.a as usize,
            self.b as usize,
            self.e as usize,
            self.node as usize,
        )
    }
}

/// Consecutive nodes evaluated by one loop: one kernel, operation and form (and, for a user's
/// rule, the rule: its index in [`Program::rules`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Group {
    pub kernel: Kernel,
    pub op: OpCode,
    pub form: Form,
    pub rule: u32,
    /// Its nodes: `code[start..end]`.
    pub start: u32,
    pub end: u32,
}

/// What every evaluation of the program reads (see [`Program::operands`]): the n-ary nodes'
/// operands as indices into `values`, where the constants follow the nodes.
#[derive(Clone, Debug, Default)]
pub(crate) struct Operands {
    pub(crate) args: Vec<u32>,
}

impl Derived for Operands {
    fn capacity_bytes(&self) -> usize {
        self.args.capacity() * 4
    }
    derived_any!();
}

/// The program prepared for re-evaluation by the interpreter.
#[derive(Clone, Debug, Default)]
pub(crate) struct Compiled<T> {
    /// The nodes but the inputs, in recording order.
    pub(super) code: Vec<Code>,
    /// The groups, in recording order.
    pub(super) groups: Vec<Group>,
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
            + self.inputs.capacity() * 4
            + self.previous.capacity() * size_of::<T>()
    }
    derived_any!();
}

/// An operand as an index into `values` with the constants after the `n` nodes.
pub(crate) fn slot(r: u32, n: usize) -> u32 {
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

    /// Prepares what every evaluation reads, interpreted or compiled (once per recording):
    /// the constants move behind the nodes' values, and the n-ary operands become indices
    /// into them ([`Operands`]).
    pub(crate) fn operands(&mut self) -> Result<(), ReplayError> {
        if self.derived.get::<Operands>().is_some() {
            return Ok(());
        }
        if let Some(i) = self.forms.iter().position(|&f| f == Form::Opaque) {
            return Err(ReplayError::Opaque { node: i as u32 });
        }
        let n = self.len();
        let args = self.args.iter().map(|&r| slot(r, n)).collect();
        self.values.extend_from_slice(&self.consts);
        self.derived.put(Operands { args });
        Ok(())
    }

    /// Prepares the interpreter's re-evaluation (once per recording, see the module's text),
    /// after [`operands`](Self::operands).
    pub(crate) fn compile(&mut self, d: &TapeData<T>) -> Result<(), ReplayError> {
        if self.derived.get::<Compiled<T>>().is_some() {
            return Ok(());
        }
        self.operands()?;
        let n = self.len();
        let args = &self.derived.get::<Operands>().expect("made above").args;
        // Each node's level within its window: one more than its operands' in the window.
        let inputs: Vec<u32> = (0..n as u32)
            .filter(|&i| self.forms[i as usize] == Form::Input)
            .collect();
        let mut level = vec![0u32; n];
        let mut order = Vec::with_capacity(n - inputs.len());
        for i in (0..n).filter(|&i| self.forms[i] != Form::Input) {
            let (a, b) = self.slots(i, n);
            let operands: &[u32] = match self.forms[i] {
                Form::Many => &args[a as usize..(a + b) as usize],
                _ if self.ops[i] == OpCode::Powi => &[a],
                _ => &[a, b],
            };
            let window = (i / WINDOW * WINDOW) as u32;
            level[i] = operands
                .iter()
                .filter(|&&r| r >= window && (r as usize) < n)
                .map(|&r| level[r as usize] + 1)
                .max()
                .unwrap_or(0);
            order.push(i as u32);
        }
        let kind = |i: usize| {
            let (op, form) = (self.ops[i], self.forms[i]);
            let kernel = Kernel::of(op, form);
            let rule = if kernel == Kernel::Custom {
                self.rule_of(i)
            } else {
                0
            };
            (kernel, op, form, rule)
        };
        // Within each window, by level, then kind, then recording order: one integer per node
        // (the window's nodes are in recording order already, and a window is short).
        let mut keys = Vec::with_capacity(WINDOW);
        for window in order.chunk_by_mut(|a, b| *a as usize / WINDOW == *b as usize / WINDOW) {
            let base = window[0] as usize / WINDOW * WINDOW;
            keys.clear();
            keys.extend(window.iter().map(|&i| {
                let (kernel, op, form, _) = kind(i as usize);
                let kind = (kernel as u64) << 16 | (op as u64) << 8 | form as u64;
                (level[i as usize] as u64) << 40 | kind << 12 | (i as u64 - base as u64)
            }));
            keys.sort_unstable();
            for (i, k) in window.iter_mut().zip(&keys) {
                *i = (base as u64 + k % WINDOW as u64) as u32;
            }
        }
        let mut code = Vec::with_capacity(order.len());
        let mut groups: Vec<Group> = Vec::new();
        let mut last = None;
        for (k, &i) in order.iter().enumerate() {
            let (i, k) = (i as usize, k as u32);
            let (a, b) = self.slots(i, n);
            let e = d.starts()[i] & !UNIT;
            code.push(Code {
                a,
                b,
                e,
                node: i as u32,
            });
            let key = (i / WINDOW, level[i], kind(i));
            if last == Some(key) {
                groups.last_mut().expect("one per key").end = k + 1;
            } else {
                last = Some(key);
                let (kernel, op, form, rule) = key.2;
                groups.push(Group {
                    kernel,
                    op,
                    form,
                    rule,
                    start: k,
                    end: k + 1,
                });
            }
        }
        let first_input = match inputs[..] {
            [first, .., last] if last - first + 1 == inputs.len() as u32 => Some(first),
            [only] => Some(only),
            _ => None,
        };
        self.derived.put(Compiled::<T> {
            code,
            groups,
            inputs,
            first_input,
            previous: Vec::new(),
        });
        // The order of the sweeps that follow, on a tape of `f64` (the kernel it serves).
        if TypeId::of::<T>() == TypeId::of::<f64>() {
            self.derived.put(Schedule::of(d));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rosenbrock's terms (7 nodes each, 6 000 of them across two windows): every node but
    /// the inputs has one code, the groups cover the codes without a gap, each of one kernel,
    /// every node comes after the nodes it reads, and the terms side by side make few groups.
    #[test]
    fn the_groups_evaluate_every_node_after_its_operands() {
        let (rec, x, _) = crate::testing::rosenbrock_replayed(1000);
        rec.with_data(|d| {
            let p = d.program.as_ref().unwrap();
            let c = p.derived.get::<Compiled<f64>>().unwrap();
            let n = p.len();
            let mut nodes: Vec<u32> = c.code.iter().map(|k| k.node).collect();
            nodes.sort();
            let computed: Vec<u32> = (0..n as u32)
                .filter(|i| !x.iter().any(|v| v.index() == *i))
                .collect();
            assert_eq!(nodes, computed);
            assert_eq!(c.groups.first().map(|g| g.start), Some(0));
            assert_eq!(c.groups.last().map(|g| g.end), Some(c.code.len() as u32));
            let mut done = vec![false; n];
            x.iter().for_each(|v| done[v.index() as usize] = true);
            for (k, g) in c.groups.iter().enumerate() {
                assert!(k == 0 || c.groups[k - 1].end == g.start);
                let codes = &c.code[g.start as usize..g.end as usize];
                for code in codes {
                    let i = code.node as usize;
                    assert_eq!(Kernel::of(p.ops[i], p.forms[i]), g.kernel);
                    let (a, b) = p.slots(i, n);
                    let operands: Vec<u32> = match p.forms[i] {
                        Form::Many => {
                            let args = &p.derived.get::<Operands>().unwrap().args;
                            args[a as usize..(a + b) as usize].to_vec()
                        }
                        _ => vec![a, b],
                    };
                    assert!(
                        operands
                            .iter()
                            .all(|&r| r as usize >= n || done[r as usize])
                    );
                }
                codes
                    .iter()
                    .for_each(|code| done[code.node as usize] = true);
            }
            // Per window a group per level and kernel: a few dozen, not one per node.
            assert!(c.groups.len() < 40, "{} groups", c.groups.len());
        });
    }
}
