//! The adjoint sweep: one loop over the nodes in reverse, `ū += ∂v/∂u · v̄`.
//!
//! A node's weighted edges end where the previous node (in the walk back) of the same kind began,
//! so the loop carries two cursors instead of reading an end index per node.
//!
//! Structural zeros (the convention of `shared_ops::rules`): a zero adjoint or a zero partial
//! contributes nothing, so `0 · ∞` never turns into NaN.

use crate::tape::storage::{NEG, TapeData, UNIT};
use shared_ops::Op;

/// Sweeps the nodes before `adj.len()`, whose adjoints hold the seeds.
pub(crate) fn scalar<T: Op>(d: &TapeData<T>, adj: &mut [T]) {
    let end = adj.len();
    let (mut w_end, mut u_end) = d.ends_before(end);
    let (parent, partial, unit) = (&d.parent[..w_end], &d.partial[..w_end], &d.unit[..u_end]);
    for (i, &s) in d.start[..end].iter().enumerate().rev() {
        let a = adj[i];
        let lo = (s & !UNIT) as usize;
        if s & UNIT == 0 {
            if !a.is_zero() {
                // A zero partial is skipped, not multiplied: 0 · ∞ would be NaN, and on a tape
                // of `Var`s the product would be a recorded zero that the next node could not
                // tell from a structural one.
                for (&p, &w) in parent[lo..w_end].iter().zip(&partial[lo..w_end]) {
                    if !w.is_zero() {
                        adj[p as usize] += w * a;
                    }
                }
            }
            w_end = lo;
        } else {
            if !a.is_zero() {
                for &p in &unit[lo..u_end] {
                    let q = (p & !NEG) as usize;
                    if p & NEG == 0 {
                        adj[q] += a;
                    } else {
                        adj[q] -= a;
                    }
                }
            }
            u_end = lo;
        }
    }
}

/// The sweep with `Q` adjoints per node; each lane gives what [`scalar`] gives for it.
pub(crate) fn lanes<T: Op, const Q: usize>(d: &TapeData<T>, adj: &mut [[T; Q]]) {
    let end = adj.len();
    let (mut w_end, mut u_end) = d.ends_before(end);
    let (parent, partial, unit) = (&d.parent[..w_end], &d.partial[..w_end], &d.unit[..u_end]);
    for (i, &s) in d.start[..end].iter().enumerate().rev() {
        let a = adj[i];
        let lo = (s & !UNIT) as usize;
        let live = !a.iter().all(T::is_zero);
        if s & UNIT == 0 {
            if live {
                for (&p, &w) in parent[lo..w_end].iter().zip(&partial[lo..w_end]) {
                    if w.is_zero() {
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
                            if !a.is_zero() {
                                *t += w * a;
                            }
                        }
                    }
                }
            }
            w_end = lo;
        } else {
            if live {
                for &p in &unit[lo..u_end] {
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
            u_end = lo;
        }
    }
}
