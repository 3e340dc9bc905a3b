//! Sparse Jacobians: the result and the options.

use super::plan::SparsePlan;
use super::{Detection, Order};
use crate::Mode;
use nalgebra::DMatrix;
use nalgebra_sparse::CsrMatrix;

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
    /// block patterns of the benches the three orders give the same counts, and smallest-last
    /// takes far longer (it matters for a one-shot call; a prepared object may try every order
    /// once).
    pub order: Order,
    /// Allow the dense strategies to split their sweeps across threads (rayon's pool) where the
    /// work is large (default `true`); the compressed sweeps run on the calling thread. The
    /// plan says how many threads ran.
    pub threads: bool,
}

impl Default for SparseOptions {
    fn default() -> Self {
        SparseOptions {
            mode: Mode::Auto,
            detection: Detection::Auto,
            order: Order::Natural,
            threads: true,
        }
    }
}
