//! GradBench's nested problems agree across the four pairs of modes (ff, fr, rf, rr), and with
//! the values GradBench expects.

use examples::nested_ad::{Pair, particle, saddle};

#[test]
fn saddle_agrees_in_all_four_pairs() {
    let all = Pair::ALL.map(saddle);
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
    let all = Pair::ALL.map(particle);
    for (pair, w) in Pair::ALL.iter().zip(all) {
        assert!((w - all[0]).abs() <= 1e-12, "{pair}: {w} vs {}", all[0]);
        // GradBench's expected output (evals/particle/run.py).
        assert!((w - 0.2071918746486116).abs() <= 1e-12, "{pair}: {w}");
    }
}
