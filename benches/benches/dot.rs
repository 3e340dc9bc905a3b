//! `Op::dot` on `f64` against the loop a user would write, at the lengths GradBench's objectives
//! use (a Mahalanobis term of gmm, a row of llsq, a long reduction).
//!
//! Ids per group `dot_n=<n>`: `op_dot` (`<f64 as Op>::dot`, eight running sums from 8 terms
//! on: `shared_ops::dot_order`), `plain_loop` (an indexed loop with one running sum),
//! `iter_sum` (`zip`, `map`, `sum`). The values agree to rounding.
//!
//! ```sh
//! cargo bench -p benches --bench dot -- --warm-up-time 1 --measurement-time 3
//! ```

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use workloads::Op;

#[inline]
fn plain_loop(a: &[f64], b: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..a.len().min(b.len()) {
        s += a[i] * b[i];
    }
    s
}

#[inline]
fn iter_sum(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn bench(c: &mut Criterion) {
    for n in [8, 64, 1024] {
        let a: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
        let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.11).cos()).collect();
        let (d, p) = (f64::dot(&a, &b), plain_loop(&a, &b));
        assert!((d - p).abs() <= 1e-13 * a.len() as f64, "{d} vs {p}");
        let mut group = c.benchmark_group(format!("dot_n={n}"));
        // 64 dots per iteration, as in an objective's inner loop, each inlined where it is used.
        macro_rules! many {
            ($f:expr) => {{
                let mut s = 0.0;
                for _ in 0..64 {
                    s += $f(black_box(&a[..]), black_box(&b[..]));
                }
                s
            }};
        }
        group.bench_function("op_dot", |bn| bn.iter(|| many!(f64::dot)));
        group.bench_function("plain_loop", |bn| bn.iter(|| many!(plain_loop)));
        group.bench_function("iter_sum", |bn| bn.iter(|| many!(iter_sum)));
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
