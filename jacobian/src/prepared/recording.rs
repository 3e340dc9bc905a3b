//! What the prepared objects share: a recording re-evaluated at a new point, or recorded
//! afresh where a guard fails, compiled where that pays, and result buffers written in place.

use super::Preparation;
use super::compilation::{compile_for_lanes, compile_timed, forget_code};
use crate::Products;
use crate::plan::{Compilation, Replay};
use crate::sweeps::{self, Recorded, Swept};
use nalgebra::DMatrix;
use reverse::ReplayError;
use shared_ops::{Error, Function};
use std::time::{Duration, Instant};

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

/// The recording a prepared Jacobian (dense or sparse) sweeps in reverse, kept between calls:
/// re-evaluated at each call and recorded afresh where a guard fails, or recorded afresh at
/// every call ([`Preparation::Record`]); with feature `jit`, compiled on request, or by
/// [`Preparation::Auto`] once the calls have taken [`Preparation::COMPILE_AFTER`]. The object
/// compiles when [`count`](Self::count) says (it times its own calls, see
/// [`compile_timed`](super::compilation::compile_timed)); this keeps the state.
pub(crate) struct Kept {
    pub recorded: Option<Recorded>,
    /// `Record`, or `Reevaluate` (whether compiled is in `compilation`).
    preparation: Preparation,
    /// Until compiled: the time and the number of the calls so far, and the time after which
    /// to compile (`COMPILE_AFTER` for `Auto`, zero for `Compile`).
    pending: Option<(Duration, usize, Duration)>,
    /// What compiling made, once tried.
    pub compilation: Option<Compilation>,
    /// The lanes of the compiled vector sweep.
    lanes: usize,
    /// Calls that recorded `f` afresh because a guard failed.
    pub rerecords: usize,
}

impl Kept {
    /// Keeps `recorded` (made by [`record`](Self::record)) for the calls to come.
    pub fn new(recorded: Option<Recorded>, preparation: Preparation) -> Kept {
        let after = match preparation {
            Preparation::Auto if cfg!(feature = "jit") => Some(Preparation::COMPILE_AFTER),
            Preparation::Compile => Some(Duration::ZERO),
            _ => None,
        };
        Kept {
            pending: after.map(|after| (Duration::ZERO, 0, after)),
            recorded,
            preparation: match preparation {
                Preparation::Record => Preparation::Record,
                _ => Preparation::Reevaluate,
            },
            compilation: None,
            lanes: 1,
            rerecords: 0,
        }
    }

    /// `f` recorded at `x` as `preparation` keeps it: on a plain tape for `Record`, else on a
    /// replayable one.
    pub fn record<F: Function>(
        f: &F,
        x: &[f64],
        m: Option<usize>,
        preparation: Preparation,
    ) -> Result<Recorded, Error> {
        match preparation {
            Preparation::Record => sweeps::record_plain_again(f, x, m, None),
            _ => sweeps::record_replayable(f, x, m),
        }
    }

    /// The recording at `x`: re-evaluated there (recorded afresh where a guard fails, and then
    /// compiled again if the last one was), or recorded afresh by `Record`; made now if there
    /// is none yet. What happened, and the recording.
    pub fn at<F: Function>(
        &mut self,
        f: &F,
        x: &[f64],
        m: Option<usize>,
    ) -> Result<(Replay, &mut Recorded), Error> {
        if self.preparation == Preparation::Record && self.recorded.is_some() {
            let last = self.recorded.take();
            let r = sweeps::record_plain_again(f, x, m, last)?;
            return Ok((Replay::Recorded, self.recorded.insert(r)));
        }
        let replay = match &mut self.recorded {
            Some(r) => {
                let (replay, fresh) = reuse_or_record(f, r, x)?;
                self.rerecords += fresh;
                let compiled = self.compilation.as_ref().is_some_and(|c| c.code_bytes > 0);
                if fresh > 0 && compiled {
                    // (Where the new recording does not compile, it runs interpreted.)
                    let _ = compile_for_lanes(r, self.lanes);
                }
                replay
            }
            None => {
                self.recorded = Some(sweeps::record_replayable(f, x, m)?);
                Replay::Recorded
            }
        };
        Ok((replay, self.recorded.as_mut().expect("made above")))
    }

    /// The start of a call that counts towards compiling, if calls still count.
    pub fn start(&self) -> Option<Instant> {
        self.pending.is_some().then(Instant::now)
    }

    /// Counts a call begun at `start`: once the calls have taken their time (`Auto`'s
    /// [`Preparation::COMPILE_AFTER`], or none for `Compile`), stops counting and returns
    /// their number and whether to keep the code only if it is faster (`Auto`); the caller
    /// then compiles.
    pub fn count(&mut self, start: Option<Instant>) -> Option<(usize, bool)> {
        let (spent, calls, after) = self.pending.as_mut()?;
        *spent += start?.elapsed();
        *calls += 1;
        let due = (*calls, *after > Duration::ZERO);
        (*spent >= *after).then(|| {
            self.pending = None;
            due
        })
    }

    /// Compiles the recording for vector sweeps of `lanes` adjoints (see
    /// [`compile_for_lanes`]); stops `Auto`'s counting.
    pub fn compile(&mut self, lanes: usize) -> Result<(usize, f64), String> {
        self.pending = None;
        self.lanes = lanes;
        let r = self.recorded.as_mut().ok_or("nothing is recorded")?;
        compile_for_lanes(r, lanes)
    }

    /// Drops the recording's machine code.
    pub fn forget(&mut self) {
        if let Some(r) = &mut self.recorded {
            forget_code(r);
        }
    }
}

/// Compiles the recording `kept` finds in `s` for sweeps of `lanes` adjoints, after `calls`
/// calls, timing `call` before and after (see [`compile_timed`]); with `only_if_faster`, drops
/// the code again where the compiled calls are not faster. The report goes to the [`Kept`].
pub(crate) fn compile_kept<S>(
    s: &mut S,
    kept: fn(&mut S) -> &mut Kept,
    call: impl FnMut(&mut S) -> Result<(), Error>,
    lanes: usize,
    calls: usize,
    only_if_faster: bool,
) -> Result<(), Error> {
    let c = compile_timed(
        s,
        call,
        |s| kept(s).compile(lanes),
        |s| {
            kept(s).forget();
            Ok(())
        },
        only_if_faster,
        calls,
    )?;
    kept(s).compilation = Some(c);
    Ok(())
}
