//! The adjoint sweep: one loop over the nodes in reverse ([`TapeData::walk_back`]),
//! `ū += ∂v/∂u · v̄`.
//!
//! Structural zeros (the convention of `shared_ops::rules`): a zero adjoint or a zero partial
//! contributes nothing, so `0 · ∞` never turns into NaN.

use crate::storage::{Edges, NEG, TapeData, UNIT};
use shared_ops::Op;

/// A term of a sweep over `f64`: `x` (that is `w · a`, or `±a` for a unit edge), or `−0` where
/// the partial `w` or the adjoint `a` is zero. Adding `−0` changes nothing (`u + (−0) = u` for
/// every `u`, `−0` and NaN included), so a zero term is skipped exactly as [`generic`] skips
/// it, without a branch.
#[inline(always)]
pub(crate) fn structural(w: f64, a: f64, x: f64) -> f64 {
    if w == 0.0 || a == 0.0 { -0.0 } else { x }
}

/// The sweep of a tape of `f64`: the structural zero of a zero partial is a select
/// ([`structural`]). The same results as [`generic`], bit for bit but for the sign and payload
/// of a NaN (`u += −a` here, `u −= a` there), which Rust leaves unspecified. It spells out the
/// walk of [`TapeData::walk_back`] rather than iterate it, which is faster.
///
/// The adjoint of the next node to sweep, `i − 1`, is carried in a register: its last terms
/// come from node `i` (which, in a chain of operations, is its only consumer), and it then
/// goes straight into node `i − 1`'s terms instead of through memory, where the next load
/// would wait for the store just made. The terms still add up in the same order: the carried
/// sum starts from `i − 1`'s adjoint in memory, which holds every term of the nodes after `i`.
pub(crate) fn scalar_f64(d: &TapeData<f64>, adj: &mut [f64]) {
    let end = adj.len();
    let Some(&last) = adj.last() else { return };
    let (mut w_end, mut u_end) = d.ends_before(end);
    let (parent, partial, unit) = (
        &d.parents()[..w_end],
        &d.partials()[..w_end],
        &d.units()[..u_end],
    );
    let starts = &d.starts()[..end];
    let mut carried = last;
    for i in (0..end).rev() {
        let s = starts[i];
        let a = carried;
        adj[i] = a;
        // `prev` is no node when i = 0 (usize::MAX).
        let prev = i.wrapping_sub(1);
        let mut next = if i > 0 { adj[prev] } else { 0.0 };
        let mut add = |p: usize, term: f64| {
            debug_assert!(p < i, "an operand after its node");
            if p == prev {
                next += term;
            } else {
                adj[p] += term;
            }
        };
        let lo = (s & !UNIT) as usize;
        if s & UNIT == 0 {
            if a != 0.0 {
                for (&p, &w) in parent[lo..w_end].iter().zip(&partial[lo..w_end]) {
                    add(p as usize, structural(w, a, w * a));
                }
            }
            w_end = lo;
        } else {
            if a != 0.0 {
                let (plus, minus) = (a, -a);
                for &p in &unit[lo..u_end] {
                    add((p & !NEG) as usize, if p & NEG == 0 { plus } else { minus });
                }
            }
            u_end = lo;
        }
        carried = next;
    }
}

/// The sweep for any scalar (`Dual`s, `Var`s of an outer tape): a zero adjoint or partial is
/// skipped, never multiplied.
pub(crate) fn generic<T: Op>(d: &TapeData<T>, adj: &mut [T]) {
    observed(d, adj, |_| {});
}

/// One term the sweep adds: `adj[parent] += partial · adjoint`, where `adjoint` is node
/// `node`'s, and `after` is `adj[parent]` with the term added.
pub(crate) struct Term<T> {
    pub node: usize,
    pub parent: u32,
    pub partial: Partial<T>,
    pub adjoint: T,
    pub after: T,
}

/// A term's partial: a stored weight, or a unit edge's sign. The sign is not made a `T`
/// here: on a tape of `Var`s, `−1` would be an operation on the outer tape, in the hot loop
/// that the do-nothing visitor of [`generic`] must leave as it was.
pub(crate) enum Partial<T> {
    Weight(T),
    Plus,
    Minus,
}

/// [`generic`], telling `visit` every term it adds, in the order it adds them. The trace's
/// reverse sweep is this kernel with a visitor that writes the steps down; `generic` passes one
/// that does nothing, which compiles away.
pub(crate) fn observed<T: Op>(d: &TapeData<T>, adj: &mut [T], mut visit: impl FnMut(Term<T>)) {
    let (parent, partial, unit) = (d.parents(), d.partials(), d.units());
    for (i, edges) in d.walk_back(adj.len()) {
        let a = adj[i];
        if a.is_structural_zero() {
            continue;
        }
        match edges {
            Edges::Weighted(lo, hi) => {
                // A zero partial is skipped, not multiplied: 0 · ∞ would be NaN, and on a tape
                // of `Var`s the product would be a recorded zero that the next node could not
                // tell from a structural one.
                for (&p, &w) in parent[lo..hi].iter().zip(&partial[lo..hi]) {
                    if !w.is_structural_zero() {
                        adj[p as usize] += w * a;
                        let after = adj[p as usize];
                        visit(Term {
                            node: i,
                            parent: p,
                            partial: Partial::Weight(w),
                            adjoint: a,
                            after,
                        });
                    }
                }
            }
            Edges::Unit(lo, hi) => {
                for &p in &unit[lo..hi] {
                    let q = (p & !NEG) as usize;
                    let partial = if p & NEG == 0 {
                        adj[q] += a;
                        Partial::Plus
                    } else {
                        adj[q] -= a;
                        Partial::Minus
                    };
                    let after = adj[q];
                    visit(Term {
                        node: i,
                        parent: p & !NEG,
                        partial,
                        adjoint: a,
                        after,
                    });
                }
            }
        }
    }
}

/// The sweep with `Q` adjoints per node; each lane gives what [`scalar`] gives for it.
pub(crate) fn lanes<T: Op, const Q: usize>(d: &TapeData<T>, adj: &mut [[T; Q]]) {
    let (parent, partial, unit) = (d.parents(), d.partials(), d.units());
    for (i, edges) in d.walk_back(adj.len()) {
        let a = adj[i];
        if a.iter().all(T::is_structural_zero) {
            continue;
        }
        match edges {
            Edges::Weighted(lo, hi) => {
                for (&p, &w) in parent[lo..hi].iter().zip(&partial[lo..hi]) {
                    if w.is_structural_zero() {
                        continue;
                    }
                    let t = &mut adj[p as usize];
                    if w.is_finite() {
                        // w · 0 = 0 here, so the plain loop keeps the zero convention and
                        // vectorises.
                        for (t, &a) in t.iter_mut().zip(&a) {
                            *t += w * a;
                        }
                    } else {
                        for (t, &a) in t.iter_mut().zip(&a) {
                            if !a.is_structural_zero() {
                                *t += w * a;
                            }
                        }
                    }
                }
            }
            Edges::Unit(lo, hi) => {
                for &p in &unit[lo..hi] {
                    let t = &mut adj[(p & !NEG) as usize];
                    if p & NEG == 0 {
                        for (t, &a) in t.iter_mut().zip(&a) {
                            *t += a;
                        }
                    } else {
                        for (t, &a) in t.iter_mut().zip(&a) {
                            *t -= a;
                        }
                    }
                }
            }
        }
    }
}
