//! Prepared drivers: a function recorded once and re-evaluated at every new point, for the
//! solvers and optimisers that ask for derivatives of one function thousands of times.
//!
//! The recording is made on a replayable tape ([`reverse::Tape::replayable`]); each call
//! re-evaluates it at the new `x` ([`reverse::Recording::reevaluate`]) and sweeps it, which
//! gives bit for bit what a fresh recording would, without running `f` again. Where a branch
//! of `f` goes the other way (a guard fails), the call records `f` afresh at that point, keeps
//! that recording for the next calls, and says so in its [`Replay`].
//!
//! When must a prepared object be made again? Never for correctness: a recording is re-used
//! only where every decision it depended on holds. Re-preparing pays only when `f` changes its
//! path for good (then every call records afresh); [`PreparedGradient::rerecords`] counts that.

use crate::lanes::{self, Inputs, Seed, by_lanes};
use crate::plan::{Direction, Mode, Plan, Replay};
use crate::sweeps::{self, Recorded, Swept, forward_chunked};
use crate::{Jacobian, Products, hessian};
use core::fmt;
use nalgebra::DMatrix;
use reverse::{ReplayError, TapeStats};
use shared_ops::{Error, Function};
use std::time::Instant;

/// The value and matrix of `out`, to be written in place.
fn take_buffers(out: &mut Products) -> Swept {
    Swept::with_buffers(
        std::mem::take(&mut out.value),
        std::mem::replace(&mut out.matrix, DMatrix::zeros(0, 0)),
    )
}

/// Re-evaluates `r` at `x`, or records `f` afresh there; returns what happened.
fn reuse_or_record<F: Function>(
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

/// The Jacobian of one function at many points: planned and recorded once.
///
/// In reverse mode (chosen by the plan, or forced) `f` is recorded once on a replayable tape;
/// each [`jacobian`](PreparedJacobian::jacobian) re-evaluates that recording at the new point
/// and runs the reverse sweeps, and its plan's [`replay`](Plan::replay) says whether the
/// recording was re-used or made afresh (where a branch of `f` flipped). In forward mode nothing
/// is recorded, and each call runs the forward sweeps. The matrix equals, bit for bit, what
/// [`jacobian_with`](crate::jacobian_with) gives in the same mode.
///
/// ```
/// use jacobian::{Function, Mode, Op, PreparedJacobian, Replay};
/// /// Two outputs of 32 inputs: reverse mode (1 sweep) is cheaper than 2 forward sweeps of 16.
/// struct F;
/// impl Function for F {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         vec![x.iter().copied().product(), x.iter().map(|&v| v.sin()).sum()]
///     }
/// }
/// let mut p = PreparedJacobian::new(F, &[1.0; 32])?;
/// let j = p.jacobian(&[0.5; 32])?;
/// assert_eq!(j.plan.mode, Mode::Reverse);
/// assert_eq!(j.plan.replay, Replay::Reevaluated);
/// assert_eq!(j.matrix[(1, 0)], 0.5_f64.cos());
/// # Ok::<(), jacobian::Error>(())
/// ```
pub struct PreparedJacobian<F> {
    f: F,
    n: usize,
    /// Outputs, where known before the first sweep (declared, or planned with).
    m: Option<usize>,
    mode: Direction,
    forced: bool,
    /// Tangents per forward sweep.
    lanes: usize,
    /// The forward sweeps' inputs, kept between calls.
    inputs: Inputs,
    /// The recording (reverse mode).
    recorded: Option<Recorded>,
    rerecords: usize,
    /// The last call's plan: the next call at the same sizes copies its reason and estimate
    /// instead of formatting them again (which costs a 2×15 block more than its sweep).
    plan: Option<Plan>,
    /// Whether the sweeps may run on several threads ([`set_threads`](Self::set_threads)).
    threads: bool,
}

impl<F: Function + Sync> PreparedJacobian<F> {
    /// Plans the Jacobian of `f` at `x` and, in reverse mode, records it there.
    ///
    /// # Errors
    ///
    /// As [`jacobian`](crate::jacobian): empty or wrong-sized input, an output length that
    /// differs from the declared one.
    pub fn new(f: F, x: &[f64]) -> Result<Self, Error> {
        Self::with_mode(f, x, Mode::Auto)
    }

    /// As [`new`](PreparedJacobian::new), with the mode forced (or `Mode::Auto`).
    ///
    /// ```
    /// use jacobian::{Direction, Function, Mode, Op, PreparedJacobian, Replay};
    /// struct F;
    /// impl Function for F {
    ///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
    ///         vec![x[0] * x[1]]
    ///     }
    /// }
    /// let mut p = PreparedJacobian::with_mode(F, &[1.0, 2.0], Mode::Forward)?;
    /// let j = p.jacobian(&[3.0, 4.0])?;
    /// assert_eq!((j.plan.mode, j.plan.replay), (Direction::Forward, Replay::NotRecorded));
    /// assert_eq!(j.matrix.as_slice(), &[4.0, 3.0]);
    /// # Ok::<(), jacobian::Error>(())
    /// ```
    pub fn with_mode(f: F, x: &[f64], mode: Mode) -> Result<Self, Error> {
        f.check_input(x.len())?;
        let n = x.len();
        let declared = f.sizes().map(|s| s.1);
        let (mode, forced, m, recorded) = match mode {
            Mode::Forward => (Direction::Forward, true, declared, None),
            Mode::Reverse => {
                let r = sweeps::record_replayable(&f, x, None)?;
                (Direction::Reverse, true, Some(r.ys.len()), Some(r))
            }
            Mode::Auto => {
                let m = match declared {
                    Some(m) => m,
                    None => f.eval(x).len(),
                };
                match Plan::choose(n, m) {
                    Direction::Forward => (Direction::Forward, false, Some(m), None),
                    Direction::Reverse => (
                        Direction::Reverse,
                        false,
                        Some(m),
                        Some(sweeps::record_replayable(&f, x, Some(m))?),
                    ),
                }
            }
        };
        Ok(PreparedJacobian {
            f,
            n,
            m,
            mode,
            forced,
            lanes: lanes::lanes_for(n),
            inputs: Inputs::default(),
            recorded,
            rerecords: 0,
            plan: None,
            threads: false,
        })
    }

    /// Forward mode with `lanes` tangents per sweep, instead of the count the plan chooses
    /// from n: for measuring what wider or narrower lanes cost.
    ///
    /// ```
    /// use jacobian::{Function, Op, PreparedJacobian};
    /// struct F;
    /// impl Function for F {
    ///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
    ///         vec![x[0] * x[1], x[2].sin()]
    ///     }
    /// }
    /// let mut p = PreparedJacobian::with_lanes(F, &[1.0; 3], 2)?;
    /// let j = p.jacobian(&[2.0, 3.0, 0.0])?;
    /// assert_eq!((j.plan.sweeps, j.plan.lanes), (2, 2));
    /// assert_eq!(j.matrix.as_slice(), &[3.0, 0.0, 2.0, 0.0, 0.0, 1.0]);
    /// let err = PreparedJacobian::with_lanes(F, &[1.0; 3], 5).err().unwrap();
    /// assert_eq!(err.to_string(), "5 tangents per sweep: a forward sweep carries 1, 2, 3, 4, 8, 16 or 32");
    /// # Ok::<(), jacobian::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`with_mode`](PreparedJacobian::with_mode), and [`Error::Lanes`] for a lane count
    /// other than 1, 2, 3, 4, 8, 16 or 32.
    pub fn with_lanes(f: F, x: &[f64], lanes: usize) -> Result<Self, Error> {
        if !lanes::LANES.contains(&lanes) {
            return Err(Error::Lanes { requested: lanes });
        }
        let mut p = Self::with_mode(f, x, Mode::Forward)?;
        p.lanes = lanes;
        Ok(p)
    }

    /// The Jacobian at `x`: the recording re-evaluated and swept (reverse mode), or the forward
    /// sweeps.
    ///
    /// # Errors
    ///
    /// A wrong-sized `x`; an output length that changes when `f` is recorded afresh.
    pub fn jacobian(&mut self, x: &[f64]) -> Result<Jacobian, Error> {
        let mut out = Swept::default();
        let replay = self.sweep(x, &mut out)?;
        let mut plan = self.plan.take().unwrap_or_else(|| self.plan_for(&out));
        self.update(&mut plan, &out);
        plan.replay = replay;
        self.plan = Some(plan.clone());
        Ok(Jacobian {
            value: out.value,
            matrix: out.matrix,
            plan,
        })
    }

    /// The Jacobian at `x` written over `j`, a result of an earlier call: its value and matrix
    /// are overwritten in place and its plan updated, so a loop that calls it allocates nothing
    /// but what `f` itself allocates (its output vector, once per sweep).
    ///
    /// ```
    /// use jacobian::{Function, Op, PreparedJacobian};
    /// struct F;
    /// impl Function for F {
    ///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
    ///         vec![x[0] * x[1], x[0] + x[1]]
    ///     }
    /// }
    /// let mut p = PreparedJacobian::new(F, &[1.0, 1.0])?;
    /// let mut j = p.jacobian(&[1.0, 1.0])?;
    /// p.jacobian_into(&[2.0, 3.0], &mut j)?; // a Newton loop's next step
    /// assert_eq!(j.value, vec![6.0, 5.0]);
    /// assert_eq!(j.matrix.as_slice(), &[3.0, 1.0, 2.0, 1.0]);
    /// # Ok::<(), jacobian::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`jacobian`](PreparedJacobian::jacobian); `j` then holds no meaningful values.
    pub fn jacobian_into(&mut self, x: &[f64], j: &mut Jacobian) -> Result<(), Error> {
        let mut out = Swept::with_buffers(
            std::mem::take(&mut j.value),
            std::mem::replace(&mut j.matrix, DMatrix::zeros(0, 0)),
        );
        let replay = self.sweep(x, &mut out);
        if replay.is_ok() {
            self.update(&mut j.plan, &out);
        }
        (j.value, j.matrix) = (out.value, out.matrix);
        j.plan.replay = replay?;
        Ok(())
    }

    /// A new plan for the sweeps `out` ran.
    fn plan_for(&self, out: &Swept) -> Plan {
        Plan::new(self.mode, self.n, out, self.forced)
    }

    /// `plan` made to describe the sweeps `out` ran: only what a call can change, if it is a
    /// plan of this object's mode and sizes (the reason and estimate stay, unformatted);
    /// otherwise a new plan.
    fn update(&self, plan: &mut Plan, out: &Swept) {
        if (plan.mode, plan.n, plan.m) != (self.mode, self.n, out.value.len()) {
            *plan = self.plan_for(out);
            return;
        }
        plan.sweeps = out.sweeps;
        plan.lanes = out.lanes;
        plan.threads = out.threads;
        plan.tape = out.tape;
    }

    /// The sweeps at `x` into `out`; how the recording was obtained.
    fn sweep(&mut self, x: &[f64], out: &mut Swept) -> Result<Replay, Error> {
        self.check(x)?;
        let threads = self.threads;
        match self.mode {
            Direction::Forward => {
                let (f, inputs, m, seed) = (&self.f, &mut self.inputs, self.m, Seed::Identity);
                match self.lanes {
                    32 => forward_chunked::<32, F>(f, x, seed, m, threads, inputs, out),
                    lanes => by_lanes!(
                        lanes,
                        forward_chunked::<N>(f, x, seed, m, threads, inputs, out)
                    ),
                }?;
                Ok(Replay::NotRecorded)
            }
            Direction::Reverse => {
                let (replay, r) = self.recording(x)?;
                sweeps::reverse_seeded(r, Seed::Identity, threads, out);
                Ok(replay)
            }
        }
    }

    /// The recording re-evaluated at `x` (or recorded afresh where a guard fails), made now if
    /// this object has none yet (forward mode, asked for `Wᵀ·J`).
    fn recording(&mut self, x: &[f64]) -> Result<(Replay, &mut Recorded), Error> {
        let replay = match &mut self.recorded {
            Some(r) => {
                let (replay, fresh) = reuse_or_record(&self.f, r, x)?;
                self.rerecords += fresh;
                replay
            }
            None => {
                let r = sweeps::record_replayable(&self.f, x, self.m)?;
                self.m = Some(r.ys.len());
                self.recorded = Some(r);
                Replay::Recorded
            }
        };
        Ok((replay, self.recorded.as_mut().expect("made above")))
    }

    /// Whether the sweeps of the calls that follow may run on several threads (rayon's pool)
    /// where the work is large; off when the object is made, so that its calls stay on the
    /// calling thread. The plan of each call says how many ran.
    ///
    /// ```
    /// use jacobian::{Function, Mode, Op, PreparedJacobian};
    /// struct F;
    /// impl Function for F {
    ///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
    ///         x.iter().map(|&v| v.sin()).collect()
    ///     }
    /// }
    /// let mut p = PreparedJacobian::with_mode(F, &[0.5; 8], Mode::Forward)?;
    /// p.set_threads(false);
    /// assert_eq!(p.jacobian(&[0.5; 8])?.plan.threads, 1);
    /// # Ok::<(), jacobian::Error>(())
    /// ```
    pub fn set_threads(&mut self, threads: bool) {
        self.threads = threads;
    }

    /// `J·V` at `x` into `out` (see [`jvp_matrix`](crate::jvp_matrix)): forward sweeps in this
    /// object's kept buffers, written over `out`'s, so that a loop allocates nothing but what
    /// `f` does. `out` may be [`Products::new`] on the first call.
    ///
    /// ```
    /// use jacobian::nalgebra::DMatrix;
    /// use jacobian::{Function, Op, PreparedJacobian, Products};
    /// struct F;
    /// impl Function for F {
    ///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
    ///         vec![x[0] * x[1], x[1].exp()]
    ///     }
    /// }
    /// let mut p = PreparedJacobian::new(F, &[1.0, 0.0])?;
    /// let (v, mut out) = (DMatrix::from_column_slice(2, 1, &[1.0, 1.0]), Products::new());
    /// for x in [[1.0, 0.0], [2.0, 0.0]] {
    ///     p.jvp_matrix_into(&x, &v, &mut out)?;
    ///     assert_eq!(out.matrix.as_slice(), &[x[0] + x[1], 1.0]);
    /// }
    /// # Ok::<(), jacobian::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// A wrong-sized `x` or `V` (n rows); an output length that changes.
    pub fn jvp_matrix_into(
        &mut self,
        x: &[f64],
        v: &DMatrix<f64>,
        out: &mut Products,
    ) -> Result<(), Error> {
        self.check(x)?;
        Error::check_seed("tangent matrix", self.n, v.nrows())?;
        let mut swept = take_buffers(out);
        let seed = Seed::Matrix(v);
        let done = sweeps::forward_seeded(
            &self.f,
            x,
            seed,
            self.m,
            self.threads,
            &mut self.inputs,
            &mut swept,
        );
        let plan = Plan::for_products(Direction::Forward, self.n, v.ncols(), &swept);
        (out.value, out.matrix, out.plan) = (swept.value, swept.matrix, plan);
        done
    }

    /// `Wᵀ·J` at `x` into `out` (see [`vjp_matrix`](crate::vjp_matrix)): this object's
    /// recording re-evaluated at `x` (made on the first such call in forward mode) and swept,
    /// written over `out`'s buffers. `out` may be [`Products::new`] on the first call.
    ///
    /// ```
    /// use jacobian::nalgebra::DMatrix;
    /// use jacobian::{Function, Op, PreparedJacobian, Products, Replay};
    /// struct F;
    /// impl Function for F {
    ///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
    ///         vec![x[0] * x[1], x[0] - x[1]]
    ///     }
    /// }
    /// let mut p = PreparedJacobian::new(F, &[1.0, 1.0])?;
    /// let (w, mut out) = (DMatrix::from_column_slice(2, 1, &[1.0, 2.0]), Products::new());
    /// p.vjp_matrix_into(&[2.0, 3.0], &w, &mut out)?;
    /// assert_eq!(out.matrix.as_slice(), &[5.0, 0.0]);
    /// p.vjp_matrix_into(&[3.0, 3.0], &w, &mut out)?;
    /// assert_eq!((out.matrix.as_slice(), &out.plan.replay), (&[5.0, 1.0][..], &Replay::Reevaluated));
    /// # Ok::<(), jacobian::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// A wrong-sized `x` or `W` (m rows); an output length that changes.
    pub fn vjp_matrix_into(
        &mut self,
        x: &[f64],
        w: &DMatrix<f64>,
        out: &mut Products,
    ) -> Result<(), Error> {
        self.check(x)?;
        let (n, threads) = (self.n, self.threads);
        let (replay, r) = self.recording(x)?;
        Error::check_seed("weight matrix", r.ys.len(), w.nrows())?;
        let mut swept = take_buffers(out);
        sweeps::reverse_seeded(r, Seed::Matrix(w), threads, &mut swept);
        let mut plan = Plan::for_products(Direction::Reverse, n, w.ncols(), &swept);
        plan.replay = replay;
        (out.value, out.matrix, out.plan) = (swept.value, swept.matrix, plan);
        Ok(())
    }

    /// `x` has this object's n entries.
    fn check(&self, x: &[f64]) -> Result<(), Error> {
        if x.len() != self.n {
            return Err(Error::InputLength {
                expected: self.n,
                found: x.len(),
            });
        }
        Ok(())
    }

    /// How many calls recorded `f` afresh because a guard failed.
    pub fn rerecords(&self) -> usize {
        self.rerecords
    }

    /// The function this object differentiates.
    ///
    /// ```
    /// use jacobian::{Function, Op, PreparedJacobian};
    /// struct Square;
    /// impl Function for Square {
    ///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
    ///         vec![x[0] * x[0]]
    ///     }
    /// }
    /// let p = PreparedJacobian::new(Square, &[3.0])?;
    /// assert_eq!(p.function().eval(&[3.0_f64]), vec![9.0]);
    /// # Ok::<(), jacobian::Error>(())
    /// ```
    pub fn function(&self) -> &F {
        &self.f
    }
}

/// How a [`PreparedGradient`] obtains the recording it sweeps at each call.
///
/// ```
/// use jacobian::Preparation;
/// assert_eq!(Preparation::default(), Preparation::Auto);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Preparation {
    /// [`Reevaluate`](Preparation::Reevaluate) where the compiled program fits in
    /// [`Preparation::EXTRA_BYTES`] (estimated as [`Preparation::PROGRAM_FACTOR`] times one
    /// recording), else [`Record`](Preparation::Record).
    #[default]
    Auto,
    /// Record `f` once on a replayable tape, compile its program now, and re-evaluate it at
    /// each call (`f` does not run again while its branches go the same way). Pays where
    /// recording is the cost: many cheap operations on few inputs.
    Reevaluate,
    /// Record `f` afresh at each call, in buffers the object owns (no allocation, no page
    /// faults). The memory of one recording, prepared in the time of one; what large
    /// recordings need, whose calls are bound by memory traffic either way.
    Record,
}

impl Preparation {
    /// The most bytes [`Auto`](Preparation::Auto) lets a compiled program add to its
    /// recording: 64 MiB.
    ///
    /// ```
    /// assert_eq!(jacobian::Preparation::EXTRA_BYTES, 64 << 20);
    /// ```
    pub const EXTRA_BYTES: usize = 64 << 20;

    /// A replayable recording's program and what re-evaluation and the sweeps derive from it,
    /// in bytes of one plain recording: 4, at least the ratio of every GradBench objective (an
    /// over-estimate keeps large recordings out of the budget).
    ///
    /// ```
    /// assert_eq!(jacobian::Preparation::PROGRAM_FACTOR, 4);
    /// ```
    pub const PROGRAM_FACTOR: usize = 4;
}

/// What preparing a [`PreparedGradient`] did and cost: the strategy and why, the time, and
/// the memory kept against one plain recording's.
///
/// ```
/// use jacobian::{Function, Op, PreparedGradient, Preparation};
/// struct Square;
/// impl Function for Square {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         vec![x[0] * x[0]]
///     }
/// }
/// let p = PreparedGradient::new(Square, &[3.0])?;
/// let plan = p.plan();
/// assert_eq!(plan.strategy, Preparation::Reevaluate);
/// assert!(plan.kept_bytes >= plan.recording_bytes);
/// println!("{plan}");
/// # Ok::<(), jacobian::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct PreparedPlan {
    /// [`Preparation::Reevaluate`] or [`Preparation::Record`] (never `Auto`).
    pub strategy: Preparation,
    /// Bytes of one plain recording of `f` ([`reverse::TapeStats::bytes`]).
    pub recording_bytes: usize,
    /// Seconds one plain recording of `f` took, while preparing.
    pub recording_seconds: f64,
    /// Bytes the object keeps: its recording's capacities, with the compiled program if it
    /// re-evaluates ([`reverse::Recording::kept_bytes`]), and the adjoints.
    pub kept_bytes: usize,
    /// Seconds preparing took, including one call at the point it was prepared at (so that the
    /// first call of the user pays nothing more than any other).
    pub seconds: f64,
    /// Why this strategy.
    pub reason: String,
}

impl fmt::Display for PreparedPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mib = |b: usize| b as f64 / (1 << 20) as f64;
        let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
        let what = match self.strategy {
            Preparation::Record => "records f at each call in its own buffers",
            _ => "re-evaluates its compiled recording at each call",
        };
        write!(
            f,
            "{what} ({}); keeps {:.1} MiB ({:.1}× one recording's {:.1} MiB); prepared in \
             {:.3} s ({:.1}× one recording's {:.3} s)",
            self.reason,
            mib(self.kept_bytes),
            ratio(self.kept_bytes as f64, self.recording_bytes as f64),
            mib(self.recording_bytes),
            self.seconds,
            ratio(self.seconds, self.recording_seconds),
            self.recording_seconds,
        )
    }
}

/// The gradient of one scalar function at many points: recorded once, re-evaluated and swept
/// once per call. Equal, bit for bit, to [`gradient`](crate::gradient) at the same point.
///
/// ```
/// use jacobian::{Function, Op, PreparedGradient, Replay};
/// struct Rosenbrock;
/// impl Function for Rosenbrock {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         let (a, b) = (T::one() - x[0], x[1] - x[0] * x[0]);
///         vec![a * a + b * b * 100.0]
///     }
/// }
/// let mut p = PreparedGradient::new(Rosenbrock, &[0.0, 0.0])?;
/// let (y, g) = p.gradient(&[1.0, 1.0])?;
/// assert_eq!((y, g), (0.0, vec![0.0, 0.0]));
/// assert_eq!(p.last(), &Replay::Reevaluated);
/// # Ok::<(), jacobian::Error>(())
/// ```
pub struct PreparedGradient<F> {
    f: F,
    /// Always present between calls (taken out while [`Preparation::Record`] records again).
    recorded: Option<Recorded>,
    plan: PreparedPlan,
    last: Replay,
    rerecords: usize,
}

impl<F: Function> PreparedGradient<F> {
    /// Prepares `f` at `x` by [`Preparation::Auto`]: see [`with`](PreparedGradient::with).
    ///
    /// # Errors
    ///
    /// As [`gradient`](crate::gradient): bad input, or `f` without exactly one output.
    pub fn new(f: F, x: &[f64]) -> Result<Self, Error> {
        Self::with(f, x, Preparation::Auto)
    }

    /// Prepares `f` at `x` ahead of time: records it, compiles the recording where it will be
    /// re-evaluated, and computes the gradient at `x` once, so that every later call costs the
    /// same. [`plan`](PreparedGradient::plan) reports the time and memory this took.
    ///
    /// ```
    /// use jacobian::{Function, Op, PreparedGradient, Preparation, Replay};
    /// struct Dot;
    /// impl Function for Dot {
    ///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
    ///         vec![T::dot(x, x)]
    ///     }
    /// }
    /// let mut p = PreparedGradient::with(Dot, &[1.0, 2.0], Preparation::Record)?;
    /// assert_eq!(p.gradient(&[3.0, 4.0])?, (25.0, vec![6.0, 8.0]));
    /// assert_eq!(p.last(), &Replay::Recorded);
    /// assert_eq!(p.plan().strategy, Preparation::Record);
    /// # Ok::<(), jacobian::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`gradient`](crate::gradient): bad input, or `f` without exactly one output.
    pub fn with(f: F, x: &[f64], preparation: Preparation) -> Result<Self, Error> {
        hessian::check_scalar(&f, x.len())?;
        let start = Instant::now();
        let plain = sweeps::record_plain_again(&f, x, None, None)?;
        let recording_seconds = start.elapsed().as_secs_f64();
        if plain.ys.len() != 1 {
            return Err(Error::NotScalar {
                outputs: plain.ys.len(),
            });
        }
        let recording_bytes = plain.rec.stats().bytes;
        let estimate = Preparation::PROGRAM_FACTOR * recording_bytes;
        let (strategy, reason) = match preparation {
            Preparation::Auto if estimate <= Preparation::EXTRA_BYTES => (
                Preparation::Reevaluate,
                format!(
                    "its compiled program, about {} MiB, fits in {} MiB",
                    estimate >> 20,
                    Preparation::EXTRA_BYTES >> 20
                ),
            ),
            Preparation::Auto => (
                Preparation::Record,
                format!(
                    "a compiled program, about {} MiB, would pass {} MiB",
                    estimate >> 20,
                    Preparation::EXTRA_BYTES >> 20
                ),
            ),
            chosen => (chosen, "chosen by the caller".to_string()),
        };
        let recorded = match strategy {
            Preparation::Record => {
                // Calls record the same size again: the doubling's spare room is not needed.
                let mut plain = plain;
                plain.rec.shrink_to_fit();
                plain
            }
            _ => {
                drop(plain);
                sweeps::record_replayable(&f, x, Some(1))?
            }
        };
        let mut p = PreparedGradient {
            f,
            recorded: Some(recorded),
            plan: PreparedPlan {
                strategy,
                recording_bytes,
                recording_seconds,
                kept_bytes: 0,
                seconds: 0.0,
                reason,
            },
            last: Replay::Recorded,
            rerecords: 0,
        };
        // One call now builds what the calls re-use: the compiled program, the sweep's
        // schedule, the adjoints.
        p.gradient(x)?;
        p.last = Replay::Recorded;
        p.plan.kept_bytes = p.kept_bytes();
        p.plan.seconds = start.elapsed().as_secs_f64();
        Ok(p)
    }

    /// `(f(x), ∇f(x))`: the recording re-evaluated at `x` and swept once (or `f` recorded
    /// afresh at `x` where a guard fails, or at every call by [`Preparation::Record`]; see
    /// [`last`](PreparedGradient::last)).
    ///
    /// # Errors
    ///
    /// A wrong-sized `x`.
    pub fn gradient(&mut self, x: &[f64]) -> Result<(f64, Vec<f64>), Error> {
        if self.plan.strategy == Preparation::Record {
            let n = self.recorded.as_ref().map_or(x.len(), |r| r.xs.len());
            if x.len() != n {
                return Err(Error::InputLength {
                    expected: n,
                    found: x.len(),
                });
            }
            let last = self.recorded.take();
            self.recorded = Some(sweeps::record_plain_again(&self.f, x, Some(1), last)?);
            self.last = Replay::Recorded;
        } else {
            let r = self.recorded.as_mut().expect("kept between calls");
            let (replay, fresh) = reuse_or_record(&self.f, r, x)?;
            self.rerecords += fresh;
            self.last = replay;
        }
        let r = self.recorded.as_mut().expect("kept between calls");
        let y = r.ys[0];
        // Only the inputs' adjoints: the sweep may leave out the nodes its schedule bypasses.
        let g = r
            .rec
            .sweep_wrt_with(&[(y, 1.0)], &r.xs, &mut r.work.adjoints);
        Ok((r.rec.value(y), g))
    }

    /// What preparing did and cost.
    pub fn plan(&self) -> &PreparedPlan {
        &self.plan
    }

    /// Bytes kept now: the recording (with its compiled program) and the adjoints.
    fn kept_bytes(&self) -> usize {
        self.recorded.as_ref().map_or(0, |r| {
            r.rec.kept_bytes() + size_of_val(r.work.adjoints.as_slice())
        })
    }

    /// How the last call obtained its recording.
    pub fn last(&self) -> &Replay {
        &self.last
    }

    /// How many calls recorded `f` afresh because a guard failed.
    ///
    /// ```
    /// use jacobian::{Function, Op, PreparedGradient, Replay};
    /// struct Kink;
    /// impl Function for Kink {
    ///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
    ///         vec![if x[0] > T::zero() { x[0] * x[0] } else { -x[0] }]
    ///     }
    /// }
    /// let mut p = PreparedGradient::new(Kink, &[1.0])?;
    /// assert_eq!(p.gradient(&[3.0])?, (9.0, vec![6.0]));
    /// assert_eq!(p.gradient(&[-2.0])?, (2.0, vec![-1.0])); // the branch flipped
    /// assert!(matches!(p.last(), Replay::Rerecorded(why) if why.contains("guard 0 failed")));
    /// assert_eq!(p.rerecords(), 1);
    /// # Ok::<(), jacobian::Error>(())
    /// ```
    pub fn rerecords(&self) -> usize {
        self.rerecords
    }

    /// What the current recording holds.
    pub fn tape(&self) -> TapeStats {
        self.recorded
            .as_ref()
            .map_or_else(TapeStats::default, |r| r.rec.stats())
    }
}
