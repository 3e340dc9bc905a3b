//! Trains a small classifier on two interleaved spirals and prints the loss and the training
//! accuracy as it learns (see `examples/classifier.rs`).
//!
//! Run with `cargo run --release --example spirals`.

use examples::classifier::{Model, spirals, train};
use tensor::TensorError;

fn main() -> Result<(), TensorError> {
    let data = spirals(100, 1);
    let model = Model::new(&[2, 32, 32, 2], 42);
    println!(
        "two spirals, {} points; a 2-32-32-2 tanh perceptron, Adam",
        data.labels.len()
    );
    println!("{:>6}  {:>10}  {:>9}", "epoch", "loss", "accuracy");
    for p in train(&model, &data, 600, 0.02, 50)? {
        println!(
            "{:>6}  {:>10.5}  {:>8.1}%",
            p.epoch,
            p.loss,
            100.0 * p.accuracy
        );
    }
    Ok(())
}
