//! Reading the tape: a [`View`] resolves node names, reads each node's edges and guards, and
//! writes each node's formula from the program a traced tape keeps.

use super::Decision;
use super::names::{default_name, num};
use crate::replay::error as guard;
use crate::storage::op_code::OpCode;
use crate::storage::program::{CONST, Form, Program, RuleFn};
use crate::storage::{Edges, NEG, TapeData};
use std::collections::{HashMap, HashSet};

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
    /// The nodes of user-defined rules of two operands.
    binary_rules: HashSet<u32>,
    /// The program: every node's operation, operands and constants.
    program: &'a Program<f64>,
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
            binary_rules: program
                .rules
                .iter()
                .filter(|r| matches!(r.eval, RuleFn::Binary(_)))
                .map(|r| r.node)
                .collect(),
            program,
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

    /// The formula of node `i` in terms of its operands' names and its constants, read from
    /// the program the traced tape keeps (exact: it holds every operand, constants included).
    pub(super) fn expr(&self, i: usize) -> String {
        let p = self.program;
        let arg = |o: u32| -> String {
            if o & CONST != 0 {
                num(p.consts[(o & !CONST) as usize])
            } else {
                self.name(o).to_string()
            }
        };
        let [a, b] = p.operands[i];
        let call = |args: Vec<String>| format!("{}({})", self.op(i), args.join(", "));
        match (self.ops[i], p.forms[i]) {
            (OpCode::Input, _) => "input".into(),
            (_, Form::Many) => call(
                p.args[a as usize..(a + b) as usize]
                    .iter()
                    .map(|&o| arg(o))
                    .collect(),
            ),
            // A node given its partials: the operands are its edges.
            (_, Form::Opaque) => call(self.operands(i).iter().map(|&(u, _)| arg(u)).collect()),
            (OpCode::Powi, _) => format!("powi({}, {})", arg(a), b as i32),
            // x − c records x + (−c): shown as written.
            (OpCode::Add, _) if b & CONST != 0 && p.consts[(b & !CONST) as usize] < 0.0 => {
                format!("{} - {}", arg(a), num(-p.consts[(b & !CONST) as usize]))
            }
            (op @ (OpCode::Add | OpCode::Sub | OpCode::Mul | OpCode::Div | OpCode::Rem), _) => {
                format!("{} {} {}", arg(a), op.name(), arg(b))
            }
            (op, _) => {
                let two = match op {
                    OpCode::Custom => self.binary_rules.contains(&(i as u32)),
                    op => arity(op) == 2,
                };
                call(if two {
                    vec![arg(a), arg(b)]
                } else {
                    vec![arg(a)]
                })
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

/// Operands a built-in operation of one or two operands takes.
fn arity(op: OpCode) -> usize {
    use OpCode::*;
    match op {
        Add | Sub | Mul | Div | Rem | Powf | Log | Atan2 | Hypot | Max | Min => 2,
        _ => 1,
    }
}
