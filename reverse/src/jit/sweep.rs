//! The code of the sweep: each region's nodes in reverse, a loop over the turns of a repeated
//! body or straight code for a single node; with one adjoint per node, or (for the vector
//! sweep) `lanes` of them, two to a vector register (`f64x2`), each lane the scalar sweep's
//! operations.
//!
//! A term is `w · ā`, or `−0` where `w` or `ā` is zero (the structural zero of
//! [`structural`](crate::sweep::kernel::structural), as a select). The vector sweep of the
//! interpreter skips a zero partial, and a zero lane where the partial is not finite; the terms
//! here add `±0` (or `−0`) there instead, which changes no adjoint: an adjoint starts at `+0`
//! and a sum that starts at `+0` is never `−0`. (A gradient's sums in registers start at their
//! first term instead, and are never stored: see `reverse_turn`.)

use super::cells::Cells;
use super::dots;
use super::emit::{Env, Mode, dot_args, known, pairs, turn_values};
use super::flags::body;
use super::ir::{Turn, index, load, load_as, load_u32, read, store, turns, turns_from};
use super::machine::{PAIRS, RUN_PAIRS, UNIT, WEIGHTED};
use super::nodes::{A, Forward, Index, LO, MAX_EDGES, Node, PARENT, Reverse};
use super::shape::{Points, Region};
use cranelift_codegen::ir::condcodes::FloatCC;
use cranelift_codegen::ir::{BlockArg, Endianness, InstBuilder, MemFlagsData, Type, Value, types};
use cranelift_frontend::FunctionBuilder;

/// An index's steps, per turn of its loop and of the loop around it.
type Step = (i64, i64);

/// An adjoint's values: one `f64`, or `lanes / 2` vectors of two lanes.
fn width(env: &Env) -> usize {
    env.lanes.div_ceil(2)
}

/// The type of an adjoint's values.
fn ty(env: &Env) -> Type {
    if env.lanes == 1 {
        types::F64
    } else {
        types::F64X2
    }
}

/// `x` in every lane of an adjoint's value.
fn splat(b: &mut FunctionBuilder, env: &Env, x: Value) -> Value {
    if env.lanes == 1 {
        x
    } else {
        b.ins().splat(types::F64X2, x)
    }
}

/// The values of adjoint `i + k · step` of region `r`'s code (lane `l` at `i · lanes + l`).
fn load_adj(
    b: &mut FunctionBuilder,
    env: &Env,
    r: &Region,
    k: Turn,
    i: i64,
    s: Step,
) -> Vec<Value> {
    let (i, s) = env.at(r, i, s);
    let (q, t) = (env.lanes as i64, ty(env));
    (0..width(env) as i64)
        .map(|v| load_as(b, t, env.adj, k, i * q + 2 * v, (s.0 * q, s.1 * q)))
        .collect()
}

/// Stores the values `v` of adjoint `i + k · step` of region `r`'s code.
fn store_adj(
    b: &mut FunctionBuilder,
    env: &Env,
    r: &Region,
    v: &[Value],
    k: Turn,
    i: i64,
    s: Step,
) {
    let (i, s) = env.at(r, i, s);
    let q = env.lanes as i64;
    for (l, &v) in (0..).zip(v) {
        store(b, v, env.adj, k, i * q + 2 * l, (s.0 * q, s.1 * q));
    }
}

/// Lane by lane, `x + y`, or `x − y` (which is `x + (−y)`, bit for bit) where `minus`.
fn add_lanes(b: &mut FunctionBuilder, x: &[Value], y: &[Value], minus: bool) -> Vec<Value> {
    let op = |b: &mut FunctionBuilder, x, y| {
        if minus {
            b.ins().fsub(x, y)
        } else {
            b.ins().fadd(x, y)
        }
    };
    x.iter().zip(y).map(|(&x, &y)| op(b, x, y)).collect()
}

/// The sweep of region `r` (in turn `outer` of the loop around it, if any).
pub(super) fn reverse(b: &mut FunctionBuilder, env: &Env, r: &Region, outer: Option<Value>) {
    // (Not within a loop of loops: a cell's class would have to hold in every outer turn. Not
    // in a vector sweep, whose cells would each carry `lanes / 2` registers between turns.)
    let cells = (r.turns > 1 && r.outer.is_none() && env.lanes == 1)
        .then(|| Cells::of(env.nodes, env.n, r))
        .flatten();
    let straight = Turn { k: None, outer };
    // A folded sum's adjoint (a gradient's, one lane): each turn's term starts from it
    // (0 + ā, ā never −0).
    let seed = r.fold.map(|(j, sum)| {
        let (at, s) = env.at(r, sum as i64, (0, 0));
        (j, load(b, env.adj, straight, at, s))
    });
    match &cells {
        None if r.turns == 1 => {
            reverse_turn(b, env, r, straight, None, &[], None);
        }
        None => {
            // From the turn of node `end − 1` (turns after it hold zero adjoints), where the
            // loop is not in a loop.
            let first = env.end.filter(|_| outer.is_none()).map(|end| {
                let t = b.ins().iadd_imm_s(end, -(r.start as i64) - 1);
                let k = b.ins().sdiv_imm_s(t, r.period as i64);
                let last = b.ins().iconst(types::I64, r.turns as i64 - 1);
                b.ins().smin(k, last)
            });
            turns_from(b, r.turns, true, first, &[], |b, k, _| {
                reverse_turn(b, env, r, Turn { k: Some(k), outer }, None, &[], seed)
            });
        }
        Some(c) => {
            // Into the first turn (k = turns − 1), each carried cell as memory holds it.
            let last = r.turns as i64;
            let init: Vec<Value> = c
                .carried
                .iter()
                .flat_map(|&i| load_adj(b, env, r, straight, c.first[i] + last * c.step[i], (0, 0)))
                .collect();
            let out = turns(b, r.turns, true, &init, |b, k, carried| {
                reverse_turn(
                    b,
                    env,
                    r,
                    Turn { k: Some(k), outer },
                    Some(c),
                    carried,
                    seed,
                )
            });
            // Out of the last turn (k = 0), each carried cell's sum.
            for (&i, v) in c.carried.iter().zip(out.chunks(width(env))) {
                store_adj(b, env, r, v, straight, c.first[i], (0, 0));
            }
        }
    }
}

/// One turn of the sweep, body nodes last to first. The adjoint of a body node that nodes of
/// the turn add to is carried in registers from its first such term (added to what memory
/// holds then: the terms of every later node) to its own node; other terms go to memory. A
/// turn with a node swept by a call (which adds through memory) carries none.
fn reverse_turn(
    b: &mut FunctionBuilder,
    env: &Env,
    r: &Region,
    k: Turn,
    cells: Option<&Cells>,
    carried: &[Value],
    seed: Option<(usize, Value)>,
) -> Vec<Value> {
    let (lanes, width) = (env.lanes, width(env));
    let carry =
        (0..r.period).all(|j| !matches!(env.nodes.get(r.start + j).reverse, Reverse::Call { .. }));
    let weights = match env.mode {
        Mode::Full => vec![[None; 2]; r.period],
        Mode::Gradient { .. } => turn_values(b, env, r, k, true).1,
    };
    // Whether body node `j`'s adjoint may hold terms (or a seed) in memory.
    let outside = |j: usize| match env.mode {
        Mode::Full => true,
        Mode::Gradient { outside, .. } => body(outside, r, j),
    };
    let mut acc: Vec<Option<Vec<Value>>> = vec![None; r.period];
    // A gradient's sum in registers starts at its first term, not at `+0 + term`: it may then
    // be `−0` where the plain sweep's is `+0`, which changes no term's NaN, and no sum it is
    // added to but in the sign of a zero (`x + ±0` is `x` for `x ≠ 0`). Such a sum is never
    // stored: the only adjoints a gradient stores from registers are the inputs', whose sums
    // start in memory (`outside`), at `+0` as the plain sweep's.
    let first_term = matches!(env.mode, Mode::Gradient { .. }) && lanes == 1;
    if let Some((j, a)) = seed {
        acc[j] = Some(vec![a]);
    }
    let zero = b.ins().f64const(0.0);
    let nothing = b.ins().f64const(-0.0);
    let (zeros, nothings) = (splat(b, env, zero), splat(b, env, nothing));
    // Per class of cells, its sum in this turn so far.
    let classes = cells.map_or(0, |c| c.step.len());
    let mut sums: Vec<Option<Vec<Value>>> = vec![None; classes];
    // What the predecessor of class `i` carried into this turn (the cell's sum from turn
    // k + 1), if it has one.
    let carried_into = |i: usize| {
        let c = cells.expect("cells");
        c.prev[i].map(|p| {
            let at = c.carried.iter().position(|&q| q == p).expect("carried");
            carried[at * width..(at + 1) * width].to_vec()
        })
    };
    for j in (0..r.period).rev() {
        let node = r.start + j;
        let (nd, step): (&Node, &Index) = (&env.nodes.get(node), &r.step[j]);
        let at = |x: usize| (nd.at(x), (step[x], r.outer_step(j, x)));
        let (p, q) = (node as i64, (r.period as i64, r.outer_nodes()));
        let input = nd.forward == Forward::Input;
        let a = match acc[j].take() {
            Some(a) => {
                if matches!(env.mode, Mode::Full) || input {
                    store_adj(b, env, r, &a, k, p, q);
                }
                a
            }
            None if outside(j) => load_adj(b, env, r, k, p, q),
            // No term reached this node: its adjoint is +0, whose terms add nothing.
            None => continue,
        };
        // Where every lane of the adjoint is zero, the node's terms add nothing: skipped, as
        // the interpreter skips them (a Jacobian's sweep seeds a few outputs, and the nodes
        // outside their cones stay zero). The sums in registers its terms add to pass to the
        // join, in both branches.
        let skip = matches!(env.mode, Mode::Full).then(|| {
            let slots = slots(env, r, j, carry, cells);
            for &(slot, i, s) in &slots {
                let (held, from) = match slot {
                    Slot::Acc(t) => (&mut acc[t], None),
                    Slot::Sum(class) => (&mut sums[class], Some(class)),
                };
                if held.is_none() {
                    let v = match from.and_then(carried_into) {
                        Some(v) => v,
                        None => load_adj(b, env, r, k, i, s),
                    };
                    *held = Some(v);
                }
            }
            let live = held(&slots, &acc, &sums);
            let (work, join) = (b.create_block(), b.create_block());
            for &v in &live {
                b.append_block_param(join, b.func.dfg.value_type(v));
            }
            // (A NaN is not zero: `NotEqual` is true for it.)
            let nonzero = |b: &mut FunctionBuilder, v: Value| {
                let ne = b.ins().fcmp(FloatCC::NotEqual, v, zeros);
                if lanes == 1 {
                    ne
                } else {
                    b.ins().vany_true(ne)
                }
            };
            let mut any = nonzero(b, a[0]);
            for &v in &a[1..] {
                let more = nonzero(b, v);
                any = b.ins().bor(any, more);
            }
            let args: Vec<BlockArg> = live.iter().map(|&v| v.into()).collect();
            b.ins().brif(any, work, &[], join, &args);
            b.switch_to_block(work);
            b.seal_block(work);
            (slots, join)
        });
        // Adds `term` (subtracts it, where `minus`) to the adjoint of index `x`.
        let mut add = |b: &mut FunctionBuilder, x: usize, term: &[Value], minus: bool| {
            let (i, s) = at(x);
            match r.points(env.nodes, j, x, env.n) {
                Some(Points::Turn(t)) if carry => {
                    let sum = match acc[t].take() {
                        Some(sum) => sum,
                        None if outside(t) => load_adj(b, env, r, k, i, s),
                        // The first term, as it is (see `first_term`).
                        None if first_term && !minus => {
                            acc[t] = Some(term.to_vec());
                            return;
                        }
                        // Added to +0 as the plain sweep adds it.
                        None => vec![zeros; width],
                    };
                    acc[t] = Some(add_lanes(b, &sum, term, minus));
                }
                _ => match cells.and_then(|c| c.of.get(&(j, x))) {
                    Some(&class) => {
                        let sum = match sums[class].take() {
                            Some(sum) => sum,
                            None => match carried_into(class) {
                                Some(v) => v,
                                None => load_adj(b, env, r, k, i, s),
                            },
                        };
                        sums[class] = Some(add_lanes(b, &sum, term, minus));
                    }
                    None => {
                        let sum = load_adj(b, env, r, k, i, s);
                        let sum = add_lanes(b, &sum, term, minus);
                        store_adj(b, env, r, &sum, k, i, s);
                    }
                },
            }
        };
        let dot = dot_args(env, r, j);
        match nd.reverse {
            Reverse::Weighted(count) => {
                let (lo, dlo) = at(LO);
                // A short dot product's: its operands' values.
                let from = dot
                    .as_ref()
                    .map(|args| dots::partials(args, env.nodes_end()));
                for e in 0..count as usize {
                    // Recomputed (inline, in a gradient; `exp`'s, its value), else as the forward
                    // pass stored it.
                    let w = match (weights[j].get(e).copied().flatten(), &from) {
                        (Some(w), _) => w,
                        (None, Some(from)) => read(b, env.values, k, from[e].0, from[e].1),
                        (None, None) => read(b, env.partials, k, lo + e as i64, dlo),
                    };
                    let w = splat(b, env, w);
                    let term: Vec<Value> = a
                        .iter()
                        .map(|&a| structural(b, env, w, a, zeros, nothings))
                        .collect();
                    add(b, PARENT + e, &term, false);
                }
            }
            Reverse::Unit(count, neg) => {
                for e in 0..count as usize {
                    add(b, PARENT + e, &a, neg >> e & 1 == 1);
                }
            }
            // A short dot product (see `dot_args`): the terms of each pair's two sides, as
            // the call below adds them, each operand's partial the other's value.
            Reverse::Call { .. } if dot.is_some() => {
                let arrays = (env.values, env.adj, env.nodes_end());
                let args = dot.as_ref().expect("tested");
                let term =
                    |b: &mut FunctionBuilder, w| structural(b, env, w, a[0], zeros, nothings);
                dots::sweep(b, arrays, k, args, term);
            }
            // A `max` or `min` whose winner may change from turn to turn: the parent of each
            // edge read from the recording's edges, the term added in memory, as the call
            // below adds it.
            Reverse::Call { unit: false, count }
                if lanes == 1
                    && count as usize <= MAX_EDGES
                    && pairs(env.mode, env.nodes, r, j).is_none() =>
            {
                let (lo, dlo) = at(LO);
                // (Within the adjoints whatever the array holds: it holds nodes.)
                let last = b.ins().iconst(types::I64, env.nodes_end() as i64 - 1);
                let f = MemFlagsData::trusted();
                for e in 0..i64::from(count) {
                    let w = read(b, env.partials, k, lo + e, dlo);
                    let term = structural(b, env, w, a[0], zeros, nothings);
                    let q = load_u32(b, env.parents, k, lo + e, dlo);
                    let q = b.ins().umin(q, last);
                    let bytes = b.ins().ishl_imm_u(q, 3);
                    let at_q = b.ins().iadd(env.adj, bytes);
                    let sum = b.ins().load(types::F64, f, at_q, 0);
                    let sum = b.ins().fadd(sum, term);
                    b.ins().store(f, sum, at_q, 0);
                }
            }
            Reverse::Call { unit, count } => {
                let (lo, count, kind) = match env.pairs(r, j) {
                    Some((pairs, runs)) => (at(A), pairs, if runs { RUN_PAIRS } else { PAIRS }),
                    None => (at(LO), count, if unit { UNIT } else { WEIGHTED }),
                };
                let lo = index(b, k, lo.0, lo.1);
                let count = b.ins().iconst(types::I64, count as i64);
                let kind = b.ins().iconst(types::I64, kind as i64);
                if lanes == 1 {
                    b.ins().call(env.sweep, &[env.frame, lo, count, kind, a[0]]);
                } else {
                    // The node's lanes are in memory (stored or loaded above): the call reads
                    // them there.
                    let at_node = index(b, k, p, q);
                    b.ins()
                        .call(env.sweep_lanes, &[env.frame, lo, count, kind, at_node]);
                }
            }
        }
        if let Some((slots, join)) = skip {
            let live: Vec<BlockArg> = held(&slots, &acc, &sums)
                .into_iter()
                .map(Into::into)
                .collect();
            b.ins().jump(join, &live);
            b.switch_to_block(join);
            b.seal_block(join);
            let mut params = b.block_params(join).to_vec().into_iter();
            for &(slot, ..) in &slots {
                let held = match slot {
                    Slot::Acc(t) => &mut acc[t],
                    Slot::Sum(class) => &mut sums[class],
                };
                *held = Some(params.by_ref().take(width).collect());
            }
        }
    }
    // Each class's cell: carried into the next turn where its successor continues it, else
    // stored (if this turn added to it, or carried a sum into it).
    let Some(c) = cells else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(c.carried.len() * width);
    let mut finals: Vec<Option<Vec<Value>>> = vec![None; classes];
    for i in 0..classes {
        finals[i] = sums[i].take().or_else(|| carried_into(i));
        if c.next[i].is_none()
            && let Some(v) = &finals[i]
        {
            store_adj(b, env, r, v, k, c.first[i], (c.step[i], 0));
        }
    }
    for &i in &c.carried {
        match &finals[i] {
            Some(v) => out.extend_from_slice(v),
            None => out.extend(load_adj(b, env, r, k, c.first[i], (c.step[i], 0))),
        }
    }
    out
}

/// A sum a turn holds in registers: of a body node's adjoint, or of a class of cells.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    Acc(usize),
    Sum(usize),
}

/// The sums in registers that body node `j`'s terms add to, each once, with the index of its
/// adjoint (as `reverse_turn`'s `add` finds them).
fn slots(
    env: &Env,
    r: &Region,
    j: usize,
    carry: bool,
    cells: Option<&Cells>,
) -> Vec<(Slot, i64, Step)> {
    let nd = env.nodes.get(r.start + j);
    let mut out: Vec<(Slot, i64, Step)> = Vec::new();
    for x in nd.parents() {
        let slot = match r.points(env.nodes, j, x, env.n) {
            Some(Points::Turn(t)) if carry => Slot::Acc(t),
            _ => match cells.and_then(|c| c.of.get(&(j, x))) {
                Some(&class) => Slot::Sum(class),
                None => continue,
            },
        };
        if out.iter().all(|o| o.0 != slot) {
            out.push((slot, nd.at(x), (r.step[j][x], r.outer_step(j, x))));
        }
    }
    out
}

/// The values of `slots`, lane by lane.
fn held(
    slots: &[(Slot, i64, Step)],
    acc: &[Option<Vec<Value>>],
    sums: &[Option<Vec<Value>>],
) -> Vec<Value> {
    slots
        .iter()
        .flat_map(|&(slot, ..)| {
            match slot {
                Slot::Acc(t) => &acc[t],
                Slot::Sum(class) => &sums[class],
            }
            .clone()
            .expect("held before the branch")
        })
        .collect()
}

/// The term `w · ā` of a weighted edge, or `−0` (nothing) where `w` or `ā` is zero: the
/// structural zero of the rule table, so that `0 · ∞` adds nothing. Where the product is not
/// NaN, a zero factor makes it `±0`, which adds nothing to an adjoint either (never `−0`): so
/// only a NaN product is tested, on a cold path. Lane by lane for vectors of two lanes.
fn structural(
    b: &mut FunctionBuilder,
    env: &Env,
    w: Value,
    a: Value,
    zero: Value,
    nothing: Value,
) -> Value {
    let t = b.func.dfg.value_type(a);
    let x = b.ins().fmul(w, a);
    // A finite, non-zero constant weight: the product is NaN only where `ā` is, and then so
    // is the term.
    if known(env, b, w).is_some_and(|w| w.is_finite() && w != 0.0) {
        return x;
    }
    let nan = b.ins().fcmp(FloatCC::Unordered, x, x);
    let nan = if t.is_vector() {
        b.ins().vany_true(nan)
    } else {
        nan
    };
    let (cold, join) = (b.create_block(), b.create_block());
    b.append_block_param(join, t);
    b.set_cold_block(cold);
    b.ins().brif(nan, cold, &[], join, &[x.into()]);
    b.switch_to_block(cold);
    b.seal_block(cold);
    let w_zero = b.ins().fcmp(FloatCC::Equal, w, zero);
    let a_zero = b.ins().fcmp(FloatCC::Equal, a, zero);
    let zero_factor = b.ins().bor(w_zero, a_zero);
    let term = if t.is_vector() {
        // The lanes' masks as the lanes' bits.
        let mask = b.ins().bitcast(
            t,
            MemFlagsData::new().with_endianness(Endianness::Little),
            zero_factor,
        );
        b.ins().bitselect(mask, nothing, x)
    } else {
        b.ins().select(zero_factor, nothing, x)
    };
    b.ins().jump(join, &[term.into()]);
    b.switch_to_block(join);
    b.seal_block(join);
    b.block_params(join)[0]
}
