//! The adjoint sweep of a recording that is swept many times, reordered so that independent
//! edges run side by side, with the same bits as the plain sweep (but for the sign and payload
//! of a NaN, which Rust leaves unspecified).
//!
//! The plain sweep ([`kernel`](super::kernel)) walks the nodes last to first, and each term
//! `ū += ∂v/∂u · v̄` waits for the one before it through memory: `v̄` was written by the node
//! swept just before. On a tape such as Rosenbrock's (short chains side by side) the processor
//! then waits on one chain at a time. Any order gives the same adjoints, bit for bit, as long as
//!
//! 1. an edge `v → u` runs after every term added to `v̄` (so it reads the final `v̄`), and
//! 2. the terms added to one `ū` are added in the plain sweep's order (floating-point addition
//!    does not associate).
//!
//! So each edge gets a *level*: one more than the level of the last term added to `v̄` and of
//! the last term added to `ū`. Edges of one level read only finished adjoints and write
//! distinct ones, so they are independent; the sweep runs the levels in order, each as four
//! flat loops (weighted edges, weighted edges subtracted (see below), `+1` edges, `−1` edges)
//! that the processor overlaps freely.
//!
//! Levels are assigned within windows of [`WINDOW`] nodes, the plain sweep's order between
//! windows: the adjoints a window touches stay in cache, and a sweep whose last seed lies
//! before the end of the tape starts at the window holding it.
//!
//! An edge's two nodes are one `u64` (`v | u << 32`), read by one load: the loops seem bound
//! by the processor's loads and stores more than by its instructions.
//!
//! *Bypassed nodes.* A node `u` read by a single edge, a unit edge from `v` (a term of a sum,
//! the subtrahend of a difference), has the adjoint `ū = 0 ± v̄`, exactly: one term added to
//! `+0`. So its edges can read `v̄` instead (negated for `−1`), and the edge `v → u` is not
//! swept at all; in a chain of such nodes each reads the last one's adjoint. The terms are the
//! same numbers added in the same order (`p̄ + w·(0 − v̄)` is `p̄ − w·v̄` bit for bit, adjoints
//! never being `−0`), so the bits do not change. On Rosenbrock four of a term's ten edges go.
//! A sweep seeded at a bypassed node is swept the plain way; the bypassed nodes' adjoints are
//! written after the sweep when every adjoint is asked for, and read through their alias
//! when only some are ([`Schedule::alias`]).
//!
//! *Runs.* The edges of a level of a loop's recording are mostly a few sequences, each edge
//! the one before plus a constant step; the schedule puts each sequence together
//! ([`runs`](super::runs)) and the sweep computes its edges instead of loading them.
//!
//! Built by a replayable recording's first re-evaluation (where a recording is swept again and
//! again), in time linear in the edges, and again if a live tape grows and is re-evaluated.

use super::kernel::structural;
use super::runs::{self, Segment, ends_agree};
use crate::storage::derived::{Derived, derived_any};
use crate::storage::program::Native;
use crate::storage::{Edges, NEG, TapeData};
use shared_ops::memory;

/// Nodes per window (by the node whose edges they are).
const WINDOW: usize = 4096;

impl<T> TapeData<T> {
    /// The schedule of this recording's sweeps, if its re-evaluation built one.
    pub fn schedule(&self) -> Option<&Schedule> {
        self.program.as_ref()?.derived.get::<Schedule>()
    }

    /// This recording's machine code, if it was compiled.
    pub fn native(&self) -> Option<&Native> {
        self.program.as_ref()?.derived.get::<Native>()
    }
}

/// The edges of a recording by level.
#[derive(Clone, Debug)]
pub(crate) struct Schedule {
    /// Nodes of the recording, and its weighted edges.
    nodes: usize,
    partials: usize,
    /// Per level, its first segment (one more entry marks the end): its edges of each kind,
    /// the two weighted kinds in `weighted`, `+1` in `plus`, `−1` in `minus`, in runs with one
    /// step where they have them ([`runs`](super::runs)).
    levels: Vec<u32>,
    segments: Vec<Segment>,
    /// Per level, one more than the highest node its edges touch: the adjoints it needs.
    reach: Vec<u32>,
    /// Per window, its first level, and the adjoints a sweep starting there needs.
    windows: Vec<u32>,
    needs: Vec<u32>,
    /// Weighted edges `v → u` (as `v | u << 32`), the term `ū += partial[k] · v̄`, and their
    /// `k`; and those of a bypassed node whose alias is negated, `ū −= partial[k] · v̄`.
    weighted: Vec<u64>,
    edge: Vec<u32>,
    /// Unit edges `v → u` with the partial `+1`, and with `−1`.
    plus: Vec<u64>,
    minus: Vec<u64>,
    /// The bypassed nodes, last first, as `u | alias << 32`: the alias is the node whose
    /// adjoint their edges read (and [`NEG`] if negated). No array per node: a fresh one per
    /// recording would cost more in page faults than the rest of the schedule.
    bypassed: Vec<u64>,
}

impl Derived for Schedule {
    fn capacity_bytes(&self) -> usize {
        self.bytes()
    }
    /// The large arrays go back to the thread's kept buffers with the recording's own: freed,
    /// they could leave the allocator a free top of the heap to hand back to the system, whose
    /// pages the next recording's schedule would then fault in again.
    fn recycle(mut self: Box<Self>) {
        memory::give(core::mem::take(&mut self.weighted));
        memory::give(core::mem::take(&mut self.edge));
        memory::give(core::mem::take(&mut self.plus));
        memory::give(core::mem::take(&mut self.minus));
        memory::give(core::mem::take(&mut self.bypassed));
    }
    derived_any!();
}

/// A buffer of `len` zeros, from those this thread keeps.
fn pooled<X: Copy + Default + 'static>(len: usize) -> Vec<X> {
    let mut v: Vec<X> = memory::take();
    v.resize(len, X::default());
    v
}

/// The kinds of edges: weighted, weighted read negated, `+1`, `−1`.
const KINDS: usize = 4;

/// While the schedule is built, a node without an alias: swept as recorded.
const NOT_BYPASSED: u32 = u32::MAX;

/// An edge `v → u` as one `u64`.
fn pair(v: usize, u: u32) -> u64 {
    v as u64 | (u as u64) << 32
}

/// The levels being assigned, edge by edge in the plain sweep's order.
struct Levels {
    /// Per node, the level of the last term added to its adjoint (0: none yet).
    last: Vec<u32>,
    /// Per level, its edges of each kind.
    counts: Vec<[u32; KINDS]>,
    /// Per level, one more than the highest node its edges touch.
    reach: Vec<u32>,
}

impl Levels {
    /// The level of the edge v → u of kind `kind`, at least `floor + 1`: after the last term
    /// added to v̄, and to ū.
    fn place(&mut self, v: usize, u: u32, kind: usize, floor: u32) -> u32 {
        let t = self.last[v].max(self.last[u as usize]).max(floor) + 1;
        self.last[u as usize] = t;
        let l = t as usize;
        if self.counts.len() <= l {
            self.counts.resize(l + 1, [0; KINDS]);
            self.reach.resize(l + 1, 0);
        }
        self.counts[l][kind] += 1;
        self.reach[l] = self.reach[l].max(v.max(u as usize) as u32 + 1);
        t
    }

    /// The highest level so far.
    fn top(&self) -> u32 {
        self.counts.len() as u32 - 1
    }
}

/// One edge as the schedule sweeps it: its kind, the node whose adjoint it reads, its operand
/// and (weighted) the index of its partial.
#[derive(Clone, Copy)]
struct Swept {
    kind: usize,
    reads: usize,
    operand: u32,
    k: usize,
}

/// The edges of `d` as swept, in the plain sweep's order, with the nodes they bypass: a
/// node read by one edge only, a unit edge, gets an alias (in `alias`, filled as the walk goes:
/// a node's only reader comes before it) and the edge into it is dropped. `readers` holds, per
/// node, how many edges read it (2 for two or more).
fn each_edge<T: Copy>(
    d: &TapeData<T>,
    readers: &[u8],
    alias: &mut [u32],
    mut visit: impl FnMut(usize, Swept),
) {
    let n = d.len();
    let (parent, unit) = (d.parents(), d.units());
    for (v, edges) in d.walk_back(n) {
        // The node whose adjoint v's edges read, and whether negated.
        let (reads, neg) = match alias[v] {
            NOT_BYPASSED => (v, false),
            a => ((a & !NEG) as usize, a & NEG != 0),
        };
        match edges {
            Edges::Weighted(lo, hi) => {
                for (&u, k) in parent[lo..hi].iter().zip(lo..) {
                    let kind = neg as usize;
                    visit(
                        v,
                        Swept {
                            kind,
                            reads,
                            operand: u,
                            k,
                        },
                    );
                }
            }
            Edges::Unit(lo, hi) => {
                for &q in &unit[lo..hi] {
                    let (u, minus) = (q & !NEG, (q & NEG != 0) != neg);
                    if readers[u as usize] == 1 {
                        alias[u as usize] = reads as u32 | if minus { NEG } else { 0 };
                        continue;
                    }
                    let kind = 2 + minus as usize;
                    visit(
                        v,
                        Swept {
                            kind,
                            reads,
                            operand: u,
                            k: 0,
                        },
                    );
                }
            }
        }
    }
}

impl Schedule {
    /// The schedule of the edges of `d`: a pass that counts each node's readers, one that
    /// gives each edge its level (and each bypassed node its alias), and a third that puts
    /// each edge in its place (a counting sort, with no array of edges and levels in between).
    pub fn of<T: Copy>(d: &TapeData<T>) -> Schedule {
        let n = d.len();
        let (parent, unit) = (d.parents(), d.units());
        // The arrays as long as the tape, from the buffers this thread keeps.
        // How many edges read each node; a leaf (an input) counts as read twice: it is never
        // bypassed, so that a gradient's adjoints are all swept.
        let mut readers: Vec<u8> = memory::take();
        readers.resize(n, 0);
        for (v, edges) in d.walk_back(n) {
            let operands = match edges {
                Edges::Weighted(lo, hi) => &parent[lo..hi],
                Edges::Unit(lo, hi) => &unit[lo..hi],
            };
            if operands.is_empty() {
                readers[v] = 2;
            }
            for &u in operands {
                let r = &mut readers[(u & !NEG) as usize];
                *r = (*r + 1).min(2);
            }
        }
        let mut alias: Vec<u32> = memory::take();
        alias.resize(n, NOT_BYPASSED);
        let (mut last, mut edge_level): (Vec<u32>, Vec<u32>) = (memory::take(), memory::take());
        last.resize(n, 0);
        let mut levels = Levels {
            last,
            counts: vec![[0; KINDS]],
            reach: vec![0],
        };
        let mut windows = vec![0u32; n.div_ceil(WINDOW)];
        let (mut floor, mut window) = (0, usize::MAX);
        each_edge(d, &readers, &mut alias, |v, e| {
            if v / WINDOW != window {
                // A new window: its levels come after every level so far.
                window = v / WINDOW;
                floor = levels.top();
                windows[window] = floor + 1;
            }
            edge_level.push(levels.place(e.reads, e.operand, e.kind, floor));
        });
        // A window without edges starts where the one before it does (no level at all for
        // the first).
        for w in 0..windows.len() {
            if windows[w] == 0 {
                windows[w] = if w == 0 {
                    levels.top() + 1
                } else {
                    windows[w - 1]
                };
            }
        }
        // Where each level's edges of each kind begin; then each edge to its place, in the
        // same walk.
        let top = levels.counts.len();
        let mut starts = vec![[0u32; KINDS]; top + 1];
        for (t, c) in levels.counts.iter().enumerate() {
            // The negated weighted edges follow the others in the same array.
            starts[t][1] = starts[t][0] + c[0];
            starts[t + 1] = [
                starts[t][1] + c[1],
                0,
                starts[t][2] + c[2],
                starts[t][3] + c[3],
            ];
        }
        let mut next = starts.clone();
        starts[top][1] = starts[top][0];
        let totals = starts[top].map(|c| c as usize);
        let (mut weighted, mut edge) = (pooled(totals[0]), pooled(totals[0]));
        let (mut plus, mut minus) = (pooled(totals[2]), pooled(totals[3]));
        let mut edge_levels = edge_level.iter().map(|&t| t as usize);
        alias.fill(NOT_BYPASSED);
        each_edge(d, &readers, &mut alias, |_, e| {
            let t = edge_levels.next().expect("a level per edge");
            let j = next[t][e.kind] as usize;
            next[t][e.kind] += 1;
            let vu = pair(e.reads, e.operand);
            match e.kind {
                0 | 1 => (weighted[j], edge[j]) = (vu, e.k as u32),
                2 => plus[j] = vu,
                _ => minus[j] = vu,
            }
        });
        // Per window, the adjoints that the levels from its first on read.
        let mut tail = 0;
        let mut reach_from = vec![0u32; top + 1];
        for t in (0..top).rev() {
            tail = tail.max(levels.reach[t]);
            reach_from[t] = tail;
        }
        let needs = windows.iter().map(|&l| reach_from[l as usize]).collect();
        // Each level's edges of each kind in segments, runs with one step put together.
        let (mut firsts, mut segments) = (Vec::with_capacity(top + 1), Vec::new());
        for t in 0..top {
            firsts.push(segments.len() as u32);
            let (from, to) = (
                starts[t].map(|k| k as usize),
                starts[t + 1].map(|k| k as usize),
            );
            let segs = &mut segments;
            runs::split(0, (from[0], from[1]), &mut weighted, Some(&mut edge), segs);
            runs::split(1, (from[1], to[0]), &mut weighted, Some(&mut edge), segs);
            runs::split(2, (from[2], to[2]), &mut plus, None, segs);
            runs::split(3, (from[3], to[3]), &mut minus, None, segs);
        }
        firsts.push(segments.len() as u32);
        let mut bypassed: Vec<u64> = memory::take();
        bypassed.extend(
            (0..n)
                .rev()
                .filter(|&u| alias[u] != NOT_BYPASSED)
                .map(|u| u as u64 | (alias[u] as u64) << 32),
        );
        memory::give(alias);
        memory::give(readers);
        memory::give(levels.last);
        memory::give(edge_level);
        Schedule {
            nodes: n,
            partials: parent.len(),
            levels: firsts,
            segments,
            reach: levels.reach,
            windows,
            needs,
            weighted,
            edge,
            plus,
            minus,
            bypassed,
        }
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.levels.capacity() * 4
            + self.segments.capacity() * size_of::<Segment>()
            + (self.reach.capacity() + self.windows.capacity() + self.needs.capacity()) * 4
            + self.edge.capacity() * 4
            + self.weighted.capacity() * 8
            + (self.plus.capacity() + self.minus.capacity() + self.bypassed.capacity()) * 8
    }

    /// Whether node `u` is bypassed: its adjoint is not computed by [`sweep`] unless asked for.
    pub fn is_bypassed(&self, u: usize) -> bool {
        self.alias_of(u).is_some()
    }

    /// The first bypassed node (`usize::MAX` if none): the nodes before it are all swept.
    pub fn first_bypassed(&self) -> usize {
        self.bypassed
            .last()
            .map_or(usize::MAX, |&ua| ua as u32 as usize)
    }

    /// The adjoint of node `u` after [`sweep`] left `adj` (without the bypassed nodes'), if
    /// `u` is bypassed: `0 ± v̄` of its alias, the bits the plain sweep gives it.
    pub fn alias(&self, u: usize, adj: &[f64]) -> Option<f64> {
        self.alias_of(u).map(|a| aliased(a, adj))
    }

    /// Node `u`'s alias, if it is bypassed (a binary search: asked for seeds, and for the
    /// adjoints asked for from the first bypassed node on).
    fn alias_of(&self, u: usize) -> Option<u32> {
        let k = self
            .bypassed
            .binary_search_by(|&ua| (u as u32).cmp(&(ua as u32)))
            .ok()?;
        Some((self.bypassed[k] >> 32) as u32)
    }
}

/// The adjoint of a bypassed node whose alias is `a`: `0 + v̄`, or `0 − v̄` if negated (so a
/// zero stays `+0`, as the plain sweep's `+0 − 0` is).
fn aliased(a: u32, adj: &[f64]) -> f64 {
    let v = adj.get((a & !NEG) as usize).copied().unwrap_or(0.0);
    if a & NEG != 0 { 0.0 - v } else { 0.0 + v }
}

/// The sweep of a tape of `f64` by `s`: what the plain sweep
/// ([`scalar_f64`](super::kernel::scalar_f64)) gives, bit for bit (NaNs aside). `adj` holds the seeds of the nodes before its length, as there, each added to
/// `+0` (so none is `−0`: `+0 + (−0) = +0`).
///
/// The terms are added as the textbook writes them, `ū += w · v̄` and `ū ± v̄`, with no test of
/// the structural zeros where none is needed. No adjoint is ever `−0`: it starts at `+0` or a
/// seed added to `+0`, and `x + y` is `−0` only if both are. So adding a zero term is the
/// same as skipping it. A term needs the test of [`structural`] only where it is a product
/// `0 · ∞` or `0 · NaN`, whose structural value is nothing: so only a NaN product is tested
/// again, on a path of its own.
pub(crate) fn sweep(s: &Schedule, partial: &[f64], adj: &mut Vec<f64>, fill: bool) {
    let end = adj.len();
    if end == 0 {
        return;
    }
    assert!(
        s.nodes >= end && s.partials == partial.len(),
        "a schedule swept with another tape's arrays"
    );
    debug_assert!(adj.iter().all(|a| a.to_bits() != (-0.0f64).to_bits()));
    debug_assert!((0..end).all(|u| !s.is_bypassed(u) || adj[u] == 0.0));
    // The sweep starts at the window of the last seed; its nodes after `end` hold zero
    // adjoints, which add nothing.
    let window = (end - 1) / WINDOW;
    let needs = ((window + 1) * WINDOW).max(s.needs[window] as usize);
    adj.resize(needs.min(s.nodes), 0.0);
    for t in s.windows[window] as usize..s.levels.len() - 1 {
        // The levels from this window's first on touch only the nodes `needs` counts.
        assert!(
            s.reach[t] as usize <= adj.len(),
            "a level beyond its window"
        );
        let adj_len = adj.len();
        let nodes = |vu: u64| {
            let (v, u) = (vu as u32 as usize, (vu >> 32) as usize);
            debug_assert!(v < adj_len && u < v);
            (v, u)
        };
        let weighted_term = |adj: &mut [f64], vu: u64, k: u32, neg: bool| {
            let (v, u) = nodes(vu);
            debug_assert!((k as usize) < partial.len());
            let (a, w) = (adj[v], partial[k as usize]);
            let x = w * a;
            let x = if x.is_nan() { nan_term(w, a, x) } else { x };
            if neg {
                adj[u] -= x;
            } else {
                adj[u] += x;
            }
        };
        let unit_term = |adj: &mut [f64], vu: u64, neg: bool| {
            let (v, u) = nodes(vu);
            let a = adj[v];
            if neg {
                adj[u] -= a;
            } else {
                adj[u] += a;
            }
        };
        // A segment's edges, `$neg` a literal so that each loop is compiled for its sign.
        macro_rules! weighted {
            ($seg:expr, $neg:literal) => {{
                let r = $seg.start as usize..$seg.end as usize;
                match $seg.step.filter(|&step| {
                    ends_agree(&s.weighted[r.clone()], Some(&s.edge[r.clone()]), step)
                }) {
                    None => {
                        let (weighted, edge) = (&s.weighted[r.clone()], &s.edge[r]);
                        in_fours(weighted.len(), |i| {
                            weighted_term(adj, weighted[i], edge[i], $neg)
                        });
                    }
                    Some((dvu, dk)) => {
                        let (mut vu, mut k, first) =
                            (s.weighted[r.start], s.edge[r.start], r.start);
                        in_fours(r.len(), |i| {
                            debug_assert_eq!((vu, k), (s.weighted[first + i], s.edge[first + i]));
                            weighted_term(adj, vu, k, $neg);
                            (vu, k) = (vu.wrapping_add(dvu), k.wrapping_add(dk));
                        });
                    }
                }
            }};
        }
        macro_rules! unit {
            ($seg:expr, $edges:expr, $neg:literal) => {{
                let edges = &$edges[$seg.start as usize..$seg.end as usize];
                match $seg.step.filter(|&step| ends_agree(edges, None, step)) {
                    None => in_fours(edges.len(), |i| unit_term(adj, edges[i], $neg)),
                    Some((dvu, _)) => {
                        let mut vu = edges[0];
                        in_fours(edges.len(), |i| {
                            debug_assert_eq!(vu, edges[i]);
                            unit_term(adj, vu, $neg);
                            vu = vu.wrapping_add(dvu);
                        });
                    }
                }
            }};
        }
        for seg in &s.segments[s.levels[t] as usize..s.levels[t + 1] as usize] {
            match seg.kind {
                0 => weighted!(seg, false),
                1 => weighted!(seg, true),
                2 => unit!(seg, s.plus, false),
                _ => unit!(seg, s.minus, true),
            }
        }
    }
    if fill {
        // The bypassed nodes' adjoints from their aliases' (never bypassed themselves).
        let first = s.bypassed.partition_point(|&ua| ua as u32 as usize >= end);
        for &ua in &s.bypassed[first..] {
            adj[ua as u32 as usize] = aliased((ua >> 32) as u32, adj);
        }
    }
    adj.truncate(end);
}

/// `term(i)` for each `i < len`, four per turn of the loop (the edges of a level are
/// independent), which the processor overlaps.
#[inline(always)]
fn in_fours(len: usize, mut term: impl FnMut(usize)) {
    for q in 0..len / 4 {
        for i in 4 * q..4 * q + 4 {
            term(i);
        }
    }
    for i in len / 4 * 4..len {
        term(i);
    }
}

/// A NaN product's term: `−0` (nothing) if it is `0 · ∞` or `0 · NaN`, else the NaN. Out of
/// line, so that the loop is laid out for the usual case.
#[cold]
#[inline(never)]
fn nan_term(w: f64, a: f64, x: f64) -> f64 {
    structural(w, a, x)
}

#[cfg(test)]
mod tests;
