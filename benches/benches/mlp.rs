//! Cost of the loss alone (the primal pass) against the loss and its gradient (the primal pass
//! and the backward sweep) for a two-layer MLP:
//! batch 64, input 256, hidden 256 (tanh), output 1, mean squared error.
//!
//! The same network in `f64` and `f32` (`mlp/…` and `mlp_f32/…`), and a deep chain of small
//! tensor operations (`tensor_chain/…`): the per-operation overhead of building a graph and
//! sweeping it back.
//!
//! Run with
//! `cargo bench -p benches --bench mlp -- --warm-up-time 1 --measurement-time 3`
//! and compare the medians of `mlp/loss_and_grad` and `mlp/loss`; `mlp/products_only` times
//! the two large matrix products that the loss and gradient cannot do without.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use ndarray::{Array1, Array2};
use tensor::{Element, Tensor, no_grad};

const BATCH: usize = 64;
const INPUT: usize = 256;
const HIDDEN: usize = 256;

/// Deterministic pseudo-random values in [-scale, scale].
fn filled<T: Element>(rows: usize, cols: usize, seed: usize, scale: f64) -> Array2<T> {
    Array2::from_shape_fn((rows, cols), |(i, j)| {
        T::from_f64(scale * ((i * 31 + j * 17 + seed) as f64 * 0.618).sin())
    })
}

struct Mlp<T: Element> {
    w1: Tensor<T>,
    b1: Tensor<T>,
    w2: Tensor<T>,
    b2: Tensor<T>,
}

impl<T: Element> Mlp<T> {
    fn new() -> Mlp<T> {
        Mlp {
            w1: Tensor::new(filled(INPUT, HIDDEN, 1, 1.0 / (INPUT as f64).sqrt()), true),
            b1: Tensor::new(Array1::from_elem(HIDDEN, T::from_f64(0.01)), true),
            w2: Tensor::new(filled(HIDDEN, 1, 2, 1.0 / (HIDDEN as f64).sqrt()), true),
            b2: Tensor::new(Array1::from_elem(1, T::zero()), true),
        }
    }

    fn loss(&self, x: &Tensor<T>, y: &Tensor<T>) -> Tensor<T> {
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

fn bench_mlp_of<T: Element>(c: &mut Criterion, name: &str) {
    let x = Tensor::new(filled::<T>(BATCH, INPUT, 3, 1.0), false);
    let y = Tensor::new(filled::<T>(BATCH, 1, 4, 1.0), false);
    let mlp = Mlp::<T>::new();

    let mut group = c.benchmark_group(name);
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
    // The floor under `loss_and_grad`: its two large products alone, x · W1 (forward) and
    // xᵀ · G (the gradient of W1; G stands for the 64 × 256 gradient at the hidden layer),
    // with xᵀ made once outside the loop.
    let xt = x.t();
    let g = Tensor::new(filled::<T>(BATCH, HIDDEN, 5, 1.0), false);
    group.bench_function("products_only", |b| {
        b.iter(|| {
            no_grad(|| {
                let h = black_box(&x).matmul(&mlp.w1).unwrap();
                let dw = black_box(&xt).matmul(&g).unwrap();
                black_box((h, dw))
            })
        })
    });
    group.finish();
}

fn bench_mlp(c: &mut Criterion) {
    bench_mlp_of::<f64>(c, "mlp");
    bench_mlp_of::<f32>(c, "mlp_f32");
}

/// `x ↦ (x · 1.0001).tanh()` repeated: 2 operations per step on a one-element tensor.
fn chain(x: &Tensor, steps: usize) -> Tensor {
    let mut y = x.clone();
    for _ in 0..steps {
        y = (&y * 1.0001).tanh();
    }
    y
}

/// The per-operation cost of a graph of small tensors: building it, and building and
/// sweeping it back. Divide the medians by 2·STEPS for the cost of one operation.
fn bench_chain(c: &mut Criterion) {
    const STEPS: usize = 5_000;
    let x = Tensor::new(Array1::from_elem(1, 0.5), true);
    let mut group = c.benchmark_group("tensor_chain");
    group.bench_function("build_10k_ops", |b| b.iter(|| black_box(chain(&x, STEPS))));
    group.bench_function("build_and_backward_10k_ops", |b| {
        b.iter(|| {
            x.zero_grad();
            chain(&x, STEPS).sum().backward().unwrap();
            black_box(x.grad())
        })
    });
    group.finish();
}

criterion_group!(benches, bench_mlp, bench_chain);
criterion_main!(benches);
