//! Rosenbrock's reverse gradient by this checkout and by an earlier commit, in one run (see
//! `run.sh` beside this file). Ids per group `rosenbrock_n=<n>`: `f64`, `old`, `new`.

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

macro_rules! rosenbrock {
    ($name:ident, $op:path) => {
        fn $name<T: $op>(x: &[T]) -> T {
            let hundred = T::constant(100.0);
            x.windows(2)
                .map(|w| {
                    let a = T::one() - w[0];
                    let b = w[1] - w[0] * w[0];
                    a * a + hundred * b * b
                })
                .sum()
        }
    };
}
rosenbrock!(rosenbrock_new, shared_ops::Op);
rosenbrock!(rosenbrock_old, ops_old::Op);

fn bench(c: &mut Criterion) {
    for n in [100usize, 1000, 10_000] {
        let x: Vec<f64> = (0..n).map(|i| 0.5 + 0.01 * (i % 100) as f64).collect();
        let (_, old) = reverse_old::gradient(rosenbrock_old, &x);
        let (_, new) = reverse::gradient(rosenbrock_new, &x);
        let worst = old
            .iter()
            .zip(&new)
            .map(|(a, b)| (a - b).abs() / a.abs().max(1e-300))
            .fold(0.0, f64::max);
        assert!(worst < 1e-13, "the two gradients differ by {worst:e}");
        let mut group = c.benchmark_group(format!("rosenbrock_n={n}"));
        group.bench_function("f64", |b| b.iter(|| rosenbrock_new(black_box(&x))));
        group.bench_function("old", |b| {
            b.iter(|| reverse_old::gradient(rosenbrock_old, black_box(&x)))
        });
        group.bench_function("new", |b| {
            b.iter(|| reverse::gradient(rosenbrock_new, black_box(&x)))
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
