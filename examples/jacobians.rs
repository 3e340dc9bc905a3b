//! The main example: the Jacobian of a wide and of a tall function, and the plan for each.
//!
//! A forward sweep gives a column of the Jacobian, a reverse sweep a row. A *wide* function
//! (many inputs, few outputs) has few rows: reverse mode wins. A *tall* one (few inputs, many
//! outputs) has few columns: forward mode wins.
//!
//! Run: `cargo run --release --example jacobians`

use jacobian::{Function, Mode, Op, jacobian, jacobian_with};
use std::time::{Duration, Instant};

/// Wide: f: R¹⁰⁰⁰ → R², a loss and a penalty.
struct Wide;
impl Function for Wide {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let loss = x.windows(2).map(|w| (w[1] - w[0] * w[0]).powi(2)).sum();
        let penalty = x.iter().map(|&v| v.abs()).sum::<T>().sqrt();
        vec![loss, penalty]
    }
}

/// Tall: a curve through R⁵⁰⁰ with 3 parameters, g(t) = a·sin(b·tₖ) + c·tₖ.
struct Tall;
impl Function for Tall {
    fn eval<T: Op>(&self, p: &[T]) -> Vec<T> {
        (0..500)
            .map(|k| {
                let t = T::constant(k as f64 / 100.0);
                p[0] * (p[1] * t).sin() + p[2] * t
            })
            .collect()
    }
}

/// The median time of 11 runs (the first run also warms caches and the tape's buffer).
fn median_time<R>(mut run: impl FnMut() -> R) -> Duration {
    let mut times: Vec<Duration> = (0..11)
        .map(|_| {
            let start = Instant::now();
            std::hint::black_box(run());
            start.elapsed()
        })
        .collect();
    times.sort();
    times[5]
}

fn show<F: Function + Sync>(name: &str, f: &F, x: &[f64]) -> Result<(), jacobian::Error> {
    let j = jacobian(f, x)?;
    let auto = median_time(|| jacobian(f, x));
    println!("{name}: f: R^{} → R^{}", j.plan.n, j.plan.m);
    println!("  plan: {}", j.plan);
    for mode in [Mode::Forward, Mode::Reverse] {
        let forced = jacobian_with(f, x, mode)?;
        let took = median_time(|| jacobian_with(f, x, mode));
        let same = (&forced.matrix - &j.matrix).amax();
        println!(
            "  {:<7} {:>4} sweeps  {:>9.1?}  (max difference from the plan's matrix: {same:.1e})",
            format!("{mode:?}"),
            forced.plan.sweeps,
            took
        );
    }
    let row: Vec<String> = j
        .matrix
        .row(j.plan.m - 1)
        .iter()
        .take(3)
        .map(|v| format!("{v:.4}"))
        .collect();
    println!(
        "  the plan's mode (median of 11 runs) took {auto:.1?}; last row begins [{}]\n",
        row.join(", ")
    );
    Ok(())
}

fn main() -> Result<(), jacobian::Error> {
    let x: Vec<f64> = (0..1000).map(|i| 0.5 + 0.001 * i as f64).collect();
    show("wide", &Wide, &x)?;
    show("tall", &Tall, &[1.5, 2.0, 0.3])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn runs() {
        super::main().unwrap();
    }
}
