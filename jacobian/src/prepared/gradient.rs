//! [`PreparedGradient`]: the gradient of one scalar function at many points, prepared ahead of
//! time by the strategy its plan chooses.

use super::compilation::compile_timed;
use super::recording::reuse_or_record;
use super::{Preparation, PreparedPlan};
use crate::hessian;
use crate::plan::Replay;
use crate::sweeps::{self, Recorded};
use reverse::TapeStats;
use shared_ops::{Error, Function};
use std::time::Instant;

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
    /// The recording between calls, but where its gradient is compiled (feature `jit`);
    /// taken out while [`Preparation::Record`] records again.
    recorded: Option<Recorded>,
    /// The compiled gradient, which took the recording's place.
    #[cfg(feature = "jit")]
    compiled: Option<reverse::jit::CompiledGradient>,
    /// What the recording compiled held.
    #[cfg(feature = "jit")]
    compiled_tape: TapeStats,
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
        // Too many nodes for the compiler: nothing is compiled, and a replayable recording
        // would only cost memory.
        #[cfg(feature = "jit")]
        let too_many = (plain.rec.stats().nodes > reverse::jit::MOST_NODES).then(|| {
            format!(
                "its {} nodes are more than the {} the compiler takes",
                plain.rec.stats().nodes,
                reverse::jit::MOST_NODES
            )
        });
        #[cfg(not(feature = "jit"))]
        let too_many: Option<String> = None;
        let (strategy, reason) = match preparation {
            Preparation::Auto if estimate <= Preparation::EXTRA_BYTES => (
                Preparation::Reevaluate,
                format!(
                    "its program, about {} MiB, fits in {} MiB",
                    estimate >> 20,
                    Preparation::EXTRA_BYTES >> 20
                ),
            ),
            Preparation::Auto => (
                Preparation::Record,
                format!(
                    "its program, about {} MiB, would pass {} MiB",
                    estimate >> 20,
                    Preparation::EXTRA_BYTES >> 20
                ),
            ),
            Preparation::Compile if too_many.is_some() => (
                Preparation::Record,
                format!(
                    "chosen by the caller, but {}",
                    too_many.as_deref().unwrap_or("")
                ),
            ),
            chosen => (chosen, "chosen by the caller".to_string()),
        };
        let compile = match preparation {
            Preparation::Compile => strategy != Preparation::Record,
            // Compiled where its calls are faster than the other strategy's and it keeps
            // little enough (checked once compiled).
            Preparation::Auto => {
                too_many.is_none() && (cfg!(feature = "jit") || strategy == Preparation::Reevaluate)
            }
            _ => false,
        };
        let strategy = match strategy {
            Preparation::Compile => Preparation::Reevaluate, // until compiled below
            s => s,
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
            #[cfg(feature = "jit")]
            compiled: None,
            #[cfg(feature = "jit")]
            compiled_tape: TapeStats::default(),
            plan: PreparedPlan {
                strategy,
                recording_bytes,
                recording_seconds,
                kept_bytes: 0,
                seconds: 0.0,
                reason,
                compilation: None,
            },
            last: Replay::Recorded,
            rerecords: 0,
        };
        // One call now builds what the calls re-use: the prepared program, the adjoints.
        p.gradient(x)?;
        if compile {
            p.compile(x, preparation == Preparation::Auto)?;
        }
        p.last = Replay::Recorded;
        p.plan.kept_bytes = p.kept_bytes();
        p.plan.seconds = start.elapsed().as_secs_f64();
        Ok(p)
    }

    /// `(f(x), ∇f(x))`: the recording re-evaluated at `x` and swept once, or its compiled
    /// gradient run (or `f` recorded afresh at `x` where a guard fails, or at every call by
    /// [`Preparation::Record`]; see [`last`](PreparedGradient::last)).
    ///
    /// # Errors
    ///
    /// A wrong-sized `x`.
    pub fn gradient(&mut self, x: &[f64]) -> Result<(f64, Vec<f64>), Error> {
        #[cfg(feature = "jit")]
        if let Some(c) = self.compiled.as_mut() {
            let mut g = vec![0.0; c.inputs()];
            match c.gradient(x, &mut g) {
                Ok(y) => {
                    self.last = Replay::Reevaluated;
                    return Ok((y, g));
                }
                Err(reverse::jit::RunError::Length { inputs, x, .. }) => {
                    return Err(Error::InputLength {
                        expected: inputs,
                        found: x,
                    });
                }
                Err(failed) => {
                    // Recorded afresh at `x`, which names the guard; swept here, then
                    // compiled again.
                    let fresh = sweeps::record_replayable(&self.f, x, Some(1))?;
                    let why = c.failed_guard(&fresh.rec).map_or_else(
                        || failed.to_string(),
                        |g| reverse::ReplayError::Guard(g).to_string(),
                    );
                    self.compiled = None;
                    self.recorded = Some(fresh);
                    self.rerecords += 1;
                    self.last = Replay::Rerecorded(why);
                    let out = self.sweep();
                    // A recording that does not compile (its output a constant at this point,
                    // say) runs interpreted until a guard fails again.
                    let _ = self.compile_recording();
                    return Ok(out);
                }
            }
        }
        let mut fresh = 0;
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
            let (replay, made) = reuse_or_record(&self.f, r, x)?;
            self.rerecords += made;
            self.last = replay;
            fresh = made;
        }
        let out = self.sweep();
        if fresh > 0 && self.plan.strategy == Preparation::Compile {
            let _ = self.compile_recording();
        }
        Ok(out)
    }

    /// The value and gradient of the recording at its point.
    fn sweep(&mut self) -> (f64, Vec<f64>) {
        let r = self.recorded.as_mut().expect("kept between calls");
        let y = r.ys[0];
        // Only the inputs' adjoints, the sweep's buffer kept for the next call.
        let g = r
            .rec
            .sweep_wrt_with(&[(y, 1.0)], &r.xs, &mut r.work.adjoints);
        (r.rec.value(y), g)
    }

    /// Compiles the gradient where the plan says so, timing calls before and after; with
    /// `only_if_faster` (`Auto`), goes back to the strategy it had where the compiled calls
    /// are not faster or the object would keep more than [`Preparation::EXTRA_BYTES`] beyond
    /// what it keeps by that strategy.
    fn compile(&mut self, x: &[f64], only_if_faster: bool) -> Result<(), Error> {
        let before = self.plan.strategy;
        // What the object keeps without the code: a compiled gradient may add
        // `EXTRA_BYTES` to it.
        let uncompiled = self.kept_bytes();
        let c = compile_timed(
            self,
            |p| p.gradient(x).map(drop),
            |p| {
                // Calls that record afresh keep no replayable recording: one is made to compile.
                if before == Preparation::Record && cfg!(feature = "jit") {
                    p.recorded = Some(
                        sweeps::record_replayable(&p.f, x, Some(1)).map_err(|e| e.to_string())?,
                    );
                }
                let made = p.compile_recording();
                let kept = p.kept_bytes();
                let made = match made {
                    Ok(_) if only_if_faster && kept > uncompiled + Preparation::EXTRA_BYTES => {
                        Err(format!(
                            "its compiled gradient would keep {} MiB, more than {} MiB beyond \
                             the {} MiB kept without it",
                            kept >> 20,
                            Preparation::EXTRA_BYTES >> 20,
                            uncompiled >> 20
                        ))
                    }
                    made => made,
                };
                match made {
                    Ok(made) => {
                        p.plan.strategy = Preparation::Compile;
                        Ok(made)
                    }
                    Err(why) => {
                        p.uncompile(x, before).map_err(|e| e.to_string())?;
                        Err(why)
                    }
                }
            },
            |p| p.uncompile(x, before),
            only_if_faster,
            0,
        )?;
        if only_if_faster && self.plan.strategy == Preparation::Compile {
            self.plan.reason = format!(
                "{}; compiled: its gradient keeps {} MiB, at most {} MiB beyond the {} MiB kept \
                 without it, and its calls were faster",
                self.plan.reason,
                self.kept_bytes() >> 20,
                Preparation::EXTRA_BYTES >> 20,
                uncompiled >> 20
            );
        }
        self.plan.compilation = Some(c);
        Ok(())
    }

    /// Drops the compiled gradient and goes back to `strategy`, with a recording made at `x`
    /// as that strategy keeps it.
    fn uncompile(&mut self, x: &[f64], strategy: Preparation) -> Result<(), Error> {
        #[cfg(feature = "jit")]
        {
            self.compiled = None;
        }
        // A replayable recording that did not compile is kept for `Reevaluate`.
        if strategy == Preparation::Record || self.recorded.is_none() {
            self.recorded = Some(match strategy {
                Preparation::Record => {
                    // As prepared for `Record`: no spare room.
                    let mut r = sweeps::record_plain_again(&self.f, x, Some(1), None)?;
                    r.rec.shrink_to_fit();
                    r
                }
                _ => sweeps::record_replayable(&self.f, x, Some(1))?,
            });
        }
        self.plan.strategy = strategy;
        self.gradient(x).map(drop)
    }

    /// Compiles the current recording's gradient, which takes the recording's place: its
    /// code's bytes and compile seconds, or why it cannot be compiled (the recording stays).
    fn compile_recording(&mut self) -> Result<(usize, f64), String> {
        #[cfg(feature = "jit")]
        {
            let Recorded { rec, xs, ys, work } = self.recorded.take().expect("kept between calls");
            let stats = rec.stats();
            match rec.compile_gradient(ys[0]) {
                Ok(c) => {
                    let made = (c.code().bytes, c.code().time.as_secs_f64());
                    self.compiled = Some(c);
                    self.compiled_tape = stats;
                    Ok(made)
                }
                Err(not) => {
                    self.recorded = Some(Recorded {
                        rec: *not.recording,
                        xs,
                        ys,
                        work,
                    });
                    Err(not.error.to_string())
                }
            }
        }
        #[cfg(not(feature = "jit"))]
        Err(super::compilation::NO_JIT.to_string())
    }

    /// What preparing did and cost.
    pub fn plan(&self) -> &PreparedPlan {
        &self.plan
    }

    /// Bytes kept now: the recording (with its compiled program) and the adjoints, or the
    /// compiled gradient.
    fn kept_bytes(&self) -> usize {
        #[cfg(feature = "jit")]
        if let Some(c) = &self.compiled {
            return c.kept_bytes();
        }
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

    /// The function this object differentiates.
    ///
    /// ```
    /// use jacobian::{Function, Op, PreparedGradient};
    /// struct Square;
    /// impl Function for Square {
    ///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
    ///         vec![x[0] * x[0]]
    ///     }
    /// }
    /// let p = PreparedGradient::new(Square, &[3.0])?;
    /// assert_eq!(p.function().eval(&[3.0_f64]), vec![9.0]);
    /// # Ok::<(), jacobian::Error>(())
    /// ```
    pub fn function(&self) -> &F {
        &self.f
    }

    /// The function back, the preparation dropped.
    pub(crate) fn into_function(self) -> F {
        self.f
    }

    /// What the current recording holds (the one compiled, where the gradient is).
    pub fn tape(&self) -> TapeStats {
        #[cfg(feature = "jit")]
        if self.compiled.is_some() {
            return self.compiled_tape;
        }
        self.recorded
            .as_ref()
            .map_or_else(TapeStats::default, |r| r.rec.stats())
    }
}
