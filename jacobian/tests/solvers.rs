//! The solver adapters (`jacobian::solvers`): each derivative they hand over equals this
//! library's driver at the same point, and the solvers converge on problems with known answers.

use jacobian::solvers::argmin::core::{CostFunction, Gradient, Hessian, Jacobian, Operator};
use jacobian::solvers::argmin::core::{Executor, State};
use jacobian::solvers::argmin::solver::gaussnewton::GaussNewton;
use jacobian::solvers::argmin::solver::linesearch::MoreThuenteLineSearch;
use jacobian::solvers::argmin::solver::quasinewton::LBFGS;
use jacobian::solvers::argmin::solver::trustregion::{Steihaug, TrustRegion};
use jacobian::solvers::levenberg_marquardt::{LeastSquaresProblem, LevenbergMarquardt};
use jacobian::solvers::nalgebra::{DMatrix, DVector};
use jacobian::solvers::{LeastSquares, Problem};
use jacobian::{Function, Mode, Op, Replay, jacobian_with};

/// A matrix of the library's nalgebra (0.35) as one of the solvers' (0.34).
fn solver_side(m: nalgebra::DMatrix<f64>) -> DMatrix<f64> {
    DMatrix::from_column_slice(m.nrows(), m.ncols(), m.as_slice())
}

/// Residuals of a circle (cx, cy, r) through points: the distance to the centre minus r.
struct Circle {
    points: Vec<(f64, f64)>,
}
impl Function for Circle {
    fn eval<T: Op>(&self, p: &[T]) -> Vec<T> {
        let (cx, cy, r) = (p[0], p[1], p[2]);
        let d = |&(x, y): &(f64, f64)| (T::constant(x) - cx).hypot(T::constant(y) - cy);
        self.points.iter().map(|q| d(q) - r).collect()
    }
    fn sizes(&self) -> Option<(usize, usize)> {
        Some((3, self.points.len()))
    }
}

/// Points on the circle of centre (1, −2) and radius 3, moved off it by a deterministic
/// ±0.01 wobble.
fn circle() -> Circle {
    let points = (0..40)
        .map(|k| {
            let t = k as f64 * 0.37;
            let wobble = 0.01 * ((k * 7919 % 13) as f64 / 6.0 - 1.0);
            (
                1.0 + (3.0 + wobble) * t.cos(),
                -2.0 + (3.0 + wobble) * t.sin(),
            )
        })
        .collect();
    Circle { points }
}

/// Rosenbrock's function of n variables.
struct Rosenbrock;
impl Function for Rosenbrock {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let terms = x.windows(2).map(|w| {
            let (a, b) = (T::one() - w[0], w[1] - w[0] * w[0]);
            a * a + b * b * 100.0
        });
        vec![terms.sum()]
    }
}

#[test]
fn least_squares_hands_over_the_drivers_jacobian() {
    let x0 = [0.5, 0.5, 1.0];
    let mut problem = LeastSquares::new(circle(), &x0).unwrap();
    let x = DVector::from_vec(vec![0.9, -1.8, 2.5]);
    problem.set_params(&x);
    assert_eq!(problem.params(), x);
    let r = problem.residuals().unwrap();
    assert_eq!(r.as_slice(), circle().eval::<f64>(x.as_slice()).as_slice());
    let j = problem.jacobian().unwrap();
    let plan = problem.plan().unwrap();
    // 3 parameters, 40 residuals: one forward sweep of 3 tangents.
    assert_eq!(plan.mode, Mode::Forward);
    assert_eq!(
        j,
        solver_side(
            jacobian_with(&circle(), x.as_slice(), Mode::Forward)
                .unwrap()
                .matrix
        )
    );
    assert!(problem.error().is_none());
}

/// With the Jacobian forced to reverse mode, one recording is re-evaluated at each step.
#[test]
fn least_squares_in_reverse_mode_replays_its_recording() {
    let mut problem = LeastSquares::with_mode(circle(), &[0.5, 0.5, 1.0], Mode::Reverse).unwrap();
    for x in [[0.9, -1.8, 2.5], [1.1, -2.1, 3.2]] {
        problem.set_params(&DVector::from_vec(x.to_vec()));
        let j = problem.jacobian().unwrap();
        assert_eq!(problem.plan().unwrap().replay, Replay::Reevaluated);
        let fresh = jacobian_with(&circle(), &x, Mode::Reverse).unwrap();
        assert_eq!(j, solver_side(fresh.matrix));
    }
}

#[test]
fn levenberg_marquardt_fits_the_circle() {
    let problem = LeastSquares::new(circle(), &[0.0, 0.0, 1.0]).unwrap();
    let (fitted, report) = LevenbergMarquardt::new().minimize(problem);
    assert!(
        report.termination.was_successful(),
        "{:?}",
        report.termination
    );
    let p = fitted.params();
    assert!(
        (p[0] - 1.0).abs() < 0.01 && (p[1] + 2.0).abs() < 0.01,
        "centre {p}"
    );
    assert!((p[2] - 3.0).abs() < 0.01, "radius {}", p[2]);
    // At the optimum the gradient Jᵀr of ½‖r‖² vanishes.
    let j = fitted.jacobian().unwrap();
    let g = j.transpose() * fitted.residuals().unwrap();
    assert!(g.norm() < 1e-8, "‖Jᵀr‖ = {}", g.norm());
}

/// A residual function whose length changes: the solver stops, and the problem says why.
#[test]
fn least_squares_reports_a_changing_output_length() {
    struct Shifty;
    impl Function for Shifty {
        fn eval<T: Op>(&self, p: &[T]) -> Vec<T> {
            let m = if p[0].value() > 0.5 { 3 } else { 2 };
            vec![p[0] - T::one(); m]
        }
    }
    let mut problem = LeastSquares::new(Shifty, &[0.0]).unwrap();
    problem.set_params(&DVector::from_vec(vec![1.0]));
    assert!(problem.residuals().is_none());
    let e = problem.error().unwrap().to_string();
    assert!(
        e.contains("returned 3 outputs during a residual evaluation, but 2 before"),
        "{e}"
    );
}

#[test]
fn argmin_problem_hands_over_the_drivers_derivatives() {
    let x = DVector::from_vec(vec![0.3, -0.7, 1.2, 0.1]);
    let p = Problem::new(Rosenbrock);
    let (value, gradient) = jacobian::gradient(&Rosenbrock, x.as_slice()).unwrap();
    assert_eq!(p.cost(&x).unwrap(), value);
    assert_eq!(p.gradient(&x).unwrap().as_slice(), gradient.as_slice());
    let h = jacobian::hessian(&Rosenbrock, x.as_slice()).unwrap();
    assert_eq!(p.hessian(&x).unwrap(), solver_side(h.matrix));
    let j = jacobian::jacobian(&Rosenbrock, x.as_slice()).unwrap();
    assert_eq!(p.jacobian(&x).unwrap(), solver_side(j.matrix));
    assert_eq!(p.apply(&x).unwrap().as_slice(), &[value]);
}

/// For residuals, the cost is ½‖r‖² and the gradient Jᵀr; a Hessian is refused.
#[test]
fn argmin_problem_of_residuals() {
    let p = Problem::new(circle());
    let x = DVector::from_vec(vec![0.9, -1.8, 2.5]);
    let r = DVector::from_vec(circle().eval::<f64>(x.as_slice()));
    assert_eq!(p.cost(&x).unwrap(), 0.5 * r.norm_squared());
    let j = solver_side(jacobian::jacobian(&circle(), x.as_slice()).unwrap().matrix);
    let expected = j.transpose() * &r;
    let g = p.gradient(&x).unwrap();
    assert!((g - &expected).norm() <= 1e-13 * expected.norm(), "Jᵀr");
    assert_eq!(p.apply(&x).unwrap(), r);
    let e = p.hessian(&x).unwrap_err().to_string();
    assert!(e.contains("1 output"), "{e}");
    let e = p
        .cost(&DVector::from_vec(vec![1.0, 2.0]))
        .unwrap_err()
        .to_string();
    assert_eq!(e, "input has length 2, but the function takes 3 inputs");
}

#[test]
fn lbfgs_minimises_rosenbrock() {
    let solver = LBFGS::new(MoreThuenteLineSearch::new(), 7);
    let run = Executor::new(Problem::new(Rosenbrock), solver)
        .configure(|s| s.param(DVector::from_element(10, -0.5)).max_iters(500))
        .run()
        .unwrap();
    let x = run.state().get_best_param().unwrap();
    assert!((x - DMatrix::from_element(10, 1, 1.0)).norm() < 1e-6, "{x}");
}

/// A trust-region Newton method (Steihaug's CG inside), with the exact Hessian.
#[test]
fn trust_region_minimises_rosenbrock() {
    let solver = TrustRegion::new(Steihaug::new().with_max_iters(20));
    let run = Executor::new(Problem::new(Rosenbrock), solver)
        .configure(|s| s.param(DVector::from_vec(vec![-1.2, 1.0])).max_iters(200))
        .run()
        .unwrap();
    let x = run.state().get_best_param().unwrap();
    assert!((x - DVector::from_element(2, 1.0)).norm() < 1e-8, "{x}");
}

#[test]
fn gauss_newton_fits_the_circle() {
    let run = Executor::new(Problem::new(circle()), GaussNewton::<f64>::new())
        .configure(|s| {
            s.param(DVector::from_vec(vec![0.5, -1.0, 2.0]))
                .max_iters(50)
        })
        .run()
        .unwrap();
    let p = run.state().get_best_param().unwrap();
    let lm =
        LevenbergMarquardt::new().minimize(LeastSquares::new(circle(), &[0.0, 0.0, 1.0]).unwrap());
    // Both solvers find the same least-squares circle.
    assert!(
        (p - lm.0.params()).norm() < 1e-8,
        "{p} against {}",
        lm.0.params()
    );
}
