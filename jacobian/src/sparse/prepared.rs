//! A sparse Jacobian prepared once for a function and taken at many points: the pattern,
//! colourings, strategy and buffers kept; each call runs the compressed sweeps only.

use super::colouring::colour_columns_with;
use super::compressed::{self, Compressed, Gather, Read};
use super::detect::{Detected, detect_jacobian};
use super::plan::{SparsePlan, Strategy, colour_and_plan};
use super::{Colouring, Detection, Pattern, SparseJacobian, SparseOptions};
use crate::lanes::chunk_lanes;
use crate::plan::Replay;
use crate::prepared::Preparation;
use crate::prepared::recording::{Kept, compile_kept};
use crate::sweeps::Recorded;
use crate::{Mode, Options};
use nalgebra_sparse::CsrMatrix;
use nalgebra_sparse::pattern::SparsityPattern;
use shared_ops::{Error, Function, memory};
use std::cell::OnceCell;
use std::sync::atomic::{AtomicU64, Ordering};

/// A sparse Jacobian prepared for a function: its pattern, colourings, strategy and buffers,
/// reused at every new point (the Jacobian a Newton or Levenberg–Marquardt loop asks for at each
/// step). Each call runs the compressed sweeps only.
///
/// **When the pattern must be detected again.** A global pattern (the default whenever `f`
/// has no branch on a value) holds at every x: never. A local one (the fallback for a function
/// that branches on values) holds wherever `f` takes the branches it took at detection; where
/// it takes others, detect again. Each call checks that the compressed sweeps put no nonzero
/// where the pattern leaves its colour unused in its row, and if they did, detects the pattern
/// again at this point, says so in [`SparsePlan::redetected`] and counts it
/// ([`redetections`](Self::redetections)). That check is cheap but partial: a new nonzero whose
/// colour its row already uses mixes into that entry unseen. So with a local pattern, call
/// [`redetect`](Self::redetect) when the branches may have changed, or make the branch
/// value-free (`max`, `min`, `abs` and friends are followed by global detection) and let
/// [`Detection::Global`] run.
///
/// ```
/// use jacobian::{Function, Op};
/// use jacobian::sparse::PreparedSparseJacobian;
/// struct F;
/// impl Function for F {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         (0..x.len()).map(|i| x[i] * x[(i + 1) % x.len()]).collect()
///     }
/// }
/// let mut prepared = PreparedSparseJacobian::new(F, &[1.0; 100])?;
/// let j = prepared.jacobian(&vec![2.0; 100])?;
/// assert_eq!(j.triplets()[..2], [(0, 0, 2.0), (0, 1, 2.0)]);
/// assert_eq!(prepared.redetections(), 0);
/// # Ok::<(), jacobian::Error>(())
/// ```
pub struct PreparedSparseJacobian<F> {
    f: F,
    options: SparseOptions,
    pattern: Pattern,
    transpose: OnceCell<Pattern>,
    /// The colourings, where made (see [`adopt`](Self::adopt)).
    columns: Option<Colouring>,
    rows: Option<Colouring>,
    plan: SparsePlan,
    /// How sweeps by rows obtain their recording (never `Auto` for a one-shot call: `Record`).
    preparation: Preparation,
    /// The recording of sweeps by rows (the detection's, for a one-shot call), and what
    /// compiling it made.
    kept: Kept,
    buffer: Compressed,
    /// How the compressed sweeps of the current strategy are read back (made at its first use).
    gather: Option<Gather>,
    redetections: usize,
    /// Check each call's compressed results against the pattern (all but one-shot calls).
    check: bool,
    /// This pattern's number (a new one at each detection).
    source: u64,
}

impl<F: Function + Sync> PreparedSparseJacobian<F> {
    /// Detects the pattern of `f` at `x`, colours it and plans, with default options.
    pub fn new(f: F, x: &[f64]) -> Result<Self, Error> {
        Self::with_options(f, x, SparseOptions::default())
    }

    /// As [`new`](Self::new), with explicit options.
    pub fn with_options(f: F, x: &[f64], options: SparseOptions) -> Result<Self, Error> {
        Self::with_preparation(f, x, options, Preparation::Auto)
    }

    /// As [`with_options`](Self::with_options), with the recording of sweeps by rows obtained
    /// by `preparation`, as a [`PreparedJacobian`](crate::PreparedJacobian)'s: re-evaluated at
    /// each call (`Reevaluate`), recorded afresh (`Record`), compiled now (`Compile`, feature
    /// `jit`: its forward pass and its vector sweep; after a new detection, at the next call
    /// by rows), or re-evaluated and compiled once the calls by rows have taken
    /// [`Preparation::COMPILE_AFTER`], where the compiled calls are faster (`Auto`, what
    /// [`new`](Self::new) does). Each call's plan says how it obtained the recording
    /// ([`SparsePlan::replay`]) and what compiling made ([`SparsePlan::compiled`]). Sweeps by
    /// columns record nothing.
    ///
    /// ```
    /// use jacobian::sparse::{PreparedSparseJacobian, SparseOptions, Strategy};
    /// use jacobian::{Function, Mode, Op, Preparation, Replay};
    /// struct F;
    /// impl Function for F {
    ///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
    ///         (0..x.len()).map(|i| x[i].sin() * x[(i + 1) % x.len()]).collect()
    ///     }
    /// }
    /// let options = SparseOptions { mode: Mode::Reverse, ..SparseOptions::default() };
    /// let mut p = PreparedSparseJacobian::with_preparation(F, &[1.0; 6], options, Preparation::Compile)?;
    /// let j = p.jacobian(&[0.5; 6])?;
    /// assert_eq!(j.plan.strategy, Strategy::Rows);
    /// assert_eq!(j.triplets()[..2], [(0, 0, 0.5_f64.cos() * 0.5), (0, 1, 0.5_f64.sin())]);
    /// // Machine code, or (without the feature `jit`) the reason there is none.
    /// let c = j.plan.compiled.as_ref().expect("compiled on request");
    /// assert!(c.code_bytes > 0 || c.declined.is_some());
    /// assert_eq!(p.jacobian(&[0.25; 6])?.plan.replay, Replay::Reevaluated);
    /// # Ok::<(), jacobian::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    pub fn with_preparation(
        f: F,
        x: &[f64],
        options: SparseOptions,
        preparation: Preparation,
    ) -> Result<Self, Error> {
        let mut p = Self::prepare(f, x, options, preparation)?;
        // Kept for the next calls: its memory is this object's own.
        p.kept.recorded = p.kept.recorded.take().map(Recorded::into_owned);
        if p.plan.strategy == Strategy::Rows && preparation != Preparation::Record {
            p.kept.at(&p.f, x, Some(p.plan.m))?;
            if preparation == Preparation::Compile {
                p.compile(x, 0, false)?;
            }
        }
        Ok(p)
    }

    pub(super) fn prepare(
        f: F,
        x: &[f64],
        options: SparseOptions,
        preparation: Preparation,
    ) -> Result<Self, Error> {
        let detected = detect_jacobian(&f, x, options.detection, true)?;
        let mut prepared = PreparedSparseJacobian {
            f,
            options,
            pattern: Pattern::from_csr(0, vec![0], Vec::new()),
            transpose: OnceCell::new(),
            columns: None,
            rows: None,
            plan: SparsePlan {
                strategy: Strategy::Columns,
                detection: detected.ran,
                fallback: None,
                n: 0,
                m: 0,
                nnz: 0,
                column_colours: None,
                column_bound: 0,
                row_colours: None,
                row_bound: 0,
                sweeps: 0,
                lanes: 0,
                threads: 1,
                estimates: [0.0; 4],
                reason: String::new(),
                redetected: None,
                replay: Replay::NotRecorded,
                compiled: None,
            },
            preparation,
            kept: Kept::new(None, preparation),
            buffer: Compressed::default(),
            gather: None,
            redetections: 0,
            check: true,
            source: 0,
        };
        prepared.adopt(detected);
        Ok(prepared)
    }

    /// Takes a detected pattern: colours it and plans (see [`colour_and_plan`]), keeps what
    /// the sweeps need.
    fn adopt(&mut self, d: Detected) {
        let (o, p) = (&self.options, d.pattern);
        let planned = colour_and_plan(&p, d.counts, o.mode, o.order, d.ran, d.fallback);
        let strategy = planned.plan.strategy;
        self.plan = planned.plan;
        (self.columns, self.rows) = (planned.columns, planned.rows);
        // Only sweeps by rows that record afresh at each call use the detection's recording
        // (at its own point); otherwise its buffers go back to the thread now (for bundle
        // adjustment, tens of megabytes a prepared object would hold).
        let recorded = (d.recording)
            .filter(|_| strategy == Strategy::Rows && self.preparation == Preparation::Record)
            .map(|(rec, xs, ys)| Recorded::for_one_call(rec, xs, ys));
        self.kept = Kept::new(recorded, self.preparation);
        self.pattern = p;
        self.transpose = planned.transpose;
        self.source = next_source();
        self.gather = None;
    }

    /// The Jacobian at `x` by the prepared strategy.
    ///
    /// # Errors
    ///
    /// An `x` of another length than the prepared one, or an `f` whose output length changes.
    pub fn jacobian(&mut self, x: &[f64]) -> Result<SparseJacobian, Error> {
        self.at(x)
    }

    /// Detects the pattern again at `x` (and colours and plans again).
    pub fn redetect(&mut self, x: &[f64]) -> Result<(), Error> {
        let d = detect_jacobian(&self.f, x, self.options.detection, true)?;
        self.adopt(d);
        self.redetections += 1;
        Ok(())
    }

    /// How often the pattern was detected again since preparation.
    pub fn redetections(&self) -> usize {
        self.redetections
    }

    /// The pattern the sweeps assume.
    pub fn pattern(&self) -> &Pattern {
        &self.pattern
    }

    /// Whether the dense strategies of the calls that follow may split their sweeps across
    /// threads (see [`SparseOptions::threads`]); the plan says how many ran.
    ///
    /// ```
    /// use jacobian::sparse::{PreparedSparseJacobian, Strategy};
    /// use jacobian::{Function, Op};
    /// struct Dense;
    /// impl Function for Dense {
    ///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
    ///         let s: T = x.iter().copied().sum();
    ///         x.iter().map(|&v| v * s).collect()
    ///     }
    /// }
    /// let mut p = PreparedSparseJacobian::new(Dense, &[1.0; 40])?;
    /// p.use_strategy(Strategy::DenseForward);
    /// p.set_threads(false);
    /// assert_eq!(p.jacobian(&[1.0; 40])?.plan.threads, 1);
    /// # Ok::<(), jacobian::Error>(())
    /// ```
    pub fn set_threads(&mut self, threads: bool) {
        self.options.threads = threads;
    }

    /// The colouring the sweeps use (`None` for a dense strategy).
    pub fn colouring(&self) -> Option<&Colouring> {
        match self.plan.strategy {
            Strategy::Columns => self.columns.as_ref(),
            Strategy::Rows => self.rows.as_ref(),
            _ => None,
        }
    }

    /// Runs `strategy` from now on, whatever the plan chose (to compare them).
    ///
    /// ```
    /// use jacobian::{Function, Op};
    /// use jacobian::sparse::{PreparedSparseJacobian, Strategy};
    /// struct F;
    /// impl Function for F {
    ///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
    ///         x.iter().map(|v| v.exp()).collect()
    ///     }
    /// }
    /// let mut p = PreparedSparseJacobian::new(F, &[0.0; 10])?;
    /// let by_columns = p.jacobian(&[1.0; 10])?;
    /// p.use_strategy(Strategy::DenseReverse);
    /// let dense = p.jacobian(&[1.0; 10])?;
    /// assert_eq!(dense.plan.strategy, Strategy::DenseReverse);
    /// assert_eq!((dense.plan.sweeps, dense.plan.lanes), (2, 8));
    /// assert_eq!(dense.triplets(), by_columns.triplets());
    /// # Ok::<(), jacobian::Error>(())
    /// ```
    pub fn use_strategy(&mut self, strategy: Strategy) {
        let order = self.options.order;
        let (p, transpose) = (&self.pattern, &self.transpose);
        let t = || transpose.get_or_init(|| p.transpose());
        match strategy {
            Strategy::Columns => {
                let c = self
                    .columns
                    .get_or_insert_with(|| colour_columns_with(p, transpose.get(), t, order, None));
                self.plan.column_colours = Some(c.count);
            }
            Strategy::Rows => {
                let c = self
                    .rows
                    .get_or_insert_with(|| colour_columns_with(t(), Some(p), || p, order, None));
                self.plan.row_colours = Some(c.count);
            }
            _ => {}
        }
        let p = &mut self.plan;
        let counts = (
            p.column_colours.unwrap_or(p.column_bound),
            p.row_colours.unwrap_or(p.row_bound),
        );
        (p.sweeps, p.lanes) = strategy.sweeps(p.n, p.m, counts);
        p.strategy = strategy;
        self.gather = None;
        p.reason = "strategy chosen by the caller".into();
        if strategy != Strategy::Rows {
            // What only sweeps by rows read: the detection's recording (its buffers go back to
            // the thread) and the compressed matrix of their adjoints.
            self.kept = Kept::new(None, self.preparation);
            self.plan.compiled = None;
            self.buffer.b = Vec::new();
        }
        // Earlier results carry the old strategy's colours: `jacobian_into` replaces them whole.
        self.source = next_source();
    }

    /// The plan of the last call (or of preparation).
    pub fn plan(&self) -> &SparsePlan {
        &self.plan
    }

    fn at(&mut self, x: &[f64]) -> Result<SparseJacobian, Error> {
        self.check_input(x)?;
        let mut values = vec![0.0; self.pattern.nnz()];
        if !self.sweep(x, &mut values)? && self.redetect_after_miss(x)? {
            return self.redetected_at(x);
        }
        Ok(self.result(self.pattern.as_sparsity_pattern().clone(), values))
    }

    /// The sweeps again after a miss made the pattern be detected again at `x`.
    fn redetected_at(&mut self, x: &[f64]) -> Result<SparseJacobian, Error> {
        let mut values = vec![0.0; self.pattern.nnz()];
        self.sweep(x, &mut values)?;
        Ok(self.result(self.pattern.as_sparsity_pattern().clone(), values))
    }

    /// The one-shot call: right after detection at this `x`, so no check, and the pattern
    /// moves into the result instead of being copied.
    pub(super) fn once(mut self, x: &[f64]) -> Result<SparseJacobian, Error> {
        self.check_input(x)?;
        self.check = false;
        let mut values = vec![0.0; self.pattern.nnz()];
        self.buffer = memory::take();
        self.sweep(x, &mut values)?;
        let colours = match self.plan.strategy {
            Strategy::Columns => self.columns.take(),
            Strategy::Rows => self.rows.take(),
            _ => None,
        };
        let pattern: SparsityPattern = std::mem::take(&mut self.pattern).into();
        let value = std::mem::take(&mut self.buffer.value);
        memory::give(std::mem::take(&mut self.buffer));
        Ok(SparseJacobian {
            value,
            matrix: CsrMatrix::try_from_pattern_and_values(pattern, values)
                .expect("one value per nonzero"),
            plan: self.plan,
            colours: colours.map(|c| c.colours).unwrap_or_default(),
            source: self.source,
        })
    }

    fn result(&self, pattern: SparsityPattern, values: Vec<f64>) -> SparseJacobian {
        SparseJacobian {
            value: self.buffer.value.clone(),
            matrix: CsrMatrix::try_from_pattern_and_values(pattern, values)
                .expect("one value per nonzero"),
            plan: self.plan.clone(),
            colours: self
                .colouring()
                .map(|c| c.colours.clone())
                .unwrap_or_default(),
            source: self.source,
        }
    }

    /// A result shaped for this object's pattern, its values zero and `value` empty: what
    /// [`jacobian_into`](Self::jacobian_into) writes over, allocated before the first call
    /// (the pattern copied once, here).
    ///
    /// ```
    /// use jacobian::sparse::PreparedSparseJacobian;
    /// use jacobian::{Function, Op};
    /// struct F;
    /// impl Function for F {
    ///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
    ///         x.iter().map(|v| v.sin()).collect()
    ///     }
    /// }
    /// let mut p = PreparedSparseJacobian::new(F, &[0.0; 3])?;
    /// let mut j = p.output();
    /// assert_eq!((j.matrix.nnz(), j.matrix.values()), (3, &[0.0; 3][..]));
    /// p.jacobian_into(&[1.0; 3], &mut j)?;
    /// assert_eq!(j.matrix.values(), &[1f64.cos(); 3]);
    /// # Ok::<(), jacobian::Error>(())
    /// ```
    pub fn output(&self) -> SparseJacobian {
        let mut j = self.result(self.pattern.clone().into(), vec![0.0; self.pattern.nnz()]);
        j.value.clear();
        j
    }

    /// The Jacobian at `x` written over `j`, a result of this object (of an earlier call, or
    /// [`output`](Self::output)): its values and `value` are overwritten in place, so nothing
    /// the size of the pattern is allocated or copied (a CSR matrix owns its pattern:
    /// [`jacobian`](Self::jacobian) copies it into every result). If `j` came from elsewhere,
    /// or the pattern was detected again, `j` is replaced whole.
    ///
    /// ```
    /// use jacobian::{Function, Op};
    /// use jacobian::sparse::PreparedSparseJacobian;
    /// struct F;
    /// impl Function for F {
    ///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
    ///         x.iter().map(|v| v.sin()).collect()
    ///     }
    /// }
    /// let mut p = PreparedSparseJacobian::new(F, &[0.0; 3])?;
    /// let mut j = p.jacobian(&[0.0; 3])?;
    /// p.jacobian_into(&[1.0; 3], &mut j)?; // a Newton loop's next step
    /// assert_eq!(j.matrix.values(), &[1f64.cos(); 3]);
    /// assert_eq!(j.value, vec![1f64.sin(); 3]);
    /// # Ok::<(), jacobian::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`jacobian`](Self::jacobian).
    pub fn jacobian_into(&mut self, x: &[f64], j: &mut SparseJacobian) -> Result<(), Error> {
        if j.source != self.source {
            *j = self.jacobian(x)?;
            return Ok(());
        }
        self.check_input(x)?;
        if !self.sweep(x, j.matrix.values_mut())? && self.redetect_after_miss(x)? {
            // Not `at`: its input check would clear the plan's note of the new detection.
            *j = self.redetected_at(x)?;
            return Ok(());
        }
        j.value.clear();
        j.value.extend_from_slice(&self.buffer.value);
        j.plan.clone_from(&self.plan);
        Ok(())
    }

    fn check_input(&mut self, x: &[f64]) -> Result<(), Error> {
        self.plan.redetected = None;
        if x.len() == self.plan.n {
            Ok(())
        } else {
            Err(Error::InputLength {
                expected: self.plan.n,
                found: x.len(),
            })
        }
    }

    /// After sweeps that did not fit a local pattern: detects it again (true), or for a global
    /// pattern, which cannot miss, does nothing (false).
    fn redetect_after_miss(&mut self, x: &[f64]) -> Result<bool, Error> {
        if self.plan.detection != Detection::Local {
            return Ok(false);
        }
        self.redetect(x)?;
        self.plan.redetected = Some(format!(
            "the compressed sweeps found a nonzero outside the pattern at this x (f took another branch); {} nonzeros now",
            self.pattern.nnz()
        ));
        Ok(true)
    }

    /// The sweeps of the strategy: writes the nonzeros in the pattern's order into `values`
    /// (and f(x) into the buffer); returns whether the compressed results fit the pattern.
    fn sweep(&mut self, x: &[f64], values: &mut [f64]) -> Result<bool, Error> {
        self.plan.replay = Replay::NotRecorded;
        let (p, m, check) = (&self.pattern, self.plan.m, self.check);
        let b = &mut self.buffer;
        let clean = match self.plan.strategy {
            Strategy::Columns => {
                let c = self.columns.as_ref().expect("coloured columns");
                let read = if check {
                    Read::Checked(self.gather.get_or_insert_with(|| Gather::columns(p, c)))
                } else {
                    Read::Once
                };
                // The colouring stays while the source does: a new one comes with a new source.
                let number = check.then_some(self.source);
                compressed::forward(&self.f, x, p, (c, number), b, read, values)?
            }
            Strategy::Rows => {
                let c = self.rows.as_ref().expect("coloured rows");
                let start = self.kept.start();
                let (replay, r) = rows_recording(&self.f, &mut self.kept, x, m)?;
                compressed::reverse(&r.rec, &r.xs, &r.ys, c, b);
                let clean = if check {
                    let gather = self.gather.get_or_insert_with(|| Gather::rows(p, c));
                    gather.read(&b.b, values)
                } else {
                    Gather::read_once(Gather::row_slots(p, c), &b.b, values);
                    true
                };
                if let Some((calls, only_if_faster)) = self.kept.count(start) {
                    self.compile(x, calls, only_if_faster)?;
                }
                // (After compiling, whose timed calls re-evaluate.)
                self.plan.replay = replay;
                clean
            }
            strategy => {
                let options = Options {
                    mode: match strategy {
                        Strategy::DenseForward => Mode::Forward,
                        _ => Mode::Reverse,
                    },
                    threads: self.options.threads,
                };
                let j = crate::jacobian_with_options(&self.f, x, options)?;
                self.plan.threads = j.plan.threads;
                self.plan.replay = j.plan.replay;
                check_length(m, j.value.len())?;
                let entries = (0..m).flat_map(|i| p.row(i).iter().map(move |&k| (i, k)));
                for (v, (i, k)) in values.iter_mut().zip(entries) {
                    *v = j.matrix[(i, k)];
                }
                b.value = j.value;
                true
            }
        };
        Ok(clean)
    }

    /// Compiles the recording of sweeps by rows after `calls` calls, timing calls before and
    /// after; with `only_if_faster`, drops the code again if the compiled calls are not faster.
    fn compile(&mut self, x: &[f64], calls: usize, only_if_faster: bool) -> Result<(), Error> {
        let lanes = chunk_lanes(self.rows.as_ref().map_or(1, |c| c.count));
        let mut values = vec![0.0; self.pattern.nnz()];
        let call = |p: &mut Self| p.sweep(x, &mut values).map(drop);
        compile_kept(self, |p| &mut p.kept, call, lanes, calls, only_if_faster)?;
        self.plan.compiled = self.kept.compilation.clone();
        Ok(())
    }
}

/// The recording of sweeps by rows at `x`: the detection's (or the last one recorded afresh)
/// at its own point, else what `kept` makes of it there.
fn rows_recording<'a, F: Function>(
    f: &F,
    kept: &'a mut Kept,
    x: &[f64],
    m: usize,
) -> Result<(Replay, &'a Recorded), Error> {
    let here =
        |r: &Recorded| !r.rec.is_replayable() && r.xs.iter().zip(x).all(|(v, &x)| v.value() == x);
    if kept.recorded.as_ref().is_some_and(here) {
        return Ok((Replay::Recorded, kept.recorded.as_ref().expect("tested")));
    }
    let (replay, r) = kept.at(f, x, Some(m))?;
    Ok((replay, r))
}

/// A number for each adopted pattern (and each prepared Hessian's colouring), so that
/// [`PreparedSparseJacobian::jacobian_into`] knows its own results and a sweep knows the seeds
/// it left.
pub(super) fn next_source() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

fn check_length(expected: usize, found: usize) -> Result<(), Error> {
    if expected == found {
        Ok(())
    } else {
        Err(Error::OutputChanged {
            first: expected,
            found,
            during: "the sparse Jacobian's sweeps".into(),
        })
    }
}
