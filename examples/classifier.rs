//! A small classifier on two interleaved spirals: a 2 → 32 → 32 → 2 perceptron (tanh), the
//! softmax cross-entropy loss, and Adam, all from the `tensor` crate; it prints the loss and the
//! training accuracy as it learns.
//!
//! The data are made here, deterministically: two arms of a spiral, one per class, that wind
//! around each other 1¾ times, with a little noise. No straight line separates them, so the
//! network has to bend its decision boundary around the arms.
//!
//! Run: `cargo run --release --example classifier`

use std::f64::consts::PI;

use examples::lcg::Lcg;
use tensor::ndarray::{Array1, Array2};
use tensor::optim::Adam;
use tensor::{Tensor, TensorError};

/// Points and their classes.
struct Data {
    /// `(2n, 2)` coordinates.
    x: Tensor,
    /// The class of each row, 0 or 1.
    labels: Vec<usize>,
}

/// `n` points per class on two interleaved spiral arms, with noise from `seed`.
fn spirals(n: usize, seed: u64) -> Data {
    let mut rng = Lcg(seed.wrapping_add(7));
    let mut x = Array2::zeros((2 * n, 2));
    let mut labels = Vec::with_capacity(2 * n);
    for class in 0..2 {
        for i in 0..n {
            let t = 0.15 + 0.85 * i as f64 / n as f64; // radius, from near the centre out
            let angle = 3.5 * PI * t + class as f64 * PI;
            let row = class * n + i;
            x[[row, 0]] = t * angle.cos() + 0.02 * rng.next();
            x[[row, 1]] = t * angle.sin() + 0.02 * rng.next();
            labels.push(class);
        }
    }
    Data {
        x: Tensor::new(x, false),
        labels,
    }
}

/// The perceptron's parameters.
struct Model {
    layers: Vec<(Tensor, Tensor)>,
}

impl Model {
    /// Widths such as `[2, 32, 32, 2]`, weights scaled by 1/√fan-in.
    fn new(widths: &[usize], seed: u64) -> Model {
        let mut rng = Lcg(seed);
        let layers = widths
            .windows(2)
            .map(|w| {
                (
                    rng.matrix(w[0], w[1]),
                    Tensor::new(Array1::zeros(w[1]), true),
                )
            })
            .collect();
        Model { layers }
    }

    /// Every weight and bias, for the optimiser.
    fn parameters(&self) -> Vec<Tensor> {
        self.layers
            .iter()
            .flat_map(|(w, b)| [w.clone(), b.clone()])
            .collect()
    }

    /// The logits `(rows, classes)`: tanh after every layer but the last.
    fn logits(&self, x: &Tensor) -> Result<Tensor, TensorError> {
        let mut h = x.clone();
        for (k, (w, b)) in self.layers.iter().enumerate() {
            h = h.matmul(w)?.try_add(b)?;
            if k + 1 < self.layers.len() {
                h = h.tanh();
            }
        }
        Ok(h)
    }

    /// The share of rows whose largest logit is their label's.
    fn accuracy(&self, data: &Data) -> Result<f64, TensorError> {
        let logits = tensor::no_grad(|| self.logits(&data.x))?;
        let logits = logits.data();
        let right = logits
            .outer_iter()
            .zip(&data.labels)
            .filter(|(row, c)| {
                let best = (0..row.len())
                    .max_by(|&a, &b| row[a].total_cmp(&row[b]))
                    .unwrap_or(0);
                best == **c
            })
            .count();
        Ok(right as f64 / data.labels.len() as f64)
    }
}

/// The loss and training accuracy after each reported epoch.
struct Progress {
    /// The epoch (counting from 1).
    epoch: usize,
    /// The mean cross-entropy.
    loss: f64,
    /// The training accuracy.
    accuracy: f64,
}

/// Trains `model` on `data` for `epochs` full-batch Adam steps of rate `lr`, reporting every
/// `every` epochs (and the last).
fn train(
    model: &Model,
    data: &Data,
    epochs: usize,
    lr: f64,
    every: usize,
) -> Result<Vec<Progress>, TensorError> {
    let mut opt = Adam::new(model.parameters(), lr);
    let mut report = Vec::new();
    for epoch in 1..=epochs {
        let loss = model.logits(&data.x)?.cross_entropy(&data.labels)?;
        opt.zero_grad();
        loss.backward()?;
        opt.step();
        if epoch % every == 0 || epoch == epochs {
            report.push(Progress {
                epoch,
                loss: loss.item()?,
                accuracy: model.accuracy(data)?,
            });
        }
    }
    Ok(report)
}

fn main() -> Result<(), TensorError> {
    // The test profile is unoptimised: under test, a short run of the same code.
    let (epochs, every) = if cfg!(test) { (40, 10) } else { (600, 50) };
    let data = spirals(100, 1);
    let model = Model::new(&[2, 32, 32, 2], 42);
    println!(
        "two spirals, {} points; a 2-32-32-2 tanh perceptron, Adam",
        data.labels.len()
    );
    println!("{:>6}  {:>10}  {:>9}", "epoch", "loss", "accuracy");
    for p in train(&model, &data, epochs, 0.02, every)? {
        println!(
            "{:>6}  {:>10.5}  {:>8.1}%",
            p.epoch,
            p.loss,
            100.0 * p.accuracy
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{Model, spirals, train};

    #[test]
    fn runs() {
        super::main().unwrap();
    }

    #[test]
    fn spirals_have_n_points_per_class() {
        let data = spirals(50, 0);
        assert_eq!(data.x.shape(), vec![100, 2]);
        assert_eq!(data.labels.iter().filter(|&&c| c == 1).count(), 50);
    }

    #[test]
    fn the_spiral_classifier_reaches_95_percent() {
        let data = spirals(100, 1);
        let model = Model::new(&[2, 32, 32, 2], 42);
        let before = model.accuracy(&data).unwrap();
        let report = train(&model, &data, 300, 0.02, 50).unwrap();
        let last = report.last().unwrap();
        assert_eq!(last.epoch, 300);
        assert!(
            last.accuracy >= 0.95,
            "accuracy {} after 300 epochs",
            last.accuracy
        );
        assert!(
            before < 0.9,
            "the untrained network should not already separate the spirals ({before})"
        );
        // The loss falls from report to report.
        assert!(
            report.windows(2).all(|w| w[1].loss < w[0].loss),
            "{:?}",
            report.iter().map(|p| p.loss).collect::<Vec<_>>()
        );
    }
}
