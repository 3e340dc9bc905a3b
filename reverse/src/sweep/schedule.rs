//! The adjoint sweep of a recording swept many times (a re-evaluated one), reordered so that
//! independent edges run side by side, with the plain sweep's bits (but for the sign and
//! payload of a NaN, which Rust leaves unspecified).
//!
//! The plain sweep ([`kernel`](super::kernel)) walks the nodes last to first, and each term
//! `ū += ∂v/∂u · v̄` waits for the one before it through memory: `v̄` was written by the node
//! swept just before. On a tape of short chains side by side (Rosenbrock's terms, a layer's
//! units) the processor then waits on one chain at a time. Any order gives the same adjoints,
//! bit for bit, as long as
//!
//! 1. an edge `v → u` runs after every term added to `v̄` (so it reads the final `v̄`), and
//! 2. the terms added to one `ū` are added in the plain sweep's order (floating-point addition
//!    does not associate).
//!
//! So each edge gets a *level*: one more than the level of the last term added to `v̄` and of
//! the last term added to `ū`. Edges of one level read only finished adjoints and write
//! distinct ones; the sweep runs the levels in order, each as two flat loops (weighted edges,
//! unit edges) whose terms the processor overlaps freely. Levels are counted within windows
//! of [`WINDOW`] nodes, the windows in the plain sweep's order, so that the adjoints a window
//! touches stay in cache, and a sweep seeded before the end of the tape starts at the window
//! of its last seed.
//!
//! Built with the replay's prepared program (where a recording is swept again and again), in
//! time linear in the edges; the compiled recordings (feature `jit`) sweep without it.

use super::kernel::structural;
use crate::storage::derived::{Derived, derived_any};
use crate::storage::{Edges, NEG, TapeData};

/// Nodes per window (by the node whose edges they are).
const WINDOW: usize = 4096;

/// The edges of a recording by level.
#[derive(Clone, Debug)]
pub(crate) struct Schedule {
    /// Nodes of the recording, and its weighted edges.
    nodes: usize,
    partials: usize,
    /// Per level, where its weighted and its unit edges start (one more entry marks the end).
    levels: Vec<[u32; 2]>,
    /// Per window, its first level: the sweep of a last seed in it starts there.
    windows: Vec<u32>,
    /// Weighted edges `v → u` as `v | u << 32`, the term `ū += partial[k] · v̄`, and their `k`.
    weighted: Vec<u64>,
    edge: Vec<u32>,
    /// Unit edges `v → u` as `v | u << 32`, with [`NEG`] in `u` for the term `ū −= v̄`.
    unit: Vec<u64>,
}

impl Derived for Schedule {
    fn capacity_bytes(&self) -> usize {
        (self.levels.capacity() * 2 + self.windows.capacity() + self.edge.capacity()) * 4
            + (self.weighted.capacity() + self.unit.capacity()) * 8
    }
    derived_any!();
}

/// Every edge of `d` in the plain sweep's order: the node `v` it reads, its operand `u` (with
/// [`NEG`] for a `−1` unit edge), and the index of its partial (`None` for a unit edge).
fn each_edge<T: Copy>(d: &TapeData<T>, mut visit: impl FnMut(usize, u32, Option<u32>)) {
    for (v, edges) in d.walk_back(d.len()) {
        match edges {
            Edges::Weighted(lo, hi) => {
                for (&u, k) in d.parents()[lo..hi].iter().zip(lo as u32..) {
                    visit(v, u, Some(k));
                }
            }
            Edges::Unit(lo, hi) => d.units()[lo..hi].iter().for_each(|&q| visit(v, q, None)),
        }
    }
}

impl Schedule {
    /// The schedule of the edges of `d`: one walk gives each edge its level, a second puts
    /// each edge in its place (a counting sort by level).
    pub fn of<T: Copy>(d: &TapeData<T>) -> Schedule {
        let n = d.len();
        // Per node, the level of the last term added to its adjoint; per level, its counts.
        let mut last = vec![0u32; n];
        let mut counts: Vec<[u32; 2]> = vec![[0; 2]];
        let mut windows = vec![0u32; n.div_ceil(WINDOW)];
        let mut edge_level = Vec::new();
        let (mut floor, mut window) = (0, usize::MAX);
        each_edge(d, |v, u, k| {
            if v / WINDOW != window {
                // A new window: its levels come after every level so far.
                window = v / WINDOW;
                floor = counts.len() as u32 - 1;
                windows[window] = floor + 1;
            }
            let u = (u & !NEG) as usize;
            let t = last[v].max(last[u]).max(floor) + 1;
            last[u] = t;
            if counts.len() <= t as usize {
                counts.push([0; 2]);
            }
            counts[t as usize][k.is_none() as usize] += 1;
            edge_level.push(t);
        });
        // A window without edges starts where the one before it does (past every level for
        // the first).
        for w in 0..windows.len() {
            if windows[w] == 0 {
                windows[w] = if w == 0 {
                    counts.len() as u32
                } else {
                    windows[w - 1]
                };
            }
        }
        let mut levels = vec![[0u32; 2]; counts.len() + 1];
        for (t, c) in counts.iter().enumerate() {
            levels[t + 1] = [levels[t][0] + c[0], levels[t][1] + c[1]];
        }
        let [weighted, unit] = levels[counts.len()].map(|c| c as usize);
        let (mut weighted, mut edge, mut unit) =
            (vec![0; weighted], vec![0; weighted], vec![0; unit]);
        let mut next = levels.clone();
        let mut edge_levels = edge_level.into_iter();
        each_edge(d, |v, u, k| {
            let t = edge_levels.next().expect("a level per edge") as usize;
            let vu = v as u64 | (u as u64) << 32;
            let at = &mut next[t][k.is_none() as usize];
            match k {
                Some(k) => (weighted[*at as usize], edge[*at as usize]) = (vu, k),
                None => unit[*at as usize] = vu,
            }
            *at += 1;
        });
        Schedule {
            nodes: n,
            partials: d.parents().len(),
            levels,
            windows,
            weighted,
            edge,
            unit,
        }
    }
}

/// The sweep of a tape of `f64` by `s`: what the plain sweep
/// ([`scalar_f64`](super::kernel::scalar_f64)) gives, bit for bit (NaNs aside). `adj` holds the
/// seeds of the nodes before its length, as there, each added to `+0` (so none is `−0`).
///
/// The terms are added as the textbook writes them, `ū += w · v̄` and `ū ± v̄`, with no test of
/// the structural zeros where none is needed: no adjoint is ever `−0` (it starts at `+0` or a
/// seed added to `+0`, and `x + y` is `−0` only if both are), so adding a zero term is the
/// same as skipping it. Only a product `0 · ∞` or `0 · NaN` needs the test of [`structural`],
/// and it is a NaN: so only a NaN product is tested again.
pub(crate) fn sweep(s: &Schedule, partial: &[f64], adj: &mut Vec<f64>) {
    let end = adj.len();
    if end == 0 {
        return;
    }
    assert!(
        s.nodes >= end && s.partials == partial.len(),
        "a schedule swept with another tape's arrays"
    );
    // From the window of the last seed: its nodes after `end` hold zeros, which add nothing.
    let window = (end - 1) / WINDOW;
    adj.resize(((window + 1) * WINDOW).min(s.nodes), 0.0);
    for t in s.windows[window] as usize..s.levels.len() - 1 {
        let ([w0, u0], [w1, u1]) = (s.levels[t], s.levels[t + 1]);
        let (w0, w1, u0, u1) = (w0 as usize, w1 as usize, u0 as usize, u1 as usize);
        for (&vu, &k) in s.weighted[w0..w1].iter().zip(&s.edge[w0..w1]) {
            let (v, u) = (vu as u32 as usize, (vu >> 32) as usize);
            let (a, w) = (adj[v], partial[k as usize]);
            let x = w * a;
            adj[u] += if x.is_nan() { structural(w, a, x) } else { x };
        }
        for &vu in &s.unit[u0..u1] {
            let (v, u) = (vu as u32 as usize, (vu >> 32) as u32);
            let a = adj[v];
            if u & NEG == 0 {
                adj[(u & !NEG) as usize] += a;
            } else {
                adj[(u & !NEG) as usize] -= a;
            }
        }
    }
    adj.truncate(end);
}
