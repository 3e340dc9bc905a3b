//! The two functions the compiled code calls back, and the constants it passes them: `eval`
//! (a node's rule, as the interpreter evaluates it) and `sweep` (a node of many edges, as the
//! plain sweep adds its terms), with `sweep_lanes` for a vector sweep. Their `unsafe` reads the
//! frame's arrays (see `docs/unsafe.md`).

use super::frame::Frame;
use crate::jit::nodes::Forward;
use crate::storage::NEG;
use crate::storage::op_code::{OpCode, binary, unary};
use crate::storage::program::RuleFn;
use crate::storage::program::{dot, dot_value, fused, sum, write};
use crate::sweep::kernel::structural;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Node `node`'s value by its rule (the `rule`th of the frame's table), its partials written
/// from `e`: what the interpreter does for a node of that rule.
#[allow(unsafe_code)]
pub(super) extern "C" fn eval(
    frame: *const Frame<'_>,
    rule: u64,
    a: u64,
    b: u64,
    e: u64,
    node: u64,
) -> f64 {
    // SAFETY: `frame` is the frame `Code::forward` passes to the code that calls this, alive
    // for the call; while this runs, the code does not touch the arrays, so these two slices
    // are the only references to them.
    let f = unsafe { &*frame };
    let values = unsafe { core::slice::from_raw_parts_mut(f.values, f.values_len) };
    let partials = unsafe { core::slice::from_raw_parts_mut(f.partials, f.partials_len) };
    let run = || {
        let Forward::Call { op, param, .. } = f.calls[rule as usize] else {
            unreachable!("a rule evaluated by a call");
        };
        // The node's own form: that of `max` and `min` (which operand won) may differ between
        // the turns of a loop.
        let form = f.forms[node as usize];
        let (a, b, e, n) = (a as usize, b as usize, e as usize, f.nodes);
        match op {
            OpCode::Sum => sum_apart(values, &f.args[a..a + param as usize]),
            OpCode::Dot if e == RUNS as usize => {
                dot_of_runs(values, &f.args[a..a + param as usize])
            }
            OpCode::Dot if e == NO_PARTIALS as usize => {
                dot_value(values, &f.args[a..a + param as usize])
            }
            OpCode::Dot => dot(values, &f.args[a..a + param as usize], n, partials, e),
            OpCode::MulAdd => fused(values, &f.args[a..a + 3], n, partials, e),
            OpCode::Custom => {
                let k = f.rules.partition_point(|r| (r.node as u64) < node);
                match &f.rules[k].eval {
                    RuleFn::Unary(g) => {
                        let (v, dv) = g(values[a]);
                        write(partials, e, form, dv, dv);
                        v
                    }
                    RuleFn::Binary(g) => {
                        let (v, da, db) = g(values[a], values[b]);
                        write(partials, e, form, da, db);
                        v
                    }
                }
            }
            op if op.is_unary() => {
                let (v, dv) = unary(op, param, values[a]);
                write(partials, e, form, dv, dv);
                v
            }
            op => {
                let (v, da, db) = binary(op, values[a], values[b]);
                write(partials, e, form, da, db);
                v
            }
        }
    };
    // A panic may not unwind through the machine code: it is kept and resumed after it.
    catch_unwind(AssertUnwindSafe(run)).unwrap_or_else(|p| {
        f.panic.set(Some(p));
        f64::NAN
    })
}

/// The value of `max` of `a` and `b`, as the rule computes it: what a gradient's code calls
/// for a node of `max` whose winner's edge the recording kept (its partial is the recorded
/// one while the node's guard holds, so nothing else is computed).
pub(super) extern "C" fn max_value(a: f64, b: f64) -> f64 {
    binary(OpCode::Max, a, b).0
}

/// [`max_value`] of `min`.
pub(super) extern "C" fn min_value(a: f64, b: f64) -> f64 {
    binary(OpCode::Min, a, b).0
}

/// [`sum`], compiled apart: inlined into `eval`, its running sum went through the stack.
#[inline(never)]
fn sum_apart(values: &[f64], args: &[u32]) -> f64 {
    sum(values, args)
}

/// The `e` of a dot product whose partials are not stored: its sweep reads them from the
/// values of its operands ([`PAIRS`]); `RUNS` where each side's operands are consecutive
/// values (a row of constants by a vector of inputs, say), which the call reads as slices.
pub(in crate::jit) const NO_PARTIALS: u64 = u64::MAX;
pub(in crate::jit) const RUNS: u64 = u64::MAX - 1;

/// The kinds of edges [`sweep`] adds along: weighted edges from `lo` (their partials stored),
/// unit edges from `lo`, or the edges of a dot product of `count` operand pairs from `lo` in
/// the n-ary operands, each partial the value of its pair's other operand (`RUN_PAIRS`: each
/// side's operands consecutive, as for [`RUNS`]).
pub(in crate::jit) const WEIGHTED: u64 = 0;
pub(in crate::jit) const UNIT: u64 = 1;
pub(in crate::jit) const PAIRS: u64 = 2;
pub(in crate::jit) const RUN_PAIRS: u64 = 3;

/// [`dot_value`] of pairs `args` whose sides are runs of consecutive values, read as slices
/// (the same products and sums, which the compiler turns into vector instructions).
fn dot_of_runs(values: &[f64], args: &[u32]) -> f64 {
    let len = args.len() / 2;
    let (a, b) = (args[0] as usize, args[1] as usize);
    let (a, b) = (&values[a..a + len], &values[b..b + len]);
    shared_ops::dot_order(len, |j| a[j] * b[j])
}

/// The sweep of a node with many edges, whose adjoint is `a`: the plain sweep's terms, in its
/// order (a dot product's edges are its operands that are nodes, pair by pair).
#[allow(unsafe_code)]
pub(super) extern "C" fn sweep(frame: *const Frame<'_>, lo: u64, count: u64, kind: u64, a: f64) {
    // SAFETY: as in `eval`, for the adjoints, which `Code::reverse` and `Code::gradient` pass,
    // and the values, which only a gradient's sweep reads (of dot products), and only here.
    let f = unsafe { &*frame };
    let adj = unsafe { core::slice::from_raw_parts_mut(f.adj, f.adj_len) };
    let (lo, count) = (lo as usize, count as usize);
    match kind {
        UNIT => {
            for &q in &f.units[lo..lo + count] {
                adj[(q & !NEG) as usize] += if q & NEG == 0 { a } else { -a };
            }
        }
        PAIRS | RUN_PAIRS => {
            let values = unsafe { core::slice::from_raw_parts(f.values, f.values_len) };
            let (args, n) = (&f.args[lo..lo + 2 * count], f.nodes);
            let sides = (kind == RUN_PAIRS)
                .then(|| apart(args[0] as usize, args[1] as usize, count, n))
                .flatten();
            if let Some(sides) = sides {
                // Each adjoint gets one term of this node: the sides may go one after the
                // other, each a loop over slices.
                for (s, other) in sides.into_iter().flatten() {
                    let w = &values[other..other + count];
                    for (u, &w) in adj[s..s + count].iter_mut().zip(w) {
                        *u += structural(w, a, w * a);
                    }
                }
                return;
            }
            for pair in args.chunks_exact(2) {
                for (r, w) in [(pair[0], pair[1]), (pair[1], pair[0])] {
                    if (r as usize) < n {
                        let w = values[w as usize];
                        adj[r as usize] += structural(w, a, w * a);
                    }
                }
            }
        }
        _ => {
            // The partials are only read here.
            let partials = unsafe { core::slice::from_raw_parts(f.partials, f.partials_len) };
            let edges = lo..lo + count;
            for (&p, &w) in f.parents[edges.clone()].iter().zip(&partials[edges]) {
                adj[p as usize] += structural(w, a, w * a);
            }
        }
    }
}

/// [`sweep`] of the frame's `lanes` adjoints per node (a vector sweep's), node `node`'s read
/// from memory (the code stores them before the call): each lane the scalar sweep's terms.
/// Dot products of pairs are not swept by a vector sweep's code (their partials are stored).
#[allow(unsafe_code)]
pub(super) extern "C" fn sweep_lanes(
    frame: *const Frame<'_>,
    lo: u64,
    count: u64,
    kind: u64,
    node: u64,
) {
    // SAFETY: as in `sweep`, for the adjoints and the partials.
    let f = unsafe { &*frame };
    let adj = unsafe { core::slice::from_raw_parts_mut(f.adj, f.adj_len) };
    let q = f.lanes;
    let (lo, count) = (lo as usize, count as usize);
    // Every edge reaches a node before this one.
    let (before, own) = adj.split_at_mut(node as usize * q);
    let a = &own[..q];
    match kind {
        UNIT => {
            for &p in &f.units[lo..lo + count] {
                let t = &mut before[(p & !NEG) as usize * q..][..q];
                if p & NEG == 0 {
                    t.iter_mut().zip(a).for_each(|(t, &a)| *t += a);
                } else {
                    t.iter_mut().zip(a).for_each(|(t, &a)| *t += -a);
                }
            }
        }
        _ => {
            let partials = unsafe { core::slice::from_raw_parts(f.partials, f.partials_len) };
            let edges = lo..lo + count;
            for (&p, &w) in f.parents[edges.clone()].iter().zip(&partials[edges]) {
                let t = &mut before[p as usize * q..][..q];
                for (t, &a) in t.iter_mut().zip(a) {
                    *t += structural(w, a, w * a);
                }
            }
        }
    }
}

/// The sides of a dot product of `count` pairs, each side's operands consecutive from `a` and
/// `b`, to sweep: (first node, first operand of the other side) for each side of nodes, where
/// each side is all nodes or all constants (`n` nodes, the constants after them) and no node is
/// on both sides; else `None`.
fn apart(a: usize, b: usize, count: usize, n: usize) -> Option<[Option<(usize, usize)>; 2]> {
    let nodes = |s: usize| s + count <= n;
    let one_kind = [a, b].iter().all(|&s| nodes(s) || s >= n);
    let disjoint = !(nodes(a) && nodes(b)) || a + count <= b || b + count <= a;
    (one_kind && disjoint).then(|| [(a, b), (b, a)].map(|(s, o)| nodes(s).then_some((s, o))))
}
