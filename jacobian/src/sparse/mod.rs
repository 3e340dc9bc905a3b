//! Sparsity: patterns of Jacobians and Hessians, and the colourings that compress them.
//!
//! A sparse Jacobian needs far fewer sweeps than columns (or rows): columns that share no row
//! (*structurally orthogonal*) can be seeded in the same forward lane, and their entries read
//! back without confusion. A [`Pattern`] says where the structural nonzeros are;
//! [`colour_columns`] groups the columns so (one forward lane per colour) and [`colour_rows`] the
//! rows (one reverse adjoint per colour), and [`colour_star`] the columns of a symmetric
//! (Hessian) pattern so that compressed Hessian-vector products recover every entry. The
//! number of colours is reported beside a lower bound, [`Colouring::lower_bound`].
//!
//! ```
//! use jacobian::sparse::{Order, Pattern, colour_columns};
//!
//! // The tridiagonal pattern of Fᵢ = xᵢ₋₁ − 2xᵢ + xᵢ₊₁ + sin xᵢ, n = 10 000.
//! let n: usize = 10_000;
//! let rows: Vec<Vec<usize>> =
//!     (0..n).map(|i| (i.saturating_sub(1)..(i + 2).min(n)).collect()).collect();
//! let p = Pattern::from_rows(n, &rows)?;
//! let c = colour_columns(&p, Order::Natural);
//! assert_eq!((c.count, c.lower_bound), (3, 3)); // 3 lanes instead of 10 000 columns
//! assert!(c.is_valid_for_columns(&p));
//! # Ok::<(), jacobian::Error>(())
//! ```

mod colouring;
mod compressed;
mod detect;
mod hessian;
mod hessian_plan;
mod jacobian;
mod one_shot;
mod plan;
mod prepared;
mod products;
mod report;
mod spy;

pub use colouring::{Colouring, Order, colour_columns, colour_rows, colour_star};
pub use detect::{Detection, Tracer, recording_pattern};
pub use detect::{hessian_pattern, jacobian_pattern};
pub use hessian::{
    HessianDiagonal, PreparedSparseHessian, SparseHessian, sparse_hessian, sparse_hessian_with,
};
pub use hessian_plan::SparseHessianPlan;
pub use jacobian::{SparseJacobian, SparseOptions};
pub use one_shot::{sparse_jacobian, sparse_jacobian_with};
pub use plan::{SparsePlan, Strategy};
pub use prepared::PreparedSparseJacobian;
pub use report::{SparseCostReport, StrategyCost, sparse_cost_report};

use nalgebra_sparse::pattern::SparsityPattern;
use shared_ops::Error;

/// The sparsity pattern of an m×n matrix: for each row, the sorted columns of its structural
/// nonzeros (compressed sparse rows, without values). A thin layer over nalgebra-sparse's
/// [`SparsityPattern`], which the result matrices ([`CsrMatrix`](nalgebra_sparse::CsrMatrix))
/// share.
///
/// ```
/// use jacobian::sparse::Pattern;
/// let p = Pattern::from_rows(3, &[vec![2, 0], vec![1]])?;
/// assert_eq!((p.rows(), p.cols(), p.nnz()), (2, 3, 3));
/// assert_eq!(p.row(0), &[0, 2]);
/// assert_eq!(p.transpose().row(2), &[0]);
/// assert!(Pattern::from_rows(3, &[vec![3]]).is_err());
/// # Ok::<(), jacobian::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pattern(SparsityPattern);

impl Pattern {
    /// A pattern of `cols` columns from each row's columns (in any order; repeats are merged).
    ///
    /// # Errors
    ///
    /// [`Error::IndexOutOfRange`] for a column index not below `cols`, naming the row.
    pub fn from_rows(cols: usize, rows: &[Vec<usize>]) -> Result<Pattern, Error> {
        let mut offsets = Vec::with_capacity(rows.len() + 1);
        let mut indices = Vec::with_capacity(rows.iter().map(Vec::len).sum());
        offsets.push(0);
        for (i, row) in rows.iter().enumerate() {
            if let Some(&j) = row.iter().find(|&&j| j >= cols) {
                return Err(Error::IndexOutOfRange {
                    what: format!("a column of row {i}"),
                    index: j,
                    len: cols,
                });
            }
            let start = indices.len();
            indices.extend_from_slice(row);
            indices[start..].sort_unstable();
            let mut kept = start;
            for k in start..indices.len() {
                if k == start || indices[k] != indices[kept - 1] {
                    indices[kept] = indices[k];
                    kept += 1;
                }
            }
            indices.truncate(kept);
            offsets.push(indices.len());
        }
        Ok(Pattern::from_csr(cols, offsets, indices))
    }

    /// A pattern from compressed rows that are sorted and in range (made by this crate).
    pub(crate) fn from_csr(cols: usize, offsets: Vec<usize>, indices: Vec<usize>) -> Pattern {
        let rows = offsets.len() - 1;
        Pattern(
            SparsityPattern::try_from_offsets_and_indices(rows, cols, offsets, indices)
                .expect("compressed rows, sorted and in range"),
        )
    }

    /// The compressed rows: row i's columns are `indices()[offsets()[i]..offsets()[i + 1]]`.
    pub fn offsets(&self) -> &[usize] {
        self.0.major_offsets()
    }

    /// The column of each structural nonzero, row after row (see [`offsets`](Self::offsets)).
    pub fn indices(&self) -> &[usize] {
        self.0.minor_indices()
    }

    /// Rows (m).
    pub fn rows(&self) -> usize {
        self.0.major_dim()
    }

    /// Columns (n).
    pub fn cols(&self) -> usize {
        self.0.minor_dim()
    }

    /// Structural nonzeros.
    pub fn nnz(&self) -> usize {
        self.0.nnz()
    }

    /// The columns of row `i`, sorted.
    pub fn row(&self, i: usize) -> &[usize] {
        self.0.lane(i)
    }

    /// The pattern of the transpose: for each column, the rows it appears in.
    pub fn transpose(&self) -> Pattern {
        Pattern(self.0.transpose())
    }

    /// The pattern's [`Counts`], in one pass over its nonzeros.
    ///
    /// # Panics
    ///
    /// For 2³² nonzeros or more (32-bit indices, as a tape's).
    pub(crate) fn counts(&self) -> Counts {
        let mut counts = Counts::new(self.cols());
        for row in self.offsets().windows(2) {
            counts.add_row(&self.indices()[row[0]..row[1]]);
        }
        counts.finish(self.nnz());
        counts
    }

    /// The most nonzeros in one row: no column colouring has fewer colours.
    pub fn max_row_len(&self) -> usize {
        self.offsets()
            .windows(2)
            .map(|w| w[1] - w[0])
            .max()
            .unwrap_or(0)
    }

    /// The nalgebra-sparse pattern, as a [`CsrMatrix`](nalgebra_sparse::CsrMatrix) of this
    /// shape holds it.
    pub fn as_sparsity_pattern(&self) -> &SparsityPattern {
        &self.0
    }
}

impl From<Pattern> for SparsityPattern {
    fn from(p: Pattern) -> SparsityPattern {
        p.0
    }
}

/// What a driver that colours a pattern counts first, in one pass over its nonzeros (the
/// tracer's output loop, which writes them, or [`Pattern::counts`]): where each column's rows
/// end in the transpose (`ends[j]` counts the nonzeros in columns `0..=j`: the first pass of
/// the transpose's counting sort), and the longest row (the column colouring's lower bound).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Counts {
    pub ends: Vec<u32>,
    pub longest_row: usize,
}

impl Counts {
    /// Counts of `cols` columns, before any row; [`add_row`](Self::add_row) each row, then
    /// [`finish`](Self::finish).
    pub fn new(cols: usize) -> Counts {
        // Room for the transpose's closing start.
        let mut ends = Vec::with_capacity(cols + 1);
        ends.resize(cols, 0u32);
        Counts {
            ends,
            longest_row: 0,
        }
    }

    /// Counts one row's columns (each below `cols`).
    #[inline(always)]
    pub fn add_row<I: Copy + TryInto<usize>>(&mut self, row: &[I]) {
        self.longest_row = self.longest_row.max(row.len());
        for &j in row {
            let j = j.try_into().ok().expect("a column index fits in usize");
            self.ends[j] += 1;
        }
    }

    /// Turns the columns' counts into their ends, once every row is in (`nnz` nonzeros in all).
    ///
    /// # Panics
    ///
    /// For 2³² nonzeros or more (32-bit indices, as a tape's).
    pub fn finish(&mut self, nnz: usize) {
        assert!(
            nnz <= u32::MAX as usize,
            "a pattern of {nnz} nonzeros: at most 2³² − 1 (a tape's indices are 32-bit too)"
        );
        let mut sum = 0;
        for end in &mut self.ends {
            sum += *end;
            *end = sum;
        }
    }

    /// The longest column.
    pub fn longest_column(&self) -> usize {
        let mut previous = 0;
        let mut most = 0;
        for &end in &self.ends {
            most = most.max(end - previous);
            previous = end;
        }
        most as usize
    }
}
