//! Which sweep runs. The scalar sweep: on a tape of `f64` its machine code if it was
//! compiled, else its schedule if a re-evaluation built one, else the plain kernel of `f64`;
//! on other tapes the generic kernel. The vector sweep: on a tape of `f64` its machine code
//! if its lanes were compiled, else the kernel of lanes.

use super::kernel::{generic, lanes, scalar_f64};
use super::schedule::{self, Schedule};
use crate::storage::TapeData;
use crate::storage::program::{LaneMachine, Machine, Native, NativeLanes};
use core::any::Any;
use shared_ops::Op;

/// Sweeps the nodes before `adj.len()`, whose adjoints hold the seeds. (A `Vec`, not a
/// slice: `Any` tells `Vec<f64>` from `Vec<T>` without `unsafe`.)
#[allow(clippy::ptr_arg)]
pub(crate) fn scalar<T: Op>(d: &TapeData<T>, adj: &mut Vec<T>) {
    let plain = (d as &dyn Any).downcast_ref::<TapeData<f64>>();
    match (plain, (adj as &mut dyn Any).downcast_mut::<Vec<f64>>()) {
        (Some(d), Some(adj))
            if let Some(Native(m)) = d.program.as_ref().and_then(|p| p.derived.get()) =>
        {
            // Machine code sweeps from the nest of the last seed: the nodes after the seeds
            // add nothing (zeros).
            let end = adj.len();
            adj.resize(d.len(), 0.0);
            m.reverse(d.partials(), d.parents(), d.units(), adj, end);
            adj.truncate(end);
        }
        (Some(d), Some(adj)) => match d.program.as_ref().and_then(|p| p.derived.get()) {
            Some(s @ Schedule { .. }) => schedule::sweep(s, d.partials(), adj),
            None => scalar_f64(d, adj),
        },
        _ => generic(d, adj),
    }
}

/// Sweeps the nodes before `end` with `Q` adjoints each, which hold the seeds; those from
/// `end` to `adj.len()` are zero. Compiled code keeps `adj` one per node of the recording
/// (a `Vec`, to grow it).
#[allow(clippy::ptr_arg)]
pub(crate) fn vector<T: Op, const Q: usize>(d: &TapeData<T>, adj: &mut Vec<[T; Q]>, end: usize) {
    let plain = (d as &dyn Any).downcast_ref::<TapeData<f64>>();
    // One lane is the scalar sweep's code.
    let code = plain.and_then(|d| {
        let derived = &d.program.as_ref()?.derived;
        if Q == 1 {
            let Native(m) = derived.get()?;
            return Some((d, Code::Scalar(&**m)));
        }
        let NativeLanes(all) = derived.get()?;
        Some((d, Code::Lanes(&**all.iter().find(|m| m.lanes() == Q)?)))
    });
    match (code, (adj as &mut dyn Any).downcast_mut::<Vec<[f64; Q]>>()) {
        (Some((d, m)), Some(adj)) => {
            // Zeros after `end`, made once: the next sweep of this buffer zeroes only what
            // this one reached.
            adj.resize(d.len(), [0.0; Q]);
            let (partials, parents, units) = (d.partials(), d.parents(), d.units());
            let flat = adj.as_flattened_mut();
            match m {
                Code::Scalar(m) => m.reverse(partials, parents, units, flat, end),
                Code::Lanes(m) => m.reverse(partials, parents, units, flat, end),
            }
        }
        _ => lanes(d, &mut adj[..end]),
    }
}

/// The machine code of a vector sweep.
enum Code<'a> {
    Scalar(&'a dyn Machine),
    Lanes(&'a dyn LaneMachine),
}
