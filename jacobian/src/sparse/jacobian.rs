//! Sparse Jacobians: detect, colour, sweep compressed, decompress into CSR; once, or prepared
//! for many points.

use super::compressed::{self, Compressed};
use super::detect::{Detected, detect_jacobian};
use super::plan::{SparsePlan, Strategy, choose};
use super::{Colouring, Detection, Order, Pattern, colour_columns};
use crate::sweeps::{self, Recorded};
use crate::{Mode, Options};
use nalgebra::DMatrix;
use nalgebra_sparse::CsrMatrix;
use nalgebra_sparse::pattern::SparsityPattern;
use shared_ops::{Error, Function};

/// A sparse Jacobian: the value, the m×n matrix in compressed sparse rows, and the plan.
///
/// ```
/// use jacobian::{Function, Op};
/// struct F;
/// impl Function for F {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         vec![x[0] * x[1], x[2].sin()]
///     }
/// }
/// let j = jacobian::sparse::sparse_jacobian(&F, &[2.0, 3.0, 0.0])?;
/// assert_eq!(j.triplets(), vec![(0, 0, 3.0), (0, 1, 2.0), (1, 2, 1.0)]);
/// assert_eq!(j.matrix.nnz(), 3);
/// assert_eq!(j.to_dense()[(0, 2)], 0.0);
/// # Ok::<(), jacobian::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct SparseJacobian {
    /// `f(x)`, length m.
    pub value: Vec<f64>,
    /// `J[(i, j)] = ∂fᵢ/∂xⱼ` at the structural nonzeros.
    pub matrix: CsrMatrix<f64>,
    /// What ran and why.
    pub plan: SparsePlan,
    /// The colour of each column (for `Columns`) or row (for `Rows`); empty for the dense
    /// strategies. [`spy`](SparseJacobian::spy) draws with it.
    pub colours: Vec<usize>,
}

impl SparseJacobian {
    /// The nonzeros as `(row, column, value)`, row by row.
    pub fn triplets(&self) -> Vec<(usize, usize, f64)> {
        self.matrix
            .triplet_iter()
            .map(|(i, j, &v)| (i, j, v))
            .collect()
    }

    /// The matrix as a dense one (for small problems and tests).
    pub fn to_dense(&self) -> DMatrix<f64> {
        let mut d = DMatrix::zeros(self.matrix.nrows(), self.matrix.ncols());
        for (i, j, &v) in self.matrix.triplet_iter() {
            d[(i, j)] = v;
        }
        d
    }
}

/// How to compute a sparse Jacobian: the mode (`Forward` compresses columns, `Reverse` rows,
/// `Auto` lets the cost model choose among the four [`Strategy`]s), the detection and the
/// colouring order.
///
/// ```
/// use jacobian::sparse::{Detection, Order, SparseOptions};
/// let o = SparseOptions::default();
/// assert_eq!((o.mode, o.detection, o.order), (jacobian::Mode::Auto, Detection::Auto, Order::SmallestLast));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SparseOptions {
    /// `Forward`: sparse by columns; `Reverse`: sparse by rows; `Auto`: the cheapest of four.
    pub mode: Mode,
    /// Which sparsity detection runs.
    pub detection: Detection,
    /// The vertex order of the greedy colourings.
    pub order: Order,
}

impl Default for SparseOptions {
    fn default() -> Self {
        SparseOptions {
            mode: Mode::Auto,
            detection: Detection::Auto,
            order: Order::SmallestLast,
        }
    }
}

/// The sparse Jacobian of `f` at `x`: detection, colouring, compressed sweeps and CSR output,
/// with the [`Strategy`] the cost model finds cheapest.
///
/// # Errors
///
/// As [`jacobian`](crate::jacobian); and [`Error::NeedsValues`] only if global detection is
/// forced on a function that branches on values.
///
/// ```
/// use jacobian::{Function, Op};
/// /// Fᵢ = xᵢ₋₁ − 2xᵢ + xᵢ₊₁ + sin xᵢ: tridiagonal.
/// struct Tridiagonal;
/// impl Function for Tridiagonal {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         let n = x.len();
///         let at = |i: usize| if i < n { x[i] } else { T::zero() };
///         (0..n)
///             .map(|i| at(i.wrapping_sub(1)) - T::constant(2.0) * x[i] + at(i + 1) + x[i].sin())
///             .collect()
///     }
/// }
/// let x = vec![0.0; 10_000];
/// let j = jacobian::sparse::sparse_jacobian(&Tridiagonal, &x)?;
/// assert_eq!((j.plan.column_colours, j.plan.sweeps, j.matrix.nnz()), (3, 1, 29_998));
/// assert_eq!(j.to_dense()[(5, 5)], -1.0); // −2 + cos 0
/// println!("{}", j.plan); // sparse by columns: 3 colours for 10 000 columns: 1 sweep of 3 lanes …
/// # Ok::<(), jacobian::Error>(())
/// ```
pub fn sparse_jacobian<F: Function + Sync>(f: &F, x: &[f64]) -> Result<SparseJacobian, Error> {
    sparse_jacobian_with(f, x, SparseOptions::default())
}

/// [`sparse_jacobian`] with explicit [`SparseOptions`].
///
/// ```
/// use jacobian::{Function, Mode, Op};
/// use jacobian::sparse::{SparseOptions, Strategy, sparse_jacobian_with};
/// struct F;
/// impl Function for F {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         vec![x[0] * x[1], x[1] * x[2], x[2].exp()]
///     }
/// }
/// let x = [1.0, 2.0, 0.0];
/// let by_rows = SparseOptions { mode: Mode::Reverse, ..SparseOptions::default() };
/// let r = sparse_jacobian_with(&F, &x, by_rows)?;
/// let c = jacobian::sparse::sparse_jacobian(&F, &x)?;
/// assert_eq!(r.plan.strategy, Strategy::Rows);
/// assert_eq!(r.triplets(), c.triplets());
/// # Ok::<(), jacobian::Error>(())
/// ```
pub fn sparse_jacobian_with<F: Function + Sync>(
    f: &F,
    x: &[f64],
    options: SparseOptions,
) -> Result<SparseJacobian, Error> {
    PreparedSparseJacobian::prepare(f, x, options)?.at(x, true)
}

/// A sparse Jacobian prepared for a function: its pattern, colourings, strategy and buffers,
/// reused at every new point (the Jacobian a Newton or Levenberg–Marquardt loop asks for at each
/// step). Each call runs the compressed sweeps only.
///
/// **When the pattern must be detected again.** A global pattern holds at every x: never. A
/// local one (the fallback for a function that branches on values) holds where `f` takes the
/// branches it took at detection: each call checks that the compressed sweeps put no nonzero
/// where the pattern has none, and if they did, detects the pattern again at this point, says
/// so in [`SparsePlan::redetected`] and counts it ([`redetections`](Self::redetections)). The
/// check cannot see a new nonzero that falls on a colour its row already uses: with a function
/// whose branches change its pattern, force [`Detection::Global`] or call
/// [`redetect`](Self::redetect) when the branches may have changed.
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
    transpose: Pattern,
    csr: SparsityPattern,
    columns: Colouring,
    rows: Colouring,
    plan: SparsePlan,
    /// The local detection's recording, swept by the first `Rows` call.
    recorded: Option<Recorded>,
    buffer: Compressed,
    redetections: usize,
}

impl<F: Function + Sync> PreparedSparseJacobian<F> {
    /// Detects the pattern of `f` at `x`, colours it and plans, with default options.
    pub fn new(f: F, x: &[f64]) -> Result<Self, Error> {
        Self::with_options(f, x, SparseOptions::default())
    }

    /// As [`new`](Self::new), with explicit options.
    pub fn with_options(f: F, x: &[f64], options: SparseOptions) -> Result<Self, Error> {
        Self::prepare(f, x, options)
    }

    fn prepare(f: F, x: &[f64], options: SparseOptions) -> Result<Self, Error> {
        let detected = detect_jacobian(&f, x, options.detection)?;
        let none = Colouring {
            colours: Vec::new(),
            count: 0,
            lower_bound: 0,
            order: options.order,
        };
        let mut prepared = PreparedSparseJacobian {
            f,
            options,
            pattern: Pattern::from_csr(0, vec![0], Vec::new()),
            transpose: Pattern::from_csr(0, vec![0], Vec::new()),
            csr: SparsityPattern::zeros(0, 0),
            columns: none.clone(),
            rows: none,
            plan: SparsePlan {
                strategy: Strategy::Columns,
                detection: detected.ran,
                fallback: None,
                n: 0,
                m: 0,
                nnz: 0,
                column_colours: 0,
                column_bound: 0,
                row_colours: 0,
                row_bound: 0,
                sweeps: 0,
                lanes: 0,
                estimates: [0.0; 4],
                reason: String::new(),
                redetected: None,
            },
            recorded: None,
            buffer: Compressed::default(),
            redetections: 0,
        };
        prepared.adopt(detected);
        Ok(prepared)
    }

    /// Takes a detected pattern: colours it both ways, plans, keeps what the sweeps need.
    fn adopt(&mut self, d: Detected) {
        let p = d.pattern;
        let (n, m) = (p.cols(), p.rows());
        let t = p.transpose();
        let columns = colour_columns(&p, self.options.order);
        let rows = colour_columns(&t, self.options.order);
        let counts = (columns.count, rows.count);
        let (auto, estimates, reason) = choose(n, m, p.nnz(), counts);
        let (strategy, reason) = match self.options.mode {
            Mode::Forward => (Strategy::Columns, "mode forced by the caller".to_string()),
            Mode::Reverse => (Strategy::Rows, "mode forced by the caller".to_string()),
            Mode::Auto => (auto, reason),
        };
        let (sweeps, lanes) = strategy.sweeps(n, m, counts);
        self.plan = SparsePlan {
            strategy,
            detection: d.ran,
            fallback: d.fallback,
            n,
            m,
            nnz: p.nnz(),
            column_colours: columns.count,
            column_bound: columns.lower_bound,
            row_colours: rows.count,
            row_bound: rows.lower_bound,
            sweeps,
            lanes,
            estimates,
            reason,
            redetected: None,
        };
        self.csr = SparsityPattern::try_from_offsets_and_indices(
            m,
            n,
            p.offsets().to_vec(),
            p.indices().to_vec(),
        )
        .expect("a pattern of sorted, in-range rows");
        (self.columns, self.rows) = (columns, rows);
        self.recorded = d.recording.map(|(rec, xs, ys)| Recorded { rec, xs, ys });
        self.pattern = p;
        self.transpose = t;
    }

    /// The Jacobian at `x` by the prepared strategy.
    ///
    /// # Errors
    ///
    /// An `x` of another length than the prepared one, or an `f` whose output length changes.
    pub fn jacobian(&mut self, x: &[f64]) -> Result<SparseJacobian, Error> {
        self.at(x, false)
    }

    /// Detects the pattern again at `x` (and colours and plans again).
    pub fn redetect(&mut self, x: &[f64]) -> Result<(), Error> {
        let d = detect_jacobian(&self.f, x, self.options.detection)?;
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

    /// The colouring the sweeps use (`None` for a dense strategy).
    pub fn colouring(&self) -> Option<&Colouring> {
        match self.plan.strategy {
            Strategy::Columns => Some(&self.columns),
            Strategy::Rows => Some(&self.rows),
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
        let p = &mut self.plan;
        (p.sweeps, p.lanes) = strategy.sweeps(p.n, p.m, (self.columns.count, self.rows.count));
        p.strategy = strategy;
        p.reason = "strategy chosen by the caller".into();
    }

    /// The plan of the last call (or of preparation).
    pub fn plan(&self) -> &SparsePlan {
        &self.plan
    }

    fn at(&mut self, x: &[f64], fresh: bool) -> Result<SparseJacobian, Error> {
        if x.len() != self.plan.n {
            return Err(Error::InputLength {
                expected: self.plan.n,
                found: x.len(),
            });
        }
        self.plan.redetected = None;
        let (value, values, clean) = self.sweep(x)?;
        if !clean && self.plan.detection == Detection::Local && !fresh {
            self.redetect(x)?;
            self.plan.redetected = Some(format!(
                "the compressed sweeps found a nonzero outside the pattern at this x (f took another branch); {} nonzeros now",
                self.pattern.nnz()
            ));
            let (value, values, _) = self.sweep(x)?;
            return Ok(self.result(value, values));
        }
        Ok(self.result(value, values))
    }

    fn result(&self, value: Vec<f64>, values: Vec<f64>) -> SparseJacobian {
        SparseJacobian {
            value,
            matrix: CsrMatrix::try_from_pattern_and_values(self.csr.clone(), values)
                .expect("one value per nonzero"),
            plan: self.plan.clone(),
            colours: self
                .colouring()
                .map(|c| c.colours.clone())
                .unwrap_or_default(),
        }
    }

    /// The sweeps of the strategy: value, nonzeros in the pattern's order, and whether the
    /// compressed results fit the pattern.
    fn sweep(&mut self, x: &[f64]) -> Result<(Vec<f64>, Vec<f64>, bool), Error> {
        let (p, m) = (&self.pattern, self.plan.m);
        let mut values = Vec::with_capacity(p.nnz());
        let b = &mut self.buffer;
        let clean = match self.plan.strategy {
            Strategy::Columns => {
                let c = &self.columns;
                compressed::forward(&self.f, x, c, b)?;
                check_length(m, b.value.len())?;
                compressed::decompress_columns(p, c, &b.b, &mut values)
            }
            Strategy::Rows => {
                let c = &self.rows;
                let r = match self.recorded.take() {
                    Some(r) => r,
                    None => sweeps::record_plain(&self.f, x, Some(m))?,
                };
                compressed::reverse(&r.rec, &r.xs, &r.ys, c, b);
                compressed::decompress_rows(p, &self.transpose, c, &b.b, &mut values)
            }
            strategy => {
                let options = Options {
                    mode: match strategy {
                        Strategy::DenseForward => Mode::Forward,
                        _ => Mode::Reverse,
                    },
                    threads: true,
                };
                let j = crate::jacobian_with_options(&self.f, x, options)?;
                check_length(m, j.value.len())?;
                for i in 0..m {
                    values.extend(p.row(i).iter().map(|&k| j.matrix[(i, k)]));
                }
                b.value = j.value;
                true
            }
        };
        Ok((b.value.clone(), values, clean))
    }
}

fn check_length(expected: usize, found: usize) -> Result<(), Error> {
    if expected == found {
        Ok(())
    } else {
        Err(Error::OutputLength {
            expected,
            found,
            during: "the sparse Jacobian's sweeps".into(),
        })
    }
}
