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
//! distinct ones, so they are independent; the sweep runs the levels in order, each as three
//! flat loops (weighted edges, `+1` edges, `−1` edges) that the processor overlaps freely.
//!
//! Levels are assigned within windows of [`WINDOW`] nodes, the plain sweep's order between
//! windows: the adjoints a window touches stay in cache, and a sweep whose last seed lies
//! before the end of the tape starts at the window holding it.
//!
//! An edge's two nodes are one `u64` (`v | u << 32`), read by one load: the loops seem bound
//! by the processor's loads and stores more than by its instructions.
//!
//! Built by a replayable recording's first re-evaluation (where a recording is swept again and
//! again), in time linear in the edges, and again if a live tape grows and is re-evaluated.

use super::kernel::structural;
use crate::tape::memory;
use crate::tape::storage::{Edges, NEG, TapeData};

/// Nodes per window (by the node whose edges they are).
const WINDOW: usize = 4096;

impl<T> TapeData<T> {
    /// The schedule of this recording's sweeps, if its re-evaluation built one.
    pub fn schedule(&self) -> Option<&Schedule> {
        self.program.as_ref()?.compiled.as_ref()?.schedule.as_ref()
    }
}

/// The edges of a recording by level.
#[derive(Clone, Debug)]
pub(crate) struct Schedule {
    /// Nodes of the recording, and its weighted edges.
    nodes: usize,
    partials: usize,
    /// Per level, where its edges begin in `weighted`, `plus` and `minus`; one more entry
    /// marks their ends.
    levels: Vec<[u32; 3]>,
    /// Per level, one more than the highest node its edges touch: the adjoints it needs.
    reach: Vec<u32>,
    /// Per window, its first level.
    windows: Vec<u32>,
    /// Weighted edges `v → u` (as `v | u << 32`), the term `ū += partial[k] · v̄`, and their
    /// `k`.
    weighted: Vec<u64>,
    edge: Vec<u32>,
    /// Unit edges `v → u` with the partial `+1`, and with `−1`.
    plus: Vec<u64>,
    minus: Vec<u64>,
}

/// An edge `v → u` as one `u64`.
fn pair(v: usize, u: u32) -> u64 {
    v as u64 | (u as u64) << 32
}

/// The levels being assigned, edge by edge in the plain sweep's order.
struct Levels {
    /// Per node, the level of the last term added to its adjoint (0: none yet).
    last: Vec<u32>,
    /// Per level, its edges of each kind (weighted, `+1`, `−1`).
    counts: Vec<[u32; 3]>,
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
            self.counts.resize(l + 1, [0; 3]);
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

/// An edge's kind: 0 weighted, 1 a unit edge of `+1`, 2 of `−1`; and its operand.
fn unit_edge(q: u32) -> (usize, u32) {
    (1 + (q & NEG != 0) as usize, q & !NEG)
}

impl Schedule {
    /// The schedule of the edges of `d`: a pass that gives each edge its level, and a second
    /// that puts each edge in its place (a counting sort, with no array of edges and levels
    /// in between).
    pub fn of<T: Copy>(d: &TapeData<T>) -> Schedule {
        let n = d.len();
        let (parent, unit) = (d.parents(), d.units());
        // The two arrays as long as the tape, from the buffers this thread keeps.
        let (mut last, mut edge_level): (Vec<u32>, Vec<u32>) = (memory::take(), memory::take());
        last.resize(n, 0);
        let mut levels = Levels {
            last,
            counts: vec![[0; 3]],
            reach: vec![0],
        };
        let mut windows = vec![0u32; n.div_ceil(WINDOW)];
        let mut floor = 0;
        for (v, edges) in d.walk_back(n) {
            if v % WINDOW == WINDOW - 1 || v == n - 1 {
                // A new window: its levels come after every level so far.
                floor = levels.top();
                windows[v / WINDOW] = floor + 1;
            }
            match edges {
                Edges::Weighted(lo, hi) => {
                    for &u in &parent[lo..hi] {
                        edge_level.push(levels.place(v, u, 0, floor));
                    }
                }
                Edges::Unit(lo, hi) => {
                    for &q in &unit[lo..hi] {
                        let (kind, u) = unit_edge(q);
                        edge_level.push(levels.place(v, u, kind, floor));
                    }
                }
            }
        }
        // Where each level's edges of each kind begin; then each edge to its place, in the
        // same walk.
        let mut starts = vec![[0u32; 3]; levels.counts.len() + 1];
        for (t, c) in levels.counts.iter().enumerate() {
            starts[t + 1] = [0, 1, 2].map(|k| starts[t][k] + c[k]);
        }
        let mut next = starts.clone();
        let [_, pluses, minuses] = starts[levels.counts.len()];
        let mut weighted = vec![0u64; parent.len()];
        let mut edge = vec![0u32; parent.len()];
        let (mut plus, mut minus) = (vec![0u64; pluses as usize], vec![0u64; minuses as usize]);
        let mut edge_levels = edge_level.iter().map(|&t| t as usize);
        let mut slot = |kind: usize| {
            let t = edge_levels.next().expect("a level per edge");
            next[t][kind] += 1;
            next[t][kind] as usize - 1
        };
        for (v, edges) in d.walk_back(n) {
            match edges {
                Edges::Weighted(lo, hi) => {
                    for (&u, k) in parent[lo..hi].iter().zip(lo..) {
                        let j = slot(0);
                        weighted[j] = pair(v, u);
                        edge[j] = k as u32;
                    }
                }
                Edges::Unit(lo, hi) => {
                    for &q in &unit[lo..hi] {
                        let (kind, u) = unit_edge(q);
                        let j = slot(kind);
                        [&mut plus, &mut minus][kind - 1][j] = pair(v, u);
                    }
                }
            }
        }
        memory::give(levels.last);
        memory::give(edge_level);
        Schedule {
            nodes: n,
            partials: parent.len(),
            levels: starts,
            reach: levels.reach,
            windows,
            weighted,
            edge,
            plus,
            minus,
        }
    }

    /// Bytes held.
    pub fn capacity_bytes(&self) -> usize {
        self.levels.capacity() * 12
            + (self.reach.capacity() + self.windows.capacity() + self.edge.capacity()) * 4
            + (self.weighted.capacity() + self.plus.capacity() + self.minus.capacity()) * 8
    }
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
pub(crate) fn sweep(s: &Schedule, partial: &[f64], adj: &mut Vec<f64>) {
    let end = adj.len();
    if end == 0 {
        return;
    }
    assert!(
        s.nodes >= end && s.partials == partial.len(),
        "a schedule swept with another tape's arrays"
    );
    debug_assert!(adj.iter().all(|a| a.to_bits() != (-0.0f64).to_bits()));
    // The sweep starts at the window of the last seed; its nodes after `end` hold zero
    // adjoints, which add nothing.
    let window = (end - 1) / WINDOW;
    adj.resize(((window + 1) * WINDOW).min(s.nodes), 0.0);
    for t in s.windows[window] as usize..s.levels.len() - 1 {
        // The levels of this window and the ones before it touch only their nodes.
        assert!(
            s.reach[t] as usize <= adj.len(),
            "a level beyond its window"
        );
        let ([w0, p0, m0], [w1, p1, m1]) = (s.levels[t], s.levels[t + 1]);
        let (w0, w1) = (w0 as usize, w1 as usize);
        let (weighted, edge) = (&s.weighted[w0..w1], &s.edge[w0..w1]);
        let (plus, minus) = (
            &s.plus[p0 as usize..p1 as usize],
            &s.minus[m0 as usize..m1 as usize],
        );
        // SAFETY: every `v` and `u` of level `t` is below `reach[t]` ≤ `adj.len()`, and every
        // `k` below the number of weighted edges of the tape the schedule was built from
        // (`Schedule::of` takes them from its edges), which is `partial.len()`: both checked
        // above. The debug assertions check each index in every test. Measured on Rosenbrock
        // n = 1000: 8% of the sweep's time (alternated runs of a scratch harness).
        let adj_len = adj.len();
        #[allow(unsafe_code)]
        unsafe {
            let nodes = |vu: u64| {
                let (v, u) = (vu as u32 as usize, (vu >> 32) as usize);
                debug_assert!(v < adj_len && u < v);
                (v, u)
            };
            let weighted_term = |adj: &mut [f64], vu: u64, k: u32| {
                let (v, u) = nodes(vu);
                debug_assert!((k as usize) < partial.len());
                let (a, w) = (*adj.get_unchecked(v), *partial.get_unchecked(k as usize));
                let x = w * a;
                let x = if x.is_nan() { nan_term(w, a, x) } else { x };
                *adj.get_unchecked_mut(u) += x;
            };
            // Four edges per turn of each loop (the edges of a level are independent): about 9%
            // of the sweep's time on Rosenbrock (alternated runs).
            let (mut vus, mut ks) = (weighted.chunks_exact(4), edge.chunks_exact(4));
            for (vu, k) in (&mut vus).zip(&mut ks) {
                for i in 0..4 {
                    weighted_term(adj, vu[i], k[i]);
                }
            }
            for (&vu, &k) in vus.remainder().iter().zip(ks.remainder()) {
                weighted_term(adj, vu, k);
            }
            in_fours(plus, |vu| {
                let (v, u) = nodes(vu);
                *adj.get_unchecked_mut(u) += *adj.get_unchecked(v);
            });
            in_fours(minus, |vu| {
                let (v, u) = nodes(vu);
                *adj.get_unchecked_mut(u) -= *adj.get_unchecked(v);
            });
        }
    }
    adj.truncate(end);
}

/// `term` on each edge, four per turn of the loop (the edges of a level are independent).
#[inline(always)]
fn in_fours(edges: &[u64], mut term: impl FnMut(u64)) {
    let mut quads = edges.chunks_exact(4);
    for q in &mut quads {
        for &e in q {
            term(e);
        }
    }
    for &e in quads.remainder() {
        term(e);
    }
}

/// A NaN product's term: `−0` (nothing) if it is `0 · ∞` or `0 · NaN`, else the NaN. Out of
/// line, so that the loop is laid out for the usual case.
#[cold]
#[inline(never)]
fn nan_term(w: f64, a: f64, x: f64) -> f64 {
    structural(w, a, x)
}
