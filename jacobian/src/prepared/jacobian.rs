//! [`PreparedJacobian`]: the Jacobian of one function at many points.

use super::Preparation;
use super::recording::{Kept, compile_kept, take_buffers};
use crate::lanes::{self, Inputs, Seed, by_lanes};
use crate::plan::{Direction, Mode, Plan, Replay};
use crate::sweeps::{self, Recorded, Swept, forward_chunked};
use crate::{Jacobian, Products};
use nalgebra::DMatrix;
use shared_ops::{Error, Function};

/// The Jacobian of one function at many points: planned and recorded once.
///
/// In reverse mode (chosen by the plan, or forced) `f` is recorded once on a replayable tape;
/// each [`jacobian`](PreparedJacobian::jacobian) re-evaluates that recording at the new point
/// and runs the reverse sweeps, and its plan's [`replay`](Plan::replay) says whether the
/// recording was re-used or made afresh (where a branch of `f` flipped). In forward mode nothing
/// is recorded, and each call runs the forward sweeps. The matrix equals, bit for bit, what
/// [`jacobian_with`](crate::jacobian_with) gives in the same mode.
///
/// With feature `jit`, the recording is compiled to machine code (its forward pass and its
/// sweeps) on request ([`Preparation::Compile`]), or by [`Preparation::Auto`] once the calls
/// have taken [`Preparation::COMPILE_AFTER`]; the plan of each later call reports it
/// ([`Plan::compiled`]): the code's size, the compile time, a call before and after, and the
/// calls that repay it. The matrix stays the interpreter's, bit for bit.
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
    /// The recording (reverse mode), how each call obtains it, and what compiling made.
    kept: Kept,
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
        Self::with_preparation(f, x, mode, Preparation::Auto)
    }

    /// As [`with_mode`](PreparedJacobian::with_mode), with the recording of reverse mode
    /// obtained by `preparation`: re-evaluated (`Reevaluate`), recorded afresh at each call in
    /// buffers the object keeps (`Record`), compiled now (`Compile`, feature `jit`), or
    /// re-evaluated and compiled once the calls have taken [`Preparation::COMPILE_AFTER`]
    /// (`Auto`, what [`new`](PreparedJacobian::new) does). Forward mode records nothing.
    ///
    /// ```
    /// use jacobian::{Function, Mode, Op, Preparation, PreparedJacobian};
    /// struct F;
    /// impl Function for F {
    ///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
    ///         vec![x[0] * x[1], x[0].sin() + x[1]]
    ///     }
    /// }
    /// let mut p = PreparedJacobian::with_preparation(F, &[1.0, 2.0], Mode::Reverse, Preparation::Compile)?;
    /// let j = p.jacobian(&[0.5, 3.0])?;
    /// assert_eq!(j.matrix.as_slice(), &[3.0, 0.5_f64.cos(), 0.5, 1.0]);
    /// let c = j.plan.compiled.as_ref().expect("compiled on request");
    /// // Machine code, or (without the feature `jit`) the reason there is none.
    /// assert!(c.code_bytes > 0 || c.declined.is_some());
    /// println!("{}", j.plan);
    /// # Ok::<(), jacobian::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`with_mode`](PreparedJacobian::with_mode).
    pub fn with_preparation(
        f: F,
        x: &[f64],
        mode: Mode,
        preparation: Preparation,
    ) -> Result<Self, Error> {
        f.check_input(x.len())?;
        let record = |f: &F, m| Kept::record(f, x, m, preparation);
        let n = x.len();
        let declared = f.sizes().map(|s| s.1);
        let (mode, forced, m, recorded) = match mode {
            Mode::Forward => (Direction::Forward, true, declared, None),
            Mode::Reverse => {
                let r = record(&f, None)?;
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
                        Some(record(&f, Some(m))?),
                    ),
                }
            }
        };
        let reverse = mode == Direction::Reverse;
        let mut p = PreparedJacobian {
            f,
            n,
            m,
            mode,
            forced,
            lanes: lanes::lanes_for(n),
            inputs: Inputs::default(),
            kept: Kept::new(recorded, preparation),
            plan: None,
            threads: false,
        };
        if reverse && preparation == Preparation::Compile {
            p.compile(x, 0, false)?;
        }
        Ok(p)
    }

    /// Compiles the recording after `calls` calls, timing calls before and after; with
    /// `only_if_faster`, drops the code again if the compiled calls are not faster.
    fn compile(&mut self, x: &[f64], calls: usize, only_if_faster: bool) -> Result<(), Error> {
        let mut out = Swept::default();
        let lanes = sweeps::reverse_lanes(self.m.expect("known in reverse mode"));
        let call = |p: &mut Self| p.sweep(x, &mut out).map(drop);
        compile_kept(self, |p| &mut p.kept, call, lanes, calls, only_if_faster)
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
        let mut plan = Plan::new(self.mode, self.n, out, self.forced);
        plan.compiled.clone_from(&self.kept.compilation);
        plan
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
        if plan.compiled != self.kept.compilation {
            plan.compiled.clone_from(&self.kept.compilation);
        }
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
                let start = self.kept.start();
                let (replay, r) = self.recording(x)?;
                sweeps::reverse_seeded(r, Seed::Identity, threads, out);
                if let Some((calls, only_if_faster)) = self.kept.count(start) {
                    self.compile(x, calls, only_if_faster)?;
                }
                Ok(replay)
            }
        }
    }

    /// The recording re-evaluated at `x` (or recorded afresh where a guard fails), made now if
    /// this object has none yet (forward mode, asked for `Wᵀ·J`).
    fn recording(&mut self, x: &[f64]) -> Result<(Replay, &mut Recorded), Error> {
        let (replay, r) = self.kept.at(&self.f, x, self.m)?;
        self.m = Some(r.ys.len());
        Ok((replay, r))
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
        plan.compiled.clone_from(&self.kept.compilation);
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
        self.kept.rerecords
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
