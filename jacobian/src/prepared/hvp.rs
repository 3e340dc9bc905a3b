//! [`PreparedHvp`]: Hessian-vector products of one function at many points and directions,
//! from one recording of its directional derivative (reverse over forward).

use super::Preparation;
use super::recording::{Kept, compile_kept};
use crate::hessian::{Hvp, check_scalar};
use crate::plan::{Compilation, Replay};
use forward::Dual;
use shared_ops::{Error, Function, Op};

/// `x ‖ v ↦ (∇f(x)·v, f(x))`: `f` on duals whose tangents are the direction, both parts of
/// each output an output (so a function of more than one output shows in the count).
struct Directional<'a, F>(&'a F);

impl<F: Function> Function for Directional<'_, F> {
    fn eval<T: Op>(&self, xv: &[T]) -> Vec<T> {
        let (x, v) = xv.split_at(xv.len() / 2);
        let duals: Vec<Dual<T>> = x.iter().zip(v).map(|(&x, &v)| Dual::new(x, v)).collect();
        let ys = self.0.eval(&duals);
        ys.into_iter().flat_map(|y| [y.tangent, y.primal]).collect()
    }
}

/// Hessian-vector products `H(x)·v` of one scalar function at many points and directions,
/// for the Newton–CG and trust-region loops that ask for several products at each point.
///
/// `f` is recorded once on a replayable tape as its directional derivative
/// `g(x, v) = ∇f(x)·v` (forward mode on tape variables: the inputs carry `v` as their
/// tangents); one reverse sweep of that recording gives `∂g/∂x = H·v` and `∂g/∂v = ∇f(x)`
/// (reverse over forward, about the cost of two gradients). Each call re-evaluates the
/// recording at the new `x` and `v` (recording afresh where a branch of `f` flips, see
/// [`last`](Self::last)); with feature `jit` the recording is compiled to machine code (its
/// forward pass and its sweep) on request ([`Preparation::Compile`]) or by
/// [`Preparation::Auto`] once the calls have taken [`Preparation::COMPILE_AFTER`], where the
/// compiled calls are faster. Compiled or not, the products are the same bits.
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
    f: F,
    n: usize,
    /// The recording's inputs: `x`, then `v`.
    xv: Vec<f64>,
    kept: Kept,
    last: Replay,
}

impl<F: Function> PreparedHvp<F> {
    /// Records the directional derivative of `f` at `x` (along zero), re-evaluated at each
    /// call and compiled by [`Preparation::Auto`].
    ///
    /// # Errors
    ///
    /// As [`hvp`](crate::hvp): a wrong-sized `x`, an `f` of more than one output.
    pub fn new(f: F, x: &[f64]) -> Result<Self, Error> {
        Self::with_preparation(f, x, Preparation::Auto)
    }

    /// As [`new`](Self::new), the recording obtained at each call by `preparation`:
    /// re-evaluated (`Reevaluate`), recorded afresh (`Record`), compiled now (`Compile`,
    /// feature `jit`), or re-evaluated and compiled once the calls have taken
    /// [`Preparation::COMPILE_AFTER`] where that is faster (`Auto`).
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
    /// let c = p.compilation().expect("compiled on request");
    /// assert!(c.code_bytes > 0 || c.declined.is_some());
    /// # Ok::<(), jacobian::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    pub fn with_preparation(f: F, x: &[f64], preparation: Preparation) -> Result<Self, Error> {
        check_scalar(&f, x.len())?;
        let n = x.len();
        let mut xv = x.to_vec();
        xv.resize(2 * n, 0.0);
        let r = Kept::record(&Directional(&f), &xv, None, preparation)?;
        if r.ys.len() != 2 {
            return Err(Error::NotScalar {
                outputs: r.ys.len() / 2,
            });
        }
        let mut p = PreparedHvp {
            f,
            n,
            xv,
            kept: Kept::new(Some(r), preparation),
            last: Replay::Recorded,
        };
        if preparation == Preparation::Compile {
            p.compile(0, false)?;
        }
        Ok(p)
    }

    /// `f(x)`, `∇f(x)` and `H(x)·v`.
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
        self.xv[..self.n].copy_from_slice(x);
        self.xv[self.n..].copy_from_slice(v);
        let start = self.kept.start();
        let out = self.product()?;
        if let Some((calls, only_if_faster)) = self.kept.count(start) {
            self.compile(calls, only_if_faster)?;
        }
        Ok(out)
    }

    /// The product at the point in `xv`: the recording re-evaluated (or recorded) there and
    /// swept from `∇f·v`.
    fn product(&mut self) -> Result<Hvp, Error> {
        let (replay, r) = self.kept.at(&Directional(&self.f), &self.xv, Some(2))?;
        self.last = replay;
        let (directional, y) = (r.ys[0], r.ys[1]);
        let mut product =
            (r.rec).sweep_wrt_with(&[(directional, 1.0)], &r.xs, &mut r.work.adjoints);
        let gradient = product.split_off(self.n);
        Ok(Hvp {
            value: r.rec.value(y),
            gradient,
            product,
        })
    }

    /// Compiles the recording after `calls` calls, timing calls before and after; with
    /// `only_if_faster`, drops the code again if the compiled calls are not faster.
    fn compile(&mut self, calls: usize, only_if_faster: bool) -> Result<(), Error> {
        let call = |p: &mut Self| p.product().map(drop);
        compile_kept(self, |p| &mut p.kept, call, 1, calls, only_if_faster)
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
        &self.last
    }

    /// What compiling the recording made (feature `jit`), once tried: on request, or by
    /// `Auto` after [`Preparation::COMPILE_AFTER`].
    pub fn compilation(&self) -> Option<&Compilation> {
        self.kept.compilation.as_ref()
    }

    /// How many calls recorded `f` afresh because a guard failed.
    pub fn rerecords(&self) -> usize {
        self.kept.rerecords
    }
}
