//! What a compiled gradient's code must keep in memory, and what it may leave in registers:
//! the flags of each node's value and adjoint, the sums its loops add up as they go, and the
//! dot products it reads as slices.

use super::nodes::{A, Forward, LO, Nodes, Reverse};
use super::pages;
use super::shape::{self, Region};
use crate::storage::TapeData;
use crate::storage::program::Program;
use rustc_hash::FxHashMap as HashMap;

/// For the gradient of node `y`: which values must be in memory (`keep`: read through memory,
/// by a call or by a guard, and `y`'s), and which adjoints may receive a term through memory
/// (`outside`: added to by another turn or region or by a call, the inputs and `y`).
pub(super) fn gradient_flags(
    d: &TapeData<f64>,
    p: &Program<f64>,
    nodes: &Nodes,
    regions: &[Region],
    y: u32,
) -> (Vec<bool>, Vec<bool>) {
    use crate::storage::guard::Kind;
    use crate::storage::program::CONST;
    use shape::Points;
    let n = nodes.len();
    let (mut keep, mut outside) = (pages::filled(n, false), pages::filled(n, false));
    let mark = |flags: &mut Vec<bool>, r: u32| {
        if r & CONST == 0 && (r as usize) < n {
            flags[r as usize] = true;
        }
    };
    mark(&mut keep, y);
    mark(&mut outside, y);
    for g in &p.guards {
        match g.kind {
            Kind::Compare { a, b, .. } => {
                mark(&mut keep, a);
                mark(&mut keep, b);
            }
            Kind::Test { a, .. } => mark(&mut keep, a),
            Kind::Piece { node } => {
                let [a, b] = p.operands[node as usize];
                mark(&mut keep, node);
                mark(&mut keep, a);
                mark(&mut keep, b);
            }
        }
    }
    // Per body node of each region, what its kind asks in every turn, and what the compiled
    // code reads from memory turn by turn (a node's kind and the steps of its indices are
    // those of its body node).
    for r in regions {
        let carry =
            (0..r.period).all(|j| !matches!(nodes.get(r.start + j).reverse, Reverse::Call { .. }));
        for j in 0..r.period {
            let nd = nodes.get(r.start + j);
            let turns = (0..r.turns).map(|k| r.start + k * r.period + j);
            match nd.forward {
                // An input's adjoint is the gradient; a folded sum's is read by its loop.
                Forward::Input | Forward::Folded => turns.clone().for_each(|i| outside[i] = true),
                // A rule called directly reads its operand from a register where the turn
                // computes it (an input of the turn is in memory anyway; an operand from
                // outside the turn is kept, as below).
                f @ Forward::Call { .. }
                    if f.direct().is_some()
                        && matches!(r.points(nodes, j, A, n), Some(Points::Turn(_))) => {}
                // A call reads its operands from memory.
                Forward::Call { op, form, param } => {
                    for i in turns.clone() {
                        let [a, b] = p.operands[i];
                        if form == crate::storage::program::Form::Many {
                            for &r in &p.args[a as usize..(a + param) as usize] {
                                mark(&mut keep, r);
                            }
                        } else {
                            mark(&mut keep, a);
                            if op != crate::storage::op_code::OpCode::Powi {
                                mark(&mut keep, b);
                            }
                        }
                    }
                }
                Forward::Inline(_) => {}
            }
            // A call's sweep adds through memory.
            if let Reverse::Call { unit, count } = nd.reverse {
                for k in 0..r.turns {
                    let lo = (nd.at(LO) + k as i64 * r.step[j][LO]) as usize;
                    let edges = lo..lo + count as usize;
                    let reached = if unit {
                        &d.units()[edges]
                    } else {
                        &d.parents()[edges]
                    };
                    for &q in reached {
                        mark(&mut outside, q & !crate::storage::NEG);
                    }
                }
            }
            let memory = |x: usize| !matches!(r.points(nodes, j, x, n), Some(Points::Turn(_)));
            let operands: Vec<usize> = nd
                .operands()
                .iter()
                .copied()
                .filter(|&x| memory(x))
                .collect();
            let parents: Vec<usize> = nd.parents().filter(|&x| !carry || memory(x)).collect();
            for k in 0..r.turns as i64 {
                let at = |x: usize| nd.at(x) + k * r.step[j][x];
                for &x in &operands {
                    if (at(x) as usize) < n {
                        keep[at(x) as usize] = true;
                    }
                }
                for &x in &parents {
                    outside[at(x) as usize] = true;
                }
            }
        }
    }
    (keep, outside)
}

/// Body node `j` of `r`'s entry of a flag made a body node's by [`over_turns`]: one code
/// serves all its turns, so the flags hold per body node, at the node of its first turn.
pub(super) fn body(flag: &[bool], r: &Region, j: usize) -> bool {
    flag[r.start + j]
}

/// Makes each of `flags` a body node's (see [`body`]): at the node of each body node's
/// first turn, in every region of `nests`, whether it holds in any of its turns (in every
/// one, for `all`).
pub(super) fn over_turns(flag: &mut [bool], nests: &[shape::Nest], all: bool) {
    for r in nests.iter().flat_map(|nest| &nest.regions) {
        let (outer, step) = (r.outer.as_ref()).map_or((1, 0), |o| (o.turns, o.nodes as usize));
        for j in 0..r.period {
            let mut turns = (0..outer).flat_map(|o| {
                let first = r.start + o * step + j;
                (0..r.turns).map(move |k| first + k * r.period)
            });
            flag[r.start + j] = if all {
                turns.all(|i| flag[i])
            } else {
                turns.any(|i| flag[i])
            };
        }
    }
}

/// Folds into their loops the sums of one body node over every turn (see `Region::fold`):
/// where a loop of the top level (not in a loop of loops) has a body node read only by one
/// sum node, itself a region of its own, whose operands are exactly that node's values turn by
/// turn, and none of them is the output `y` (whose seed is another term).
pub(super) fn fold_sums(
    d: &TapeData<f64>,
    p: &Program<f64>,
    nodes: &mut Nodes,
    nests: &mut [shape::Nest],
    y: u32,
) {
    use crate::storage::op_code::OpCode;
    use crate::storage::program::CONST;
    // How many edges reach each node (two standing for more): a body node the sum reads is
    // read by it alone where one edge reaches it, the sum's (its unit edges are its operands).
    let mut reached = pages::filled(nodes.len(), 0u8);
    for &u in d.parents().iter().chain(d.units()) {
        let r = &mut reached[(u & !crate::storage::NEG) as usize];
        *r = (*r + 1).min(2);
    }
    // The sums that are regions of their own at the top level, by their first operand.
    let mut sums: HashMap<u32, usize> = HashMap::default();
    for nest in nests.iter() {
        if let [r] = &nest.regions[..]
            && nest.turns == 1
            && r.turns == 1
            && let Forward::Call {
                op: OpCode::Sum,
                param,
                ..
            } = nodes.get(r.start).forward
            && param > 0
        {
            let a = p.operands[r.start][0];
            sums.insert(p.args[a as usize], r.start);
        }
    }
    for nest in nests.iter_mut().filter(|nest| nest.turns == 1) {
        let [r] = &mut nest.regions[..] else { continue };
        if r.turns < 2 {
            continue;
        }
        let found = (0..r.period).find_map(|j| {
            let sum = *sums.get(&((r.start + j) as u32))?;
            let nd = nodes.get(sum);
            let units = match nd.reverse {
                Reverse::Unit(c, 0) => c as usize,
                Reverse::Call { unit: true, count } => count as usize,
                _ => 0,
            };
            let ok = sum >= r.nodes().end
                && matches!(nd.forward, Forward::Call { param, .. } if param as usize == r.turns)
                && units == r.turns
                && (0..r.turns).all(|k| {
                    let t = r.start + k * r.period + j;
                    reached[t] == 1 && t != y as usize
                })
                && {
                    let [a, len] = p.operands[sum];
                    let args = &p.args[a as usize..(a + len) as usize];
                    args.iter()
                        .enumerate()
                        .all(|(k, &x)| x & CONST == 0 && x as usize == r.start + k * r.period + j)
                };
            ok.then_some((j, sum))
        });
        if let Some((j, sum)) = found {
            r.fold = Some((j, sum));
            nodes.set_kind(sum, (Forward::Folded, Reverse::Unit(0, 0)));
        }
    }
}

/// Per node, whether it is a dot product whose pairs' operands are consecutive on each side
/// (`a + j` and `b + j` in pair j): its call reads them as two slices.
pub(super) fn dot_runs(p: &Program<f64>, nodes: &Nodes) -> Vec<bool> {
    let runs = |args: &[u32]| {
        let (a, b) = (args[0], args[1]);
        (0u32..)
            .zip(args.chunks_exact(2))
            .all(|(j, q)| q[0] == a.wrapping_add(j) && q[1] == b.wrapping_add(j))
    };
    // Each kind's count of operands where it is a dot product of pairs, else 0 (only the
    // nodes of those kinds are read).
    let dot = crate::storage::op_code::OpCode::Dot;
    let pairs: Vec<u32> = (nodes.distinct().iter())
        .map(|k| match k.0 {
            Forward::Call { op, param, .. } if op == dot && param >= 2 => param,
            _ => 0,
        })
        .collect();
    let mut out = pages::filled(nodes.len(), false);
    for (i, &k) in nodes.kinds().iter().enumerate() {
        let param = pairs[k as usize] as usize;
        if param > 0 {
            let a = p.operands[i][0] as usize;
            out[i] = runs(&p.args[a..a + param]);
        }
    }
    out
}
