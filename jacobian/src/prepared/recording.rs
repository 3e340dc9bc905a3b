//! What the prepared objects share: a recording re-evaluated at a new point, or recorded
//! afresh where a guard fails, and result buffers written in place.

use crate::Products;
use crate::plan::Replay;
use crate::sweeps::{self, Recorded, Swept};
use nalgebra::DMatrix;
use reverse::ReplayError;
use shared_ops::{Error, Function};

/// The value and matrix of `out`, to be written in place.
pub(super) fn take_buffers(out: &mut Products) -> Swept {
    Swept::with_buffers(
        std::mem::take(&mut out.value),
        std::mem::replace(&mut out.matrix, DMatrix::zeros(0, 0)),
    )
}

/// Re-evaluates `r` at `x`, or records `f` afresh there; returns what happened.
pub(super) fn reuse_or_record<F: Function>(
    f: &F,
    r: &mut Recorded,
    x: &[f64],
) -> Result<(Replay, usize), Error> {
    match r.rec.reevaluate(x) {
        Ok(()) => Ok((Replay::Reevaluated, 0)),
        Err(why @ (ReplayError::Guard(_) | ReplayError::Opaque { .. })) => {
            *r = sweeps::record_replayable(f, x, Some(r.ys.len()))?;
            Ok((Replay::Rerecorded(why.to_string()), 1))
        }
        Err(ReplayError::InputLength { expected, found }) => {
            Err(Error::InputLength { expected, found })
        }
        Err(ReplayError::NotReplayable) => unreachable!("prepared recordings keep a program"),
    }
}
