//! The arena of one sparsity detection: the index sets of its tracers (sorted, each a node;
//! and the unions of the sets of up to four inputs that a tracer holds itself),
//! the pairs that second derivatives couple, and the reason global detection gave up.

use super::number::{Curvature, EMPTY, FLAT, Form, NONE, Tracer, and_input, curvature};
use crate::sparse::detect::union::union_of_sorted;
use shared_ops::Binary;
use shared_ops::memory::Reusable;
use std::cell::{Cell, RefCell};

/// One detection's sets: node `k`'s inputs are `items[bounds[k]..bounds[k + 1]]`.
#[derive(Default)]
pub(super) struct Arena {
    pub(super) bounds: Vec<usize>,
    pub(super) items: Vec<u32>,
    /// Pairs `(i, j)`, `i ≤ j`, of inputs some nonlinear operation couples (Hessians only).
    pub(super) pairs: Option<Vec<(u32, u32)>>,
    /// Pairs kept after the last sort and dedup.
    deduped: usize,
    /// Some operation coupled every input with every input: the Hessian's pattern is full,
    /// and no pair is collected from here on (Hessians only).
    pub(super) saturated: bool,
    /// Values are carried (local detection).
    pub(super) local: bool,
    /// The first decision that needed a value, in global detection.
    pub(super) refused: Option<String>,
    scratch: Vec<u32>,
    /// Nodes `0..inputs` are the inputs.
    inputs: u32,
}

/// A detection's buffers, kept for the next detection on this thread in its kept buffers
/// (`shared_ops::memory`): the arena's bounds and items, and the tracers of the inputs. A fresh
/// arena's growth (page faults, copies) costs as much as the detection itself.
#[derive(Default)]
pub(super) struct Spare {
    pub bounds: Vec<usize>,
    pub items: Vec<u32>,
    pub inputs: Vec<Tracer>,
}

impl Reusable for Spare {
    fn bytes(&self) -> usize {
        8 * self.bounds.capacity()
            + 4 * self.items.capacity()
            + size_of::<Tracer>() * self.inputs.capacity()
    }
    fn shrink(&mut self) {
        self.bounds.shrink_to_fit();
        self.items.shrink_to_fit();
        self.inputs.shrink_to_fit();
    }
    fn empty(&mut self) {
        self.inputs.clear();
    }
}

thread_local! {
    pub(super) static ARENA: RefCell<Option<Arena>> = const { RefCell::new(None) };
    /// A global detection of a Jacobian is running: no values to carry, no pairs to couple, so
    /// a one-argument rule keeps its operand's set without borrowing the arena.
    pub(super) static PLAIN: Cell<bool> = const { Cell::new(false) };
}

/// `f` on the running detection's arena.
///
/// # Panics
///
/// Outside a detection (a `Tracer` kept from one, or used on another thread).
pub(super) fn with<R>(f: impl FnOnce(&mut Arena) -> R) -> R {
    ARENA.with(|a| {
        let mut a = a.borrow_mut();
        let arena = a
            .as_mut()
            .expect("a Tracer was used outside a sparsity detection (or on another thread)");
        f(arena)
    })
}

impl Arena {
    /// The arena of a detection of `n` inputs, in kept buffers: nodes `0..n` are the inputs.
    pub(super) fn new(
        mut bounds: Vec<usize>,
        mut items: Vec<u32>,
        n: usize,
        local: bool,
        hessian: bool,
    ) -> Arena {
        bounds.clear();
        items.clear();
        bounds.reserve(4 * n + 1);
        items.reserve(8 * n);
        bounds.extend(0..=n);
        items.extend(0..n as u32);
        Arena {
            bounds,
            items,
            pairs: hessian.then(Vec::new),
            local,
            inputs: n as u32,
            ..Arena::default()
        }
    }

    pub(super) fn set(&self, node: u32) -> &[u32] {
        match node {
            NONE | FLAT => &[],
            k => &self.items[self.bounds[k as usize]..self.bounds[k as usize + 1]],
        }
    }

    /// A node of the five inputs of `five` (increasing): a held set that outgrew the tracer.
    /// After a refusal the result is an error: the work is skipped, as for nodes.
    pub(super) fn five(&mut self, five: &[u32; 5]) -> Tracer {
        let node = if self.refused.is_some() {
            NONE
        } else {
            self.new_set(five)
        };
        Tracer::node(node, f64::NAN)
    }

    /// A node whose set is the union of `a`'s and `b`'s: one of them if it holds the other's
    /// (no new node), else a new node. Inlined into every operation, so that the cases that
    /// touch no set pay no call.
    #[inline(always)]
    fn union2(&mut self, a: u32, b: u32) -> u32 {
        // NONE and FLAT, the two largest nodes, hold no input: the union is the other operand,
        // and FLAT (a value that depends on inputs) wins over NONE. That is the smaller node.
        if a == b || a.max(b) >= FLAT {
            return a.min(b);
        }
        // Nodes below `inputs` are the inputs, each its own set: adding one to a small set (a
        // stencil's row, a sum, term by term) is an insertion that reads only the other set.
        match (a < self.inputs, b < self.inputs) {
            (false, true) => self.insert(a, b),
            (true, false) => self.insert(b, a),
            (true, true) => {
                self.items.extend([a.min(b), a.max(b)]);
                self.close(self.items.len())
            }
            (false, false) => self.merge_sets(a, b),
        }
    }

    /// [`union2`](Self::union2) of two sets that are not inputs, by a merge.
    #[inline(never)]
    fn merge_sets(&mut self, a: u32, b: u32) -> u32 {
        let (ra, rb) = (self.range(a), self.range(b));
        let (la, lb) = (ra.len(), rb.len());
        // Merged aside, so that nothing is written to the arena unless the union is a new set:
        // small sets (a stencil's rows) on the stack, large ones in the scratch buffer.
        let mut small = [0; 8];
        let on_stack = la + lb <= small.len();
        let len = if on_stack {
            union_of_sorted(&self.items[ra], &self.items[rb], &mut small)
        } else {
            self.merge_large(ra, rb)
        };
        // Same size as an operand: it is that operand's set.
        if len == la {
            a
        } else if len == lb {
            b
        } else if on_stack {
            self.push_small(&small, len)
        } else {
            self.items.extend_from_slice(&self.scratch[..len]);
            self.bounds.push(self.items.len());
            (self.bounds.len() - 2) as u32
        }
    }

    /// The node of `a`'s set with the input `x` added: `a` if it holds `x`, else a new node.
    /// A set of fewer than 8 is written at the arena's end, element by element: the smaller
    /// inputs, `x`, the larger ones. (Built on the stack and copied in, the set would be read
    /// back by wider loads than the stores that wrote it, which stalls store-to-load
    /// forwarding.)
    #[inline(never)]
    fn insert(&mut self, a: u32, x: u32) -> u32 {
        let r = self.range(a);
        let len = r.len();
        if len >= 8 {
            return self.merge_sets(a, x);
        }
        // Held already (a stencil's centre, added again by its nonlinear term): nothing to write.
        if self.items[r.clone()].contains(&x) {
            return a;
        }
        let end = self.items.len();
        self.items.extend_from_slice(&[0; 8]);
        let (old, new) = self.items.split_at_mut(end);
        let (src, new) = (&old[r], &mut new[..=len]);
        // The smaller inputs, then x, then the larger ones.
        let mut k = 0;
        while k < len && src[k] < x {
            new[k] = src[k];
            k += 1;
        }
        new[k] = x;
        while k < len {
            new[k + 1] = src[k];
            k += 1;
        }
        self.close(end + len + 1)
    }

    /// Ends the set written at the arena's end at `end`: a new node.
    #[inline(always)]
    fn close(&mut self, end: usize) -> u32 {
        self.items.truncate(end);
        self.bounds.push(end);
        (self.bounds.len() - 2) as u32
    }

    /// A new node whose set is `set[..len]`. All eight are copied, then cut: a copy of fixed
    /// size is inlined, a call to memmove for a handful of numbers is not.
    #[inline(always)]
    fn push_small(&mut self, set: &[u32; 8], len: usize) -> u32 {
        let end = self.items.len() + len;
        self.items.extend_from_slice(set);
        self.items.truncate(end);
        self.bounds.push(self.items.len());
        (self.bounds.len() - 2) as u32
    }

    /// [`union_of_sorted`] of two sets of the arena into the scratch buffer.
    #[inline(never)]
    fn merge_large(&mut self, ra: std::ops::Range<usize>, rb: std::ops::Range<usize>) -> usize {
        let mut out = std::mem::take(&mut self.scratch);
        out.resize(ra.len() + rb.len(), 0);
        let len = union_of_sorted(&self.items[ra], &self.items[rb], &mut out);
        self.scratch = out;
        len
    }

    /// A new node whose set is the union of the given tracers' sets (a sum of many terms).
    pub(super) fn union(&mut self, terms: &[Tracer]) -> u32 {
        if let [a, b] = *terms
            && let (Form::Node(a, x), Form::Node(b, y)) = (a.form(), b.form())
        {
            let (a, b) = (self.joined(a, x), self.joined(b, y));
            return self.union2(a, b);
        }
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        for t in terms {
            match t.form() {
                Form::Node(k, value) => {
                    scratch.extend_from_slice(self.set(k));
                    scratch.extend(self.and_input(k, value));
                }
                Form::Set(ref set) => scratch.extend_from_slice(Tracer::inputs(set)),
            }
        }
        scratch.sort_unstable();
        scratch.dedup();
        let node = self.new_set(&scratch);
        self.scratch = scratch;
        node
    }

    /// A new node whose set is `set` (increasing). Inlined, so that a copy of known length
    /// (five inputs) is not a call to `memmove`.
    #[inline(always)]
    pub(super) fn new_set(&mut self, set: &[u32]) -> u32 {
        self.items.extend_from_slice(set);
        self.bounds.push(self.items.len());
        (self.bounds.len() - 2) as u32
    }

    /// The node of node `a`'s set with the inputs of `set` (increasing) added: `a` if it
    /// holds them, else a new node. The union is written at the arena's end, as
    /// [`insert`](Self::insert) writes.
    pub(super) fn union_with(&mut self, a: u32, set: &[u32]) -> u32 {
        if let [x] = *set {
            return self.insert(a, x);
        }
        let ra = self.range(a);
        let (la, end) = (ra.len(), self.items.len());
        self.items.resize(end + la + set.len(), 0);
        let (old, new) = self.items.split_at_mut(end);
        let len = union_of_sorted(&old[ra], set, new);
        if len == la {
            self.items.truncate(end);
            return a;
        }
        self.close(end + len)
    }

    /// The input that node `k`'s `value` names besides the node, in global detection of a
    /// Jacobian (in the others a value names none).
    #[inline(always)]
    fn and_input(&self, k: u32, value: f64) -> Option<u32> {
        and_input(value).filter(|_| k < FLAT && !self.local && self.pairs.is_none())
    }

    /// Node `k` with the input its `value` names, if it names one, as one node.
    #[inline(always)]
    pub(super) fn joined(&mut self, k: u32, value: f64) -> u32 {
        match self.and_input(k, value) {
            Some(x) => self.insert(k, x),
            None => k,
        }
    }

    fn range(&self, node: u32) -> std::ops::Range<usize> {
        self.bounds[node as usize]..self.bounds[node as usize + 1]
    }

    /// `rule(a, b)` where a set is held in a tracer (global detection of a Jacobian, so no pairs
    /// to couple and no value to compute): the union of the sets, held in the tracer while it
    /// has at most four inputs, else a node of the arena. After a refusal the result is an error:
    /// the work is skipped, as for nodes.
    pub(super) fn union_of_sets<R: Binary>(&mut self, a: Tracer, b: Tracer) -> Tracer {
        if self.refused.is_some() {
            return Tracer::node(NONE, f64::NAN);
        }
        if R::FLAT {
            return Tracer::node(FLAT, f64::NAN);
        }
        let node = match (a.form(), b.form()) {
            // (A held set and one input: inlined in `apply2`.)
            (Form::Set(s), Form::Set(t)) => {
                let mut union = [0; 8];
                let len = union_of_sorted(Tracer::inputs(&s), Tracer::inputs(&t), &mut union);
                if len > 4 {
                    self.push_small(&union, len)
                } else {
                    let mut set = [EMPTY; 4];
                    set[..len].copy_from_slice(&union[..len]);
                    return Tracer::set(set);
                }
            }
            // NONE and FLAT hold no input.
            (Form::Set(_), Form::Node(k, _)) if k >= FLAT => return a,
            (Form::Node(k, _), Form::Set(_)) if k >= FLAT => return b,
            (Form::Set(s), Form::Node(k, v)) | (Form::Node(k, v), Form::Set(s)) => {
                let k = self.joined(k, v);
                self.union_with(k, Tracer::inputs(&s))
            }
            (Form::Node(..), Form::Node(..)) => unreachable!("a set is held in a tracer"),
        };
        Tracer::node(node, f64::NAN)
    }

    /// The node of `rule(a, b)`, coupling what its curvature couples.
    #[inline(always)]
    pub(super) fn union_for<R: Binary>(&mut self, a: u32, b: u32) -> u32 {
        let curvature = curvature::<R>();
        if self.refused.is_some() {
            return NONE;
        }
        if R::FLAT {
            return FLAT;
        }
        let ab = self.union2(a, b);
        match curvature {
            Curvature::Product => self.couple(a, b),
            Curvature::Quotient => {
                self.couple(a, b);
                self.couple(b, b);
            }
            Curvature::Nonlinear => self.couple(ab, ab),
            Curvature::Linear => {}
        }
        ab
    }

    /// Records that second derivatives couple every input of `a` with every input of `b`, if
    /// the detection is a Hessian's.
    #[inline(always)]
    pub(super) fn couple(&mut self, a: u32, b: u32) {
        if let Some(pairs) = self.pairs.take() {
            self.add_pairs(pairs, a, b);
        }
    }

    /// Whether coupling `a` and `b` couples every pair of inputs: then the pattern is full,
    /// and collecting the pairs (n² for each such operation) is skipped from here on.
    fn saturates(&self, a: u32, b: u32) -> bool {
        let n = self.inputs as usize;
        n > 0 && self.set(a).len() == n && self.set(b).len() == n
    }

    fn add_pairs(&mut self, mut pairs: Vec<(u32, u32)>, a: u32, b: u32) {
        if self.saturated || self.saturates(a, b) {
            self.saturated = true;
            pairs.clear();
            self.pairs = Some(pairs);
            return;
        }
        for &i in self.set(a) {
            for &j in self.set(b) {
                pairs.push((i.min(j), i.max(j)));
            }
        }
        // Keep duplicates from growing without bound: dedup when the list has doubled.
        if pairs.len() > 2 * self.deduped.max(1 << 16) {
            pairs.sort_unstable();
            pairs.dedup();
            self.deduped = pairs.len();
        }
        self.pairs = Some(pairs);
    }

    pub(super) fn refuse(&mut self, what: impl FnOnce() -> String) {
        if !self.local && self.refused.is_none() {
            self.refused = Some(what());
        }
    }
}

/// The set `s` with the input `x` added, if it has room; else the five inputs.
#[inline(always)]
pub(super) fn insert_held(s: [u32; 4], x: u32) -> Result<[u32; 4], [u32; 5]> {
    if s.contains(&x) {
        return Ok(s);
    }
    // Word k of the new set is the larger of (the smaller of sₖ and x) and sₖ₋₁: the smaller
    // inputs, x, then the larger ones (an `EMPTY` is larger than every input).
    let set = [
        s[0].min(x),
        s[1].min(x).max(s[0]),
        s[2].min(x).max(s[1]),
        s[3].min(x).max(s[2]),
    ];
    if s[3] == EMPTY {
        Ok(set)
    } else {
        Err([set[0], set[1], set[2], set[3], x.max(s[3])])
    }
}
