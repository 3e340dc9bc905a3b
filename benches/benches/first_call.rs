//! The first call of a driver against later ones: a gradient recorded with the thread's kept
//! buffers released before every call (`cold`, what the first call in a process meets), with
//! them kept (`warm`, every later call), and released but then warmed by a capacity hint
//! outside the timed call (`hinted`, `reverse::warm_up` with the node count of an earlier
//! recording). Rosenbrock, n = 10⁵.
//!
//! ```sh
//! RAYON_NUM_THREADS=1 cargo bench -p benches --bench first_call -- --warm-up-time 1 --measurement-time 3
//! ```

use std::hint::black_box;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use workloads::{Rosenbrock, rosenbrock_input};

fn bench(c: &mut Criterion) {
    let n = 100_000;
    let (f, x) = (Rosenbrock::new(n), rosenbrock_input(n));
    let mut group = c.benchmark_group(format!("first_call_n={n}"));
    group.sample_size(20);
    group.bench_function("warm", |b| {
        b.iter(|| jacobian::gradient(&f, black_box(&x)).unwrap())
    });
    group.bench_function("cold", |b| {
        b.iter_batched(
            shared_ops::memory::release_memory,
            |_| jacobian::gradient(&f, black_box(&x)).unwrap(),
            BatchSize::PerIteration,
        )
    });
    // The hint: the nodes of one earlier recording.
    let nodes = {
        let tape = reverse::Tape::new();
        let xs = tape.vars(&x);
        let _ = workloads::rosenbrock(&xs);
        tape.stats().nodes
    };
    group.bench_function("hinted", |b| {
        b.iter_batched(
            || {
                shared_ops::memory::release_memory();
                reverse::warm_up(n, nodes);
            },
            |_| jacobian::gradient(&f, black_box(&x)).unwrap(),
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
