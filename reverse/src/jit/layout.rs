//! A compiled gradient's edges, laid out anew: only those its code or its calls read.
//!
//! A gradient's code computes the partials of arithmetic again in the sweep and holds the
//! edges it sweeps inline in its instructions, so most of the recording's partials, parents
//! and unit edges are never read. What is read: the partials a call writes (an elementary
//! function's, a user rule's) and those of `max` and `min` (the recorded ones), the parents of
//! the nodes a call sweeps, and the unit edges of a long sum. Those are packed in node order,
//! each node's edges together as before, and the rest is dropped. A loop's nodes store as many
//! edges in every turn, so each node's first edge still steps evenly from turn to turn: the
//! code indexes the packed arrays as it indexed the recording's.

use super::emit::{Mode, pairs, short_dot};
use super::machine::Lens;
use super::shape::{E, Forward, LO, Nest, Node, Region, Reverse};
use crate::storage::TapeData;

/// The arrays of edges a compiled gradient keeps: partials and parents share one index (a
/// node's weighted edges), unit edges have their own. Each ends in a stretch of zeros that the
/// nodes storing nothing point at.
pub(super) struct Edges {
    pub partials: Vec<f64>,
    pub parents: Vec<u32>,
    pub units: Vec<u32>,
}

/// Lays out the edges of the gradient of `nodes` (in `nests`, compiled in `mode`): points each
/// node's edges into the packed arrays, updates the lengths of `lens`, and returns the arrays
/// (`values` and `args` as the code reads them). `None`, and nothing changed, where some node's
/// edges would not step evenly over a loop's turns.
pub(super) fn edges(
    d: &TapeData<f64>,
    mode: Mode,
    nodes: &mut [Node],
    nests: &mut [Nest],
    (values, args): (usize, &[u32]),
    lens: &mut Lens,
) -> Option<Edges> {
    let n = nodes.len();
    // Per body node of each region, the weighted and the unit edges it keeps (the same in
    // every turn: they depend on its kind and its loop only), and its edges' count.
    let kept: Vec<Vec<Vec<(usize, usize, usize)>>> = nests
        .iter()
        .map(|nest| {
            let keeps = |r: &Region, j: usize| {
                let nd = &nodes[r.start + j];
                let short = short_dot(mode, 1, nodes, (n, values, args), r, j).is_some();
                let count = match nd.reverse {
                    Reverse::Weighted(c) | Reverse::Unit(c, _) => c as usize,
                    Reverse::Call { count, .. } => count as usize,
                };
                let (w, u) = match (nd.forward, nd.reverse) {
                    (_, Reverse::Call { unit: true, .. }) => (0, count),
                    (Forward::Call { .. }, Reverse::Weighted(_)) if !short => (count, 0),
                    (_, Reverse::Call { unit: false, .. })
                        if !short && pairs(mode, nodes, r, j).is_none() =>
                    {
                        (count, 0)
                    }
                    _ => (0, 0),
                };
                (w, u, count)
            };
            let regions = nest.regions.iter();
            regions
                .map(|r| (0..r.period).map(|j| keeps(r, j)).collect())
                .collect()
        })
        .collect();
    // Per region, its edges per turn; per nest, per turn of its loop of loops.
    let per_turn =
        |kept: &[(usize, usize, usize)]| kept.iter().fold((0, 0), |(w, u), k| (w + k.0, u + k.1));
    let per_outer = |nest: &Nest, kept: &[Vec<(usize, usize, usize)>]| {
        let turns = nest
            .regions
            .iter()
            .zip(kept)
            .map(|(r, k)| (r.turns, per_turn(k)));
        turns.fold((0, 0), |(w, u), (t, (tw, tu))| (w + t * tw, u + t * tu))
    };
    let (weighted, units) = nests.iter().zip(&kept).fold((0, 0), |(w, u), (nest, k)| {
        let (ow, ou) = per_outer(nest, k);
        (w + nest.turns * ow, u + nest.turns * ou)
    });
    // A node that keeps nothing points at the zeros after the kept edges of its kind, as many
    // as the most edges of such a node.
    let pad = kept
        .iter()
        .flatten()
        .flatten()
        .filter(|k| (k.0, k.1) == (0, 0))
        .map(|k| k.2)
        .max()
        .unwrap_or(0);
    let mut out = Edges {
        partials: vec![0.0; weighted + pad],
        parents: vec![0; weighted + pad],
        units: vec![0; units + pad],
    };
    // Each body node's first edge and its steps (per turn, per turn of the loop around), and
    // the edges copied in node order: a turn's after the last turn's, so on a line.
    let (old_partials, old_parents, old_units) = (d.partials(), d.parents(), d.units());
    let starts = d.starts();
    let (mut w, mut u) = (0, 0);
    let mut lines: Vec<Vec<Vec<(usize, i64, i64)>>> = Vec::with_capacity(nests.len());
    for (nest, kept) in nests.iter().zip(&kept) {
        let outer = per_outer(nest, kept);
        let mut nest_lines = Vec::with_capacity(nest.regions.len());
        for o in 0..nest.turns {
            for (ri, (r, kept)) in nest.regions.iter().zip(kept).enumerate() {
                if o == 0 {
                    // The first turn's edges start where the edges so far end.
                    let turn = per_turn(kept);
                    let (mut tw, mut tu) = (w, u);
                    let mut line = |(kw, ku, _): &(usize, usize, usize), j: usize| {
                        let unit = matches!(
                            nodes[r.start + j].reverse,
                            Reverse::Unit(..) | Reverse::Call { unit: true, .. }
                        );
                        let (at, step, outer) = match (kw, ku, unit) {
                            (0, 0, true) => (units, 0, 0),
                            (0, 0, false) => (weighted, 0, 0),
                            (_, 0, _) => (tw, turn.0, outer.0),
                            _ => (tu, turn.1, outer.1),
                        };
                        (tw, tu) = (tw + kw, tu + ku);
                        (at, step as i64, outer as i64)
                    };
                    nest_lines.push((0..r.period).map(|j| line(&kept[j], j)).collect::<Vec<_>>());
                }
                let lines = &nest_lines[ri];
                let onodes = r.outer.as_ref().map_or(0, |o| o.nodes as usize);
                for k in 0..r.turns {
                    for (j, &(kw, ku, _)) in kept.iter().enumerate().filter(|(_, k)| k.0 + k.1 > 0)
                    {
                        let (first, step, outer) = lines[j];
                        let at = if kw > 0 { w } else { u };
                        if at as i64 != first as i64 + k as i64 * step + o as i64 * outer {
                            return None;
                        }
                        let i = r.start + o * onodes + k * r.period + j;
                        let old = (starts[i] & !crate::storage::UNIT) as usize;
                        if kw > 0 {
                            out.partials[w..w + kw].copy_from_slice(&old_partials[old..old + kw]);
                            out.parents[w..w + kw].copy_from_slice(&old_parents[old..old + kw]);
                            w += kw;
                        } else {
                            out.units[u..u + ku].copy_from_slice(&old_units[old..old + ku]);
                            u += ku;
                        }
                    }
                }
            }
        }
        lines.push(nest_lines);
    }
    // The code indexes the new arrays.
    for (nest, lines) in nests.iter_mut().zip(lines) {
        for (r, lines) in nest.regions.iter_mut().zip(lines) {
            for (j, (first, step, outer)) in lines.into_iter().enumerate() {
                nodes[r.start + j].set_edges(first as u32);
                (r.step[j][E], r.step[j][LO]) = (step, step);
                if let Some(o) = r.outer.as_mut() {
                    (o.step[j][E], o.step[j][LO]) = (outer, outer);
                }
            }
        }
    }
    (lens.partials, lens.parents, lens.units) =
        (out.partials.len(), out.parents.len(), out.units.len());
    Some(out)
}
