//! Which scalar sweep runs: on a tape of `f64` its machine code if it was compiled, else the
//! schedule's where a re-evaluation built one and no seed is at a node it bypasses; else the
//! plain kernel.

use super::kernel::{generic, scalar_f64};
use super::schedule;
use crate::storage::TapeData;
use crate::storage::program::Native;
use core::any::Any;
use shared_ops::Op;

/// Sweeps the nodes before `adj.len()`, whose adjoints hold the seeds (at the nodes
/// `seeded`): on a tape of `f64` by its [`Schedule`](schedule::Schedule) where it has
/// one and no seed is at a node it bypasses, else by [`scalar_f64`]; on other tapes by
/// [`generic`]. (A `Vec`, not a slice: `Any` tells `Vec<f64>` from `Vec<T>` without `unsafe`.)
///
/// With `fill`, every adjoint is written; without, the schedule's bypassed nodes may be left
/// out: the first node left out is returned (`usize::MAX` if none), and [`left_out`] gives
/// their adjoints.
#[allow(clippy::ptr_arg)]
pub(crate) fn scalar<T: Op>(
    d: &TapeData<T>,
    adj: &mut Vec<T>,
    mut seeded: impl Iterator<Item = usize>,
    fill: bool,
) -> usize {
    let plain = (d as &dyn Any).downcast_ref::<TapeData<f64>>();
    match (plain, (adj as &mut dyn Any).downcast_mut::<Vec<f64>>()) {
        (Some(d), Some(adj)) if let Some(Native(m)) = d.native() => {
            // Machine code sweeps every node: those after the seeds add nothing (zeros).
            let end = adj.len();
            adj.resize(d.len(), 0.0);
            m.reverse(d.partials(), d.parents(), d.units(), adj);
            adj.truncate(end);
            usize::MAX
        }
        (Some(d), Some(adj)) => match d.schedule() {
            Some(s) if !seeded.any(|u| s.is_bypassed(u)) => {
                schedule::sweep(s, d.partials(), adj, fill);
                if fill { usize::MAX } else { s.first_bypassed() }
            }
            _ => {
                scalar_f64(d, adj);
                usize::MAX
            }
        },
        _ => {
            generic(d, adj);
            usize::MAX
        }
    }
}

/// After a sweep by [`scalar`] that left nodes out: each `(u, out)` of `nodes` whose node `u`
/// the sweep left out gets its adjoint (the others are left as they are).
#[allow(clippy::ptr_arg)]
pub(crate) fn left_out<'a, T: Op>(
    d: &TapeData<T>,
    adj: &Vec<T>,
    nodes: impl Iterator<Item = (usize, &'a mut T)>,
) {
    let plain = (d as &dyn Any).downcast_ref::<TapeData<f64>>();
    let (Some(d), Some(adj)) = (plain, (adj as &dyn Any).downcast_ref::<Vec<f64>>()) else {
        return;
    };
    let Some(s) = d.schedule() else { return };
    for (u, out) in nodes {
        if let Some(a) = s.alias(u, adj)
            && let Some(out) = (out as &mut dyn Any).downcast_mut::<f64>()
        {
            *out = a;
        }
    }
}
