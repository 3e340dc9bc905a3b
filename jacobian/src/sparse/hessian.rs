//! Sparse Hessians: the second-order pattern, a star colouring, compressed Hessian-vector
//! products (forward over reverse, one lane per colour; or prepared products, one per colour)
//! and symmetric recovery into CSR.

use super::compressed::{self, Compressed};
use super::hessian_plan::{SparseHessianPlan, plan};
use super::prepared::next_source;
use super::products::Products;
use super::{Colouring, Pattern, SparseOptions};
use crate::Preparation;
use crate::plan::Compilation;
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
    /// The pattern it was computed on (see [`PreparedSparseHessian::hessian_into`]).
    source: u64,
}

/// f, ∇f and the diagonal of ∇²f at a point ([`PreparedSparseHessian::diagonal`]): what a
/// diagonal Newton step or a Jacobi preconditioner needs, without the off-diagonal entries.
///
/// ```
/// let d = jacobian::sparse::HessianDiagonal::default();
/// assert!(d.gradient.is_empty() && d.diagonal.is_empty());
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HessianDiagonal {
    /// `f(x)`.
    pub value: f64,
    /// `∇f(x)`.
    pub gradient: Vec<f64>,
    /// `∂²f/∂xᵢ²` for each i (0 where the pattern has no diagonal entry).
    pub diagonal: Vec<f64>,
}

impl SparseHessian {
    /// The nonzeros as `(row, column, value)`, row by row.
    pub fn triplets(&self) -> Vec<(usize, usize, f64)> {
        self.matrix
            .triplet_iter()
            .map(|(i, j, &v)| (i, j, v))
            .collect()
    }

    /// The matrix as a dense one (for small problems and tests).
    ///
    /// ```
    /// use jacobian::{Function, Op};
    /// struct F;
    /// impl Function for F {
    ///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
    ///         vec![x[0] * x[1]]
    ///     }
    /// }
    /// let h = jacobian::sparse::sparse_hessian(&F, &[1.0, 2.0])?;
    /// assert_eq!(h.to_dense().as_slice(), &[0.0, 1.0, 1.0, 0.0]);
    /// # Ok::<(), jacobian::Error>(())
    /// ```
    pub fn to_dense(&self) -> nalgebra::DMatrix<f64> {
        let n = self.matrix.nrows();
        let mut d = nalgebra::DMatrix::zeros(n, n);
        for (i, j, &v) in self.matrix.triplet_iter() {
            d[(i, j)] = v;
        }
        d
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
/// a local one holds where `f` takes the same branches ([`redetect`](Self::redetect)). The
/// compressed products run forward over reverse, or, prepared on request, compiled to machine
/// code ([`with_preparation`](Self::with_preparation)).
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
    /// `f`, with the route of the compressed products.
    products: Products<F>,
    options: SparseOptions,
    pattern: Pattern,
    colouring: Colouring,
    plan: SparseHessianPlan,
    buffer: Compressed,
    /// The dense Hessian and gradient of the last call, where the plan chose the dense
    /// Hessian (read back, then dropped).
    dense: Option<(nalgebra::DMatrix<f64>, Vec<f64>)>,
    /// This colouring's number (a new one at each detection), for the kept seeds and results.
    number: u64,
}

impl<F: Function> PreparedSparseHessian<F> {
    /// Detects the Hessian pattern of `f` at `x`, colours it and plans, with default options.
    pub fn new(f: F, x: &[f64]) -> Result<Self, Error> {
        Self::with_options(f, x, SparseOptions::default())
    }

    /// As [`new`](Self::new), with explicit options.
    pub fn with_options(f: F, x: &[f64], options: SparseOptions) -> Result<Self, Error> {
        Self::with_preparation(f, x, options, Preparation::Auto)
    }

    /// As [`with_options`](Self::with_options), with the compressed products run as
    /// `preparation` asks:
    ///
    /// - `Auto` and `Record`: forward over reverse, `f` recorded afresh at each call on a tape
    ///   of multi-tangent duals, every colour in sweeps of lanes. What `new` does.
    /// - `Compile` (feature `jit`): the directional derivative `∇f·v` recorded once and its
    ///   gradient compiled to machine code (reverse over forward, a [`PreparedHvp`](crate::PreparedHvp)),
    ///   one product per colour. Each product costs a small multiple of `f` whatever the
    ///   colours, but each evaluates `f`'s elementary functions again: it pays on
    ///   arithmetic (polynomials, Rosenbrock) and can lose where elementary functions
    ///   dominate. The plan ([`SparseHessianPlan::compiled`]) times a call of both while
    ///   preparing. Where nothing compiles (without the feature, a recording past the
    ///   compiler's size), forward over reverse runs and the plan says why.
    /// - `Reevaluate`: as `Compile`, the gradient interpreted.
    ///
    /// The two routes agree to rounding, not bit for bit; a prepared object keeps its route,
    /// so its results do not change their rounding from one call to the next. That is why
    /// `Auto` does not switch to compiled products by itself. A dense plan (a full pattern)
    /// takes the dense [`hessian`](crate::hessian) either way.
    ///
    /// ```
    /// use jacobian::sparse::{PreparedSparseHessian, SparseOptions};
    /// use jacobian::{Function, Op, Preparation};
    /// struct Chain;
    /// impl Function for Chain {
    ///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
    ///         vec![x.windows(2).map(|w| w[0] * w[0] * w[1]).sum()]
    ///     }
    /// }
    /// let options = SparseOptions::default();
    /// let mut p = PreparedSparseHessian::with_preparation(Chain, &[1.0; 6], options, Preparation::Compile)?;
    /// let h = p.hessian(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    /// // ∂²/∂x₀² = 2x₁, ∂²/∂x₀∂x₁ = 2x₀.
    /// assert_eq!(h.triplets()[..2], [(0, 0, 4.0), (0, 1, 2.0)]);
    /// // Machine code, or (without the feature `jit`) the reason there is none.
    /// let c = h.plan.compiled.as_ref().expect("compiled on request");
    /// assert!(c.code_bytes > 0 || c.declined.is_some());
    /// println!("{}", h.plan);
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
        let (pattern, colouring, mut plan) = plan(&f, x, options)?;
        let number = next_source();
        let mut buffer = Compressed::default();
        let (products, ran, compiled) = if plan.compressed {
            let seeds = (&colouring, Some(number));
            Products::prepare(f, x, seeds, preparation, &mut buffer)?
        } else {
            let dense = Compilation {
                declined: Some("the pattern is full: the dense Hessian runs".into()),
                ..Compilation::default()
            };
            let asked = preparation == Preparation::Compile;
            (
                Products::Afresh(f),
                Preparation::Record,
                asked.then_some(dense),
            )
        };
        (plan.preparation, plan.compiled) = (ran, compiled);
        let mut p = PreparedSparseHessian {
            products,
            options,
            pattern,
            colouring,
            plan,
            buffer,
            dense: None,
            number,
        };
        p.count_products();
        Ok(p)
    }

    /// Detects the pattern again at `x`.
    pub fn redetect(&mut self, x: &[f64]) -> Result<(), Error> {
        let options = self.options;
        let (pattern, colouring, mut plan) = self::plan(self.products.function(), x, options)?;
        (plan.preparation, plan.compiled) = (self.plan.preparation, self.plan.compiled.take());
        (self.pattern, self.colouring, self.plan) = (pattern, colouring, plan);
        self.number = next_source();
        self.count_products();
        Ok(())
    }

    /// Prepared products run one sweep of one lane per colour.
    fn count_products(&mut self) {
        if self.plan.compressed && matches!(self.products, Products::Prepared(_)) {
            (self.plan.sweeps, self.plan.lanes) = (self.colouring.count.max(1), 1);
        }
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
        let mut h = self.output();
        self.hessian_into(x, &mut h)?;
        Ok(h)
    }

    /// A result shaped for this object's pattern, its values zero: what
    /// [`hessian_into`](Self::hessian_into) writes over, allocated before the first call.
    ///
    /// ```
    /// use jacobian::sparse::PreparedSparseHessian;
    /// use jacobian::{Function, Op};
    /// struct F;
    /// impl Function for F {
    ///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
    ///         vec![x[0] * x[1] + x[2].powi(3)]
    ///     }
    /// }
    /// let mut p = PreparedSparseHessian::new(F, &[1.0; 3])?;
    /// let mut h = p.output();
    /// for x in [[1.0, 2.0, 3.0], [0.0, 0.0, 1.0]] {
    ///     p.hessian_into(&x, &mut h)?; // a Newton loop: nothing the size of H allocated
    ///     assert_eq!(h.triplets(), vec![(0, 1, 1.0), (1, 0, 1.0), (2, 2, 6.0 * x[2])]);
    /// }
    /// # Ok::<(), jacobian::Error>(())
    /// ```
    pub fn output(&self) -> SparseHessian {
        let n = self.plan.n;
        SparseHessian {
            value: 0.0,
            gradient: vec![0.0; n],
            matrix: CsrMatrix::try_from_pattern_and_values(
                self.pattern.as_sparsity_pattern().clone(),
                vec![0.0; self.pattern.nnz()],
            )
            .expect("one value per nonzero"),
            plan: self.plan.clone(),
            colours: if self.plan.compressed {
                self.colouring.colours.clone()
            } else {
                Vec::new()
            },
            source: self.number,
        }
    }

    /// The Hessian at `x` written over `h`, a result of this object (of an earlier call, or
    /// [`output`](Self::output)): its values, gradient and value overwritten in place. If `h`
    /// came from elsewhere, or the pattern was detected again since, `h` is replaced whole.
    ///
    /// # Errors
    ///
    /// As [`hessian`](Self::hessian); `h` then holds no meaningful values.
    pub fn hessian_into(&mut self, x: &[f64], h: &mut SparseHessian) -> Result<(), Error> {
        if h.source != self.number {
            *h = self.output();
        }
        let value = self.products(x)?;
        h.value = value;
        let values = h.matrix.values_mut();
        if self.plan.compressed {
            compressed::decompress_star(&self.pattern, &self.colouring, &self.buffer.b, values);
            h.gradient.clone_from(&self.buffer.gradient);
        } else {
            let (dense, gradient) = self.dense.take().expect("the dense Hessian just computed");
            let entries =
                (0..self.plan.n).flat_map(|i| self.pattern.row(i).iter().map(move |&j| (i, j)));
            for (v, (i, j)) in values.iter_mut().zip(entries) {
                *v = dense[(i, j)];
            }
            h.gradient = gradient;
        }
        h.plan.clone_from(&self.plan);
        Ok(())
    }

    /// f, ∇f and the diagonal of ∇²f at `x`, from the same sweeps as the Hessian, but with
    /// only the n diagonal entries read back: in a star colouring no column shares a colour
    /// with a neighbour, so each diagonal entry stands alone in its compressed column.
    ///
    /// ```
    /// use jacobian::sparse::{HessianDiagonal, PreparedSparseHessian};
    /// use jacobian::{Function, Op};
    /// /// Σ xᵢ⁴ + x₀x₁: diagonal 12xᵢ².
    /// struct F;
    /// impl Function for F {
    ///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
    ///         vec![x.iter().map(|v| v.powi(4)).sum::<T>() + x[0] * x[1]]
    ///     }
    /// }
    /// let mut p = PreparedSparseHessian::new(F, &[1.0; 4])?;
    /// let mut d = HessianDiagonal::default();
    /// p.diagonal_into(&[1.0, 2.0, 3.0, 4.0], &mut d)?;
    /// assert_eq!(d.diagonal, vec![12.0, 48.0, 108.0, 192.0]);
    /// assert_eq!(d.gradient[0], 4.0 + 2.0);
    /// # Ok::<(), jacobian::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`hessian`](Self::hessian).
    pub fn diagonal_into(&mut self, x: &[f64], out: &mut HessianDiagonal) -> Result<(), Error> {
        out.value = self.products(x)?;
        let n = self.plan.n;
        out.diagonal.clear();
        out.diagonal.resize(n, 0.0);
        if self.plan.compressed {
            let (k, colours) = (self.colouring.count, &self.colouring.colours);
            for (i, d) in out.diagonal.iter_mut().enumerate() {
                if self.pattern.row(i).binary_search(&i).is_ok() {
                    *d = self.buffer.b[i * k + colours[i]];
                }
            }
            out.gradient.clone_from(&self.buffer.gradient);
        } else {
            let (dense, gradient) = self.dense.take().expect("the dense Hessian just computed");
            for (i, d) in out.diagonal.iter_mut().enumerate() {
                *d = dense[(i, i)];
            }
            out.gradient = gradient;
        }
        Ok(())
    }

    /// [`diagonal_into`](Self::diagonal_into) into a new result.
    ///
    /// # Errors
    ///
    /// As [`hessian`](Self::hessian).
    pub fn diagonal(&mut self, x: &[f64]) -> Result<HessianDiagonal, Error> {
        let mut d = HessianDiagonal::default();
        self.diagonal_into(x, &mut d)?;
        Ok(d)
    }

    /// The sweeps at `x`: the compressed products into the buffer, or the dense Hessian into
    /// `self.dense`; returns f(x).
    fn products(&mut self, x: &[f64]) -> Result<f64, Error> {
        let n = self.plan.n;
        if x.len() != n {
            return Err(Error::InputLength {
                expected: n,
                found: x.len(),
            });
        }
        if self.plan.compressed {
            let seeds = (&self.colouring, Some(self.number));
            self.products.run(x, seeds, &mut self.buffer)?;
            Ok(self.buffer.value[0])
        } else {
            let h = crate::hessian(self.products.function(), x)?;
            self.dense = Some((h.matrix, h.gradient));
            Ok(h.value)
        }
    }
}
