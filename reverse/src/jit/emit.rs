//! The code of each region's forward pass, as Cranelift IR: values and partials, node by node
//! in recording order, a loop over the turns of a repeated body or straight code for a single
//! node; and what the sweep's code ([`sweep`](super::sweep)) shares with it: the environment,
//! the mode, the values of a turn.
//!
//! Every operation is the one the interpreter performs, in its order: `+`, `−`, `·`, `/` and
//! negation inline (Cranelift neither fuses nor reassociates them), a gradient's dot products
//! of a few pairs summed inline in the order of the function the interpreter calls, every other
//! rule by a call to that function, so the bits are the interpreter's. A division by a constant
//! power of two is a multiplication by its reciprocal, the same number. A sweep term is
//! `w · ā`, or `−0` where `w` or `ā` is zero (the structural zero of
//! [`structural`](crate::sweep::kernel::structural), as a select; for a finite non-zero
//! constant `w`, a zero `ā` gives `±0` instead, which adds nothing to any adjoint).

use super::dots;
use super::flags::body;
use super::ir::{
    ADJOINTS, PARENTS, PARTIALS, Turn, VALUES, immediate, index, load, read, store, turns,
};
use super::machine::{NO_PARTIALS, RUNS};
use super::nodes::{A, B, E, Forward, Index, Node, Nodes, Reverse};
use super::shape::{Points, Region};
use super::slots::Slots;
use crate::replay::compile::Kernel;
use crate::storage::op_code::OpCode;
use crate::storage::program::Form;
use core::cell::RefCell;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{FuncRef, InstBuilder, MemFlagsData, Value, types};
use cranelift_frontend::FunctionBuilder;
use rustc_hash::FxHashMap as HashMap;

/// An index's steps, per turn of its loop and of the loop around it.
type Step = (i64, i64);

/// What the code of one function reads: the frame, its four arrays, the recording's constants
/// and n-ary operands, and the calls.
pub(super) struct Env<'a> {
    pub nodes: &'a Nodes,
    /// The number of nodes (the constants follow them in the values).
    pub n: usize,
    /// The values when compiled: the constants (after the nodes) are the recording's, fixed.
    pub recorded: &'a [f64],
    /// The operands of the n-ary nodes (indices into the values), as the code reads them.
    pub args: &'a [u32],
    /// The constants the code has loaded so far, by the value that holds each (see
    /// [`constant`]).
    pub constants: RefCell<HashMap<Value, f64>>,
    pub frame: Value,
    pub values: Value,
    pub partials: Value,
    pub adj: Value,
    /// The recording's parents (see [`PARENTS`]).
    pub parents: Value,
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
    /// A gradient's slots (see [`slots`](super::slots)), or none: values and adjoints by node.
    pub slots: Option<&'a Slots>,
}

impl Env<'_> {
    /// Where the code of region `r` finds line `(i, s)` of the values and the adjoints: the
    /// line itself (by node), or its slots.
    pub fn at(&self, r: &Region, i: i64, s: Step) -> (i64, Step) {
        match self.slots {
            Some(slots) => slots.line(r, (i, s)),
            None => (i, s),
        }
    }

    /// Where the constants start in the values (after the nodes, or after the slots): the
    /// value indices below it are nodes.
    pub fn nodes_end(&self) -> usize {
        self.slots.map_or(self.n, Slots::count)
    }

    /// [`pairs`] of body node `j` of `r`, as the code reads them (see [`read_pairs`]).
    pub fn pairs(&self, r: &Region, j: usize) -> Option<(u32, bool)> {
        read_pairs(self.mode, self.nodes, (self.args, self.slots), r, j)
    }

    /// Loads the frame's pointers at the function's entry.
    pub fn load_pointers(b: &mut FunctionBuilder, frame: Value) -> [Value; 4] {
        let f = MemFlagsData::trusted();
        let ptr = types::I64;
        [VALUES, PARTIALS, ADJOINTS, PARENTS].map(|o| b.ins().load(ptr, f, frame, o))
    }
}

/// What the code computes.
#[derive(Clone, Copy)]
pub(super) enum Mode<'a> {
    /// Every value, partial and adjoint, into the recording's arrays: re-evaluation and the
    /// sweep from any seeds.
    Full,
    /// A gradient: only the values read from memory (`keep`) are stored, partials of inline
    /// arithmetic are recomputed in the sweep from the turn's values, and only the adjoints
    /// that receive a term through memory (`outside`: zeroed by the forward pass) are in
    /// memory; the inputs' final adjoints are stored. Each flag is a body node's, over all
    /// its turns, at its first turn's node: read them through [`body`] only.
    Gradient {
        keep: &'a [bool],
        outside: &'a [bool],
        /// Whether a dot product's sides are runs of consecutive values in every turn.
        runs: &'a [bool],
    },
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
        let (at, s) = env.at(r, sum as i64, (0, 0));
        store(b, total[0], env.values, here, at, s);
        // Its adjoint starts at zero (the seeds and later terms are added in memory).
        let zero = b.ins().f64const(0.0);
        store(b, zero, env.adj, here, at, s);
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

/// Operand `x` of body node `j` of `r`, where it is a constant and the same number (bit for
/// bit) in every turn: the code loads it from one address in every turn, and knows it (a
/// multiplication by it needs no test for `0 · ∞`). Loaded, not an immediate: an `f64`
/// immediate takes two instructions where a load folds into the arithmetic that reads it.
fn constant(env: &Env, r: &Region, j: usize, x: usize) -> Option<f64> {
    let first = env.nodes.get(r.start + j).at(x);
    let (step, outer) = (r.step[j][x], r.outer_step(j, x));
    let outers = r.outer.as_ref().map_or(1, |o| o.turns) as i64;
    let n = env.n as i64;
    let c = *env
        .recorded
        .get(usize::try_from(first).ok().filter(|_| first >= n)?)?;
    let same = (0..outers).all(|o| {
        (0..r.turns as i64).all(|k| {
            let i = first + k * step + o * outer;
            i >= n
                && env
                    .recorded
                    .get(i as usize)
                    .is_some_and(|v| v.to_bits() == c.to_bits())
        })
    });
    same.then_some(c)
}

/// Whether `x` is `±2ᵏ`, a normal number.
fn power_of_two(x: f64) -> bool {
    x.is_normal() && x.to_bits() & ((1 << 52) - 1) == 0
}

/// The number `v` is, where the code holds a constant in it (an immediate, or a constant
/// operand it loaded).
pub(super) fn known(env: &Env, b: &FunctionBuilder, v: Value) -> Option<f64> {
    immediate(b, v).or_else(|| env.constants.borrow().get(&v).copied())
}

/// An inline node's value and the partials of its weighted edges, as the interpreter computes
/// them (the rule table's `Add`, `Sub`, `Mul`, `Div` and `Neg`, with the form's sum for an
/// operand read twice).
fn inline(
    b: &mut FunctionBuilder,
    env: &Env,
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
            // v = a / b, r = 1 / b: ∂/∂a = r, ∂/∂b = −(v · r) (r computed here for a
            // constant b: the same division). Where b is a power of two whose reciprocal is
            // one too, a / b is a · r exactly (both round the same real number), and a
            // multiplication is several times cheaper than a division.
            let c = known(env, b, y);
            let rec = match c {
                Some(c) => b.ins().f64const(1.0 / c),
                None => {
                    let one = b.ins().f64const(1.0);
                    b.ins().fdiv(one, y)
                }
            };
            let v = match c {
                Some(c) if power_of_two(c) && power_of_two(1.0 / c) => b.ins().fmul(x, rec),
                _ => b.ins().fdiv(x, y),
            };
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

/// `max(x, y)` (`min` where not `max`) as the rule's `f64::max` computes it: the greater
/// (lesser) of the two, the other where one is NaN, either where they are equal and of the
/// same bits. Where they are equal in value but not in bits (`+0` and `−0`, whose order Rust
/// leaves to the processor) the rule's function `f` is called, on a cold path.
fn extreme(b: &mut FunctionBuilder, max: bool, (x, y): (Value, Value), f: FuncRef) -> Value {
    let wins = b.ins().fcmp(
        if max {
            FloatCC::GreaterThan
        } else {
            FloatCC::LessThan
        },
        x,
        y,
    );
    let y_nan = b.ins().fcmp(FloatCC::Unordered, y, y);
    let take_x = b.ins().bor(wins, y_nan);
    let v = b.ins().select(take_x, x, y);
    let equal = b.ins().fcmp(FloatCC::Equal, x, y);
    let flags = MemFlagsData::new();
    let (xb, yb) = (
        b.ins().bitcast(types::I64, flags, x),
        b.ins().bitcast(types::I64, flags, y),
    );
    let other_bits = b.ins().icmp(IntCC::NotEqual, xb, yb);
    let zeros = b.ins().band(equal, other_bits);
    let (cold, join) = (b.create_block(), b.create_block());
    b.append_block_param(join, types::F64);
    b.set_cold_block(cold);
    b.ins().brif(zeros, cold, &[], join, &[v.into()]);
    b.switch_to_block(cold);
    b.seal_block(cold);
    let call = b.ins().call(f, &[x, y]);
    let called = b.inst_results(call)[0];
    b.ins().jump(join, &[called.into()]);
    b.switch_to_block(join);
    b.seal_block(join);
    b.block_params(join)[0]
}

/// The values of one turn's body nodes (`None` for an input, read from memory where needed),
/// and the partials of its inline nodes (and of `exp`, its value). The forward pass (`again`
/// false) stores what the mode keeps; the gradient's sweep (`again`) computes them again in
/// registers, reading a called rule's value from memory instead of calling it twice.
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
        let (nd, step): (&Node, &Index) = (&env.nodes.get(node), &r.step[j]);
        let at = |x: usize| (nd.at(x), (step[x], r.outer_step(j, x)));
        let (p, q) = (node as i64, (r.period as i64, r.outer_nodes()));
        let operand = |b: &mut FunctionBuilder, x: usize| {
            let (i, s) = at(x);
            match r.points(env.nodes, j, x, env.n) {
                Some(Points::Turn(t)) if regs[t].is_some() => regs[t].expect("tested"),
                _ => match constant(env, r, j, x) {
                    // From the first turn's slot: one address for every turn.
                    Some(c) => {
                        let (i, s) = env.at(r, i, (0, 0));
                        let v = read(b, env.values, k, i, s);
                        env.constants.borrow_mut().insert(v, c);
                        v
                    }
                    // (The sweep writes no value.)
                    None if again => {
                        let (i, s) = env.at(r, i, s);
                        read(b, env.values, k, i, s)
                    }
                    None => {
                        let (i, s) = env.at(r, i, s);
                        load(b, env.values, k, i, s)
                    }
                },
            }
        };
        let direct = (nd.forward.direct()).map(|op| {
            let f = env.unary.iter().find(|u| u.0 == op);
            f.expect("every built-in one-argument rule is declared").1
        });
        let dot = if again { None } else { dot_args(env, r, j) };
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
                let (v, w) = inline(b, env, kernel, x, y);
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
            Forward::Call { .. } if again => {
                let (p, q) = env.at(r, p, q);
                let v = read(b, env.values, k, p, q);
                if nd.forward.partial_is_value() {
                    weights[j] = [Some(v), None];
                }
                v
            }
            // A short dot product: its terms summed here (see `dots`).
            Forward::Call { .. } if dot.is_some() => {
                dots::value(b, env.values, k, dot.as_ref().expect("tested"))
            }
            // A gradient's `max` or `min` of one edge (the winner's, whose partial is the
            // recorded one while the node's guard holds): its value alone (see `extreme`).
            Forward::Call {
                op: op @ (OpCode::Max | OpCode::Min),
                form: Form::First,
                ..
            } if !full => {
                let (x, y) = (operand(b, A), operand(b, B));
                let f = env.winners[usize::from(op == OpCode::Min)];
                extreme(b, op == OpCode::Max, (x, y), f)
            }
            // A built-in one-argument rule with its edge: its function, called directly (no
            // frame, no dispatch), with the operand in a register (loaded where the turn does
            // not compute it).
            Forward::Call { .. } if direct.is_some() => {
                let f = direct.expect("tested");
                let x = operand(b, A);
                let call = b.ins().call(f, &[x]);
                let &[v, d] = b.inst_results(call) else {
                    unreachable!("a value and a derivative")
                };
                // (A gradient's sweep reads the value where it is the partial.)
                if full || !nd.forward.partial_is_value() {
                    let (e, de) = at(E);
                    store(b, d, env.partials, k, e, de);
                }
                v
            }
            Forward::Call { .. } => {
                let rule = b.ins().iconst(types::I64, (env.rule)(nd.forward));
                let mut args = [A, B, E].map(|x| index(b, k, at(x).0, at(x).1));
                // A call reads its operands by value index: as slots, where the code has
                // them (an n-ary node's `a` is an index into its operands). A user's rule may
                // take one argument: where its second names no slot, it gets an index past
                // the values, which it would not read silently.
                if let (Some(slots), Forward::Call { op, form, .. }) = (env.slots, nd.forward)
                    && form != Form::Many
                {
                    let (i, s) = env.at(r, at(A).0, at(A).1);
                    args[0] = index(b, k, i, s);
                    let second = match op {
                        OpCode::Custom => slots.try_line(r, at(B)),
                        op if op.is_unary() => None,
                        _ => Some(env.at(r, at(B).0, at(B).1)),
                    };
                    args[1] = match second {
                        Some((i, s)) => index(b, k, i, s),
                        None => b.ins().iconst(types::I64, i64::from(u32::MAX)),
                    };
                }
                if let Some((_, runs)) = env.pairs(r, j) {
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
                    // Every call's value: the sweep reads it instead of calling again (and
                    // reads `exp`'s as its partial).
                    let call = matches!(nd.forward, Forward::Call { .. });
                    (call || body(keep, r, j), body(outside, r, j))
                }
            };
            let (p, q) = if keep || zero {
                env.at(r, p, q)
            } else {
                (p, q)
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
pub(super) fn pairs(mode: Mode, nodes: &Nodes, r: &Region, j: usize) -> Option<(u32, bool)> {
    let nd = nodes.get(r.start + j);
    match (mode, nd.forward, nd.reverse) {
        (
            Mode::Gradient { runs, .. },
            Forward::Call {
                op: OpCode::Dot,
                param,
                ..
            },
            Reverse::Call { .. },
        ) => Some((param / 2, body(runs, r, j))),
        _ => None,
    }
}

/// The operands of body node `j` of `r` (see [`dots::line`]), where it is a dot product that
/// a gradient's code computes itself: of at most [`dots::INLINE_PAIRS`] pairs, not runs (which
/// are read as slices), in a gradient of one adjoint per node. Its code sweeps it too: pair by
/// pair, or where it has few enough edges to be swept as weighted edges, so, each partial read
/// from the operand it is (see [`dots::partials`]); it stores none. As the code indexes the
/// values: by node, or by slot (where those below [`Env::nodes_end`] are nodes).
pub(super) fn dot_args(env: &Env, r: &Region, j: usize) -> Option<Vec<dots::Arg>> {
    let arrays = (env.n, env.recorded.len(), env.args);
    let args = short_dot(env.mode, env.lanes, env.nodes, arrays, r, j)?;
    Some(args.into_iter().map(|(i, s)| env.at(r, i, s)).collect())
}

/// [`dot_args`], given the mode, the lanes, the nodes and `(n, values, args)` (as
/// [`dots::line`] takes them).
pub(super) fn short_dot(
    mode: Mode,
    lanes: usize,
    nodes: &Nodes,
    arrays: (usize, usize, &[u32]),
    r: &Region,
    j: usize,
) -> Option<Vec<dots::Arg>> {
    let nd = nodes.get(r.start + j);
    let param = match (mode, nd.forward) {
        (
            Mode::Gradient { .. },
            Forward::Call {
                op: OpCode::Dot,
                param,
                ..
            },
        ) if lanes == 1 && param <= 2 * dots::INLINE_PAIRS => param,
        _ => return None,
    };
    let weighted = match nd.reverse {
        Reverse::Weighted(count) => Some(count as usize),
        _ if pairs(mode, nodes, r, j) == Some((param / 2, false)) => None,
        _ => return None,
    };
    let args = dots::line(nodes, r, j, i64::from(param), arrays)?;
    // One partial per operand that is a node: as many as the edges.
    let edges = args.iter().filter(|a| a.0 < arrays.0 as i64).count();
    weighted.is_none_or(|count| count == edges).then_some(args)
}

/// [`pairs`] of body node `j` of `r` as code that reads the values by `slots` (given the
/// n-ary operands `args`) reads them: a side that is a run of nodes is read as a slice only
/// where their slots are consecutive too, in every turn (else pair by pair, to the same bits).
pub(super) fn read_pairs(
    mode: Mode,
    nodes: &Nodes,
    (args, slots): (&[u32], Option<&Slots>),
    r: &Region,
    j: usize,
) -> Option<(u32, bool)> {
    let (count, runs) = pairs(mode, nodes, r, j)?;
    let Some(slots) = slots.filter(|_| runs && count > 1) else {
        return Some((count, runs));
    };
    let nd = nodes.get(r.start + j);
    let (a, step, outer) = (nd.at(A), r.step[j][A], r.outer_step(j, A));
    let outers = r.outer.as_ref().map_or(1, |o| o.turns) as i64;
    let runs = (0..outers).all(|o| {
        (0..r.turns as i64).all(|k| {
            let at = (a + k * step + o * outer) as usize;
            args[at..at + 2].iter().all(|&first| {
                let side = slots.over((i64::from(first), (1, 0)), count as usize, 1);
                side.is_some_and(|(_, (s, _))| s == 1)
            })
        })
    });
    Some((count, runs))
}

/// The nodes of region `r` (over every turn of the loop around it) that are dot products read
/// as slices, by code that reads the values by `slots` (see [`read_pairs`]).
pub(super) fn sliced(
    mode: Mode,
    nodes: &Nodes,
    arrays: (&[u32], Option<&Slots>),
    r: &Region,
) -> usize {
    let turns = r.turns * r.outer.as_ref().map_or(1, |o| o.turns);
    (0..r.period)
        .filter(|&j| matches!(read_pairs(mode, nodes, arrays, r, j), Some((_, true))))
        .count()
        * turns
}

/// A rough count of the instructions of a region's two passes, to cut the code into
/// functions of a bounded size (the register allocator's time grows faster than linearly with
/// a function's size).
pub(super) fn size(nodes: &Nodes, r: &Region) -> usize {
    let body: usize = (0..r.period)
        .map(|j| {
            let nd = nodes.get(r.start + j);
            let edges = match (nd.reverse, nd.forward) {
                (Reverse::Weighted(c) | Reverse::Unit(c, _), _) => c as usize,
                // (A short dot product may be computed and swept inline.)
                (
                    Reverse::Call { .. },
                    Forward::Call {
                        op: OpCode::Dot,
                        param,
                        ..
                    },
                ) if param <= 2 * dots::INLINE_PAIRS => param as usize,
                (Reverse::Call { .. }, _) => 1,
            };
            12 + 8 * edges
        })
        .sum();
    body + if r.turns > 1 { 8 } else { 0 }
}
