//! The one-shot sparse Jacobian: detect, colour, sweep compressed and decompress into CSR, at
//! one point (a [`PreparedSparseJacobian`] used once).

use super::{PreparedSparseJacobian, SparseJacobian, SparseOptions};
use crate::prepared::Preparation;
use shared_ops::{Error, Function};

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
///             .map(|i| at(i.wrapping_sub(1)) - x[i] * 2.0 + at(i + 1) + x[i].sin())
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
    PreparedSparseJacobian::prepare(f, x, options, Preparation::Record)?.once(x)
}
