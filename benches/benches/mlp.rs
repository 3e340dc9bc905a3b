//! Cost of the loss alone (the primal pass) against the loss and its gradient (the primal pass
//! and the backward sweep) for a two-layer MLP:
//! batch 64, input 256, hidden 256 (tanh), output 1, mean squared error.
//!
//! Run with
//! `cargo bench -p benches --bench mlp -- --warm-up-time 1 --measurement-time 3`
//! and compare the medians of `mlp/loss_and_grad` and `mlp/loss`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use ndarray::{Array1, Array2};
use reverse::tensor::{Tensor, no_grad};

const BATCH: usize = 64;
const INPUT: usize = 256;
const HIDDEN: usize = 256;

/// Deterministic pseudo-random values in [-scale, scale].
fn filled(rows: usize, cols: usize, seed: usize, scale: f64) -> Array2<f64> {
    Array2::from_shape_fn((rows, cols), |(i, j)| {
        scale * ((i * 31 + j * 17 + seed) as f64 * 0.618).sin()
    })
}

struct Mlp {
    w1: Tensor,
    b1: Tensor,
    w2: Tensor,
    b2: Tensor,
}

impl Mlp {
    fn new() -> Mlp {
        Mlp {
            w1: Tensor::new(filled(INPUT, HIDDEN, 1, 1.0 / (INPUT as f64).sqrt()), true),
            b1: Tensor::new(Array1::from_elem(HIDDEN, 0.01), true),
            w2: Tensor::new(filled(HIDDEN, 1, 2, 1.0 / (HIDDEN as f64).sqrt()), true),
            b2: Tensor::new(Array1::from_elem(1, 0.0), true),
        }
    }

    fn loss(&self, x: &Tensor, y: &Tensor) -> Tensor {
        let h = (x.matmul(&self.w1).unwrap() + &self.b1).tanh();
        let pred = h.matmul(&self.w2).unwrap() + &self.b2;
        (pred - y).powi(2).mean()
    }

    fn zero_grad(&self) {
        for p in [&self.w1, &self.b1, &self.w2, &self.b2] {
            p.zero_grad();
        }
    }
}

fn bench_mlp(c: &mut Criterion) {
    let x = Tensor::new(filled(BATCH, INPUT, 3, 1.0), false);
    let y = Tensor::new(filled(BATCH, 1, 4, 1.0), false);
    let mlp = Mlp::new();

    let mut group = c.benchmark_group("mlp");
    group.bench_function("loss", |b| {
        b.iter(|| no_grad(|| black_box(mlp.loss(black_box(&x), black_box(&y)).item().unwrap())))
    });
    group.bench_function("loss_and_grad", |b| {
        b.iter(|| {
            mlp.zero_grad();
            let loss = mlp.loss(black_box(&x), black_box(&y));
            loss.backward().unwrap();
            black_box(loss.item().unwrap())
        })
    });
    group.finish();
}

criterion_group!(benches, bench_mlp);
criterion_main!(benches);
