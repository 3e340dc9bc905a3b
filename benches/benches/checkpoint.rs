//! Checkpointing on long loops: the GradBench ODE (n = 10, 10⁵ RK4 steps) and a recurrent layer
//! (k = 8 units, 10⁵ steps).
//!
//! Ids per group: `f64` (the loop in plain `f64`, the unit of the ratios), `recorded` (one
//! recording of the whole loop and one sweep), `recorded_buffers_kept` (the same with the
//! thread allowed to keep the tape's buffers between gradients, so that no page is faulted in
//! afresh) and `checkpointed_slots=<s>` (the binomial schedule with s slots). Before timing, each checkpointed gradient is checked equal to the
//! recorded one bit for bit, and the memory of both is printed.
//!
//! ```text
//! RAYON_NUM_THREADS=1 cargo bench -p benches --bench checkpoint -- --warm-up-time 1 --measurement-time 2
//! ```

use criterion::{Criterion, criterion_group, criterion_main};
use reverse::checkpoint::{Recurrence, checkpointed_gradient, recorded_gradient, run};
use std::hint::black_box;
use workloads::Rnn;
use workloads::gradbench::Ode;

const STEPS: usize = 100_000;
const SLOTS: [usize; 2] = [50, 200];

fn bench_loop<F: Recurrence>(c: &mut Criterion, name: &str, f: &F, p: &[f64], s0: &[f64]) {
    let whole = recorded_gradient(f, p, s0, STEPS).unwrap();
    println!(
        "{name}: recorded: tape {:.1} MB",
        whole.stats.peak_tape_bytes as f64 / 1e6
    );
    for slots in SLOTS {
        let saved = checkpointed_gradient(f, p, s0, STEPS, slots).unwrap();
        assert_eq!(saved.wrt_params, whole.wrt_params, "{name}, {slots} slots");
        assert_eq!(saved.wrt_state, whole.wrt_state, "{name}, {slots} slots");
        let s = saved.stats;
        println!(
            "{name}: checkpointed, {slots} slots: tape {} B + checkpoints {} B ({:.0}× less), {} steps advanced ({:.2} per step)",
            s.peak_tape_bytes,
            s.checkpoint_bytes,
            whole.stats.peak_tape_bytes as f64 / (s.peak_tape_bytes + s.checkpoint_bytes) as f64,
            s.advances,
            s.advances as f64 / STEPS as f64
        );
    }

    let mut group = c.benchmark_group(name);
    group.sample_size(10);
    group.bench_function("f64", |b| b.iter(|| run(f, black_box(p), s0, STEPS)));
    group.bench_function("recorded", |b| {
        b.iter(|| recorded_gradient(f, black_box(p), s0, STEPS).unwrap())
    });
    // The same with the whole tape's buffers surely kept from one gradient to the next (4 GiB,
    // whatever the machine's default): no fresh pages, a whole recording's best case.
    shared_ops::memory::set_spare_limit(4 << 30);
    group.bench_function("recorded_buffers_kept", |b| {
        b.iter(|| recorded_gradient(f, black_box(p), s0, STEPS).unwrap())
    });
    shared_ops::memory::set_spare_limit(shared_ops::memory::default_spare_limit());
    shared_ops::memory::release_memory();
    for slots in SLOTS {
        group.bench_function(format!("checkpointed_slots={slots}"), |b| {
            b.iter(|| checkpointed_gradient(f, black_box(p), s0, STEPS, slots).unwrap())
        });
    }
    group.finish();
}

fn bench(c: &mut Criterion) {
    let f = Ode::new(10, STEPS);
    bench_loop(
        c,
        "ode_n=10_steps=100000",
        &f,
        &f.input(),
        &f.initial_state(),
    );
    let f = Rnn::new(8);
    bench_loop(
        c,
        "rnn_k=8_steps=100000",
        &f,
        &f.input(),
        &f.initial_state(),
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
