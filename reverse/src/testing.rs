//! Recordings the unit tests share.

use crate::{Recording, Tape, Var};

/// Rosenbrock's function of n inputs (the benchmark's input, `workloads::rosenbrock` written
/// out), recorded on a replayable tape and re-evaluated once, so that its prepared program and
/// its schedule are built; with its inputs and its value.
pub fn rosenbrock_replayed(n: usize) -> (Recording, Vec<Var>, Var) {
    let x0: Vec<f64> = (0..n).map(|i| 0.5 + 0.01 * (i % 100) as f64).collect();
    let tape = Tape::replayable();
    let x = tape.vars(&x0);
    let y: Var = x
        .windows(2)
        .map(|w| {
            let (a, b) = (Var::constant(1.0) - w[0], w[1] - w[0] * w[0]);
            a * a + b * b * 100.0
        })
        .sum();
    let mut rec = tape.finish();
    rec.reevaluate(&x0)
        .expect("the recorded point passes its guards");
    (rec, x, y)
}
