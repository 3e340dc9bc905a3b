//! Derivatives of derivatives in every pair of modes: the two nested problems of GradBench
//! (`saddle` and `particle`, from Pearlmutter and Siskind's nested-AD benchmarks).
//!
//! An inner gradient runs inside an outer one, and each can be forward or reverse mode: ff, fr,
//! rf, rr (outer letter first). The levels are apart by type: the inner derivative of a
//! forward-over-reverse run works on `Var<Dual<f64>>`, of reverse-over-reverse on
//! `Var<Var<f64>>`, so a tool cannot mix up whose perturbation is whose.
//!
//! * **saddle**: from p₁ = p₂ = (1, 1), min over p₁ of max over p₂ of
//!   f = (p₁₀² + p₁₁²) − (p₂₀² + p₂₁²), by gradient descent outside and gradient ascent inside;
//!   the outer gradient differentiates through the whole inner ascent.
//! * **particle**: a charged particle starts at (0, 8) with velocity (0.75, 0) and moves by Euler
//!   steps in the field of charges at (10, 10 − w) and (10, 0), its acceleration the (inner)
//!   gradient of the potential Σ 1/‖x − c‖; the objective is the squared x where it crosses
//!   y = 0, and w is found by gradient descent (the outer gradient differentiates through the
//!   time loop, and through every inner gradient in it).
//!
//! Both problems are written once over the number type, in the GradBench tool's
//! `gradbench/src/evals/nested.rs` (read it beside this example): a gradient "in a mode" is a
//! `Gradient` that takes an `Objective` whose constant data are numbers of the level outside
//! (`T`), evaluates it on the level inside (`Dual<T>` or `Var<T>`), and returns the gradient as
//! `T`s, so that the level outside can differentiate it again.
//!
//! Run: `cargo run --release --example nested`

use wengert_gradbench::evals::nested::{Pair, particle, saddle};

fn main() {
    println!("saddle: min over p₁ of max over p₂ of (p₁₀² + p₁₁²) − (p₂₀² + p₂₁²), from (1, 1)");
    for pair in Pair::ALL {
        let r = saddle(pair, [1.0, 1.0]);
        println!(
            "  {pair}: p₁ = ({:.15e}, {:.15e}), p₂ = ({:.15e}, {:.15e})",
            r[0], r[1], r[2], r[3]
        );
    }
    println!("particle: the w that brings the particle down at x = 0, from w = 0");
    for pair in Pair::ALL {
        println!("  {pair}: w = {:.16}", particle(pair, 0.0));
    }
    println!(
        "(GradBench's expected values: saddle 8.246324826140356e-06 four times, particle 0.2071918746486116)"
    );
}

#[cfg(test)]
mod tests {
    use super::{Pair, particle, saddle};

    #[test]
    fn runs() {
        super::main();
    }

    #[test]
    fn saddle_agrees_in_all_four_pairs() {
        let all = Pair::ALL.map(|p| saddle(p, [1.0, 1.0]));
        for (pair, r) in Pair::ALL.iter().zip(&all) {
            for k in 0..4 {
                assert!(
                    (r[k] - all[0][k]).abs() <= 1e-12,
                    "{pair}: {r:?} vs {:?}",
                    all[0]
                );
                // GradBench's expected output (evals/saddle/run.py).
                assert!(
                    (r[k] - 8.246324826140356e-06).abs() <= 1e-12,
                    "{pair}: {r:?}"
                );
            }
        }
    }

    #[test]
    fn particle_agrees_in_all_four_pairs() {
        let all = Pair::ALL.map(|p| particle(p, 0.0));
        for (pair, w) in Pair::ALL.iter().zip(all) {
            assert!((w - all[0]).abs() <= 1e-12, "{pair}: {w} vs {}", all[0]);
            // GradBench's expected output (evals/particle/run.py).
            assert!((w - 0.2071918746486116).abs() <= 1e-12, "{pair}: {w}");
        }
    }
}
