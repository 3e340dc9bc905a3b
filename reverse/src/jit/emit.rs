//! The code of each region's forward pass, as Cranelift IR: values and partials, node by node
//! in recording order, a loop over the turns of a repeated body or straight code for a single
//! node; and what the sweep's code ([`sweep`](super::sweep)) shares with it: the environment,
//! the mode, the values of a turn.
//!
//! Every operation is the one the interpreter performs, in its order: `+`, `−`, `·`, `/` and
//! negation inline (Cranelift neither fuses nor reassociates them), every other rule by a call
//! to the Rust function the interpreter calls, so the bits are the interpreter's. A sweep term
//! is `w · ā`, or `−0` where `w` or `ā` is zero (the structural zero of
//! [`structural`](crate::sweep::kernel::structural), as a select).

use super::ir::{ADJOINTS, PARTIALS, Turn, VALUES, index, load, store, turns};
use super::machine::{NO_PARTIALS, RUNS};
use super::shape::{A, B, E, Forward, Index, Node, Points, Region, Reverse};
use crate::replay::compile::Kernel;
use crate::storage::op_code::OpCode;
use crate::storage::program::Form;
use cranelift_codegen::ir::{FuncRef, InstBuilder, MemFlagsData, Value, types};
use cranelift_frontend::FunctionBuilder;

/// What the code of one function reads: the frame, its three arrays, and the two calls.
pub(super) struct Env<'a> {
    pub nodes: &'a [Node],
    /// The number of nodes (the constants follow them in the values).
    pub n: usize,
    pub frame: Value,
    pub values: Value,
    pub partials: Value,
    pub adj: Value,
    /// `eval(frame, rule, a, b, e, node) → value`, `sweep(frame, lo, count, kind, ā)` and
    /// `sweep_lanes(frame, lo, count, kind, node)`.
    pub eval: FuncRef,
    pub sweep: FuncRef,
    pub sweep_lanes: FuncRef,
    /// `f(x) → (value, derivative)` of the built-in one-argument rules, called directly.
    pub unary: &'a [(OpCode, FuncRef)],
    /// The values of `max` and `min`.
    pub winners: [FuncRef; 2],
    /// The index of each rule evaluated by a call, in the table the call reads.
    pub rule: &'a dyn Fn(Forward) -> i64,
    pub mode: Mode<'a>,
    /// Adjoints per node: 1, or the lanes of a vector sweep (of [`Mode::Full`] only).
    pub lanes: usize,
    /// In the sweep of any seeds, one past the last node whose adjoint may be non-zero (the
    /// frame's `end`): the code skips the nests and turns after it.
    pub end: Option<Value>,
}

impl Env<'_> {
    /// Loads the frame's pointers at the function's entry.
    pub fn load_pointers(b: &mut FunctionBuilder, frame: Value) -> [Value; 3] {
        let f = MemFlagsData::trusted();
        let ptr = types::I64;
        [VALUES, PARTIALS, ADJOINTS].map(|o| b.ins().load(ptr, f, frame, o))
    }
}

/// What the code computes.
#[derive(Clone, Copy)]
pub(super) enum Mode<'a> {
    /// Every value, partial and adjoint, into the recording's arrays: re-evaluation and the
    /// sweep from any seeds.
    Full,
    /// A gradient: only the values read from memory (`keep`, per node) are stored, partials of
    /// inline arithmetic are recomputed in the sweep from the turn's values, and only the
    /// adjoints that receive a term through memory (`outside`, per node: zeroed by the forward
    /// pass) are in memory; the inputs' final adjoints are stored.
    Gradient {
        keep: &'a [bool],
        outside: &'a [bool],
        /// Per node, whether it is a dot product whose sides are runs of consecutive values.
        runs: &'a [bool],
    },
}

/// The nodes body node `j` of `r` stands for: one per turn (of each turn of the loop around
/// it).
fn turns_of(r: &Region, j: usize) -> impl Iterator<Item = usize> + '_ {
    let (outer, step) = r
        .outer
        .as_ref()
        .map_or((1, 0), |o| (o.turns, o.nodes as usize));
    (0..outer).flat_map(move |o| (0..r.turns).map(move |k| r.start + o * step + k * r.period + j))
}

/// Whether `flag` holds for body node `j` of `r` in any turn.
pub(super) fn any_turn(flag: &[bool], r: &Region, j: usize) -> bool {
    turns_of(r, j).any(|i| flag[i])
}

/// The forward pass of region `r` (in turn `outer` of the loop around it, if any).
pub(super) fn forward(b: &mut FunctionBuilder, env: &Env, r: &Region, outer: Option<Value>) {
    if r.turns == 1 {
        forward_turn(b, env, r, Turn { k: None, outer });
    } else if let Some((j, sum)) = r.fold {
        // The sum carried from turn to turn: −0 + t₀ is t₀ (whatever its sign), then the
        // terms in order, as the sum node adds them.
        let init = b.ins().f64const(-0.0);
        let total = turns(b, r.turns, false, &[init], |b, k, carried| {
            let (regs, _) = turn_values(b, env, r, Turn { k: Some(k), outer }, false);
            let t = regs[j].expect("a folded term is computed in its turn");
            vec![b.ins().fadd(carried[0], t)]
        });
        let here = Turn { k: None, outer };
        store(b, total[0], env.values, here, sum as i64, (0, 0));
        // Its adjoint starts at zero (the seeds and later terms are added in memory).
        let zero = b.ins().f64const(0.0);
        store(b, zero, env.adj, here, sum as i64, (0, 0));
    } else {
        turns(b, r.turns, false, &[], |b, k, _| {
            forward_turn(b, env, r, Turn { k: Some(k), outer });
            Vec::new()
        });
    }
}

/// One turn of the forward pass: each body node's value (kept in a register for the nodes of
/// the turn that read it) and its partials, stored as the mode says.
fn forward_turn(b: &mut FunctionBuilder, env: &Env, r: &Region, k: Turn) {
    turn_values(b, env, r, k, false);
}

/// An inline node's value and the partials of its weighted edges, as the interpreter computes
/// them (the rule table's `Add`, `Sub`, `Mul`, `Div` and `Neg`, with the form's sum for an
/// operand read twice).
fn inline(
    b: &mut FunctionBuilder,
    kernel: Kernel,
    x: Value,
    y: Value,
) -> (Value, [Option<Value>; 2]) {
    let constant = |b: &mut FunctionBuilder, w: f64| Some(b.ins().f64const(w));
    match kernel {
        Kernel::Add => (b.ins().fadd(x, y), [None; 2]),
        Kernel::Sub => (b.ins().fsub(x, y), [None; 2]),
        // 1 + 1, and 1 + (−1).
        Kernel::AddSame => (b.ins().fadd(x, y), [constant(b, 2.0), None]),
        Kernel::SubSame => (b.ins().fsub(x, y), [constant(b, 0.0), None]),
        Kernel::Neg => (b.ins().fneg(x), [None; 2]),
        // ∂/∂a = b, ∂/∂b = a.
        Kernel::MulFirst => (b.ins().fmul(x, y), [Some(y), None]),
        Kernel::MulSecond => (b.ins().fmul(x, y), [Some(x), None]),
        Kernel::MulSame => {
            let w = b.ins().fadd(y, x);
            (b.ins().fmul(x, y), [Some(w), None])
        }
        Kernel::MulBoth => (b.ins().fmul(x, y), [Some(y), Some(x)]),
        Kernel::DivFirst | Kernel::DivSecond | Kernel::DivBoth => {
            // v = a / b, r = 1 / b: ∂/∂a = r, ∂/∂b = −(v · r).
            let v = b.ins().fdiv(x, y);
            let one = b.ins().f64const(1.0);
            let rec = b.ins().fdiv(one, y);
            let t = b.ins().fmul(v, rec);
            let second = b.ins().fneg(t);
            let w = match kernel {
                Kernel::DivFirst => [Some(rec), None],
                Kernel::DivSecond => [Some(second), None],
                _ => [Some(rec), Some(second)],
            };
            (v, w)
        }
        other => unreachable!("{other:?} is not compiled inline"),
    }
}

/// The values of one turn's body nodes (`None` for an input, read from memory where needed),
/// and the partials of its inline nodes. The forward pass (`again` false) stores what the
/// mode keeps; the gradient's sweep (`again`) computes them again in registers, reading a
/// called rule's value from memory instead of calling it twice.
pub(super) fn turn_values(
    b: &mut FunctionBuilder,
    env: &Env,
    r: &Region,
    k: Turn,
    again: bool,
) -> (Vec<Option<Value>>, Vec<[Option<Value>; 2]>) {
    let mut regs: Vec<Option<Value>> = vec![None; r.period];
    let mut weights = vec![[None; 2]; r.period];
    let full = matches!(env.mode, Mode::Full);
    for j in 0..r.period {
        let node = r.start + j;
        let (nd, step): (&Node, &Index) = (&env.nodes[node], &r.step[j]);
        let at = |x: usize| (nd.at(x), (step[x], r.outer_step(j, x)));
        let (p, q) = (node as i64, (r.period as i64, r.outer_nodes()));
        let operand = |b: &mut FunctionBuilder, x: usize| {
            let (i, s) = at(x);
            match r.points(env.nodes, j, x, env.n) {
                Some(Points::Turn(t)) if regs[t].is_some() => regs[t].expect("tested"),
                _ => load(b, env.values, k, i, s),
            }
        };
        let direct = match nd.forward {
            Forward::Call {
                op,
                form: Form::First,
                ..
            } => env.unary.iter().find(|u| u.0 == op).map(|u| u.1),
            _ => None,
        };
        let value = match nd.forward {
            // (A folded sum's value is stored by its loop.)
            Forward::Input | Forward::Folded => continue,
            Forward::Inline(kernel) => {
                let x = operand(b, A);
                let y = if kernel == Kernel::Neg {
                    x
                } else {
                    operand(b, B)
                };
                let (v, w) = inline(b, kernel, x, y);
                if full && !again {
                    let (e, de) = at(E);
                    for (slot, w) in w.iter().enumerate() {
                        if let Some(w) = *w {
                            store(b, w, env.partials, k, e + slot as i64, de);
                        }
                    }
                }
                weights[j] = w;
                v
            }
            Forward::Call { .. } if again => load(b, env.values, k, p, q),
            // A gradient's `max` or `min` of one edge (the winner's, whose partial is the
            // recorded one while the node's guard holds): its value alone, called directly.
            Forward::Call {
                op: op @ (OpCode::Max | OpCode::Min),
                form: Form::First,
                ..
            } if !full => {
                let (x, y) = (operand(b, A), operand(b, B));
                let f = env.winners[usize::from(op == OpCode::Min)];
                let call = b.ins().call(f, &[x, y]);
                b.inst_results(call)[0]
            }
            // A built-in one-argument rule with its edge: its function, called directly (no
            // frame, no dispatch), with the operand in a register.
            Forward::Call { .. } if direct.is_some() => {
                let f = direct.expect("tested");
                let x = operand(b, A);
                let call = b.ins().call(f, &[x]);
                let &[v, d] = b.inst_results(call) else {
                    unreachable!("a value and a derivative")
                };
                let (e, de) = at(E);
                store(b, d, env.partials, k, e, de);
                v
            }
            Forward::Call { .. } => {
                let rule = b.ins().iconst(types::I64, (env.rule)(nd.forward));
                let mut args = [A, B, E].map(|x| index(b, k, at(x).0, at(x).1));
                if let Some((_, runs)) = pairs(env.mode, env.nodes, r, j) {
                    let e = if runs { RUNS } else { NO_PARTIALS };
                    args[2] = b.ins().iconst(types::I64, e as i64);
                }
                let at_node = index(b, k, p, q);
                let call = b.ins().call(
                    env.eval,
                    &[env.frame, rule, args[0], args[1], args[2], at_node],
                );
                b.inst_results(call)[0]
            }
        };
        if !again {
            let (keep, zero) = match env.mode {
                Mode::Full => (true, false),
                Mode::Gradient { keep, outside, .. } => {
                    let call = matches!(nd.forward, Forward::Call { .. });
                    (call || any_turn(keep, r, j), any_turn(outside, r, j))
                }
            };
            if keep {
                store(b, value, env.values, k, p, q);
            }
            if zero {
                let z = b.ins().f64const(0.0);
                store(b, z, env.adj, k, p, q);
            }
        }
        regs[j] = Some(value);
    }
    (regs, weights)
}

/// The operand pairs of a dot product whose partials a gradient does not store (one with
/// more edges than are swept inline), body node `j` of `r`: its sweep reads them from the
/// values of its operands, which the call kept (one store and one load fewer per edge); and
/// whether its sides are runs of values in every turn.
pub(super) fn pairs(mode: Mode, nodes: &[Node], r: &Region, j: usize) -> Option<(u32, bool)> {
    let nd = &nodes[r.start + j];
    match (mode, nd.forward, nd.reverse) {
        (
            Mode::Gradient { runs, .. },
            Forward::Call {
                op: OpCode::Dot,
                param,
                ..
            },
            Reverse::Call { .. },
        ) => Some((param / 2, turns_of(r, j).all(|i| runs[i]))),
        _ => None,
    }
}

/// The nodes of region `r` (over every turn of the loop around it) that are dot products read
/// as slices.
pub(super) fn sliced(mode: Mode, nodes: &[Node], r: &Region) -> usize {
    let turns = r.turns * r.outer.as_ref().map_or(1, |o| o.turns);
    (0..r.period)
        .filter(|&j| matches!(pairs(mode, nodes, r, j), Some((_, true))))
        .count()
        * turns
}

/// A rough count of the instructions of a region's two passes, to cut the code into
/// functions of a bounded size (the register allocator's time grows faster than linearly with
/// a function's size).
pub(super) fn size(nodes: &[Node], r: &Region) -> usize {
    let body: usize = (0..r.period)
        .map(|j| {
            let edges = match nodes[r.start + j].reverse {
                Reverse::Weighted(c) | Reverse::Unit(c, _) => c as usize,
                Reverse::Call { .. } => 1,
            };
            12 + 8 * edges
        })
        .sum();
    body + if r.turns > 1 { 8 } else { 0 }
}
