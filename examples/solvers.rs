//! Rosenbrock's function of 100 variables minimised by argmin's Newton method, with this
//! library's Hessian, and by its L-BFGS, with this library's gradient, printing the iterations
//! (`jacobian::solvers::Problem`). See `examples::minimise`.
//!
//! Run: `cargo run --release --example solvers`

use examples::minimise::{Iteration, by_lbfgs, by_newton, classic_start, near_start};

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
    println!("Rosenbrock, n = 100\n");
    let newton = by_newton(near_start(100), 50);
    print(
        "Newton's method (argmin), exact Hessian, from (1.2, …, 1.2)",
        &newton,
    );
    println!();
    let lbfgs = by_lbfgs(near_start(100), 5000);
    print(
        "L-BFGS (argmin, memory 7), gradient by one reverse sweep, from (1.2, …, 1.2)",
        &lbfgs,
    );
    println!();
    let lbfgs = by_lbfgs(classic_start(100), 5000);
    print(
        "L-BFGS from the classic start (−1.2, 1, −1.2, 1, …)",
        &lbfgs,
    );
    println!();
    let wander = by_newton(classic_start(100), 80);
    let last = wander.last().expect("not empty");
    println!(
        "Newton's full steps from the classic start: f = {:.3e} after {} steps (no globalisation)",
        last.cost, last.iteration
    );
}
