//! Sparse Jacobians: the result, the options, and the one-shot drivers (detect, colour, sweep
//! compressed, decompress into CSR).

use super::plan::SparsePlan;
use super::{Detection, Order, PreparedSparseJacobian};
use crate::Mode;
use nalgebra::DMatrix;
use nalgebra_sparse::CsrMatrix;
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
    /// The pattern it was computed on (see [`PreparedSparseJacobian::jacobian_into`]).
    pub(super) source: u64,
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
/// `Auto` lets the cost model choose among the four [`Strategy`](super::Strategy)s), the detection and the
/// colouring order.
///
/// ```
/// use jacobian::sparse::{Detection, Order, SparseOptions};
/// let o = SparseOptions::default();
/// assert_eq!((o.mode, o.detection, o.order), (jacobian::Mode::Auto, Detection::Auto, Order::Natural));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SparseOptions {
    /// `Forward`: sparse by columns; `Reverse`: sparse by rows; `Auto`: the cheapest of four.
    pub mode: Mode,
    /// Which sparsity detection runs.
    pub detection: Detection,
    /// The vertex order of the greedy colourings. `Natural` by default: on the stencils and
    /// block patterns benchmarked here the three orders gave the same counts, and smallest-last
    /// costs ten times as long (it matters for a one-shot call; a prepared object may try
    /// every order once).
    pub order: Order,
}

impl Default for SparseOptions {
    fn default() -> Self {
        SparseOptions {
            mode: Mode::Auto,
            detection: Detection::Auto,
            order: Order::Natural,
        }
    }
}

/// The sparse Jacobian of `f` at `x`: detection, colouring, compressed sweeps and CSR output,
/// with the [`Strategy`](super::Strategy) the cost model finds cheapest.
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
/// assert_eq!((j.plan.column_colours, j.plan.sweeps, j.matrix.nnz()), (Some(3), 1, 29_998));
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
    PreparedSparseJacobian::prepare(f, x, options)?.once(x)
}
