//! The Wengert list as flat arrays (structure of arrays), and how a node is appended.
//!
//! A node is one elementary operation; an edge joins it to one operand (its parent) and holds
//! the local partial `∂v/∂u`. A sweep reads, per node, where its edges start, and per edge the
//! parent and the partial:
//!
//! | array | per | bytes (`T = f64`) | holds |
//! |---|---|---|---|
//! | `start` | node | 4 | index of the node's first edge; the top bit marks a *unit* node |
//! | `parent`, `partial` | weighted edge | 4 + 8 | operand index, and `∂v/∂u` |
//! | `unit` | unit edge | 4 | operand index; the top bit means `∂v/∂u = −1`, else `+1` |
//!
//! A node's edges are all weighted or all unit. Unit nodes are the sums and differences
//! (`a + b`, `a − b`, `−a`, `a + c`, a sum of n terms): their partials are ±1 by the rule table,
//! so the tape keeps only the operand and the sign, a third of a weighted edge. Weighted edges
//! of a node end where the next weighted node's begin (unit edges likewise), so a sweep walking
//! back needs no end index.
//!
//! Values, operations and constants are not needed by a sweep; a replayable or traced tape
//! keeps them too, in its [`Program`], for re-evaluation and traces.
//!
//! This is the bottom layer of the crate: it imports nothing from the layers above (the tape
//! that records, the sweeps, the replay), which read and append through the items here:
//!
//! * [`append`]: what one operation appends (a node and its edges);
//! * [`program`], [`op_code`], [`guard`]: what a replayable tape keeps beside the edges;
//! * [`derived`]: forms the layers above build from a finished program and keep with it.

pub(crate) mod append;
pub(crate) mod derived;
pub(crate) mod guard;
pub(crate) mod op_code;
pub(crate) mod program;
mod walk;

use program::Program;
use shared_ops::memory::Reusable;
pub(crate) use walk::Edges;
pub use walk::Operands;

/// In `start`: the node's edges are in `unit`.
pub(crate) const UNIT: u32 = 1 << 31;
/// In a unit edge: the partial is −1 (else +1).
pub(crate) const NEG: u32 = 1 << 31;
/// The most nodes one tape holds, and the most edges of each kind (indices keep a flag bit).
pub(crate) const MAX: usize = (UNIT - 1) as usize;

/// What a recording keeps beside the sweep's arrays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Keeps {
    /// Only what sweeps need.
    Sweeps,
    /// Also the program, for re-evaluation ([`Tape::replayable`](crate::Tape::replayable)).
    Program,
    /// The program, and every operand's edge even where its partial is 0 (the loser of `max`),
    /// for the teaching views ([`Tape::traced`](crate::Tape::traced)).
    Trace,
}

/// One recording: the arrays above, and the names given to variables.
///
/// The four arrays are private: only this file appends to them, so that the bound of the fast
/// path ([`limit`](TapeData::limit)) can never promise room that is not there. (Not `Clone`: a
/// clone's capacities could be smaller than the bound it copied.)
#[derive(Debug)]
pub(crate) struct TapeData<T> {
    start: Vec<u32>,
    parent: Vec<u32>,
    partial: Vec<T>,
    unit: Vec<u32>,
    /// Operands of sums being collected from an iterator (whose items may record first).
    pub staged: Vec<u32>,
    /// Operations, operands, values and guards, on a replayable or traced tape.
    pub program: Option<Box<Program<T>>>,
    /// A program's buffers kept while the tape records without one, for its next replayable
    /// recording (tapes are recycled: see `memory`).
    spare_program: Option<Box<Program<T>>>,
    /// Keep the zero edges of `max`/`min` (a traced tape shows every operand).
    pub traced: bool,
    pub names: Vec<(u32, String)>,
    /// The fast path's bound: while `start.len() < limit`, `start` has room for one more node
    /// and each edge array room for [`FAST_EDGES`] more edges per node up to `limit` (kept by
    /// [`TapeData::relimit`]).
    limit: usize,
    /// Tests: every node takes the slow path.
    #[cfg(test)]
    pub never_fast: bool,
}

/// The most edges a node appended on the fast path has.
const FAST_EDGES: usize = 3;

impl<T> TapeData<T> {
    /// What this recording keeps.
    pub fn keeps(&self) -> Keeps {
        match (self.traced, self.program.is_some()) {
            (true, _) => Keeps::Trace,
            (false, true) => Keeps::Program,
            (false, false) => Keeps::Sweeps,
        }
    }
}

impl<T> Default for TapeData<T> {
    fn default() -> Self {
        TapeData {
            start: Vec::new(),
            parent: Vec::new(),
            partial: Vec::new(),
            unit: Vec::new(),
            staged: Vec::new(),
            program: None,
            spare_program: None,
            traced: false,
            names: Vec::new(),
            limit: 0,
            #[cfg(test)]
            never_fast: false,
        }
    }
}

impl<T: Copy> TapeData<T> {
    /// Forgets every node, keeping the capacity (the program's too), and what to keep next.
    pub fn reset(&mut self, keeps: Keeps) {
        self.start.clear();
        self.parent.clear();
        self.partial.clear();
        self.unit.clear();
        self.staged.clear();
        self.names.clear();
        self.traced = keeps == Keeps::Trace;
        match keeps {
            Keeps::Sweeps => {
                if let Some(mut p) = self.program.take() {
                    // Emptied now: no user rule or constant outlives its recording.
                    p.clear();
                    self.spare_program = Some(p);
                }
            }
            _ => {
                let mut p = self.program.take().or_else(|| self.spare_program.take());
                match &mut p {
                    Some(p) => p.clear(),
                    None => p = Some(Box::default()),
                }
                self.program = p;
            }
        }
        self.relimit();
    }

    /// Takes the edge arrays (the parents of weighted edges, the unit edges) out, and
    /// forgets the rest as [`reset`](Self::reset) does: for a compiled gradient, which keeps
    /// them when its recording is dropped.
    #[cfg(feature = "jit")]
    pub fn take_edges(&mut self) -> (Vec<u32>, Vec<u32>) {
        let mut edges = (
            core::mem::take(&mut self.parent),
            core::mem::take(&mut self.unit),
        );
        edges.0.shrink_to_fit();
        edges.1.shrink_to_fit();
        self.reset(Keeps::Sweeps);
        edges
    }

    /// Room for `nodes` nodes and as many edges of each kind, beyond what is recorded.
    pub fn reserve(&mut self, nodes: usize) {
        let room = |len: usize| nodes.min(MAX.saturating_sub(len));
        self.start.reserve_exact(room(self.start.len()));
        self.parent.reserve_exact(room(self.parent.len()));
        self.partial.reserve_exact(room(self.partial.len()));
        self.unit.reserve_exact(room(self.unit.len()));
        self.relimit();
    }

    /// [`reserve`](TapeData::reserve), and every page of the room written once, so that the
    /// operating system maps it now rather than during a recording.
    pub fn prefault(&mut self, nodes: usize)
    where
        T: Default,
    {
        self.reserve(nodes);
        touch(&mut self.start, 0);
        touch(&mut self.parent, 0);
        touch(&mut self.partial, T::default());
        touch(&mut self.unit, 0);
    }

    /// Recomputes the fast path's bound from the capacities: nodes may be appended on the fast
    /// path while each finds room for itself and [`FAST_EDGES`] edges of either kind.
    fn relimit(&mut self) {
        #[cfg(test)]
        if self.never_fast {
            self.limit = 0;
            return;
        }
        let edge_room = |len: usize, cap: usize| cap.min(MAX).saturating_sub(len) / FAST_EDGES;
        let room = (self.start.capacity().min(MAX) - self.start.len())
            .min(edge_room(self.parent.len(), self.parent.capacity()))
            .min(edge_room(self.partial.len(), self.partial.capacity()))
            .min(edge_room(self.unit.len(), self.unit.capacity()));
        self.limit = self.start.len() + room;
    }

    /// Grows every array that is too full for the fast path, then moves its bound.
    #[cold]
    #[inline(never)]
    fn make_room(&mut self) {
        if self.start.len() == self.start.capacity() {
            grow(&mut self.start, 1, "nodes");
        }
        if self.parent.capacity() - self.parent.len() < FAST_EDGES {
            self.grow_weighted(FAST_EDGES);
        }
        if self.unit.capacity() - self.unit.len() < FAST_EDGES {
            grow(&mut self.unit, FAST_EDGES, "unit edges");
        }
        self.relimit();
    }

    /// Nodes recorded.
    pub fn len(&self) -> usize {
        self.start.len()
    }

    /// Per node, where its edges start (the top bit marks unit edges).
    pub fn starts(&self) -> &[u32] {
        &self.start
    }

    /// Per weighted edge, the operand.
    pub fn parents(&self) -> &[u32] {
        &self.parent
    }

    /// Per weighted edge, the partial.
    pub fn partials(&self) -> &[T] {
        &self.partial
    }

    /// Per unit edge, the operand (the top bit for −1).
    pub fn units(&self) -> &[u32] {
        &self.unit
    }

    /// The partials, to rewrite in place (re-evaluation).
    pub fn partials_mut(&mut self) -> &mut [T] {
        &mut self.partial
    }

    /// Appends a node whose edges begin at `first` (with the `UNIT` flag for unit edges) on the
    /// slow path.
    fn node(&mut self, first: u32) -> u32 {
        let i = self.start.len();
        if i == self.start.capacity() {
            grow(&mut self.start, 1, "nodes");
        }
        self.start.push(first);
        i as u32
    }

    /// An input: a node without edges.
    #[inline(always)]
    pub fn input(&mut self) -> u32 {
        self.weighted::<0>([], [])
    }

    /// A node with `K` weighted edges.
    ///
    /// The fast path is one comparison and plain writes, and its slow path a [`cold_path!`]:
    /// no `Vec::push`, whose growth is a call that returns into the loop of the user's function
    /// (docs/unsafe.md names the benchmark this path is kept for).
    #[inline(always)]
    pub fn weighted<const K: usize>(&mut self, parents: [u32; K], partials: [T; K]) -> u32 {
        const { assert!(K <= FAST_EDGES) };
        let i = self.start.len();
        if i >= self.limit {
            return self.weighted_slow(parents, partials);
        }
        let e = self.parent.len();
        // SAFETY: `i < limit`, so by the invariant of `limit` (kept by `relimit`, and by every
        // fast append taking one node and at most `FAST_EDGES` edges) `start` has room for one
        // element and `parent` and `partial` for `K`. The elements are `Copy` and written
        // before the lengths cover them.
        #[allow(unsafe_code)]
        unsafe {
            self.start.as_mut_ptr().add(i).write(e as u32);
            self.start.set_len(i + 1);
            let (p, w) = (
                self.parent.as_mut_ptr().add(e),
                self.partial.as_mut_ptr().add(e),
            );
            for k in 0..K {
                p.add(k).write(parents[k]);
                w.add(k).write(partials[k]);
            }
            self.parent.set_len(e + K);
            self.partial.set_len(e + K);
        }
        i as u32
    }

    cold_path! {
        /// The slow path of [`weighted`](TapeData::weighted): grow (or, in tests, append
        /// without the fast path).
        fn weighted_slow<const K: usize>(&mut self, parents: [u32; K], partials: [T; K]) -> u32 {
            self.make_room();
            if self.start.len() < self.limit {
                return self.weighted(parents, partials);
            }
            // Only with `never_fast` (tests): append by pushes.
            let first = self.parent.len();
            if first + K > self.parent.capacity() {
                self.grow_weighted(K);
            }
            self.parent.extend_from_slice(&parents);
            self.partial.extend_from_slice(&partials);
            self.node(first as u32)
        }
    }

    /// A node with the weighted edges (parent, partial) of `edges`, an iterator that records
    /// nothing itself and yields at most `k` of them (room for `k` is made first, so the
    /// pushes do not reallocate).
    pub fn weighted_exact(
        &mut self,
        k: usize,
        edges: impl Iterator<Item = (u32, T)> + Clone,
    ) -> u32 {
        let first = self.parent.len();
        if first + k > self.parent.capacity() {
            self.grow_weighted(k);
        }
        self.parent.extend(edges.clone().map(|e| e.0));
        self.partial.extend(edges.map(|e| e.1));
        let i = self.node(first as u32);
        self.relimit();
        i
    }

    /// A node with `K` unit edges (operand indices, `NEG` set for −1), as
    /// [`weighted`](TapeData::weighted).
    #[inline(always)]
    pub fn unit<const K: usize>(&mut self, parents: [u32; K]) -> u32 {
        const { assert!(K <= FAST_EDGES) };
        let i = self.start.len();
        if i >= self.limit {
            return self.unit_slow(parents);
        }
        let e = self.unit.len();
        // SAFETY: as in `weighted`: `start` has room for one element and `unit` for `K`.
        #[allow(unsafe_code)]
        unsafe {
            self.start.as_mut_ptr().add(i).write(e as u32 | UNIT);
            self.start.set_len(i + 1);
            let p = self.unit.as_mut_ptr().add(e);
            for (k, &parent) in parents.iter().enumerate() {
                p.add(k).write(parent);
            }
            self.unit.set_len(e + K);
        }
        i as u32
    }

    cold_path! {
        /// The slow path of [`unit`](TapeData::unit).
        fn unit_slow<const K: usize>(&mut self, parents: [u32; K]) -> u32 {
            self.make_room();
            if self.start.len() < self.limit {
                return self.unit(parents);
            }
            // Only with `never_fast` (tests): append by pushes.
            let first = self.unit.len();
            if first + K > self.unit.capacity() {
                grow(&mut self.unit, K, "unit edges");
            }
            self.unit.extend_from_slice(&parents);
            self.node(first as u32 | UNIT)
        }
    }

    /// Stages an operand of a sum under construction; returns its position.
    #[inline(always)]
    pub fn stage(&mut self, parent: u32) -> usize {
        self.staged.push(parent);
        self.staged.len() - 1
    }

    /// A unit node (a sum) over the operands staged from `base` on, which it unstages.
    pub fn unit_staged(&mut self, base: usize) -> u32 {
        let first = self.unit.len();
        let k = self.staged.len() - base;
        if first + k > self.unit.capacity() {
            grow(&mut self.unit, k, "unit edges");
        }
        self.unit.extend_from_slice(&self.staged[base..]);
        self.staged.truncate(base);
        let i = self.node(first as u32 | UNIT);
        self.relimit();
        i
    }

    #[cold]
    #[inline(never)]
    fn grow_weighted(&mut self, k: usize) {
        grow(&mut self.parent, k, "weighted edges");
        let cap = self.parent.capacity();
        self.partial.reserve_exact(cap - self.partial.len());
    }

    /// Bytes of what is recorded (lengths, not capacities).
    pub fn bytes(&self) -> usize {
        let program = self.program.as_ref().map_or(0, |p| p.bytes());
        self.start.len() * 4
            + self.parent.len() * (4 + size_of::<T>())
            + self.unit.len() * 4
            + program
    }

    /// Frees the arrays' capacity beyond their lengths, keeping the program and its forms.
    pub fn shrink_arrays(&mut self) {
        self.start.shrink_to_fit();
        self.parent.shrink_to_fit();
        self.partial.shrink_to_fit();
        self.unit.shrink_to_fit();
        self.staged.shrink_to_fit();
        // The fast path's room past the end, so that recording as much again does not grow.
        self.reserve(FAST_EDGES + 1);
    }

    /// Frees the capacity beyond the lengths.
    pub fn shrink_to_fit(&mut self) {
        self.start.shrink_to_fit();
        self.parent.shrink_to_fit();
        self.partial.shrink_to_fit();
        self.unit.shrink_to_fit();
        self.staged.shrink_to_fit();
        self.program = None;
        self.spare_program = None;
        self.relimit();
    }

    /// Bytes held by the buffers (capacities), for the memory cap.
    pub fn capacity_bytes(&self) -> usize {
        let program = [&self.program, &self.spare_program]
            .iter()
            .map(|p| p.as_ref().map_or(0, |p| p.capacity_bytes()))
            .sum::<usize>();
        (self.start.capacity() + self.parent.capacity() + self.unit.capacity()) * 4
            + self.staged.capacity() * 4
            + self.partial.capacity() * size_of::<T>()
            + program
    }
}

/// A recording's arrays wait in the thread's kept buffers between recordings
/// (`shared_ops::memory`).
impl<T: Copy + 'static> Reusable for TapeData<T> {
    fn bytes(&self) -> usize {
        self.capacity_bytes()
    }
    fn shrink(&mut self) {
        self.shrink_to_fit();
    }
    fn empty(&mut self) {
        self.reset(Keeps::Sweeps);
    }
}

/// The slow path of appending: grow `v` to hold `k` more, doubling, and refuse to pass [`MAX`].
#[cold]
#[inline(never)]
fn grow<X>(v: &mut Vec<X>, k: usize, what: &str) {
    let len = v.len();
    if len + k > MAX {
        panic!(
            "reverse::Tape holds {len} {what} and cannot take {k} more: one tape indexes at most \
             {MAX} (2³¹ − 1); split the computation (e.g. checkpoint a loop) into several tapes"
        );
    }
    let want = v
        .capacity()
        .max(1024)
        .saturating_mul(2)
        .min(MAX)
        .max(len + k);
    v.reserve_exact(want - len);
}

#[cfg(test)]
mod tests;

/// Writes `fill` into the spare capacity of `v` and forgets it again (the length is kept).
fn touch<X: Copy>(v: &mut Vec<X>, fill: X) {
    let len = v.len();
    v.resize(v.capacity(), fill);
    v.truncate(len);
}
