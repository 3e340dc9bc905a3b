//! The choice between forward and reverse sweeps: a cost model, in units of one plain `f64`
//! evaluation of `f`.

use crate::lanes::lanes_for;
use crate::sweeps::{Swept, reverse_lanes};
use core::fmt;

/// Which sweeps compute a Jacobian.
///
/// ```
/// use jacobian::Mode;
/// assert_ne!(Mode::Forward, Mode::Reverse);
/// let m = Mode::Auto;
/// let copy = m; // Copy
/// assert_eq!(m, copy);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Tangent sweeps: each carries N tangents and fills N Jacobian columns.
    Forward,
    /// One recording, then adjoint sweeps: each carries Q adjoints and fills Q rows.
    Reverse,
    /// Let the plan choose.
    Auto,
}

/// The mode that ran: forward (tangent sweeps) or reverse (one recording, then adjoint sweeps).
/// What a [`Plan`] reports, so it cannot say `Auto`; it compares equal to the [`Mode`] of the
/// same name, so `plan.mode == Mode::Forward` reads as it should.
///
/// ```
/// use jacobian::{Direction, Mode};
/// assert_eq!(Direction::Forward, Mode::Forward);
/// assert_ne!(Direction::Reverse, Mode::Auto);
/// assert_eq!(Mode::from(Direction::Reverse), Mode::Reverse);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Tangent sweeps.
    Forward,
    /// One recording, then adjoint sweeps.
    Reverse,
}

impl Direction {
    /// The direction a forced `mode` runs in; `None` for `Auto`, which the plan decides.
    ///
    /// ```
    /// use jacobian::{Direction, Mode};
    /// assert_eq!(Direction::forced(Mode::Reverse), Some(Direction::Reverse));
    /// assert_eq!(Direction::forced(Mode::Auto), None);
    /// ```
    pub fn forced(mode: Mode) -> Option<Direction> {
        match mode {
            Mode::Forward => Some(Direction::Forward),
            Mode::Reverse => Some(Direction::Reverse),
            Mode::Auto => None,
        }
    }
}

impl From<Direction> for Mode {
    fn from(d: Direction) -> Mode {
        match d {
            Direction::Forward => Mode::Forward,
            Direction::Reverse => Mode::Reverse,
        }
    }
}

impl PartialEq<Mode> for Direction {
    fn eq(&self, mode: &Mode) -> bool {
        Mode::from(*self) == *mode
    }
}

impl PartialEq<Direction> for Mode {
    fn eq(&self, d: &Direction) -> bool {
        *self == Mode::from(*d)
    }
}

/// The cost model's constants, in units of one plain evaluation of `f`. They are fitted to the
/// crossovers that `cargo run --release --example mode_asymmetry` measures on the dense tanh
/// layer (the model's are at n = 17, 25, 41, 129, 249 for m = 1, 8, 32, 128, 256; the example
/// prints the measured ones beside them); functions dominated by transcendental calls make
/// the tape relatively cheaper, long chains of cheap arithmetic make it dearer.
///
/// * a forward sweep with N tangents costs `FWD_BASE + FWD_LANE · N`: the primal is recomputed
///   every sweep, and each tangent adds about one multiply-add per partial;
/// * the reverse recording costs `REC`: the primal plus one node (4 bytes, and 12 per weighted
///   or 4 per unit edge) per operation;
/// * a reverse sweep with Q adjoints costs `SWEEP_BASE + SWEEP_LANE · Q`: one pass over the
///   nodes, no transcendental functions (the partials are stored).
pub mod cost {
    /// Fixed part of a forward sweep (the primal).
    pub const FWD_BASE: f64 = 1.2;
    /// Added per tangent of a forward sweep.
    pub const FWD_LANE: f64 = 0.15;
    /// The recording of the reverse mode.
    pub const REC: f64 = 5.0;
    /// Fixed part of a reverse sweep (reading the nodes).
    pub const SWEEP_BASE: f64 = 0.6;
    /// Added per adjoint of a reverse sweep.
    pub const SWEEP_LANE: f64 = 0.2;
}

/// The estimated cost of each mode for an m×n Jacobian, in plain evaluations of `f`.
///
/// ```
/// let e = jacobian::estimate(1000, 1); // a gradient
/// assert!(e.reverse < e.forward / 10.0);
/// let e = jacobian::estimate(3, 500); // a tall Jacobian
/// assert!(e.forward < e.reverse / 10.0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// ⌈n/N⌉ forward sweeps of N tangents.
    pub forward: f64,
    /// One recording and ⌈m/Q⌉ reverse sweeps of Q adjoints.
    pub reverse: f64,
}

/// The cost model: see [`cost`] for the constants.
pub fn estimate(n: usize, m: usize) -> Estimate {
    use cost::*;
    let (nl, ql) = (lanes_for(n), reverse_lanes(m));
    let forward = n.div_ceil(nl) as f64 * (FWD_BASE + FWD_LANE * nl as f64);
    let reverse = REC + m.div_ceil(ql) as f64 * (SWEEP_BASE + SWEEP_LANE * ql as f64);
    Estimate { forward, reverse }
}

/// What a Jacobian computation did and why.
///
/// ```
/// use jacobian::{Function, Op};
/// struct Wide;
/// impl Function for Wide {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         vec![x.iter().copied().sum()]
///     }
/// }
/// let j = jacobian::jacobian(&Wide, &[1.0; 100])?;
/// assert_eq!(j.plan.mode, jacobian::Mode::Reverse);
/// assert_eq!(j.plan.sweeps, 1);
/// assert!(j.plan.to_string().starts_with("reverse"));
/// # Ok::<(), jacobian::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The mode that ran.
    pub mode: Direction,
    /// Sweeps run: forward sweeps, or reverse sweeps after the one recording.
    pub sweeps: usize,
    /// Tangents (forward) or adjoints (reverse) carried by each sweep.
    pub lanes: usize,
    /// Inputs.
    pub n: usize,
    /// Outputs.
    pub m: usize,
    /// The threads the sweeps ran on (1: on the calling thread).
    pub threads: usize,
    /// What the reverse recording held: nodes, edges, bytes (all 0 in forward mode).
    pub tape: reverse::TapeStats,
    /// The cost model's estimate for both modes.
    pub estimate: Estimate,
    /// Why this mode, in words.
    pub reason: String,
    /// How the recording was obtained: recorded for this call, or a prepared one re-evaluated
    /// ([`PreparedJacobian`](crate::PreparedJacobian)).
    pub replay: Replay,
    /// For a matrix product ([`jvp_matrix`](crate::jvp_matrix), [`vjp_matrix`](crate::vjp_matrix)),
    /// the number of products (columns of `V`, rows of `Wᵀ`); 0 for a whole Jacobian.
    pub products: usize,
    /// What compiling the recording made, where a [`PreparedJacobian`](crate::PreparedJacobian)
    /// compiled it or tried to (feature `jit`); `None` otherwise.
    pub compiled: Option<Compilation>,
}

impl Plan {
    /// The cheaper mode for an m×n Jacobian by the cost model.
    pub(crate) fn choose(n: usize, m: usize) -> Direction {
        let e = estimate(n, m);
        if e.forward <= e.reverse {
            Direction::Forward
        } else {
            Direction::Reverse
        }
    }

    pub(crate) fn new(mode: Direction, n: usize, swept: &Swept, forced: bool) -> Plan {
        let m = swept.value.len();
        let estimate = estimate(n, m);
        let reason = if forced {
            "mode forced by the caller".to_string()
        } else {
            let (won, lost) = match mode {
                Direction::Forward => (estimate.forward, estimate.reverse),
                Direction::Reverse => (estimate.reverse, estimate.forward),
            };
            format!("estimated {won:.1} evaluations of f against {lost:.1} for the other mode")
        };
        Plan {
            mode,
            sweeps: swept.sweeps,
            lanes: swept.lanes,
            n,
            m,
            threads: swept.threads,
            tape: swept.tape,
            estimate,
            reason,
            replay: match mode {
                Direction::Forward => Replay::NotRecorded,
                Direction::Reverse => Replay::Recorded,
            },
            products: 0,
            compiled: None,
        }
    }

    /// The plan of `k` matrix products of an n-input Jacobian, which `swept` computed: their
    /// kind decides the mode (`J·V` forward, `Wᵀ·J` reverse), so nothing is estimated.
    pub(crate) fn for_products(mode: Direction, n: usize, k: usize, swept: &Swept) -> Plan {
        let mut plan = Plan::new(mode, n, swept, true);
        plan.reason = match mode {
            Direction::Forward => "J·V: a forward sweep gives J·v".into(),
            Direction::Reverse => "Wᵀ·J: a reverse sweep gives wᵀ·J".into(),
        };
        plan.products = k;
        plan
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (what, unit) = match self.mode {
            Direction::Forward => ("forward mode", "tangent"),
            Direction::Reverse => ("reverse mode", "adjoint"),
        };
        let s = if self.sweeps == 1 { "" } else { "s" };
        let l = if self.lanes == 1 { "" } else { "s" };
        write!(
            f,
            "{what}: {} sweep{s} of {} {unit}{l} for ",
            self.sweeps, self.lanes
        )?;
        match self.products {
            0 => write!(f, "a {}×{} Jacobian", self.m, self.n)?,
            k => write!(f, "{k} products with the {}×{} Jacobian", self.m, self.n)?,
        }
        if self.mode == Direction::Reverse {
            match &self.replay {
                Replay::Reevaluated => write!(f, ", {} nodes re-evaluated", self.tape.nodes)?,
                _ => write!(f, ", {} nodes recorded", self.tape.nodes)?,
            }
        }
        if self.threads > 1 {
            write!(f, ", on {} threads", self.threads)?;
        }
        write!(f, " ({})", self.reason)?;
        if let Replay::Rerecorded(why) = &self.replay {
            write!(f, "; recorded afresh: {why}")?;
        }
        if let Some(c) = &self.compiled {
            write!(f, "; {c}")?;
        }
        Ok(())
    }
}

/// How a driver obtained the recording it swept (a field of [`Plan`]).
///
/// ```
/// use jacobian::Replay;
/// assert_eq!(Replay::Reevaluated.to_string(), "recording re-evaluated at this point");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Replay {
    /// Forward mode: nothing is recorded.
    NotRecorded,
    /// `f` was recorded for this call.
    Recorded,
    /// A prepared recording was re-evaluated at this point (`f` did not run).
    Reevaluated,
    /// Re-evaluation was refused (the reason, e.g. the guard that failed), so `f` was recorded
    /// afresh at this point; the new recording serves the next calls.
    Rerecorded(String),
}

impl fmt::Display for Replay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Replay::NotRecorded => write!(f, "nothing recorded"),
            Replay::Recorded => write!(f, "recorded for this call"),
            Replay::Reevaluated => write!(f, "recording re-evaluated at this point"),
            Replay::Rerecorded(why) => write!(f, "recorded afresh at this point: {why}"),
        }
    }
}

/// What compiling a prepared object's recording to machine code made (feature `jit`), and
/// what it repays: reported by [`PreparedPlan`](crate::PreparedPlan) and by the
/// [`Plan`](crate::Plan) of a [`PreparedJacobian`](crate::PreparedJacobian)'s calls.
///
/// ```
/// use jacobian::Compilation;
/// let c = Compilation {
///     code_bytes: 2048,
///     seconds: 0.01,
///     interpreted_call: 3e-4,
///     compiled_call: 1e-4,
///     break_even_calls: Some(50.0),
///     ..Compilation::default()
/// };
/// assert_eq!(
///     c.to_string(),
///     "2.0 KiB of machine code compiled in 10.0 ms; a call 0.300 ms interpreted, 0.100 ms \
///      compiled; compiling repaid after 50 calls"
/// );
/// let no = Compilation { declined: Some("the feature `jit` is off".into()), ..c.clone() };
/// assert!(no.to_string().ends_with("; the calls run interpreted: the feature `jit` is off"));
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Compilation {
    /// Bytes of machine code kept (0 where none is: dropped, or never made).
    pub code_bytes: usize,
    /// Seconds compiling took.
    pub seconds: f64,
    /// Seconds of one call interpreted, the fastest of three timed before compiling (0 where
    /// nothing was compiled).
    pub interpreted_call: f64,
    /// Seconds of one compiled call, timed likewise after.
    pub compiled_call: f64,
    /// The calls after which the compile time is repaid by the faster calls (`None` where the
    /// compiled calls are not faster).
    pub break_even_calls: Option<f64>,
    /// The calls made before compiling: 0 where the object compiled while it was prepared.
    pub after_calls: usize,
    /// Why the calls run interpreted, where they do: the compiler's error, or compiled calls
    /// that were not faster (whose code is dropped).
    pub declined: Option<String>,
}

impl fmt::Display for Compilation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.compiled_call > 0.0 {
            write!(
                f,
                "{:.1} KiB of machine code compiled in {:.1} ms",
                self.code_bytes as f64 / 1024.0,
                self.seconds * 1e3
            )?;
            if self.after_calls > 0 {
                write!(f, " after {} calls", self.after_calls)?;
            }
            write!(
                f,
                "; a call {:.3} ms interpreted, {:.3} ms compiled",
                self.interpreted_call * 1e3,
                self.compiled_call * 1e3
            )?;
            if let Some(n) = self.break_even_calls {
                write!(f, "; compiling repaid after {} calls", n.ceil())?;
            }
        } else {
            write!(f, "not compiled")?;
        }
        match &self.declined {
            Some(why) if self.compiled_call > 0.0 => {
                write!(f, "; the calls run interpreted: {why}")
            }
            Some(why) => write!(f, ": {why}"),
            None => Ok(()),
        }
    }
}
