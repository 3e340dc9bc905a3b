//! Checkpointing on the long loops of the benchmarks, 10⁵ steps each: the GradBench ODE and a
//! recurrent layer. The gradient is the whole recording's bit for bit, with at most 1/20 of its
//! memory; and it is right (against the ODE's exact solution, and forward mode on the RNN).
//!
//! The test command builds without optimisation, where 10⁵ steps took 16.5 s (ODE) and 9.9 s
//! (RNN) of the command's CPU budget: there the loops run 10⁴ steps, with the same checks.
//! `cargo test --release -p workloads --test checkpoint` runs the full 10⁵.

use forward::Dual;
use reverse::checkpoint::{
    LoopGradient, Recurrence, advances, checkpointed_gradient, recorded_gradient, run,
};
use workloads::gradbench::Ode;
use workloads::{Rnn, assert_close};

const STEPS: usize = if cfg!(debug_assertions) {
    10_000
} else {
    100_000
};

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// The checkpointed gradients for some slot counts, each asserted equal to the whole recording
/// bit for bit and at most 1/20 of its memory (tape and checkpoints together); returns the whole
/// recording's.
fn check_long_loop<F: Recurrence>(f: &F, p: &[f64], s0: &[f64], slots: &[usize]) -> LoopGradient {
    let whole = recorded_gradient(f, p, s0, STEPS).unwrap();
    for &slots in slots {
        let saved = checkpointed_gradient(f, p, s0, STEPS, slots).unwrap();
        assert_eq!(
            saved.value.to_bits(),
            whole.value.to_bits(),
            "{slots} slots"
        );
        assert_eq!(
            bits(&saved.wrt_state),
            bits(&whole.wrt_state),
            "{slots} slots"
        );
        assert_eq!(
            bits(&saved.wrt_params),
            bits(&whole.wrt_params),
            "{slots} slots"
        );
        let s = saved.stats;
        let memory = s.peak_tape_bytes + s.checkpoint_bytes;
        assert!(
            memory * 20 <= whole.stats.peak_tape_bytes,
            "{slots} slots: {memory} bytes against {}",
            whole.stats.peak_tape_bytes
        );
        assert_eq!(s.advances, advances(STEPS, slots));
        assert_eq!((s.steps, s.slots_used), (STEPS, slots));
    }
    whole
}

#[test]
fn ode_over_1e5_steps() {
    let f = Ode::new(10, STEPS);
    let (x, y0) = (f.input(), f.initial_state());
    let whole = check_long_loop(&f, &x, &y0, &[50, 200]);
    // RK4's error on this polynomial solution is O(h⁴) ≈ 10⁻¹⁹: what is left is rounding over
    // 10⁵ steps.
    assert_close(&[whole.value], &[Ode::solution(&x)], 1e-11, "y(2)");
    assert_close(
        &whole.wrt_params,
        &Ode::solution_gradient(&x),
        1e-11,
        "∂y/∂x",
    );
}

#[test]
fn rnn_over_1e5_steps() {
    let f = Rnn::new(8);
    let (p, h0) = (f.input(), f.initial_state());
    let whole = check_long_loop(&f, &p, &h0, &[50]);
    assert!(whole.wrt_params.iter().all(|g| g.is_finite() && *g != 0.0));
}

/// The RNN's gradient on a shorter loop against forward mode, one tangent per input.
#[test]
fn rnn_gradient_matches_forward_mode() {
    let (f, steps) = (Rnn::new(4), 300);
    let (p, h0) = (f.input(), f.initial_state());
    let g = checkpointed_gradient(&f, &p, &h0, steps, 6).unwrap();
    let inputs = [p.as_slice(), h0.as_slice()].concat();
    let tangents: Vec<f64> = (0..inputs.len())
        .map(|j| {
            let x: Vec<Dual<f64>> = (0..inputs.len())
                .map(|i| Dual::new(inputs[i], if i == j { 1.0 } else { 0.0 }))
                .collect();
            let (p, h0) = x.split_at(p.len());
            run(&f, p, h0, steps).tangent
        })
        .collect();
    let reverse = [g.wrt_params, g.wrt_state].concat();
    assert_close(&reverse, &tangents, 1e-12, "reverse vs forward");
}
