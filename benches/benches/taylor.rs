//! Taylor mode against nested duals: the k-th derivative of a function along a direction by one
//! sweep of `Taylor<f64, k + 1>` (O(k²) per operation) and by k nested `Dual`s seeded with the
//! direction at every level (2ᵏ numbers per value, O(2ᵏ) per operation and more for products).
//!
//! Ids per group `taylor_order=<k>` (k = 2, 4, 6, 8): `f64` (the plain function), `taylor`,
//! `nested_duals` (not for k = 8: see below).
//!
//! ```text
//! cargo bench -p benches --bench taylor
//! python3 benches/table.py --filter taylor
//! ```

use criterion::{Criterion, criterion_group, criterion_main};
use forward::{Dual, Taylor};
use shared_ops::Op;
use std::hint::black_box;

/// A small program that touches products, quotients and transcendental rules.
fn f<T: Op>(x: &[T; 2]) -> T {
    let [a, b] = *x;
    let q = (T::one() + a * a).ln() * b / (T::one() + b * b);
    a.exp() * b.sin() + q + (a * b).atan() + (T::one() + (a - b).tanh()).sqrt()
}

/// `x + ε·v` one level up: the value one level down, the direction as that level's constant.
fn up<T: Op>(x: [T; 2], v: [f64; 2]) -> [Dual<T>; 2] {
    [
        Dual::new(x[0], T::constant(v[0])),
        Dual::new(x[1], T::constant(v[1])),
    ]
}

const X: [f64; 2] = [0.4, 0.9];
const V: [f64; 2] = [0.6, -0.3];

/// The k-th directional derivative by Taylor mode.
fn taylor<const N: usize>(x: [f64; 2]) -> f64 {
    let t = [
        Taylor::<f64, N>::variable(x[0], V[0]),
        Taylor::variable(x[1], V[1]),
    ];
    f(&t).derivative(N - 1)
}

fn bench(c: &mut Criterion) {
    // Checks before timing: both ways agree.
    let d2 = f(&up(up(X, V), V)).tangent.tangent;
    assert!((taylor::<3>(X) - d2).abs() <= 1e-12 * d2.abs().max(1.0));
    let d4 = f(&up(up(up(up(X, V), V), V), V))
        .tangent
        .tangent
        .tangent
        .tangent;
    assert!((taylor::<5>(X) - d4).abs() <= 1e-12 * d4.abs().max(1.0));

    let mut g = c.benchmark_group("taylor_order=2");
    g.bench_function("f64", |b| b.iter(|| f(black_box(&X))));
    g.bench_function("taylor", |b| b.iter(|| taylor::<3>(black_box(X))));
    g.bench_function("nested_duals", |b| {
        b.iter(|| f(&up(up(black_box(X), V), V)).tangent.tangent)
    });
    g.finish();

    let mut g = c.benchmark_group("taylor_order=4");
    g.bench_function("f64", |b| b.iter(|| f(black_box(&X))));
    g.bench_function("taylor", |b| b.iter(|| taylor::<5>(black_box(X))));
    g.bench_function("nested_duals", |b| {
        b.iter(|| {
            let y = f(&up(up(up(up(black_box(X), V), V), V), V));
            y.tangent.tangent.tangent.tangent
        })
    });
    g.finish();

    let mut g = c.benchmark_group("taylor_order=6");
    g.bench_function("f64", |b| b.iter(|| f(black_box(&X))));
    g.bench_function("taylor", |b| b.iter(|| taylor::<7>(black_box(X))));
    g.bench_function("nested_duals", |b| {
        b.iter(|| {
            let y = f(&up(up(up(up(up(up(black_box(X), V), V), V), V), V), V));
            y.tangent.tangent.tangent.tangent.tangent.tangent
        })
    });
    g.finish();

    // Order 8 by Taylor mode only: 8 nested duals (256 numbers per value, every rule inlined
    // at every level) did not finish compiling in 20 minutes.
    let mut g = c.benchmark_group("taylor_order=8");
    g.bench_function("f64", |b| b.iter(|| f(black_box(&X))));
    g.bench_function("taylor", |b| b.iter(|| taylor::<9>(black_box(X))));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
