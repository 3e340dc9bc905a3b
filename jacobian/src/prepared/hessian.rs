//! [`PreparedHessian`]: the Hessian of one scalar function at many points, as the Jacobian of
//! its gradient (reverse over reverse), prepared once.

use super::{Preparation, PreparedJacobian};
use crate::hessian::{self, Hessian, HessianPlan, Pair};
use crate::plan::{Mode, Plan, Replay};
use crate::transforms::Grad;
use shared_ops::{Error, Function};

/// The Hessian of one scalar function at many points: for Newton's method and the
/// second-order optimisers that ask for a whole Hessian at each step.
///
/// The Hessian is the Jacobian of the gradient. `f` and the sweep of its gradient are recorded
/// once, together, on a replayable tape of `f64` (reverse over reverse); each
/// [`hessian`](Self::hessian) re-evaluates that recording at the new `x` (recording afresh
/// where a branch of `f` flips, see [`last`](Self::last)) and pulls the n gradient entries
/// back by vector sweeps of up to 8 rows each: the sweeps of the one-shot pair, which are most
/// of a dense Hessian's cost; preparing saves the recording. That is a [`PreparedJacobian`] of
/// the gradient ([`Grad`](crate::Grad)), so with feature `jit` the recording and its sweeps
/// are compiled to machine code on request ([`Preparation::Compile`]) or by
/// [`Preparation::Auto`] once the calls have taken [`Preparation::COMPILE_AFTER`] and run
/// faster compiled ([`plan`](Self::plan) says which).
/// Every preparation gives the bits of [`hessian_with`](crate::hessian_with) by
/// [`Pair::ReverseOverReverse`]: the same matrix, made exactly symmetric the same way.
///
/// ```
/// use jacobian::{Function, Op, PreparedHessian};
/// struct F;
/// impl Function for F {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         vec![x[0] * x[0] * x[1]] // H = [[2x₁, 2x₀], [2x₀, 0]]
///     }
/// }
/// let mut p = PreparedHessian::new(F, &[1.0, 1.0])?;
/// let h = p.hessian(&[3.0, 2.0])?;
/// assert_eq!((h.value, h.gradient), (18.0, vec![12.0, 9.0]));
/// assert_eq!(h.matrix.as_slice(), &[4.0, 6.0, 6.0, 0.0]);
/// # Ok::<(), jacobian::Error>(())
/// ```
pub struct PreparedHessian<F> {
    /// The Jacobian of [`Grad`]: on tape variables, `f` recorded on an inner tape and swept,
    /// all of it recorded as one program of `f64` whose outputs are the gradient.
    jacobian: PreparedJacobian<Grad<F>>,
    n: usize,
    /// The last call's plan of the Jacobian of the gradient.
    plan: Option<Plan>,
}

impl<F: Function + Sync> PreparedHessian<F> {
    /// Records `f` and its gradient's sweep at `x`, prepared by [`Preparation::Auto`].
    ///
    /// # Errors
    ///
    /// As [`hessian`](crate::hessian): a wrong-sized `x`, an `f` of other than one output.
    pub fn new(f: F, x: &[f64]) -> Result<Self, Error> {
        Self::with_preparation(f, x, Preparation::Auto)
    }

    /// As [`new`](Self::new), the recording obtained at each call by `preparation`, as a
    /// [`PreparedJacobian`]'s: re-evaluated (`Reevaluate`), recorded afresh (`Record`),
    /// compiled now (`Compile`, feature `jit`), or compiled once the calls have repaid it
    /// (`Auto`).
    ///
    /// ```
    /// use jacobian::{Function, Op, Preparation, PreparedHessian};
    /// struct F;
    /// impl Function for F {
    ///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
    ///         vec![x[0].sin() * x[1]]
    ///     }
    /// }
    /// let mut p = PreparedHessian::with_preparation(F, &[0.0, 0.0], Preparation::Compile)?;
    /// let (a, b) = (0.5_f64, 2.0_f64);
    /// let h = p.hessian(&[a, b])?;
    /// assert_eq!(h.matrix.as_slice(), &[-a.sin() * b, a.cos(), a.cos(), 0.0]);
    /// // Machine code, or (without the feature `jit`) the reason there is none.
    /// let c = p.plan().and_then(|plan| plan.compiled.as_ref()).expect("compiled on request");
    /// assert!(c.code_bytes > 0 || c.declined.is_some());
    /// # Ok::<(), jacobian::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    pub fn with_preparation(f: F, x: &[f64], preparation: Preparation) -> Result<Self, Error> {
        hessian::check_scalar(&f, x.len())?;
        let outputs = f.eval(x).len();
        if outputs != 1 {
            return Err(Error::NotScalar { outputs });
        }
        let jacobian = PreparedJacobian::with_preparation(Grad(f), x, Mode::Reverse, preparation)?;
        Ok(PreparedHessian {
            jacobian,
            n: x.len(),
            plan: None,
        })
    }

    /// `f(x)`, `∇f(x)` and the Hessian at `x`; `f(x)` by one more evaluation of `f`, on
    /// `f64`. Its plan names the pair (reverse over reverse) and how the recording was
    /// obtained.
    ///
    /// # Errors
    ///
    /// An `x` of another length than the prepared one; an `f` that no longer has one output.
    pub fn hessian(&mut self, x: &[f64]) -> Result<Hessian, Error> {
        if x.len() != self.n {
            return Err(Error::InputLength {
                expected: self.n,
                found: x.len(),
            });
        }
        // One output, checked before a recording made afresh would find another count.
        let value = match self.jacobian.function().0.eval(x)[..] {
            [y] => y,
            ref ys => return Err(Error::NotScalar { outputs: ys.len() }),
        };
        let j = self.jacobian.jacobian(x)?;
        let mut matrix = j.matrix;
        hessian::symmetrise(&mut matrix);
        let reason = match &j.plan.replay {
            Replay::Rerecorded(why) => format!("prepared, recorded afresh: {why}"),
            Replay::Recorded => "prepared, recorded afresh at each call".to_string(),
            _ if j.plan.compiled.as_ref().is_some_and(|c| c.code_bytes > 0) => {
                "prepared, its recording compiled".to_string()
            }
            _ => "prepared, its recording re-evaluated".to_string(),
        };
        let n = x.len();
        let plan = HessianPlan::new(
            Pair::ReverseOverReverse,
            n,
            (j.plan.sweeps, j.plan.lanes),
            j.plan.tape,
            None,
            reason,
        );
        self.plan = Some(j.plan);
        Ok(Hessian {
            value,
            gradient: j.value,
            matrix,
            plan,
        })
    }

    /// The last call's plan of the Jacobian of the gradient (`None` before the first call):
    /// how the recording was obtained ([`Plan::replay`]), what compiling made
    /// ([`Plan::compiled`]), the sweeps and the recording's size.
    pub fn plan(&self) -> Option<&Plan> {
        self.plan.as_ref()
    }

    /// How the last call obtained its recording: re-evaluated, or recorded afresh (and why).
    ///
    /// ```
    /// use jacobian::{Function, Op, PreparedHessian, Replay};
    /// struct Abs;
    /// impl Function for Abs {
    ///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
    ///         vec![x[0].abs() * x[0] * x[0]]
    ///     }
    /// }
    /// let mut p = PreparedHessian::new(Abs, &[1.0])?;
    /// assert_eq!(p.hessian(&[2.0])?.matrix[(0, 0)], 12.0); // 6|x|
    /// assert_eq!(p.last(), Some(&Replay::Reevaluated));
    /// assert_eq!(p.hessian(&[-2.0])?.matrix[(0, 0)], 12.0); // abs took its other side
    /// assert!(matches!(p.last(), Some(Replay::Rerecorded(_))));
    /// # Ok::<(), jacobian::Error>(())
    /// ```
    pub fn last(&self) -> Option<&Replay> {
        self.plan.as_ref().map(|p| &p.replay)
    }

    /// How many calls recorded `f` afresh because a guard failed.
    pub fn rerecords(&self) -> usize {
        self.jacobian.rerecords()
    }
}
