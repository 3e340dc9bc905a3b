//! Minimising Rosenbrock's function of 100 variables with argmin's solvers, fed this library's
//! derivatives (`jacobian::solvers::Problem`): Newton's method with the exact Hessian, and
//! L-BFGS with the gradient, printing the iterations.
//!
//! Newton's method solves H Δx = −∇f at each step, so it needs the Hessian, 100×100 here; this
//! library computes it (the plan picks the pair of modes). Its convergence is local and
//! quadratic: from (1.2, …, 1.2) the gradient falls to 10⁻¹⁰ in a few steps, the exponent
//! doubling each time; from the classic start (−1.2, 1, −1.2, 1, …) its full steps wander, and a
//! globalised Newton is needed. L-BFGS builds a curvature model from gradients alone (one
//! reverse sweep each): many more, cheaper iterations, and it gets there from the classic start.
//!
//! Run: `cargo run --release --example solvers`

use jacobian::solvers::Problem;
use jacobian::solvers::argmin::core::observers::{Observe, ObserverMode};
use jacobian::solvers::argmin::core::{Error, Executor, KV, State};
use jacobian::solvers::argmin::solver::linesearch::MoreThuenteLineSearch;
use jacobian::solvers::argmin::solver::newton::Newton;
use jacobian::solvers::argmin::solver::quasinewton::LBFGS;
use jacobian::solvers::nalgebra::DVector;
use jacobian::{Function, Op};
use std::sync::{Arc, Mutex};

/// Rosenbrock's function, Σᵢ (1 − xᵢ)² + 100 (xᵢ₊₁ − xᵢ²)²: minimum 0 at x = (1, …, 1).
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

/// The classic starting point: −1.2, 1, −1.2, 1, …
fn classic_start(n: usize) -> DVector<f64> {
    DVector::from_fn(n, |i, _| if i % 2 == 0 { -1.2 } else { 1.0 })
}

/// A start in the basin where Newton's full steps converge: 1.2, …, 1.2.
fn near_start(n: usize) -> DVector<f64> {
    DVector::from_element(n, 1.2)
}

/// One iteration as the example prints it.
#[derive(Clone, Copy, Debug)]
struct Iteration {
    /// The iteration number (0: the starting point).
    iteration: u64,
    /// f at the iterate.
    cost: f64,
    /// ‖∇f‖ at the iterate.
    gradient_norm: f64,
}

/// An argmin observer that keeps f and ‖∇f‖ at every iterate.
#[derive(Clone, Default)]
struct Trace(Arc<Mutex<Vec<Iteration>>>);

impl Trace {
    fn record(&self, x: &DVector<f64>) {
        let (cost, g) = jacobian::gradient(&Rosenbrock, x.as_slice()).expect("n > 0");
        let gradient_norm = g.iter().map(|v| v * v).sum::<f64>().sqrt();
        let mut its = self.0.lock().expect("not poisoned");
        let iteration = its.len() as u64;
        its.push(Iteration {
            iteration,
            cost,
            gradient_norm,
        });
    }

    fn take(&self) -> Vec<Iteration> {
        std::mem::take(&mut self.0.lock().expect("not poisoned"))
    }
}

impl<I: State<Param = DVector<f64>>> Observe<I> for Trace {
    fn observe_init(&mut self, _: &str, state: &I, _: &KV) -> Result<(), Error> {
        self.record(state.get_param().expect("a starting point"));
        Ok(())
    }
    fn observe_iter(&mut self, state: &I, _: &KV) -> Result<(), Error> {
        self.record(state.get_param().expect("an iterate"));
        Ok(())
    }
}

/// The iterates of Newton's method (full steps, argmin's `Newton`) on Rosenbrock from `x0`,
/// with the exact Hessian, until ‖∇f‖ < 10⁻¹⁰ or `max_iters`.
fn by_newton(x0: DVector<f64>, max_iters: u64) -> Vec<Iteration> {
    let trace = Trace::default();
    Executor::new(Problem::new(Rosenbrock), Newton::<f64>::new())
        .configure(|s| s.param(x0).max_iters(max_iters))
        .add_observer(trace.clone(), ObserverMode::Always)
        .run()
        .expect("Newton's method runs");
    until_converged(trace.take(), 1e-10)
}

/// The iterates of L-BFGS (memory 7, Moré–Thuente line search) on Rosenbrock from `x0`, until
/// ‖∇f‖ < 10⁻⁸ or `max_iters`.
fn by_lbfgs(x0: DVector<f64>, max_iters: u64) -> Vec<Iteration> {
    let trace = Trace::default();
    let solver = LBFGS::new(MoreThuenteLineSearch::new(), 7)
        .with_tolerance_grad(1e-8)
        .and_then(|s| s.with_tolerance_cost(0.0)) // stop on the gradient, not on a flat cost
        .expect("valid tolerances");
    Executor::new(Problem::new(Rosenbrock), solver)
        .configure(|s| s.param(x0).max_iters(max_iters))
        .add_observer(trace.clone(), ObserverMode::Always)
        .run()
        .expect("L-BFGS runs");
    until_converged(trace.take(), 1e-8)
}

/// The iterations up to the first whose gradient norm is below `tol` (argmin's Newton has no
/// stopping test of its own: past convergence it repeats the solution).
fn until_converged(mut its: Vec<Iteration>, tol: f64) -> Vec<Iteration> {
    if let Some(k) = its.iter().position(|it| it.gradient_norm < tol) {
        its.truncate(k + 1);
    }
    its
}

fn print(name: &str, its: &[Iteration]) {
    println!("{name}:");
    println!("{:>9} {:>14} {:>12}", "iteration", "f", "‖∇f‖");
    let show = |it: &Iteration| {
        println!(
            "{:>9} {:>14.6e} {:>12.3e}",
            it.iteration, it.cost, it.gradient_norm
        )
    };
    if its.len() <= 24 {
        its.iter().for_each(show);
    } else {
        // Every tenth of a long run, and its end.
        its.iter().step_by(its.len() / 10).for_each(show);
        show(its.last().expect("not empty"));
    }
}

fn main() {
    // The test profile is unoptimised: under test, the same runs at a smaller n.
    let n = if cfg!(test) { 20 } else { 100 };
    println!("Rosenbrock, n = {n}\n");
    let newton = by_newton(near_start(n), 50);
    print(
        "Newton's method (argmin), exact Hessian, from (1.2, …, 1.2)",
        &newton,
    );
    println!();
    let lbfgs = by_lbfgs(near_start(n), 5000);
    print(
        "L-BFGS (argmin, memory 7), gradient by one reverse sweep, from (1.2, …, 1.2)",
        &lbfgs,
    );
    println!();
    let lbfgs = by_lbfgs(classic_start(n), 5000);
    print(
        "L-BFGS from the classic start (−1.2, 1, −1.2, 1, …)",
        &lbfgs,
    );
    println!();
    let wander = by_newton(classic_start(n), 80);
    let last = wander.last().expect("not empty");
    println!(
        "Newton's full steps from the classic start: f = {:.3e} after {} steps (no globalisation)",
        last.cost, last.iteration
    );
}

#[cfg(test)]
mod tests {
    use super::{by_lbfgs, by_newton, classic_start, near_start};

    #[test]
    fn runs() {
        super::main();
    }

    #[test]
    fn newton_and_lbfgs_minimise_rosenbrock_100() {
        let newton = by_newton(near_start(100), 50);
        let last = newton.last().unwrap();
        assert!(
            last.gradient_norm < 1e-10 && last.cost < 1e-20,
            "{newton:?}"
        );
        // Quadratic convergence at the end: each gradient norm below 100 times the square of the
        // last.
        let tail: Vec<f64> = newton
            .iter()
            .map(|it| it.gradient_norm)
            .filter(|&g| g < 1e-1)
            .collect();
        assert!(tail.len() >= 2, "{newton:?}");
        assert!(
            tail.windows(2).all(|w| w[1] < 100.0 * w[0] * w[0]),
            "{tail:?}"
        );
        let lbfgs = by_lbfgs(near_start(100), 5000);
        // Newton's method takes fewer (but dearer) iterations.
        assert!(
            newton.len() * 2 < lbfgs.len(),
            "{} against {}",
            newton.len(),
            lbfgs.len()
        );
        let far = by_lbfgs(classic_start(100), 5000);
        let last = far.last().unwrap();
        assert!(last.gradient_norm < 1e-8 && last.cost < 1e-15, "{last:?}");
    }
}
