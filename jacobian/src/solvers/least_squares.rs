use crate::{Error, Function, Mode, Plan, PreparedJacobian};
use core::cell::RefCell;
use levenberg_marquardt::LeastSquaresProblem;
use nalgebra_v0_34::{DMatrix, DVector, Dyn, Owned};

/// A residual function `r: Rⁿ → Rᵐ` as a [`levenberg_marquardt`] problem, min ½‖r(x)‖², with
/// the Jacobian computed by this library instead of by hand or by finite differences.
///
/// The residuals are a plain `f64` evaluation of `r`. The Jacobian comes from a
/// [`PreparedJacobian`], planned once at the starting point: forward sweeps when the parameters
/// are few (the usual case for curve fitting), else one replayable recording, re-evaluated at
/// each step and recorded afresh only where a branch of `r` flips. [`plan`](Self::plan) tells
/// which ran last.
///
/// ```
/// use jacobian::solvers::LeastSquares;
/// use jacobian::solvers::levenberg_marquardt::{LeastSquaresProblem, LevenbergMarquardt};
/// use jacobian::{Function, Op};
///
/// /// Residuals of the model y = a·e^{b·t} against points on y = 2·e^{−t/2}.
/// struct Decay {
///     t: Vec<f64>,
///     y: Vec<f64>,
/// }
/// impl Function for Decay {
///     fn eval<T: Op>(&self, p: &[T]) -> Vec<T> {
///         let (a, b) = (p[0], p[1]);
///         let r = self.t.iter().zip(&self.y);
///         r.map(|(&t, &y)| a * (b * t).exp() - y).collect()
///     }
/// }
///
/// let t: Vec<f64> = (0..10).map(f64::from).collect();
/// let y = t.iter().map(|t| 2.0 * (-0.5 * t).exp()).collect();
/// let problem = LeastSquares::new(Decay { t, y }, &[1.0, 0.0])?;
/// let (fitted, report) = LevenbergMarquardt::new().minimize(problem);
/// assert!(report.termination.was_successful());
/// assert!((fitted.params()[0] - 2.0).abs() < 1e-10);
/// assert!((fitted.params()[1] + 0.5).abs() < 1e-10);
/// println!("{}", fitted.plan().unwrap()); // forward: 1 sweep of 2 tangents, and why
/// # Ok::<(), jacobian::Error>(())
/// ```
pub struct LeastSquares<F> {
    prepared: RefCell<PreparedJacobian<F>>,
    x: DVector<f64>,
    /// The residual count, from the first evaluation.
    m: usize,
    last_plan: RefCell<Option<Plan>>,
    error: RefCell<Option<Error>>,
}

impl<F: Function + Sync> LeastSquares<F> {
    /// The problem of `r`, starting at `x0`, with the Jacobian's mode planned there.
    ///
    /// # Errors
    ///
    /// As [`PreparedJacobian::new`]: empty or wrong-sized `x0`, an output length that differs
    /// from the declared one.
    pub fn new(r: F, x0: &[f64]) -> Result<Self, Error> {
        Self::with_mode(r, x0, Mode::Auto)
    }

    /// As [`new`](Self::new), with the Jacobian's mode forced (`Auto` plans).
    ///
    /// ```
    /// use jacobian::solvers::LeastSquares;
    /// use jacobian::{Function, Mode, Op};
    /// struct Line;
    /// impl Function for Line {
    ///     fn eval<T: Op>(&self, p: &[T]) -> Vec<T> {
    ///         vec![p[0] - 1.0, p[0] + p[1]]
    ///     }
    /// }
    /// let problem = LeastSquares::with_mode(Line, &[0.0, 0.0], Mode::Reverse)?;
    /// assert_eq!(problem.residual_count(), 2);
    /// # Ok::<(), jacobian::Error>(())
    /// ```
    pub fn with_mode(r: F, x0: &[f64], mode: Mode) -> Result<Self, Error> {
        let m = r.eval::<f64>(x0).len();
        let prepared = PreparedJacobian::with_mode(r, x0, mode)?;
        Ok(LeastSquares {
            prepared: RefCell::new(prepared),
            x: DVector::from_column_slice(x0),
            m,
            last_plan: RefCell::new(None),
            error: RefCell::new(None),
        })
    }

    /// The number of residuals m.
    pub fn residual_count(&self) -> usize {
        self.m
    }

    /// The plan of the last Jacobian computed (mode, sweeps, whether a recording was
    /// re-evaluated), or `None` before the first.
    pub fn plan(&self) -> Option<Plan> {
        self.last_plan.borrow().clone()
    }

    /// Why the last call that should have given residuals or a Jacobian gave `None` (which
    /// stops the solver with `TerminationReason::User`), if one did: e.g. an output length
    /// that changed between evaluations.
    pub fn error(&self) -> Option<Error> {
        self.error.borrow().clone()
    }

    /// The residual function.
    pub fn function(&self) -> std::cell::Ref<'_, F> {
        std::cell::Ref::map(self.prepared.borrow(), PreparedJacobian::function)
    }

    fn fail(&self, e: Error) {
        *self.error.borrow_mut() = Some(e);
    }
}

impl<F: Function + Sync> LeastSquaresProblem<f64, Dyn, Dyn> for LeastSquares<F> {
    type ResidualStorage = Owned<f64, Dyn>;
    type JacobianStorage = Owned<f64, Dyn, Dyn>;
    type ParameterStorage = Owned<f64, Dyn>;

    fn set_params(&mut self, x: &DVector<f64>) {
        self.x.copy_from(x);
    }

    fn params(&self) -> DVector<f64> {
        self.x.clone()
    }

    fn residuals(&self) -> Option<DVector<f64>> {
        let r = self.function().eval::<f64>(self.x.as_slice());
        if r.len() != self.m {
            let during = "a residual evaluation".to_string();
            self.fail(Error::OutputChanged {
                first: self.m,
                found: r.len(),
                during,
            });
            return None;
        }
        Some(DVector::from_vec(r))
    }

    fn jacobian(&self) -> Option<DMatrix<f64>> {
        match self.prepared.borrow_mut().jacobian(self.x.as_slice()) {
            Ok(j) if j.matrix.nrows() == self.m => {
                *self.last_plan.borrow_mut() = Some(j.plan);
                Some(super::to_solver(j.matrix))
            }
            Ok(j) => {
                let during = "a Jacobian".to_string();
                let found = j.matrix.nrows();
                self.fail(Error::OutputChanged {
                    first: self.m,
                    found,
                    during,
                });
                None
            }
            Err(e) => {
                self.fail(e);
                None
            }
        }
    }
}
