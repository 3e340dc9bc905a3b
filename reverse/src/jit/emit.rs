//! The code of each region, as Cranelift IR: the forward pass (values and partials, node by
//! node in recording order) and the sweep (node by node in reverse), each a loop over the
//! turns of a repeated body or straight code for a single node.
//!
//! Every operation is the one the interpreter performs, in its order: `+`, `−`, `·`, `/` and
//! negation inline (Cranelift neither fuses nor reassociates them), every other rule by a call
//! to the Rust function the interpreter calls, so the bits are the interpreter's. A sweep term
//! is `w · ā`, or `−0` where `w` or `ā` is zero (the structural zero of
//! [`structural`](crate::sweep::kernel::structural), as a select).

use super::shape::{A, B, E, Forward, Index, LO, Node, PARENT, Points, Region, Reverse};
use crate::replay::compile::Kernel;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{FuncRef, InstBuilder, MemFlagsData, Value, types};
use cranelift_frontend::FunctionBuilder;

/// Byte offsets of the frame's pointers (see `machine::Frame`).
pub(super) const VALUES: i32 = 0;
pub(super) const PARTIALS: i32 = 8;
pub(super) const ADJOINTS: i32 = 16;

/// What the code of one function reads: the frame, its three arrays, and the two calls.
pub(super) struct Env<'a> {
    pub nodes: &'a [Node],
    /// The number of nodes (the constants follow them in the values).
    pub n: usize,
    pub frame: Value,
    pub values: Value,
    pub partials: Value,
    pub adj: Value,
    /// `eval(frame, rule, a, b, e, node) → value` and `sweep(frame, lo, count, unit, ā)`.
    pub eval: FuncRef,
    pub sweep: FuncRef,
    /// The index of each rule evaluated by a call, in the table the call reads.
    pub rule: &'a dyn Fn(Forward) -> i64,
}

impl Env<'_> {
    /// Loads the frame's pointers at the function's entry.
    pub fn load_pointers(b: &mut FunctionBuilder, frame: Value) -> [Value; 3] {
        let f = MemFlagsData::trusted();
        let ptr = types::I64;
        [VALUES, PARTIALS, ADJOINTS].map(|o| b.ins().load(ptr, f, frame, o))
    }
}

/// The turn counter of a loop, or none in straight code.
type Turn = Option<Value>;

/// `index + k · step` as an integer.
fn index(b: &mut FunctionBuilder, k: Turn, index: i64, step: i64) -> Value {
    match k {
        Some(k) if step != 0 => {
            let t = b.ins().imul_imm_s(k, step);
            b.ins().iadd_imm_s(t, index)
        }
        _ => b.ins().iconst(types::I64, index),
    }
}

/// The address of element `index + k · step` of the `f64` array at `base`, as a pointer and
/// an offset.
fn element(b: &mut FunctionBuilder, base: Value, k: Turn, index: i64, step: i64) -> (Value, i32) {
    let bytes = index * 8;
    let base = match k {
        Some(k) if step != 0 => {
            let t = b.ins().imul_imm_s(k, step * 8);
            b.ins().iadd(base, t)
        }
        _ => base,
    };
    match i32::try_from(bytes) {
        Ok(off) => (base, off),
        Err(_) => (b.ins().iadd_imm_s(base, bytes), 0),
    }
}

fn load(b: &mut FunctionBuilder, base: Value, k: Turn, index: i64, step: i64) -> Value {
    let (p, off) = element(b, base, k, index, step);
    b.ins().load(types::F64, MemFlagsData::trusted(), p, off)
}

fn store(b: &mut FunctionBuilder, x: Value, base: Value, k: Turn, index: i64, step: i64) {
    let (p, off) = element(b, base, k, index, step);
    b.ins().store(MemFlagsData::trusted(), x, p, off);
}

/// A loop over the `turns` of a region, forwards or backwards, with `body` emitted once.
fn turns(
    b: &mut FunctionBuilder,
    count: usize,
    backwards: bool,
    mut body: impl FnMut(&mut FunctionBuilder, Value),
) {
    let (header, inside, exit) = (b.create_block(), b.create_block(), b.create_block());
    b.append_block_param(header, types::I64);
    let first = b
        .ins()
        .iconst(types::I64, if backwards { count as i64 - 1 } else { 0 });
    b.ins().jump(header, &[first.into()]);
    b.switch_to_block(header);
    let k = b.block_params(header)[0];
    let go = if backwards {
        b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, k, 0)
    } else {
        b.ins().icmp_imm_s(IntCC::SignedLessThan, k, count as i64)
    };
    b.ins().brif(go, inside, &[], exit, &[]);
    b.switch_to_block(inside);
    b.seal_block(inside);
    body(b, k);
    let next = b.ins().iadd_imm_s(k, if backwards { -1 } else { 1 });
    b.ins().jump(header, &[next.into()]);
    b.seal_block(header);
    b.switch_to_block(exit);
    b.seal_block(exit);
}

/// The forward pass of region `r`.
pub(super) fn forward(b: &mut FunctionBuilder, env: &Env, r: &Region) {
    if r.turns == 1 {
        forward_turn(b, env, r, None);
    } else {
        turns(b, r.turns, false, |b, k| forward_turn(b, env, r, Some(k)));
    }
}

/// One turn of the forward pass: each body node's value (kept in a register for the nodes of
/// the turn that read it, and stored) and its partials (stored).
fn forward_turn(b: &mut FunctionBuilder, env: &Env, r: &Region, k: Turn) {
    let mut regs: Vec<Option<Value>> = vec![None; r.period];
    for j in 0..r.period {
        let node = r.start + j;
        let (nd, step): (&Node, &Index) = (&env.nodes[node], &r.step[j]);
        let at = |x: usize| (nd.at[x], step[x]);
        let operand = |b: &mut FunctionBuilder, x: usize| {
            let (i, s) = at(x);
            match r.points(env.nodes, j, x, env.n) {
                Some(Points::Turn(t)) if regs[t].is_some() => regs[t].expect("tested"),
                _ => load(b, env.values, k, i, s),
            }
        };
        let value = match nd.forward {
            Forward::Input => continue,
            Forward::Inline(kernel) => {
                let x = operand(b, A);
                let y = match kernel {
                    Kernel::Neg => x,
                    _ => operand(b, B),
                };
                let (e, de) = at(E);
                let partial = |b: &mut FunctionBuilder, slot: i64, w: Value| {
                    store(b, w, env.partials, k, e + slot, de)
                };
                match kernel {
                    Kernel::Add => b.ins().fadd(x, y),
                    Kernel::Sub => b.ins().fsub(x, y),
                    Kernel::AddSame | Kernel::SubSame => {
                        // 1 + 1, and 1 + (−1).
                        let w = if kernel == Kernel::AddSame { 2.0 } else { 0.0 };
                        let w = b.ins().f64const(w);
                        partial(b, 0, w);
                        if kernel == Kernel::AddSame {
                            b.ins().fadd(x, y)
                        } else {
                            b.ins().fsub(x, y)
                        }
                    }
                    Kernel::Neg => b.ins().fneg(x),
                    Kernel::MulFirst | Kernel::MulSecond | Kernel::MulSame | Kernel::MulBoth => {
                        // ∂/∂a = b, ∂/∂b = a.
                        match kernel {
                            Kernel::MulFirst => partial(b, 0, y),
                            Kernel::MulSecond => partial(b, 0, x),
                            Kernel::MulSame => {
                                let w = b.ins().fadd(y, x);
                                partial(b, 0, w)
                            }
                            _ => {
                                partial(b, 0, y);
                                partial(b, 1, x);
                            }
                        }
                        b.ins().fmul(x, y)
                    }
                    Kernel::DivFirst | Kernel::DivSecond | Kernel::DivBoth => {
                        // y = a / b, r = 1 / b: ∂/∂a = r, ∂/∂b = −(y · r).
                        let v = b.ins().fdiv(x, y);
                        let one = b.ins().f64const(1.0);
                        let rec = b.ins().fdiv(one, y);
                        let second = |b: &mut FunctionBuilder| {
                            let t = b.ins().fmul(v, rec);
                            b.ins().fneg(t)
                        };
                        match kernel {
                            Kernel::DivFirst => partial(b, 0, rec),
                            Kernel::DivSecond => {
                                let w = second(b);
                                partial(b, 0, w)
                            }
                            _ => {
                                partial(b, 0, rec);
                                let w = second(b);
                                partial(b, 1, w)
                            }
                        }
                        v
                    }
                    other => unreachable!("{other:?} is not compiled inline"),
                }
            }
            Forward::Call { .. } => {
                let rule = b.ins().iconst(types::I64, (env.rule)(nd.forward));
                let args = [A, B, E].map(|x| index(b, k, at(x).0, at(x).1));
                let at_node = index(b, k, node as i64, r.period as i64);
                let call = b.ins().call(
                    env.eval,
                    &[env.frame, rule, args[0], args[1], args[2], at_node],
                );
                b.inst_results(call)[0]
            }
        };
        store(b, value, env.values, k, node as i64, r.period as i64);
        regs[j] = Some(value);
    }
}

/// The sweep of region `r`.
pub(super) fn reverse(b: &mut FunctionBuilder, env: &Env, r: &Region) {
    if r.turns == 1 {
        reverse_turn(b, env, r, None);
    } else {
        turns(b, r.turns, true, |b, k| reverse_turn(b, env, r, Some(k)));
    }
}

/// One turn of the sweep, body nodes last to first. The adjoint of a body node that nodes of
/// the turn add to is carried in a register from its first such term (loaded then: the terms
/// of every later node are in memory already) to its own node, where it is stored; other terms
/// go to memory. A turn with a node swept by a call (which adds through memory) carries none.
fn reverse_turn(b: &mut FunctionBuilder, env: &Env, r: &Region, k: Turn) {
    let carry =
        (0..r.period).all(|j| !matches!(env.nodes[r.start + j].reverse, Reverse::Call { .. }));
    let mut acc: Vec<Option<Value>> = vec![None; r.period];
    let zero = b.ins().f64const(0.0);
    let nothing = b.ins().f64const(-0.0);
    for j in (0..r.period).rev() {
        let node = r.start + j;
        let (nd, step): (&Node, &Index) = (&env.nodes[node], &r.step[j]);
        let at = |x: usize| (nd.at[x], step[x]);
        let (p, q) = (node as i64, r.period as i64);
        let a = match acc[j].take() {
            Some(a) => {
                store(b, a, env.adj, k, p, q);
                a
            }
            None => load(b, env.adj, k, p, q),
        };
        let mut add = |b: &mut FunctionBuilder, x: usize, term: Value| {
            let (i, s) = at(x);
            match r.points(env.nodes, j, x, env.n) {
                Some(Points::Turn(t)) if carry => {
                    let sum = match acc[t] {
                        Some(sum) => sum,
                        None => load(b, env.adj, k, i, s),
                    };
                    acc[t] = Some(b.ins().fadd(sum, term));
                }
                _ => {
                    let sum = load(b, env.adj, k, i, s);
                    let sum = b.ins().fadd(sum, term);
                    store(b, sum, env.adj, k, i, s);
                }
            }
        };
        match nd.reverse {
            Reverse::Weighted(count) => {
                let a_zero = b.ins().fcmp(FloatCC::Equal, a, zero);
                let (lo, dlo) = at(LO);
                for e in 0..count as usize {
                    let w = load(b, env.partials, k, lo + e as i64, dlo);
                    let term = b.ins().fmul(w, a);
                    let w_zero = b.ins().fcmp(FloatCC::Equal, w, zero);
                    let structural = b.ins().bor(w_zero, a_zero);
                    let term = b.ins().select(structural, nothing, term);
                    add(b, PARENT + e, term);
                }
            }
            Reverse::Unit(count, neg) => {
                let minus = (neg != 0).then(|| b.ins().fneg(a));
                for e in 0..count as usize {
                    let term = if neg >> e & 1 == 1 {
                        minus.expect("made above")
                    } else {
                        a
                    };
                    add(b, PARENT + e, term);
                }
            }
            Reverse::Call { unit, count } => {
                let lo = index(b, k, at(LO).0, at(LO).1);
                let count = b.ins().iconst(types::I64, count as i64);
                let unit = b.ins().iconst(types::I64, unit as i64);
                b.ins().call(env.sweep, &[env.frame, lo, count, unit, a]);
            }
        }
    }
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
