//! A compiled gradient's edges, laid out anew: only those its code or its calls read.
//!
//! A gradient's code computes the partials of arithmetic again in the sweep and holds the
//! edges it sweeps inline in its instructions, so most of the recording's partials, parents
//! and unit edges are never read. What is read: the partials a call writes (an elementary
//! function's, but not `exp`'s, which is its value; a user rule's) and those of `max` and `min`
//! (the recorded ones), the parents of the nodes a call sweeps, and the unit edges of a long
//! sum. Those are packed in node order, each node's edges together as before, and the rest is
//! dropped. A loop's nodes store as many edges in every turn, so each node's first edge still
//! steps evenly from turn to turn: the code indexes the packed arrays as it indexed the
//! recording's.

use super::emit::{Mode, pairs, short_dot};
use super::machine::Lens;
use super::nodes::{E, Forward, LO, Nodes, Reverse};
use super::shape::Nest;
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
    nodes: &mut Nodes,
    nests: &mut [Nest],
    (values, args): (usize, &[u32]),
    lens: &mut Lens,
) -> Option<Edges> {
    let n = nodes.len();
    let bodies = || nests.iter().flat_map(|nest| &nest.regions);
    // What each body node of each region keeps (the same in every turn: it depends on its
    // kind and its loop only), the regions' bodies one after the other.
    let kept: Vec<Keep> = bodies()
        .flat_map(|r| (0..r.period).map(move |j| (r, j)))
        .map(|(r, j)| {
            let nd = nodes.get(r.start + j);
            let short = short_dot(mode, 1, nodes, (n, values, args), r, j).is_some();
            let (count, unit) = match nd.reverse {
                Reverse::Weighted(c) => (c as usize, false),
                Reverse::Unit(c, _) => (c as usize, true),
                Reverse::Call { count, unit } => (count as usize, unit),
            };
            let (weighted, units) = match (nd.forward, nd.reverse) {
                (_, Reverse::Call { unit: true, .. }) => (0, count),
                (f @ Forward::Call { .. }, Reverse::Weighted(_))
                    if !short && !f.partial_is_value() =>
                {
                    (count, 0)
                }
                (_, Reverse::Call { unit: false, .. })
                    if !short && pairs(mode, nodes, r, j).is_none() =>
                {
                    (count, 0)
                }
                _ => (0, 0),
            };
            Keep {
                weighted,
                units,
                count,
                unit,
            }
        })
        .collect();
    // Where each region's body starts in `kept`, and what one turn of it keeps.
    let mut from = Vec::new();
    let mut turn = Vec::new();
    let mut b = 0;
    for r in bodies() {
        let body = &kept[b..b + r.period];
        from.push(b);
        turn.push(
            body.iter()
                .fold((0, 0), |t, k| (t.0 + k.weighted, t.1 + k.units)),
        );
        b += r.period;
    }
    // What one turn of each nest's loop of loops keeps, and what all keep.
    let mut outer = Vec::with_capacity(nests.len());
    let (mut weighted, mut units) = (0, 0);
    let mut ri = 0;
    for nest in nests.iter() {
        let mut o = (0, 0);
        for (r, t) in nest.regions.iter().zip(&turn[ri..]) {
            o = (o.0 + r.turns * t.0, o.1 + r.turns * t.1);
        }
        ri += nest.regions.len();
        outer.push(o);
        (weighted, units) = (weighted + nest.turns * o.0, units + nest.turns * o.1);
    }
    // A node that keeps nothing points at the zeros after the kept edges of its kind, as many
    // as the most edges of such a node.
    let pad = kept
        .iter()
        .filter(|k| k.weighted + k.units == 0)
        .map(|k| k.count)
        .max()
        .unwrap_or(0);
    let mut out = Edges {
        partials: vec![0.0; weighted + pad],
        parents: vec![0; weighted + pad],
        units: vec![0; units + pad],
    };
    // Each body node's first edge and its steps (per turn, per turn of the loop around), and
    // the edges copied in node order: a turn's after the last turn's, so on a line (checked).
    let (old_partials, old_parents, old_units) = (d.partials(), d.parents(), d.units());
    let starts = d.starts();
    let mut lines = vec![(0usize, 0i64, 0i64); kept.len()];
    let (mut w, mut u) = (0, 0);
    let mut ri = 0;
    for (nest, &outer) in nests.iter().zip(&outer) {
        let regions = ri..ri + nest.regions.len();
        ri = regions.end;
        for o in 0..nest.turns {
            for (r, ri) in nest.regions.iter().zip(regions.clone()) {
                let body = from[ri]..from[ri] + r.period;
                if o == 0 {
                    let (mut tw, mut tu) = (w, u);
                    for (k, line) in kept[body.clone()].iter().zip(&mut lines[body.clone()]) {
                        *line = match (k.weighted, k.units, k.unit) {
                            (0, 0, true) => (units, 0, 0),
                            (0, 0, false) => (weighted, 0, 0),
                            (_, 0, _) => (tw, turn[ri].0 as i64, outer.0 as i64),
                            _ => (tu, turn[ri].1 as i64, outer.1 as i64),
                        };
                        (tw, tu) = (tw + k.weighted, tu + k.units);
                    }
                }
                let onodes = r.outer.as_ref().map_or(0, |o| o.nodes as usize);
                let stored: Vec<usize> = (0..r.period)
                    .filter(|&j| kept[body.start + j].weighted + kept[body.start + j].units > 0)
                    .collect();
                for t in 0..r.turns {
                    for &j in &stored {
                        let (k, (first, step, outer)) =
                            (&kept[body.start + j], lines[body.start + j]);
                        let at = if k.weighted > 0 { w } else { u };
                        if at as i64 != first as i64 + t as i64 * step + o as i64 * outer {
                            return None;
                        }
                        let i = r.start + o * onodes + t * r.period + j;
                        let old = (starts[i] & !crate::storage::UNIT) as usize;
                        let (kw, ku) = (k.weighted, k.units);
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
    }
    // The code indexes the new arrays.
    let mut b = 0;
    for r in nests.iter_mut().flat_map(|nest| &mut nest.regions) {
        for j in 0..r.period {
            let (first, step, outer) = lines[b + j];
            nodes.set_edges(r.start + j, first as u32);
            (r.step[j][E], r.step[j][LO]) = (step, step);
            if let Some(o) = r.outer.as_mut() {
                (o.step[j][E], o.step[j][LO]) = (outer, outer);
            }
        }
        b += r.period;
    }
    (lens.partials, lens.parents, lens.units) =
        (out.partials.len(), out.parents.len(), out.units.len());
    Some(out)
}

/// What a body node keeps: its weighted edges (partials and parents) or its unit edges, of its
/// `count` edges (unit edges, where `unit`).
struct Keep {
    weighted: usize,
    units: usize,
    count: usize,
    unit: bool,
}
