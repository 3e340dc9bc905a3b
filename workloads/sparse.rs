//! Workloads whose Jacobians are sparse, for the sparse-Jacobian and sparse-Hessian benchmarks.
//!
//! Each is a [`Function`] `Rⁿ → Rᵐ` whose Jacobian has a few structural nonzeros per row
//! whatever its size, so that a compressed Jacobian (one forward lane per column colour,
//! [`jacobian::sparse`]) costs a few sweeps where a dense one costs n. Each says where its
//! nonzeros are ([`Pattern`]), so that colourings and other tools' sparsity detection can be
//! checked against it, and has a deterministic benchmark input.
//!
//! | workload | residuals | inputs → outputs | nonzeros per row |
//! |---|---|---|---|
//! | [`Tridiagonal`] | `Fᵢ = xᵢ₋₁ − 2xᵢ + xᵢ₊₁ + sin xᵢ` | n → n | 3 (2 at the ends) |
//! | [`Grid`] | Bratu: `4uᵢⱼ − Σ neighbours − h²λ exp uᵢⱼ` on a k×k grid | k² → k² | 5 (fewer at the edges) |
//! | [`BundleAdjustment`] | GradBench `ba`: 2 weighted reprojection errors and `1 − w²` per observation | 11N + 3M + P → 3P | 14 (reprojection), 1 (weight) |
//!
//! Each is written once over `num_traits::Float` (its `residuals` method), as the GradBench
//! objectives are: the same code is the plain `f64` function, a forward sweep, a reverse
//! recording, and (feature `peers`) a recording on echidna's bytecode tape.

mod ba;

pub use ba::{BaBlock, BundleAdjustment};

use crate::{Function, Op};
use jacobian::sparse::Pattern;
use shared_ops::num_traits::Float;

/// An `f64` constant of any `Float` type.
fn c<T: Float>(v: f64) -> T {
    T::from(v).expect("an f64 constant")
}

/// A pattern from rows whose columns are in range by construction.
fn pattern(cols: usize, rows: &[Vec<usize>]) -> Pattern {
    Pattern::from_rows(cols, rows).expect("columns in range by construction")
}

/// A tridiagonal system, `Fᵢ = xᵢ₋₁ − 2xᵢ + xᵢ₊₁ + sin xᵢ` with `x₋₁ = xₙ = 0`: the second
/// difference of a 1-D boundary-value problem plus a nonlinear term, n inputs and n outputs.
///
/// The smallest sparse Jacobian that is not diagonal: `∂Fᵢ/∂xᵢ = cos xᵢ − 2`, and 1 beside the
/// diagonal. Three colours compress its columns whatever n, against n forward sweeps for the
/// dense Jacobian.
///
/// ```
/// use workloads::{Function, sparse::Tridiagonal};
/// let f = Tridiagonal::new(3);
/// assert_eq!(f.eval(&[0.0_f64, 1.0, 0.0]), vec![1.0, -2.0 + 1f64.sin(), 1.0]);
/// let x = f.input();
/// let j = jacobian::jacobian(&f, &x)?;
/// assert_eq!(j.matrix[(1, 1)], x[1].cos() - 2.0);
/// assert_eq!((j.matrix[(1, 0)], j.matrix[(0, 2)]), (1.0, 0.0));
/// assert_eq!(f.pattern().nnz(), 7);
/// # Ok::<(), jacobian::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tridiagonal {
    /// Inputs and outputs.
    pub n: usize,
}

impl Tridiagonal {
    /// The system of n unknowns.
    pub fn new(n: usize) -> Tridiagonal {
        Tridiagonal { n }
    }

    /// The benchmark input: `xᵢ = 0.1·(i mod 31) − 1.5`, in [−1.5, 1.5].
    pub fn input(&self) -> Vec<f64> {
        (0..self.n).map(|i| 0.1 * (i % 31) as f64 - 1.5).collect()
    }

    /// The residuals, for any `Float` (any length of `x`: n is `x.len()` here).
    pub fn residuals<T: Float>(&self, x: &[T]) -> Vec<T> {
        let minus_two = c::<T>(-2.0);
        (0..x.len())
            .map(|i| {
                let mut f = minus_two * x[i];
                if i > 0 {
                    f = x[i - 1] + f;
                }
                if let Some(&right) = x.get(i + 1) {
                    f = f + right;
                }
                f + x[i].sin()
            })
            .collect()
    }

    /// The structural nonzeros: row i holds columns i − 1, i, i + 1 (those in range).
    pub fn pattern(&self) -> Pattern {
        let n = self.n;
        let rows: Vec<Vec<usize>> = (0..n)
            .map(|i| (i.saturating_sub(1)..(i + 2).min(n)).collect())
            .collect();
        pattern(n, &rows)
    }
}

impl Function for Tridiagonal {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        self.residuals(x)
    }
    fn sizes(&self) -> Option<(usize, usize)> {
        Some((self.n, self.n))
    }
}

/// The Bratu problem on the unit square, `−Δu = λ eᵘ` with u = 0 on the boundary, discretised by
/// the 5-point Laplacian on a k×k grid of interior points (`h = 1/(k + 1)`, λ = 6):
///
/// ```text
/// Fᵢⱼ = 4uᵢⱼ − uᵢ₋₁ⱼ − uᵢ₊₁ⱼ − uᵢⱼ₋₁ − uᵢⱼ₊₁ − h²λ exp uᵢⱼ
/// ```
///
/// k² inputs and outputs, row-major (`u[i * k + j] = uᵢⱼ`), boundary values 0. The classic
/// sparse nonlinear system (MINPACK-2's solid fuel ignition problem, `dsfifj`): five nonzeros
/// per row, up to k from the diagonal, so that a banded view of it is 2k + 1 wide while five
/// colours compress its columns (colour `(i + 2j) mod 5`; greedy orders find 6 or 7).
///
/// ```
/// use workloads::{Function, sparse::Grid};
/// let f = Grid::new(3);
/// assert_eq!(f.sizes(), Some((9, 9)));
/// let u = f.input();
/// let j = jacobian::jacobian(&f, &u)?;
/// let h2 = 1.0 / 16.0;
/// assert!((j.matrix[(4, 4)] - (4.0 - h2 * Grid::LAMBDA * u[4].exp())).abs() < 1e-15);
/// assert_eq!((j.matrix[(4, 1)], j.matrix[(4, 3)], j.matrix[(4, 0)]), (-1.0, -1.0, 0.0));
/// assert_eq!(f.pattern().nnz(), 9 + 2 * 12); // the diagonal and 12 grid edges both ways
/// # Ok::<(), jacobian::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grid {
    /// Interior points per side.
    pub k: usize,
}

impl Grid {
    /// The Bratu parameter λ: 6, below the turning point λ* ≈ 6.81 beyond which there is no
    /// solution.
    pub const LAMBDA: f64 = 6.0;

    /// The grid of k×k interior points.
    pub fn new(k: usize) -> Grid {
        Grid { k }
    }

    /// The benchmark input, MINPACK-2's starting point for this problem (as `dsfifj` sets it):
    /// `uᵢⱼ = λ/(λ + 1)·√(h·min(i + 1, k − i, j + 1, k − j))`.
    pub fn input(&self) -> Vec<f64> {
        let k = self.k;
        let h = 1.0 / (k as f64 + 1.0);
        let scale = Self::LAMBDA / (Self::LAMBDA + 1.0);
        (0..k * k)
            .map(|p| {
                let (i, j) = (p / k, p % k);
                let d = (i + 1).min(k - i).min(j + 1).min(k - j);
                scale * (h * d as f64).sqrt()
            })
            .collect()
    }

    /// The residuals, for any `Float`.
    ///
    /// # Panics
    ///
    /// If `u` does not have k² entries.
    pub fn residuals<T: Float>(&self, u: &[T]) -> Vec<T> {
        let k = self.k;
        assert_eq!(
            u.len(),
            k * k,
            "Grid of k = {k} takes k² = {} inputs",
            k * k
        );
        let h = 1.0 / (k as f64 + 1.0);
        let (four, source) = (c::<T>(4.0), c::<T>(h * h * Self::LAMBDA));
        (0..k * k)
            .map(|p| {
                let (i, j) = (p / k, p % k);
                let mut f = four * u[p];
                if i > 0 {
                    f = f - u[p - k];
                }
                if i + 1 < k {
                    f = f - u[p + k];
                }
                if j > 0 {
                    f = f - u[p - 1];
                }
                if j + 1 < k {
                    f = f - u[p + 1];
                }
                f - source * u[p].exp()
            })
            .collect()
    }

    /// The structural nonzeros: row (i, j) holds itself and its grid neighbours.
    pub fn pattern(&self) -> Pattern {
        let k = self.k;
        let rows: Vec<Vec<usize>> = (0..k * k)
            .map(|p| {
                let (i, j) = (p / k, p % k);
                let mut row = vec![p];
                if i > 0 {
                    row.push(p - k);
                }
                if i + 1 < k {
                    row.push(p + k);
                }
                if j > 0 {
                    row.push(p - 1);
                }
                if j + 1 < k {
                    row.push(p + 1);
                }
                row
            })
            .collect();
        pattern(k * k, &rows)
    }
}

impl Function for Grid {
    fn eval<T: Op>(&self, u: &[T]) -> Vec<T> {
        self.residuals(u)
    }
    fn sizes(&self) -> Option<(usize, usize)> {
        Some((self.k * self.k, self.k * self.k))
    }
}
