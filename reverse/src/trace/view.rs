//! Reading the tape: a [`View`] resolves node names, reads each node's edges and guards, and
//! recovers each node's formula (with the constants the tape does not hold, where exact).

use super::Decision;
use super::names::{default_name, num};
use crate::replay::error as guard;
use crate::storage::op_code::OpCode;
use crate::storage::{Edges, NEG, TapeData};
use std::collections::HashMap;

/// A traced tape with its node names resolved and its edges read per node.
pub(super) struct View<'a> {
    pub(super) id: u64,
    /// The tape itself, for the sweep kernel.
    pub(super) data: &'a TapeData<f64>,
    pub(super) values: &'a [f64],
    pub(super) ops: &'a [OpCode],
    /// Per node, its operands with `∂vᵢ/∂operand`, in the order the sweep follows them (a unit
    /// edge shows its ±1).
    operands: Vec<Vec<(u32, f64)>>,
    pub(super) names: Vec<String>,
    /// Names of user-defined operations, by node.
    custom: HashMap<u32, &'static str>,
    /// The guards, checked at the current values.
    pub(super) guards: Vec<Decision>,
    pub(super) bytes: usize,
}

impl<'a> View<'a> {
    /// Panics, naming the method, for a tape that keeps no values or operations.
    pub(super) fn new(id: u64, data: &'a TapeData<f64>, method: &str) -> View<'a> {
        let Some(program) = data.program.as_deref().filter(|_| data.traced) else {
            panic!(
                "Tape::{method} shows each node's value and operation, which only a traced tape \
                 keeps: record on Tape::traced() instead of Tape::new()"
            );
        };
        let mut given: Vec<Option<&str>> = vec![None; data.len()];
        for (i, name) in &data.names {
            if let Some(slot) = given.get_mut(*i as usize) {
                *slot = Some(name);
            }
        }
        let names: Vec<String> = given
            .iter()
            .enumerate()
            .map(|(i, n)| n.map_or_else(|| default_name(i), str::to_string))
            .collect();
        let operands = data
            .edge_ranges()
            .into_iter()
            .map(|e| match e {
                Edges::Weighted(lo, hi) => (lo..hi)
                    .map(|k| (data.parents()[k], data.partials()[k]))
                    .collect(),
                Edges::Unit(lo, hi) => data.units()[lo..hi]
                    .iter()
                    .map(|&p| {
                        let w = if p & NEG == 0 { 1.0 } else { -1.0 };
                        (p & !NEG, w)
                    })
                    .collect(),
            })
            .collect();
        let guards = (0..program.guards.len())
            .map(|k| {
                let g = &program.guards[k];
                let (node, what, recorded, now) = guard::explain(program, k, g.outcome(program));
                let place = match g.at {
                    0 => "before any node".to_string(),
                    k => format!("after {}", names[k as usize - 1]),
                };
                Decision {
                    after: g.at,
                    place,
                    node,
                    what,
                    recorded,
                    now,
                }
            })
            .collect();
        View {
            id,
            data,
            values: &program.values[..program.len()],
            ops: &program.ops,
            operands,
            names,
            custom: program.rules.iter().map(|r| (r.node, r.name)).collect(),
            guards,
            bytes: data.bytes(),
        }
    }

    pub(super) fn len(&self) -> usize {
        self.values.len()
    }

    pub(super) fn name(&self, i: u32) -> &str {
        &self.names[i as usize]
    }

    /// The operation's name; a user-defined rule's own name for `Custom`.
    pub(super) fn op(&self, i: usize) -> &'static str {
        match self.ops[i] {
            OpCode::Custom => self
                .custom
                .get(&(i as u32))
                .copied()
                .unwrap_or(OpCode::Custom.name()),
            op => op.name(),
        }
    }

    /// The operands of node `i` that are on the tape, with `∂vᵢ/∂operand`. A constant operand
    /// is not recorded. (For `x·x` the tape holds one edge to `x` with the whole partial.)
    pub(super) fn operands(&self, i: usize) -> &[(u32, f64)] {
        &self.operands[i]
    }

    /// The formula of node `i` in terms of its operands' names. The second return is true when
    /// it contains a constant `c` the tape does not hold.
    pub(super) fn expr(&self, i: usize) -> (String, bool) {
        let ops = self.operands(i);
        let v = self.values[i];
        match (self.ops[i], ops) {
            (OpCode::Input, _) => ("input".into(), false),
            (
                op @ (OpCode::Add | OpCode::Sub | OpCode::Mul | OpCode::Div | OpCode::Rem),
                &[(a, _), (b, _)],
            ) => (
                format!("{} {} {}", self.name(a), op.name(), self.name(b)),
                false,
            ),
            (
                op @ (OpCode::Add | OpCode::Sub | OpCode::Mul | OpCode::Div | OpCode::Rem),
                &[(a, w)],
            ) => {
                let an = self.name(a);
                let p = self.values[a as usize];
                match infix_constant(op, p, w, v) {
                    Some(Recovered::Same) => (format!("{an} {} {an}", op.name()), false),
                    Some(Recovered::Right(c)) => {
                        if c < 0.0 && matches!(op, OpCode::Add | OpCode::Sub) {
                            let flip = if op == OpCode::Add { "-" } else { "+" };
                            (format!("{an} {flip} {}", num(-c)), false)
                        } else {
                            (format!("{an} {} {}", op.name(), num(c)), false)
                        }
                    }
                    Some(Recovered::Left(c)) => (format!("{} {} {an}", num(c), op.name()), false),
                    None => (format!("{an} {} c", op.name()), true),
                }
            }
            (OpCode::Powi, &[(a, w)]) => {
                let p = self.values[a as usize];
                match powi_exponent(p, w, v) {
                    Some(k) => (format!("powi({}, {k})", self.name(a)), false),
                    None => (format!("powi({}, c)", self.name(a)), true),
                }
            }
            (op, ops) => {
                let mut args: Vec<&str> = ops.iter().map(|&(u, _)| self.name(u)).collect();
                let missing = arity(op).map_or(0, |a| a.saturating_sub(args.len()));
                args.extend(core::iter::repeat_n("c", missing));
                (format!("{}({})", self.op(i), args.join(", ")), missing > 0)
            }
        }
    }

    /// Nodes that no other node uses: the outputs of the program.
    pub(super) fn sinks(&self) -> Vec<bool> {
        let mut used = vec![false; self.len()];
        for i in 0..self.len() {
            for &(u, _) in self.operands(i) {
                used[u as usize] = true;
            }
        }
        used.iter().map(|u| !u).collect()
    }
}

/// Operands an operation takes; `None` for a user-defined rule (one or two: the tape does not
/// say, so its second slot is read when it is set).
fn arity(op: OpCode) -> Option<usize> {
    use OpCode::*;
    match op {
        Custom => None,
        Input => Some(0),
        Add | Sub | Mul | Div | Rem | Powf | Log | Atan2 | Hypot | Max | Min => Some(2),
        MulAdd => Some(3),
        _ => Some(1),
    }
}

enum Recovered {
    /// `a op a` (the tape merges the two equal parents into one).
    Same,
    /// `a op c`.
    Right(f64),
    /// `c op a`.
    Left(f64),
}

/// Recovers the constant of `a op c` (or `c op a`) from the operand's value `p`, the partial
/// `w` and the result `v`, when the recovered constant reproduces `v` exactly.
fn infix_constant(op: OpCode, p: f64, w: f64, v: f64) -> Option<Recovered> {
    match op {
        OpCode::Add if w == 2.0 && p + p == v => Some(Recovered::Same),
        OpCode::Add => Some(v - p).filter(|c| p + c == v).map(Recovered::Right),
        OpCode::Sub if w == 1.0 => Some(p - v).filter(|c| p - c == v).map(Recovered::Right),
        OpCode::Sub if w == -1.0 => Some(v + p).filter(|c| c - p == v).map(Recovered::Left),
        OpCode::Mul if p * w == v => Some(Recovered::Right(w)),
        OpCode::Mul if w == p + p && v == p * p => Some(Recovered::Same),
        OpCode::Div => {
            let c = 1.0 / w;
            if p / c == v && 1.0 / c == w {
                return Some(Recovered::Right(c));
            }
            let c = v * p;
            (c / p == v && -v / p == w).then_some(Recovered::Left(c))
        }
        _ => None,
    }
}

/// Recovers n of `powi(a, n)` from `p = a`, `w = n·aⁿ⁻¹` and `v = aⁿ`.
fn powi_exponent(p: f64, w: f64, v: f64) -> Option<i32> {
    if v == 1.0 && w == 0.0 {
        return Some(0);
    }
    if p == 0.0 || v == 0.0 || !(w * p / v).is_finite() {
        return None;
    }
    let k = (w * p / v).round();
    (k.abs() <= 1024.0 && p.powi(k as i32) == v).then_some(k as i32)
}
