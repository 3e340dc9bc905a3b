//! [`PreparedHvp`]: Hessian-vector products of one function at many points and directions,
//! from one recording of its directional derivative (reverse over forward).

use super::PreparedPlan;
use super::gradient::PreparedGradient;
use super::preparation::Preparation;
use crate::hessian::Hvp;
use crate::plan::Replay;
use forward::Dual;
use shared_ops::{Error, Function, Op};

/// `x ‖ v ↦ ∇f(x)·v`: `f` on duals whose tangents are the direction.
struct Tangent<F>(F);

impl<F: Function> Function for Tangent<F> {
    fn eval<T: Op>(&self, xv: &[T]) -> Vec<T> {
        let (x, v) = xv.split_at(xv.len() / 2);
        let duals: Vec<Dual<T>> = x.iter().zip(v).map(|(&x, &v)| Dual::new(x, v)).collect();
        self.0.eval(&duals).into_iter().map(|y| y.tangent).collect()
    }

    fn sizes(&self) -> Option<(usize, usize)> {
        self.0.sizes().map(|(n, m)| (2 * n, m))
    }
}

/// Hessian-vector products `H(x)·v` of one scalar function at many points and directions,
/// for the Newton–CG and trust-region loops that ask for several products at each point.
///
/// `f` is recorded once on a replayable tape as its directional derivative
/// `g(x, v) = ∇f(x)·v` (forward mode on tape variables: the inputs carry `v` as their
/// tangents); one reverse sweep of that recording gives `∂g/∂x = H·v` and `∂g/∂v = ∇f(x)`
/// (reverse over forward: a small multiple of a gradient's cost, whatever n). That gradient
/// is a [`PreparedGradient`]'s: each call re-evaluates the recording at the new `x` and `v`
/// (recording afresh where a branch of `f` flips, see [`last`](Self::last)), and with feature
/// `jit` it is compiled to machine code on request ([`Preparation::Compile`]) or where
/// [`Preparation::Auto`] finds the compiled calls faster ([`plan`](Self::plan) says which).
/// Compiled or not, the products are the same bits.
/// [`hvp`](crate::hvp) takes one product by forward over reverse instead; the two agree to
/// rounding.
///
/// ```
/// use jacobian::{Function, Op, PreparedHvp};
/// struct F;
/// impl Function for F {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         vec![x[0] * x[0] * x[1]] // H = [[2x₁, 2x₀], [2x₀, 0]]
///     }
/// }
/// let mut p = PreparedHvp::new(F, &[1.0, 1.0])?;
/// let h = p.hvp(&[3.0, 2.0], &[1.0, 1.0])?;
/// assert_eq!((h.value, h.gradient, h.product), (18.0, vec![12.0, 9.0], vec![10.0, 6.0]));
/// assert_eq!(p.hvp(&[3.0, 2.0], &[0.0, 1.0])?.product, vec![6.0, 0.0]);
/// # Ok::<(), jacobian::Error>(())
/// ```
pub struct PreparedHvp<F> {
    /// The gradient of `∇f(x)·v` with respect to `x ‖ v`.
    gradient: PreparedGradient<Tangent<F>>,
    n: usize,
    /// Its inputs: `x`, then `v`.
    xv: Vec<f64>,
}

impl<F: Function> PreparedHvp<F> {
    /// Records the directional derivative of `f` at `x` (along zero) and prepares its
    /// gradient by [`Preparation::Auto`].
    ///
    /// # Errors
    ///
    /// As [`hvp`](crate::hvp): a wrong-sized `x`, an `f` of more than one output.
    pub fn new(f: F, x: &[f64]) -> Result<Self, Error> {
        Self::with_preparation(f, x, Preparation::Auto)
    }

    /// As [`new`](Self::new), the gradient of the directional derivative prepared by
    /// `preparation`, as a [`PreparedGradient`]'s: re-evaluated (`Reevaluate`), recorded
    /// afresh at each call (`Record`), compiled (`Compile`, feature `jit`), or the choice of
    /// [`Auto`](Preparation::Auto). [`plan`](Self::plan) says what it chose.
    ///
    /// ```
    /// use jacobian::{Function, Op, Preparation, PreparedHvp};
    /// struct F;
    /// impl Function for F {
    ///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
    ///         vec![x[0].sin() * x[1]]
    ///     }
    /// }
    /// let mut p = PreparedHvp::with_preparation(F, &[0.0, 0.0], Preparation::Compile)?;
    /// let h = p.hvp(&[0.5, 2.0], &[1.0, 0.0])?;
    /// assert_eq!(h.product, vec![-0.5_f64.sin() * 2.0, 0.5_f64.cos()]);
    /// // Machine code, or (without the feature `jit`) the reason there is none.
    /// let c = p.plan().compilation.as_ref().expect("compiled on request");
    /// assert!(c.code_bytes > 0 || c.declined.is_some());
    /// # Ok::<(), jacobian::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    pub fn with_preparation(f: F, x: &[f64], preparation: Preparation) -> Result<Self, Error> {
        f.check_input(x.len())?;
        let n = x.len();
        let mut xv = x.to_vec();
        xv.resize(2 * n, 0.0);
        let gradient = PreparedGradient::with(Tangent(f), &xv, preparation)?;
        Ok(PreparedHvp { gradient, n, xv })
    }

    /// `f(x)`, `∇f(x)` and `H(x)·v`; `f(x)` by one more evaluation of `f`, on `f64`.
    ///
    /// # Errors
    ///
    /// An `x` or `v` of another length than the prepared `x`.
    pub fn hvp(&mut self, x: &[f64], v: &[f64]) -> Result<Hvp, Error> {
        if x.len() != self.n {
            return Err(Error::InputLength {
                expected: self.n,
                found: x.len(),
            });
        }
        Error::check_seed("tangent", self.n, v.len())?;
        let (product, gradient) = self.product(x, v)?;
        let value = self.gradient.function().0.eval(x)[0];
        Ok(Hvp {
            value,
            gradient,
            product,
        })
    }

    /// `H(x)·v` and `∇f(x)`, without `f(x)`; `x` and `v` of the prepared length.
    pub(crate) fn product(&mut self, x: &[f64], v: &[f64]) -> Result<(Vec<f64>, Vec<f64>), Error> {
        self.xv[..self.n].copy_from_slice(x);
        self.xv[self.n..].copy_from_slice(v);
        let (_, mut product) = self.gradient.gradient(&self.xv)?;
        let gradient = product.split_off(self.n);
        Ok((product, gradient))
    }

    /// The function.
    ///
    /// ```
    /// use jacobian::{Function, Op, PreparedHvp};
    /// struct Cube;
    /// impl Function for Cube {
    ///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
    ///         vec![x[0].powi(3)]
    ///     }
    /// }
    /// let p = PreparedHvp::new(Cube, &[1.0])?;
    /// assert_eq!(p.function().eval(&[2.0_f64]), vec![8.0]);
    /// # Ok::<(), jacobian::Error>(())
    /// ```
    pub fn function(&self) -> &F {
        &self.gradient.function().0
    }

    /// The function back, the preparation dropped.
    pub(crate) fn into_function(self) -> F {
        self.gradient.into_function().0
    }

    /// How the gradient of the directional derivative was prepared: the strategy and why,
    /// the time, the memory, what compiling made.
    pub fn plan(&self) -> &PreparedPlan {
        self.gradient.plan()
    }

    /// How the last call obtained its recording: re-evaluated, or recorded afresh (and why).
    ///
    /// ```
    /// use jacobian::{Function, Op, PreparedHvp, Replay};
    /// struct Abs;
    /// impl Function for Abs {
    ///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
    ///         vec![x[0].abs() * x[0] * x[0]]
    ///     }
    /// }
    /// let mut p = PreparedHvp::new(Abs, &[1.0])?;
    /// assert_eq!(p.hvp(&[2.0], &[1.0])?.product, vec![12.0]); // 6|x|
    /// assert_eq!(p.last(), &Replay::Reevaluated);
    /// assert_eq!(p.hvp(&[-2.0], &[1.0])?.product, vec![12.0]); // abs took its other side
    /// assert!(matches!(p.last(), Replay::Rerecorded(_)));
    /// # Ok::<(), jacobian::Error>(())
    /// ```
    pub fn last(&self) -> &Replay {
        self.gradient.last()
    }

    /// How many calls recorded `f` afresh because a guard failed.
    pub fn rerecords(&self) -> usize {
        self.gradient.rerecords()
    }
}
