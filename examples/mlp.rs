//! A two-layer perceptron (2 → 16 tanh → 1) fitted by plain full-batch
//! gradient descent to y = sin(x1) + x2² on a 12×12 grid.
//!
//! Everything is deterministic (a tiny linear congruential generator
//! initialises the weights), and the loss printed every 250 epochs falls.
//!
//! Run with `cargo run --release --example mlp`.

use examples::lcg::Lcg;
use ndarray::{Array1, Array2};
use tensor::{Tensor, TensorError};

/// Inputs on a grid in [-1.5, 1.5]² and targets sin(x1) + x2².
fn dataset(n: usize) -> (Tensor, Tensor) {
    let coord = |i: usize| -1.5 + 3.0 * i as f64 / (n - 1) as f64;
    let x = Array2::from_shape_fn((n * n, 2), |(k, j)| {
        coord(if j == 0 { k / n } else { k % n })
    });
    let y = Array2::from_shape_fn((n * n, 1), |(k, _)| x[[k, 0]].sin() + x[[k, 1]].powi(2));
    (Tensor::new(x, false), Tensor::new(y, false))
}

fn main() -> Result<(), TensorError> {
    let (x, y) = dataset(12);
    let hidden = 16;
    let mut rng = Lcg(42);
    let w1 = rng.matrix(2, hidden);
    let b1 = Tensor::new(Array1::zeros(hidden), true);
    let w2 = rng.matrix(hidden, 1);
    let b2 = Tensor::new(Array1::zeros(1), true);
    let params = [&w1, &b1, &w2, &b2];

    let lr = 0.1;
    // The test profile is unoptimised: under test, fewer epochs of the same training.
    let epochs = if cfg!(test) { 500 } else { 3000 };
    let mut first = None;
    let mut last = 0.0;
    for epoch in 0..=epochs {
        // Forward: mean squared error of tanh(x W1 + b1) W2 + b2.
        let h = (x.matmul(&w1)? + &b1).tanh();
        let pred = h.matmul(&w2)? + &b2;
        let loss = (pred - &y).powi(2).mean();

        for p in params {
            p.zero_grad();
        }
        loss.backward()?;
        for p in params {
            p.sgd_step(lr);
        }

        last = loss.item()?;
        first.get_or_insert(last);
        if epoch % 250 == 0 {
            println!("epoch {epoch:5}  loss {last:.6}");
        }
    }
    let first = first.unwrap_or(last);
    println!(
        "loss fell from {first:.4} to {last:.4} ({:.1}x)",
        first / last
    );
    assert!(last < first / 10.0, "training should reduce the loss");
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn runs() {
        super::main().unwrap();
    }
}
