use crate::{Error, Function};
use argmin::core::{CostFunction, Gradient, Hessian, Jacobian, Operator};
use nalgebra_v0_34::{DMatrix, DVector};

/// A [`Function`] as an [`argmin`] problem, with its derivatives computed by this library, so
/// that argmin's solvers (L-BFGS, Newton, trust region, Gauss–Newton, …) run on it unchanged.
///
/// Parameters are nalgebra `DVector<f64>`, matrices `DMatrix<f64>` (argmin-math's
/// `nalgebra_v0_34` backend). What each trait computes:
///
/// | trait | one output f | m outputs r (residuals) |
/// |---|---|---|
/// | `CostFunction` | f(x) | ½‖r(x)‖² |
/// | `Gradient` | ∇f, one reverse sweep ([`gradient`](crate::gradient)) | Jᵀr, one reverse sweep ([`vjp`](crate::vjp)) |
/// | `Hessian` | ∇²f ([`hessian`](crate::hessian), the pair of modes planned) | an error: use Gauss–Newton |
/// | `Jacobian` | J, the mode planned ([`jacobian`](crate::jacobian)) | J |
/// | `Operator` | f(x) as a vector | r(x) |
///
/// Each call plans afresh, so a gradient is a reverse sweep and a Jacobian the cheaper of the
/// two modes, at every point the solver asks for. Errors (a wrong-sized parameter vector, a
/// Hessian of several outputs) come back as argmin errors carrying this crate's message.
///
/// ```
/// use jacobian::solvers::Problem;
/// use jacobian::solvers::argmin::core::{Executor, State};
/// use jacobian::solvers::argmin::solver::newton::Newton;
/// use jacobian::{Function, Op};
/// use jacobian::solvers::nalgebra::DVector;
///
/// /// (x₀ − 1)² + 10·(x₁ − x₀²)².
/// struct Valley;
/// impl Function for Valley {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         let (a, b) = (x[0] - T::one(), x[1] - x[0] * x[0]);
///         vec![a * a + b * b * 10.0]
///     }
/// }
///
/// let run = Executor::new(Problem::new(Valley), Newton::<f64>::new())
///     .configure(|s| s.param(DVector::from_vec(vec![-1.0, 2.0])).max_iters(20))
///     .run()?;
/// let x = run.state().get_best_param().unwrap();
/// assert!((x[0] - 1.0).abs() < 1e-12 && (x[1] - 1.0).abs() < 1e-12);
/// # Ok::<(), jacobian::solvers::argmin::core::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct Problem<F>(pub F);

impl<F> Problem<F> {
    /// The problem of `f`.
    pub fn new(f: F) -> Self {
        Problem(f)
    }
}

fn check<F: Function>(f: &F, x: &DVector<f64>) -> Result<(), Error> {
    f.check_input(x.len())
}

impl<F: Function> CostFunction for Problem<F> {
    type Param = DVector<f64>;
    type Output = f64;

    fn cost(&self, x: &DVector<f64>) -> Result<f64, argmin::core::Error> {
        check(&self.0, x)?;
        let y = self.0.eval::<f64>(x.as_slice());
        Ok(match y.as_slice() {
            [f] => *f,
            r => 0.5 * r.iter().map(|v| v * v).sum::<f64>(),
        })
    }
}

impl<F: Function> Gradient for Problem<F> {
    type Param = DVector<f64>;
    type Gradient = DVector<f64>;

    fn gradient(&self, x: &DVector<f64>) -> Result<DVector<f64>, argmin::core::Error> {
        check(&self.0, x)?;
        let r = self.0.eval::<f64>(x.as_slice());
        let g = if r.len() == 1 {
            crate::gradient(&self.0, x.as_slice())?.1
        } else {
            // ∇ ½‖r‖² = Jᵀr: one reverse sweep seeded with the residuals.
            crate::vjp(&self.0, x.as_slice(), &r)?.1
        };
        Ok(DVector::from_vec(g))
    }
}

impl<F: Function> Hessian for Problem<F> {
    type Param = DVector<f64>;
    type Hessian = DMatrix<f64>;

    fn hessian(&self, x: &DVector<f64>) -> Result<DMatrix<f64>, argmin::core::Error> {
        check(&self.0, x)?;
        Ok(super::to_solver(
            crate::hessian(&self.0, x.as_slice())?.matrix,
        ))
    }
}

impl<F: Function + Sync> Jacobian for Problem<F> {
    type Param = DVector<f64>;
    type Jacobian = DMatrix<f64>;

    fn jacobian(&self, x: &DVector<f64>) -> Result<DMatrix<f64>, argmin::core::Error> {
        Ok(super::to_solver(
            crate::jacobian(&self.0, x.as_slice())?.matrix,
        ))
    }
}

impl<F: Function> Operator for Problem<F> {
    type Param = DVector<f64>;
    type Output = DVector<f64>;

    fn apply(&self, x: &DVector<f64>) -> Result<DVector<f64>, argmin::core::Error> {
        check(&self.0, x)?;
        Ok(DVector::from_vec(self.0.eval::<f64>(x.as_slice())))
    }
}
