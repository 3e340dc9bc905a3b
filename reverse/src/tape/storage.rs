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
//! Values and operation codes are not needed by a sweep; a *traced* tape keeps them too, in
//! [`Views`], for traces and graph exports.

use super::live::Append;
use shared_ops::OpCode;

/// In `start`: the node's edges are in `unit`.
pub(crate) const UNIT: u32 = 1 << 31;
/// In a unit edge: the partial is −1 (else +1).
pub(crate) const NEG: u32 = 1 << 31;
/// The most nodes one tape holds, and the most edges of each kind (indices keep a flag bit).
pub(crate) const MAX: usize = (UNIT - 1) as usize;

/// What a traced tape keeps beside the sweep's arrays.
#[derive(Clone, Debug)]
pub(crate) struct Views<T> {
    /// Each node's value.
    pub values: Vec<T>,
    /// Each node's operation.
    pub ops: Vec<OpCode>,
    /// Names of user-defined operations, by node.
    pub custom: Vec<(u32, &'static str)>,
}

impl<T> Default for Views<T> {
    fn default() -> Self {
        Views {
            values: Vec::new(),
            ops: Vec::new(),
            custom: Vec::new(),
        }
    }
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
    pub views: Option<Views<T>>,
    pub names: Vec<(u32, String)>,
    /// The fast path's bound: while `start.len() < limit`, `start` has room for one more node
    /// and each edge array room for [`FAST_EDGES`] more edges per node up to `limit` (kept by
    /// [`TapeData::relimit`]). 0 on a traced tape, whose every node takes the slow path.
    limit: usize,
}

/// The most edges a node appended on the fast path has.
const FAST_EDGES: usize = 3;

impl<T> Default for TapeData<T> {
    fn default() -> Self {
        TapeData {
            start: Vec::new(),
            parent: Vec::new(),
            partial: Vec::new(),
            unit: Vec::new(),
            staged: Vec::new(),
            views: None,
            names: Vec::new(),
            limit: 0,
        }
    }
}

/// The edges of one node: a range of `parent`/`partial`, or of `unit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Edges {
    Weighted(usize, usize),
    Unit(usize, usize),
}

impl<T: Copy> TapeData<T> {
    /// Forgets every node, keeping the capacity; `traced` says whether to keep views.
    pub fn reset(&mut self, traced: bool) {
        self.start.clear();
        self.parent.clear();
        self.partial.clear();
        self.unit.clear();
        self.staged.clear();
        self.names.clear();
        self.views = traced.then(Views::default);
        self.relimit();
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

    /// Recomputes the fast path's bound from the capacities: nodes may be appended on the fast
    /// path while each finds room for itself and [`FAST_EDGES`] edges of either kind.
    fn relimit(&mut self) {
        if self.views.is_some() {
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

    /// Appends a node whose edges begin at `first` (with the `UNIT` flag for unit edges) on the
    /// slow path, keeping its value and operation on a traced tape.
    fn node(&mut self, first: u32, value: T, op: OpCode) -> u32 {
        let i = self.start.len();
        if i == self.start.capacity() {
            grow(&mut self.start, 1, "nodes");
        }
        self.start.push(first);
        if let Some(v) = &mut self.views {
            v.values.push(value);
            v.ops.push(op);
        }
        i as u32
    }

    /// An input: a node without edges.
    #[inline(always)]
    pub fn input(&mut self, value: T) -> u32 {
        self.weighted::<0>([], [], value, OpCode::Input)
    }

    /// A node with `K` weighted edges.
    ///
    /// The fast path is one comparison and plain writes, and its slow path a [`cold_path!`]:
    /// no `Vec::push`, whose growth is a call that returns into the loop of the user's function.
    /// Measured on Rosenbrock n = 1000 (release, one thread): recording took 17.4 µs with
    /// pushes and 12.9 µs this way.
    #[inline(always)]
    pub fn weighted<const K: usize>(
        &mut self,
        parents: [u32; K],
        partials: [T; K],
        value: T,
        op: OpCode,
    ) -> u32 {
        const { assert!(K <= FAST_EDGES) };
        let i = self.start.len();
        if i >= self.limit {
            return self.weighted_slow(parents, partials, value, op);
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
        /// The slow path of [`weighted`](TapeData::weighted): grow, or keep a traced tape's
        /// views.
        fn weighted_slow<const K: usize>(
            &mut self,
            parents: [u32; K],
            partials: [T; K],
            value: T,
            op: OpCode,
        ) -> u32 {
            if self.views.is_none() {
                self.make_room();
                return self.weighted(parents, partials, value, op);
            }
            let first = self.parent.len();
            if first + K > self.parent.capacity() {
                self.grow_weighted(K);
            }
            self.parent.extend_from_slice(&parents);
            self.partial.extend_from_slice(&partials);
            self.node(first as u32, value, op)
        }
    }

    /// A node with the weighted edges (parent, partial) of `edges`, an iterator that records
    /// nothing itself and yields at most `k` of them (room for `k` is made first, so the
    /// pushes do not reallocate).
    pub fn weighted_exact(
        &mut self,
        k: usize,
        edges: impl Iterator<Item = (u32, T)> + Clone,
        value: T,
        op: OpCode,
    ) -> u32 {
        let first = self.parent.len();
        if first + k > self.parent.capacity() {
            self.grow_weighted(k);
        }
        self.parent.extend(edges.clone().map(|e| e.0));
        self.partial.extend(edges.map(|e| e.1));
        let i = self.node(first as u32, value, op);
        self.relimit();
        i
    }

    /// A node with `K` unit edges (operand indices, `NEG` set for −1), as
    /// [`weighted`](TapeData::weighted).
    #[inline(always)]
    pub fn unit<const K: usize>(&mut self, parents: [u32; K], value: T, op: OpCode) -> u32 {
        const { assert!(K <= FAST_EDGES) };
        let i = self.start.len();
        if i >= self.limit {
            return self.unit_slow(parents, value, op);
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
        fn unit_slow<const K: usize>(&mut self, parents: [u32; K], value: T, op: OpCode) -> u32 {
            if self.views.is_none() {
                self.make_room();
                return self.unit(parents, value, op);
            }
            let first = self.unit.len();
            if first + K > self.unit.capacity() {
                grow(&mut self.unit, K, "unit edges");
            }
            self.unit.extend_from_slice(&parents);
            self.node(first as u32 | UNIT, value, op)
        }
    }

    /// Stages an operand of a sum under construction; returns its position.
    #[inline(always)]
    pub fn stage(&mut self, parent: u32) -> usize {
        self.staged.push(parent);
        self.staged.len() - 1
    }

    /// A unit node (a sum) over the operands staged from `base` on, which it unstages.
    pub fn unit_staged(&mut self, base: usize, value: T, op: OpCode) -> u32 {
        let first = self.unit.len();
        let k = self.staged.len() - base;
        if first + k > self.unit.capacity() {
            grow(&mut self.unit, k, "unit edges");
        }
        self.unit.extend_from_slice(&self.staged[base..]);
        self.staged.truncate(base);
        let i = self.node(first as u32 | UNIT, value, op);
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

    /// The edges of every node, in recording order (for views).
    pub fn edge_ranges(&self) -> Vec<Edges> {
        let mut out: Vec<Edges> = self.walk_back(self.len()).map(|(_, e)| e).collect();
        out.reverse();
        out
    }

    /// The nodes before `end`, last first, each with the range of its edges: the walk of every
    /// sweep. A node's edges end where the next node of its kind (the one walked before it)
    /// began, so the walk carries two cursors and reads one `start` per node.
    #[inline(always)]
    pub fn walk_back(&self, end: usize) -> WalkBack<'_> {
        let (w_end, u_end) = self.ends_before(end);
        WalkBack {
            starts: &self.start[..end],
            w_end,
            u_end,
        }
    }

    /// Where the weighted and the unit edges of the nodes before `end` end: the first edge of
    /// the first node of each kind from `end` on (usually a few nodes away).
    pub fn ends_before(&self, end: usize) -> (usize, usize) {
        let (mut w, mut u) = (None, None);
        for &s in &self.start[end..] {
            if s & UNIT == 0 {
                w.get_or_insert(s as usize);
            } else {
                u.get_or_insert((s & !UNIT) as usize);
            }
            if w.is_some() && u.is_some() {
                break;
            }
        }
        (w.unwrap_or(self.parent.len()), u.unwrap_or(self.unit.len()))
    }

    /// Bytes of what is recorded (lengths, not capacities).
    pub fn bytes(&self) -> usize {
        let views = self.views.as_ref().map_or(0, |v| {
            v.values.len() * size_of::<T>() + v.ops.len() * size_of::<OpCode>()
        });
        self.start.len() * 4
            + self.parent.len() * (4 + size_of::<T>())
            + self.unit.len() * 4
            + views
    }

    /// Frees the capacity beyond the lengths.
    pub fn shrink_to_fit(&mut self) {
        self.start.shrink_to_fit();
        self.parent.shrink_to_fit();
        self.partial.shrink_to_fit();
        self.unit.shrink_to_fit();
        self.staged.shrink_to_fit();
        self.views = None;
        self.relimit();
    }

    /// Bytes held by the buffers (capacities), for the memory cap.
    pub fn capacity_bytes(&self) -> usize {
        let views = self.views.as_ref().map_or(0, |v| {
            v.values.capacity() * size_of::<T>() + v.ops.capacity() * size_of::<OpCode>()
        });
        (self.start.capacity() + self.parent.capacity() + self.unit.capacity()) * 4
            + self.staged.capacity() * 4
            + self.partial.capacity() * size_of::<T>()
            + views
    }
}

/// The walk of [`TapeData::walk_back`]: `(node, its edges)`, from the last node to the first.
pub(crate) struct WalkBack<'a> {
    starts: &'a [u32],
    w_end: usize,
    u_end: usize,
}

impl Iterator for WalkBack<'_> {
    type Item = (usize, Edges);

    #[inline(always)]
    fn next(&mut self) -> Option<(usize, Edges)> {
        let (&s, rest) = self.starts.split_last()?;
        self.starts = rest;
        let lo = (s & !UNIT) as usize;
        let edges = if s & UNIT == 0 {
            let e = Edges::Weighted(lo, self.w_end);
            self.w_end = lo;
            e
        } else {
            let e = Edges::Unit(lo, self.u_end);
            self.u_end = lo;
            e
        };
        Some((rest.len(), edges))
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

/// An input node, appended by [`live::record`](super::live::record).
pub(crate) struct Input<T>(pub T);

impl<T: Copy> Append<T> for Input<T> {
    type Out = u32;
    #[inline(always)]
    fn append(self, d: &mut TapeData<T>) -> u32 {
        d.input(self.0)
    }
}

/// A node with `K` weighted edges: operands, partials, value, operation.
pub(crate) struct Weighted<T, const K: usize>(pub [u32; K], pub [T; K], pub T, pub OpCode);

impl<T: Copy, const K: usize> Append<T> for Weighted<T, K> {
    type Out = u32;
    #[inline(always)]
    fn append(self, d: &mut TapeData<T>) -> u32 {
        d.weighted(self.0, self.1, self.2, self.3)
    }
}

/// A node with two weighted edges, of which an exactly zero one is left out (unless the tape is
/// traced, whose views show every operand): for `max` and `min`, whose loser's partial is 0.
pub(crate) struct Selecting<T>(pub [u32; 2], pub [T; 2], pub T, pub OpCode);

impl<T: shared_ops::Op> Append<T> for Selecting<T> {
    type Out = u32;
    #[inline(always)]
    fn append(self, d: &mut TapeData<T>) -> u32 {
        let Selecting([a, b], [da, db], value, op) = self;
        if d.views.is_none() {
            if da.is_zero() {
                return d.weighted([b], [db], value, op);
            }
            if db.is_zero() {
                return d.weighted([a], [da], value, op);
            }
        }
        d.weighted([a, b], [da, db], value, op)
    }
}

/// A node with `K` unit edges: operands (with `NEG` for −1), value, operation.
pub(crate) struct Unit<T, const K: usize>(pub [u32; K], pub T, pub OpCode);

impl<T: Copy, const K: usize> Append<T> for Unit<T, K> {
    type Out = u32;
    #[inline(always)]
    fn append(self, d: &mut TapeData<T>) -> u32 {
        d.unit(self.0, self.1, self.2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast path (plain writes under `limit`) stores exactly what the slow path stores:
    /// a long random mix of node kinds, from empty buffers through many growths, recorded on an
    /// untraced tape (fast path) and on a traced one (every node on the slow path).
    #[test]
    fn fast_appends_equal_slow_appends_across_growth() {
        let mut fast = TapeData::<f64>::default();
        let mut slow = TapeData::<f64>::default();
        fast.reset(false);
        slow.reset(true);
        assert_eq!(slow.limit, 0, "a traced tape takes the slow path");
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        for i in 0..60_000u32 {
            let p = |k: u64| (k as u32) % i.max(1);
            let w = f64::from(i) * 0.5;
            let op = OpCode::Mul;
            match next(7) {
                0 => {
                    let (a, b) = (p(next(1 << 20)), p(next(1 << 20)));
                    assert_eq!(
                        fast.weighted([a, b], [w, -w], w, op),
                        slow.weighted([a, b], [w, -w], w, op)
                    );
                }
                1 => {
                    let (a, b, c) = (p(next(1 << 20)), p(next(1 << 20)), p(next(1 << 20)));
                    let e = ([a, b, c], [w, 1.0, 2.0]);
                    assert_eq!(
                        fast.weighted(e.0, e.1, w, op),
                        slow.weighted(e.0, e.1, w, op)
                    );
                }
                2 => assert_eq!(fast.input(w), slow.input(w)),
                3 => {
                    let a = p(next(1 << 20)) | NEG;
                    assert_eq!(fast.unit([a], w, op), slow.unit([a], w, op));
                }
                4 => {
                    let (a, b) = (p(next(1 << 20)), p(next(1 << 20)) | NEG);
                    assert_eq!(fast.unit([a, b], w, op), slow.unit([a, b], w, op));
                }
                5 => {
                    let k = next(40) as usize;
                    let edges: Vec<(u32, f64)> =
                        (0..k).map(|j| (p(next(1 << 20)), j as f64)).collect();
                    let (ef, es) = (edges.iter().copied(), edges.iter().copied());
                    assert_eq!(
                        fast.weighted_exact(k, ef, w, op),
                        slow.weighted_exact(k, es, w, op)
                    );
                }
                _ => {
                    let k = next(30) as usize;
                    let (bf, bs) = (fast.staged.len(), slow.staged.len());
                    for _ in 0..k {
                        let a = p(next(1 << 20));
                        fast.stage(a);
                        slow.stage(a);
                    }
                    assert_eq!(fast.unit_staged(bf, w, op), slow.unit_staged(bs, w, op));
                }
            }
            assert!(fast.len() <= fast.start.capacity());
        }
        assert_eq!(fast.starts(), slow.starts());
        assert_eq!(fast.parents(), slow.parents());
        assert_eq!(fast.partials(), slow.partials());
        assert_eq!(fast.units(), slow.units());
        assert_eq!(
            slow.views.as_ref().map(|v| v.values.len()),
            Some(slow.len())
        );
        // Shrinking moves the bound with the capacities (no room left: the next node takes the
        // slow path and grows), and appending still works.
        fast.shrink_to_fit();
        assert_eq!(fast.limit, fast.len());
        let n = fast.len() as u32;
        assert_eq!(fast.weighted([0, 1], [1.0, 2.0], 3.0, OpCode::Mul), n);
        assert_eq!(fast.unit([0, 1 | NEG], 3.0, OpCode::Sub), n + 1);
    }
}
