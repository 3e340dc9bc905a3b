//! [`PreparedGradient`]: the gradient of one scalar function at many points, prepared ahead of
//! time by the strategy its plan chooses.

use super::Preparation;
use super::compilation::{compile_timed, forget_code};
use super::recording::reuse_or_record;
use crate::hessian;
use crate::plan::Compilation;
use crate::plan::Replay;
use crate::sweeps::{self, Recorded};
use core::fmt;
use reverse::TapeStats;
use shared_ops::{Error, Function};
use std::time::Instant;

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
/// // Re-evaluated: compiled (feature `jit`) if the compiled calls were faster.
/// assert!(matches!(plan.strategy, Preparation::Reevaluate | Preparation::Compile));
/// assert!(plan.kept_bytes >= plan.recording_bytes);
/// println!("{plan}");
/// # Ok::<(), jacobian::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct PreparedPlan {
    /// [`Preparation::Reevaluate`], [`Preparation::Record`] or [`Preparation::Compile`]
    /// (never `Auto`).
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
    /// What compiling made and repays, where the object tried ([`Preparation::Compile`], or
    /// [`Preparation::Auto`] where it re-evaluates); `None` where it did not.
    pub compilation: Option<Compilation>,
}

impl fmt::Display for PreparedPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mib = |b: usize| b as f64 / (1 << 20) as f64;
        let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
        let what = match self.strategy {
            Preparation::Record => "records f at each call in its own buffers",
            Preparation::Compile => "runs its recording compiled to machine code at each call",
            _ => "re-evaluates its recording at each call",
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
        )?;
        match &self.compilation {
            Some(c) => write!(f, "; {c}"),
            None => Ok(()),
        }
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
            // More nodes than the compiler takes: a replayable recording would only cost
            // memory, so the calls record afresh.
            #[cfg(feature = "jit")]
            Preparation::Compile if plain.rec.stats().nodes > reverse::jit::MOST_NODES => (
                Preparation::Record,
                format!(
                    "chosen by the caller, but its {} nodes are more than the {} the compiler \
                     takes",
                    plain.rec.stats().nodes,
                    reverse::jit::MOST_NODES
                ),
            ),
            chosen => (chosen, "chosen by the caller".to_string()),
        };
        let compile = (preparation == Preparation::Compile && strategy != Preparation::Record)
            || (preparation == Preparation::Auto && strategy == Preparation::Reevaluate);
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
            #[cfg(feature = "jit")]
            if self.plan.strategy == Preparation::Compile && r.rec.gradient_code().is_some() {
                // The compiled gradient, in buffers of its own; where a guard fails, recorded
                // afresh (and compiled again) below. A recording made afresh that did not
                // compile (its output a constant there, say) runs interpreted.
                let mut g = vec![0.0; r.xs.len()];
                if let Ok(y) = r.rec.gradient_at(x, &mut g) {
                    self.last = Replay::Reevaluated;
                    return Ok((y, g));
                }
            }
            let (replay, fresh) = reuse_or_record(&self.f, r, x)?;
            self.rerecords += fresh;
            self.last = replay;
            if fresh > 0 && self.plan.strategy == Preparation::Compile {
                let _ = self.compile_recording();
            }
        }
        let r = self.recorded.as_mut().expect("kept between calls");
        let y = r.ys[0];
        // Only the inputs' adjoints, the sweep's buffer kept for the next call.
        let g = r
            .rec
            .sweep_wrt_with(&[(y, 1.0)], &r.xs, &mut r.work.adjoints);
        Ok((r.rec.value(y), g))
    }

    /// Compiles the recording where the plan says so, timing calls before and after; with
    /// `only_if_faster`, drops the code again if the compiled calls are not faster.
    fn compile(&mut self, x: &[f64], only_if_faster: bool) -> Result<(), Error> {
        let c = compile_timed(
            self,
            |p| p.gradient(x).map(drop),
            |p| {
                let made = p.compile_recording()?;
                p.plan.strategy = Preparation::Compile;
                Ok(made)
            },
            |p| {
                forget_code(p.recorded.as_mut().expect("kept between calls"));
                p.plan.strategy = Preparation::Reevaluate;
            },
            only_if_faster,
            0,
        )?;
        self.plan.compilation = Some(c);
        Ok(())
    }

    /// Compiles the current recording's gradient: its code's bytes and compile seconds, or
    /// why it cannot be compiled.
    fn compile_recording(&mut self) -> Result<(usize, f64), String> {
        #[cfg(feature = "jit")]
        {
            let r = self.recorded.as_mut().expect("kept between calls");
            r.rec
                .compile_gradient(r.ys[0])
                .map(|code| (code.bytes, code.time.as_secs_f64()))
                .map_err(|e| e.to_string())
        }
        #[cfg(not(feature = "jit"))]
        Err(super::compilation::NO_JIT.to_string())
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

    /// What the current recording holds.
    pub fn tape(&self) -> TapeStats {
        self.recorded
            .as_ref()
            .map_or_else(TapeStats::default, |r| r.rec.stats())
    }
}
