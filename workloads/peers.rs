//! The same workloads written for the peer crates' number types (feature `peers`).
//!
//! Each peer has its own number trait, so the workloads are written again, operation for
//! operation as above: `num_dual::DualNum` (whose dual numbers are `Clone`, not `Copy`, hence the
//! references) and `ad_trait::AD` (behind its `DifferentiableFunctionTrait`). echidna's numbers
//! are `num_traits::Float`, for which the GradBench objectives are written already: they run
//! with [`Folds`](crate::gradbench::Folds) (echidna has no `Sum` and no n-ary dot product), and
//! so are the sparse workloads ([`FloatResiduals`](crate::peers::FloatResiduals)).
//!
//! echidna's sparse derivatives (its bytecode tape) are wrapped here once, one-shot and prepared:
//! [`echidna_sparse_jacobian`](crate::peers::echidna_sparse_jacobian) and
//! [`EchidnaSparseJacobian`](crate::peers::EchidnaSparseJacobian),
//! [`echidna_sparse_hessian`](crate::peers::echidna_sparse_hessian) and
//! [`EchidnaSparseHessian`](crate::peers::EchidnaSparseHessian). (Links in this module's own
//! documentation are written from the crate root: rustdoc resolves them there, as it does the
//! documentation on its declaration.)

use crate::DenseTanh;
use crate::gradbench::{Det, Folds, Gmm, Llsq, Lse, Reduce};
use crate::sparse::{BundleAdjustment, Grid, Tridiagonal};
use ad_trait::AD;
use ad_trait::differentiable_function::DifferentiableFunctionTrait;
use echidna::sparse::{
    JacobianSparsityPattern, SparsityPattern, column_coloring, greedy_coloring, row_coloring,
};
use echidna::{BReverse, BytecodeTape};
use jacobian::sparse::Pattern;
use num_dual::DualNum;
use num_traits::Float;

/// [`rosenbrock`](crate::rosenbrock) for `num_dual` numbers.
pub fn rosenbrock_num_dual<D: DualNum<Primitive = f64>>(x: &[D]) -> D {
    let one = D::from(1.0);
    x.windows(2)
        .map(|w| {
            let a = one.clone() - &w[0];
            let b = w[1].clone() - w[0].clone() * &w[0];
            a.clone() * a + b.clone() * b * 100.0
        })
        .sum()
}

/// [`DenseTanh`]'s evaluation for `num_dual` numbers.
pub fn dense_num_dual<D: DualNum<Primitive = f64>>(f: &DenseTanh, x: &[D]) -> Vec<D> {
    let s: Vec<D> = x.iter().map(|v| v.sin()).collect();
    f.a.chunks_exact(f.n)
        .map(|row| {
            row.iter()
                .zip(&s)
                .map(|(&a, s)| s.clone() * a)
                .sum::<D>()
                .tanh()
        })
        .collect()
}

/// [`rosenbrock`](crate::rosenbrock) for `ad_trait` numbers.
pub fn rosenbrock_ad<T: AD>(x: &[T]) -> T {
    let (one, hundred) = (T::constant(1.0), T::constant(100.0));
    let mut sum = T::constant(0.0);
    for w in x.windows(2) {
        let a = one - w[0];
        let b = w[1] - w[0] * w[0];
        sum += a * a + b * b * hundred;
    }
    sum
}

/// Rosenbrock as an `ad_trait` function of `n` inputs and one output.
#[derive(Clone, Copy, Debug)]
pub struct AdRosenbrock {
    /// Number of inputs.
    pub n: usize,
}

impl<T: AD> DifferentiableFunctionTrait<T> for AdRosenbrock {
    const NAME: &'static str = "Rosenbrock";
    fn call(&self, x: &[T], _freeze: bool) -> Vec<T> {
        vec![rosenbrock_ad(x)]
    }
    fn num_inputs(&self) -> usize {
        self.n
    }
    fn num_outputs(&self) -> usize {
        1
    }
}

/// [`DenseTanh`] as an `ad_trait` function (the matrix stays `f64`, lifted per use).
#[derive(Clone, Debug)]
pub struct AdDense(pub DenseTanh);

impl<T: AD> DifferentiableFunctionTrait<T> for AdDense {
    const NAME: &'static str = "DenseTanh";
    fn call(&self, x: &[T], _freeze: bool) -> Vec<T> {
        let f = &self.0;
        let s: Vec<T> = x.iter().map(|v| v.sin()).collect();
        f.a.chunks_exact(f.n)
            .map(|row| {
                row.iter()
                    .zip(&s)
                    .fold(T::constant(0.0), |acc, (&a, &s)| acc + T::constant(a) * s)
                    .tanh()
            })
            .collect()
    }
    fn num_inputs(&self) -> usize {
        self.0.n
    }
    fn num_outputs(&self) -> usize {
        self.0.m
    }
}

/// A scalar objective written for any `num_traits::Float` (closures cannot be generic): how
/// the GradBench workloads run on echidna's numbers, by the same code as ours with
/// [`Folds`] for the reductions.
pub trait FloatObjective {
    /// The value at `x`.
    fn eval_float<T: Float>(&self, x: &[T]) -> T;
}

impl FloatObjective for Llsq {
    fn eval_float<T: Float>(&self, x: &[T]) -> T {
        self.objective(x, &Folds)
    }
}

impl FloatObjective for Lse {
    fn eval_float<T: Float>(&self, x: &[T]) -> T {
        Lse::objective(x, &Folds)
    }
}

impl FloatObjective for Det {
    fn eval_float<T: Float>(&self, x: &[T]) -> T {
        self.objective(x)
    }
}

impl FloatObjective for Gmm {
    fn eval_float<T: Float>(&self, x: &[T]) -> T {
        self.objective(x, &Folds)
    }
}

impl FloatObjective for crate::gradbench::Lstm {
    fn eval_float<T: Float>(&self, x: &[T]) -> T {
        self.objective(x, &Folds)
    }
}

impl FloatObjective for crate::gradbench::Ode {
    fn eval_float<T: Float>(&self, x: &[T]) -> T {
        self.objective(x)
    }
}

impl FloatObjective for crate::gradbench::Kmeans {
    fn eval_float<T: Float>(&self, x: &[T]) -> T {
        self.objective(x, &Folds)
    }
}

impl FloatObjective for crate::SinQuad {
    fn eval_float<T: Float>(&self, x: &[T]) -> T {
        self.objective(x, &Folds)
    }
}

/// [`rosenbrock`](crate::rosenbrock) for any `Float` (echidna), a fold for its sum.
pub fn rosenbrock_float<T: Float>(x: &[T]) -> T {
    let hundred = T::from(100.0).expect("a constant");
    let terms = x.windows(2).map(|w| {
        let a = T::one() - w[0];
        let b = w[1] - w[0] * w[0];
        a * a + b * b * hundred
    });
    Folds.sum(terms)
}

impl FloatObjective for crate::Rosenbrock {
    fn eval_float<T: Float>(&self, x: &[T]) -> T {
        rosenbrock_float(x)
    }
}

/// [`DenseTanh`]'s layer for any `Float` (echidna), a fold for each row's sum.
pub fn dense_float<T: Float>(f: &DenseTanh, x: &[T]) -> Vec<T> {
    let lift = |c: f64| T::from(c).expect("a constant");
    let s: Vec<T> = x.iter().map(|v| v.sin()).collect();
    f.a.chunks_exact(f.n)
        .map(|row| {
            let terms = row.iter().zip(&s).map(|(&a, &s)| lift(a) * s);
            Folds.sum(terms).tanh()
        })
        .collect()
}

/// echidna's forward Jacobian with `DualVec<f64, 8>`, row-major m×n: ⌈n/8⌉ sweeps of eight
/// tangents each (echidna has no dense forward-Jacobian driver over closures, so the chunks
/// are seeded here as ours are).
pub fn echidna_dense_jacobian8(f: &DenseTanh, x: &[f64]) -> Vec<f64> {
    use echidna::DualVec;
    let (n, m) = (f.n, f.m);
    let mut jac = vec![0.0; m * n];
    let mut xs: Vec<DualVec<f64, 8>> = x.iter().map(|&v| DualVec::constant(v)).collect();
    for start in (0..n).step_by(8) {
        let end = (start + 8).min(n);
        for (lane, j) in (start..end).enumerate() {
            xs[j] = DualVec::with_tangent(x[j], lane);
        }
        let ys = dense_float(f, &xs);
        for (row, y) in jac.chunks_exact_mut(n).zip(&ys) {
            row[start..end].copy_from_slice(&y.eps[..end - start]);
        }
        for j in start..end {
            xs[j] = DualVec::constant(x[j]);
        }
    }
    jac
}

/// [`Tridiagonal`]'s residuals for any `Float` (echidna), with n = `x.len()`.
pub fn tridiagonal_float<T: Float>(x: &[T]) -> Vec<T> {
    Tridiagonal::new(x.len()).residuals(x)
}

/// A vector function written for any `num_traits::Float`: how the sparse workloads run on
/// echidna's numbers, by the same code as ours.
pub trait FloatResiduals {
    /// The residuals at `x`.
    fn residuals_float<T: Float>(&self, x: &[T]) -> Vec<T>;
}

impl FloatResiduals for Tridiagonal {
    fn residuals_float<T: Float>(&self, x: &[T]) -> Vec<T> {
        self.residuals(x)
    }
}

impl FloatResiduals for Grid {
    fn residuals_float<T: Float>(&self, x: &[T]) -> Vec<T> {
        self.residuals(x)
    }
}

impl FloatResiduals for BundleAdjustment {
    fn residuals_float<T: Float>(&self, x: &[T]) -> Vec<T> {
        self.residuals(x)
    }
}

/// echidna's sparse Jacobian in one call (`echidna::sparse_jacobian`): it records `f` on its
/// bytecode tape, detects the pattern, colours both columns and rows, and runs the compressed
/// sweeps of the mode with fewer colours (one colour per sweep).
///
/// Returns the pattern and the values as coordinates: `(rows, cols, values)`, row by row and
/// each row's columns ascending.
pub fn echidna_sparse_jacobian<F: FloatResiduals>(
    f: &F,
    x: &[f64],
) -> (Vec<u32>, Vec<u32>, Vec<f64>) {
    let (_, pattern, values) =
        echidna::sparse_jacobian(|v: &[BReverse<f64>]| f.residuals_float(v), x);
    (pattern.rows, pattern.cols, values)
}

/// echidna's sparse Jacobian prepared once and taken at new points: the recorded tape, its
/// detected pattern and the colouring (of columns, or of rows where that has fewer colours, as
/// `echidna::sparse_jacobian` chooses), reused by [`at`](EchidnaSparseJacobian::at)
/// (`BytecodeTape::sparse_jacobian_with_pattern`).
///
/// The tape replays the path recorded: for functions without branches on the input, or points
/// that take the same branches.
pub struct EchidnaSparseJacobian {
    tape: BytecodeTape<f64>,
    pattern: JacobianSparsityPattern,
    colours: Vec<u32>,
    count: u32,
    forward: bool,
}

impl EchidnaSparseJacobian {
    /// Records `f` at `x`, detects its pattern and colours it.
    pub fn new<F: FloatResiduals>(f: &F, x: &[f64]) -> EchidnaSparseJacobian {
        let (tape, _) = echidna::record_multi(|v: &[BReverse<f64>]| f.residuals_float(v), x);
        let pattern = tape.detect_jacobian_sparsity();
        let (columns, by_columns) = column_coloring(&pattern);
        let (rows, by_rows) = row_coloring(&pattern);
        let forward = by_columns <= by_rows;
        let (colours, count) = if forward {
            (columns, by_columns)
        } else {
            (rows, by_rows)
        };
        EchidnaSparseJacobian {
            tape,
            pattern,
            colours,
            count,
            forward,
        }
    }

    /// Records `f` at `x` and takes its pattern as given (ours, [`jacobian::sparse::Pattern`])
    /// instead of detecting it, then colours the columns only (forward sweeps).
    ///
    /// echidna's detection keeps a bitset of all n inputs for every tape entry: for bundle
    /// adjustment at GradBench's size (n = 55 710, a tape of 2.4·10⁶ entries) that is 17 GB.
    /// Its row colouring, which [`new`](Self::new) runs beside the column colouring, builds
    /// every pair of rows that share a column: 4.6·10⁸ pairs there (539 camera columns of
    /// 1 300 rows each), too slow and too large to run there. This constructor skips both, so that
    /// echidna's compressed sweeps can be timed at that size. The pattern must hold every
    /// structural nonzero: one left out would be added, unseen, into another entry of its row
    /// that shares its colour.
    ///
    /// # Panics
    ///
    /// If the pattern's shape is not f's, as recorded at `x`.
    pub fn with_pattern<F: FloatResiduals>(
        f: &F,
        x: &[f64],
        pattern: &Pattern,
    ) -> EchidnaSparseJacobian {
        let (tape, y) = echidna::record_multi(|v: &[BReverse<f64>]| f.residuals_float(v), x);
        assert_eq!(
            (pattern.rows(), pattern.cols()),
            (y.len(), x.len()),
            "the pattern is {}×{}, the function {}×{}",
            pattern.rows(),
            pattern.cols(),
            y.len(),
            x.len()
        );
        let index = |i: usize| u32::try_from(i).expect("an index echidna can hold (u32)");
        let (mut rows, mut cols) = (Vec::with_capacity(pattern.nnz()), Vec::new());
        for i in 0..pattern.rows() {
            rows.extend(pattern.row(i).iter().map(|_| index(i)));
            cols.extend(pattern.row(i).iter().map(|&j| index(j)));
        }
        let pattern = JacobianSparsityPattern {
            num_outputs: y.len(),
            num_inputs: x.len(),
            rows,
            cols,
        };
        let (colours, count) = column_coloring(&pattern);
        EchidnaSparseJacobian {
            tape,
            pattern,
            colours,
            count,
            forward: true,
        }
    }

    /// `(f(x), values)`, the values in the order of [`rows`](Self::rows) and
    /// [`cols`](Self::cols): one forward evaluation of the tape, then one sweep per colour.
    pub fn at(&mut self, x: &[f64]) -> (Vec<f64>, Vec<f64>) {
        self.tape.sparse_jacobian_with_pattern(
            x,
            &self.pattern,
            &self.colours,
            self.count,
            self.forward,
        )
    }

    /// The row of each structural nonzero.
    pub fn rows(&self) -> &[u32] {
        &self.pattern.rows
    }

    /// The column of each structural nonzero.
    pub fn cols(&self) -> &[u32] {
        &self.pattern.cols
    }

    /// The number of colours, which is the number of sweeps per Jacobian.
    pub fn colours(&self) -> u32 {
        self.count
    }

    /// Whether the sweeps are forward (columns coloured) rather than reverse (rows coloured).
    pub fn is_forward(&self) -> bool {
        self.forward
    }
}

/// echidna's sparse Hessian in one call (`echidna::sparse_hessian`): it records `f` on its
/// bytecode tape, detects the pattern, colours the columns at distance 2, and runs one
/// forward-over-reverse Hessian-vector product per colour.
///
/// Returns the lower triangle (diagonal included) as coordinates `(rows, cols, values)`, with
/// `cols[k] ≤ rows[k]`, sorted by row then column.
pub fn echidna_sparse_hessian<F: FloatObjective>(
    f: &F,
    x: &[f64],
) -> (Vec<u32>, Vec<u32>, Vec<f64>) {
    let (_, _, pattern, values) = echidna::sparse_hessian(|v: &[BReverse<f64>]| f.eval_float(v), x);
    (pattern.rows, pattern.cols, values)
}

/// echidna's sparse Hessian prepared once and taken at new points: the recorded tape, its
/// detected (lower-triangle) pattern and distance-2 colouring, reused by
/// [`at`](EchidnaSparseHessian::at) (`BytecodeTape::sparse_hessian_with_pattern`). The tape
/// replays the path recorded, as for [`EchidnaSparseJacobian`].
pub struct EchidnaSparseHessian {
    tape: BytecodeTape<f64>,
    pattern: SparsityPattern,
    colours: Vec<u32>,
    count: u32,
}

impl EchidnaSparseHessian {
    /// Records `f` at `x`, detects the pattern of its Hessian and colours it.
    pub fn new<F: FloatObjective>(f: &F, x: &[f64]) -> EchidnaSparseHessian {
        let (tape, _) = echidna::record(|v: &[BReverse<f64>]| f.eval_float(v), x);
        let pattern = tape.detect_sparsity();
        let (colours, count) = greedy_coloring(&pattern);
        EchidnaSparseHessian {
            tape,
            pattern,
            colours,
            count,
        }
    }

    /// `(f(x), ∇f(x), values)`, the values of the lower triangle in the order of
    /// [`rows`](Self::rows) and [`cols`](Self::cols): one Hessian-vector product per colour.
    pub fn at(&self, x: &[f64]) -> (f64, Vec<f64>, Vec<f64>) {
        self.tape
            .sparse_hessian_with_pattern(x, &self.pattern, &self.colours, self.count)
    }

    /// The row of each structural nonzero of the lower triangle.
    pub fn rows(&self) -> &[u32] {
        &self.pattern.rows
    }

    /// The column of each structural nonzero of the lower triangle.
    pub fn cols(&self) -> &[u32] {
        &self.pattern.cols
    }

    /// The number of colours, which is the number of Hessian-vector products per Hessian.
    pub fn colours(&self) -> u32 {
        self.count
    }
}
