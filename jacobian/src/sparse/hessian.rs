//! Sparse Hessians: the second-order pattern, a star colouring, compressed Hessian-vector
//! products (forward over reverse, one lane per colour) and symmetric recovery into CSR.

use super::compressed::{self, Compressed};
use super::detect::detect_hessian;
use super::plan::{count, thousands};
use super::prepared::next_source;
use super::{Colouring, Detection, Pattern, SparseOptions, colour_star};
use crate::Mode;
use crate::lanes::tape_lanes;
use crate::plan::cost;
use core::fmt;
use nalgebra_sparse::CsrMatrix;
use shared_ops::{Error, Function};

/// A sparse Hessian: value, gradient, the n×n matrix in CSR (exactly symmetric) and the plan.
///
/// ```
/// use jacobian::{Function, Op};
/// struct F;
/// impl Function for F {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         vec![x[0] * x[1] + x[2].powi(3)]
///     }
/// }
/// let h = jacobian::sparse::sparse_hessian(&F, &[1.0, 2.0, 3.0])?;
/// assert_eq!(h.triplets(), vec![(0, 1, 1.0), (1, 0, 1.0), (2, 2, 18.0)]);
/// assert_eq!(h.gradient, vec![2.0, 1.0, 27.0]);
/// # Ok::<(), jacobian::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct SparseHessian {
    /// `f(x)`.
    pub value: f64,
    /// `∇f(x)`.
    pub gradient: Vec<f64>,
    /// `H[(i, j)] = ∂²f/∂xᵢ∂xⱼ` at the structural nonzeros.
    pub matrix: CsrMatrix<f64>,
    /// What ran and why.
    pub plan: SparseHessianPlan,
    /// The star colour of each column (empty if the dense Hessian ran).
    pub colours: Vec<usize>,
}

impl SparseHessian {
    /// The nonzeros as `(row, column, value)`, row by row.
    pub fn triplets(&self) -> Vec<(usize, usize, f64)> {
        self.matrix
            .triplet_iter()
            .map(|(i, j, &v)| (i, j, v))
            .collect()
    }
}

/// What a sparse Hessian computation did and why.
///
/// ```
/// use jacobian::{Function, Op};
/// struct Separable;
/// impl Function for Separable {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         vec![x.iter().map(|v| v.exp()).sum()]
///     }
/// }
/// let h = jacobian::sparse::sparse_hessian(&Separable, &[0.0; 100])?;
/// assert!(h.plan.compressed);
/// assert_eq!((h.plan.colours, h.plan.sweeps), (1, 1));
/// assert!(h.plan.to_string().starts_with("star colouring: 1 colour for 100 columns: 1 sweep of 1 lane instead of 13 sweeps of 8"));
/// # Ok::<(), jacobian::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct SparseHessianPlan {
    /// Compressed Hessian-vector products ran (else the dense [`hessian`](crate::hessian)).
    pub compressed: bool,
    /// The detection that ran: `Global` or `Local`.
    pub detection: Detection,
    /// Why global detection was given up, under `Auto`.
    pub fallback: Option<String>,
    /// Inputs.
    pub n: usize,
    /// Structural nonzeros (both triangles).
    pub nnz: usize,
    /// Star colours.
    pub colours: usize,
    /// No colouring has fewer: the longest row.
    pub bound: usize,
    /// Forward-over-reverse sweeps run.
    pub sweeps: usize,
    /// Tangents per sweep.
    pub lanes: usize,
    /// Why, in words.
    pub reason: String,
}

impl fmt::Display for SparseHessianPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dense = self.n.div_ceil(8).max(1);
        write!(
            f,
            "{}: {} for {}: {} of {} instead of {} of 8 ({} detection, {} nonzeros in {}×{}; {})",
            if self.compressed {
                "star colouring"
            } else {
                "dense"
            },
            count(self.colours, "colour"),
            count(self.n, "column"),
            count(self.sweeps, "sweep"),
            count(self.lanes, "lane"),
            count(dense, "sweep"),
            match self.detection {
                Detection::Local => "local",
                _ => "global",
            },
            thousands(self.nnz),
            self.n,
            self.n,
            self.reason,
        )?;
        if let Some(why) = &self.fallback {
            write!(f, "; global detection gave up at {why}")?;
        }
        Ok(())
    }
}

/// The sparse Hessian of a scalar `f` at `x`: the second-order pattern, a star colouring, and
/// one forward-over-reverse sweep per chunk of colours, or the dense Hessian where the pattern
/// is too full to gain.
///
/// # Errors
///
/// As [`hessian`](crate::hessian).
///
/// ```
/// use jacobian::{Function, Op};
/// struct Rosenbrock;
/// impl Function for Rosenbrock {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         vec![x.windows(2).map(|w| {
///             let (a, b) = (T::one() - w[0], w[1] - w[0] * w[0]);
///             a * a + b * b * 100.0
///         }).sum()]
///     }
/// }
/// let x = vec![1.0; 1000];
/// let h = jacobian::sparse::sparse_hessian(&Rosenbrock, &x)?;
/// assert_eq!((h.plan.colours, h.plan.sweeps, h.matrix.nnz()), (3, 1, 2998));
/// let dense = jacobian::hessian(&Rosenbrock, &x[..10])?.matrix;
/// assert_eq!(h.triplets()[0], (0, 0, dense[(0, 0)]));
/// # Ok::<(), jacobian::Error>(())
/// ```
pub fn sparse_hessian<F: Function>(f: &F, x: &[f64]) -> Result<SparseHessian, Error> {
    sparse_hessian_with(f, x, SparseOptions::default())
}

/// [`sparse_hessian`] with explicit options: `mode: Auto` chooses between dense and
/// compressed; `Forward` or `Reverse` force the compressed products.
pub fn sparse_hessian_with<F: Function>(
    f: &F,
    x: &[f64],
    options: SparseOptions,
) -> Result<SparseHessian, Error> {
    PreparedSparseHessian::with_options(f, x, options)?.hessian(x)
}

/// A sparse Hessian prepared for a function (pattern, star colouring, plan), reused at new
/// points: what a Newton loop needs. The rule for detecting again is that of
/// [`PreparedSparseJacobian`](super::PreparedSparseJacobian): a global pattern never needs it;
/// a local one holds where `f` takes the same branches ([`redetect`](Self::redetect)).
///
/// ```
/// use jacobian::{Function, Op};
/// struct F;
/// impl Function for F {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         vec![x.iter().map(|v| v.powi(4)).sum()]
///     }
/// }
/// let mut p = jacobian::sparse::PreparedSparseHessian::new(F, &[1.0; 50])?;
/// let h = p.hessian(&[2.0; 50])?;
/// assert_eq!(h.triplets()[0], (0, 0, 48.0));
/// # Ok::<(), jacobian::Error>(())
/// ```
pub struct PreparedSparseHessian<F> {
    f: F,
    options: SparseOptions,
    pattern: Pattern,
    colouring: Colouring,
    plan: SparseHessianPlan,
    buffer: Compressed,
    /// This colouring's number (a new one at each detection), for the kept seeds.
    number: u64,
}

impl<F: Function> PreparedSparseHessian<F> {
    /// Detects the Hessian pattern of `f` at `x`, colours it and plans, with default options.
    pub fn new(f: F, x: &[f64]) -> Result<Self, Error> {
        Self::with_options(f, x, SparseOptions::default())
    }

    /// As [`new`](Self::new), with explicit options.
    pub fn with_options(f: F, x: &[f64], options: SparseOptions) -> Result<Self, Error> {
        let (pattern, colouring, plan) = plan(&f, x, options)?;
        Ok(PreparedSparseHessian {
            f,
            options,
            pattern,
            colouring,
            plan,
            buffer: Compressed::default(),
            number: next_source(),
        })
    }

    /// Detects the pattern again at `x`.
    pub fn redetect(&mut self, x: &[f64]) -> Result<(), Error> {
        let options = self.options;
        let f = &self.f;
        let (pattern, colouring, plan) = self::plan(f, x, options)?;
        (self.pattern, self.colouring, self.plan) = (pattern, colouring, plan);
        self.number = next_source();
        Ok(())
    }

    /// The pattern the products assume.
    pub fn pattern(&self) -> &Pattern {
        &self.pattern
    }

    /// The star colouring.
    pub fn colouring(&self) -> &Colouring {
        &self.colouring
    }

    /// The Hessian at `x`.
    ///
    /// # Errors
    ///
    /// An `x` of another length than the prepared one, or an `f` that stops being scalar.
    pub fn hessian(&mut self, x: &[f64]) -> Result<SparseHessian, Error> {
        let n = self.plan.n;
        if x.len() != n {
            return Err(Error::InputLength {
                expected: n,
                found: x.len(),
            });
        }
        let mut values = Vec::with_capacity(self.pattern.nnz());
        let (value, gradient) = if self.plan.compressed {
            let seeds = (&self.colouring, Some(self.number));
            compressed::hessian(&self.f, x, seeds, &mut self.buffer)?;
            compressed::decompress_star(
                &self.pattern,
                &self.colouring,
                &self.buffer.b,
                &mut values,
            );
            (self.buffer.value[0], self.buffer.gradient.clone())
        } else {
            let h = crate::hessian(&self.f, x)?;
            for i in 0..n {
                values.extend(self.pattern.row(i).iter().map(|&j| h.matrix[(i, j)]));
            }
            (h.value, h.gradient)
        };
        Ok(SparseHessian {
            value,
            gradient,
            matrix: CsrMatrix::try_from_pattern_and_values(
                self.pattern.as_sparsity_pattern().clone(),
                values,
            )
            .expect("one value per nonzero"),
            plan: self.plan.clone(),
            colours: if self.plan.compressed {
                self.colouring.colours.clone()
            } else {
                Vec::new()
            },
        })
    }
}

/// Detection, star colouring and the choice between compressed and dense.
fn plan<F: Function>(
    f: &F,
    x: &[f64],
    options: SparseOptions,
) -> Result<(Pattern, Colouring, SparseHessianPlan), Error> {
    let d = detect_hessian(f, x, options.detection)?;
    let p = d.pattern;
    let n = p.cols();
    let colouring = colour_star(&p, options.order)?;
    let k = colouring.count;
    let lanes = tape_lanes(k);
    let sweeps = k.div_ceil(lanes).max(1);
    // Both run one forward-over-reverse sweep per chunk: compare sweeps × (base + lanes).
    let per = |sweeps: usize, lanes: usize| {
        sweeps as f64 * (cost::FWD_BASE + cost::FWD_LANE * lanes as f64)
    };
    let (sparse, dense) = (per(sweeps, lanes), per(n.div_ceil(8).max(1), 8));
    let full = p.nnz() == n * n;
    let compressed = match options.mode {
        Mode::Auto => sparse < dense || (sparse == dense && !full),
        _ => true,
    };
    let reason = match options.mode {
        Mode::Auto => format!(
            "estimated {sparse:.1} sweep costs compressed against {dense:.1} dense, forward over reverse"
        ),
        _ => "compressed products forced by the caller".to_string(),
    };
    let (sweeps, lanes) = if compressed {
        (sweeps, lanes)
    } else {
        (n.div_ceil(8).max(1), 8)
    };
    let plan = SparseHessianPlan {
        compressed,
        detection: d.ran,
        fallback: d.fallback,
        n,
        nnz: p.nnz(),
        colours: k,
        bound: colouring.lower_bound,
        sweeps,
        lanes,
        reason,
    };
    Ok((p, colouring, plan))
}
