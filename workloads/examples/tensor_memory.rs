//! The per-operation overhead of the tensor autograd: a chain of small (one-element) tensor
//! operations, `x ↦ (x · 1.0001).tanh()` repeated, measured by the growth of the resident
//! memory while the graph is built, and timed for building it and sweeping it back.
//!
//! Run: `cargo run --release -p workloads --example tensor_memory [-- steps]` (default 500 000
//! steps, 10⁶ operations).

use std::time::Instant;
use tensor::Tensor;

/// The resident memory of the process in bytes (Linux; 0 elsewhere).
fn resident() -> usize {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<usize>().ok())
        .map_or(0, |pages| pages * 4096)
}

fn main() {
    let steps = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(500_000);
    let ops = 2 * steps;
    let x: Tensor = Tensor::from_vec(&[1], vec![0.5]).unwrap().with_grad();
    let before = resident();
    let start = Instant::now();
    let mut y = x.clone();
    for _ in 0..steps {
        y = (&y * 1.0001).tanh();
    }
    let built = start.elapsed();
    let graph = resident().saturating_sub(before);
    let start = Instant::now();
    y.sum().backward().unwrap();
    let swept = start.elapsed();
    let per_op = |d: std::time::Duration| d.as_secs_f64() * 1e6 / ops as f64;
    println!("{ops} operations on one-element tensors");
    println!(
        "graph:    {} bytes per operation (resident memory)",
        graph / ops
    );
    println!("build:    {:.3} µs per operation", per_op(built));
    println!("backward: {:.3} µs per operation", per_op(swept));
    println!("gradient: {:.6e}", x.grad().unwrap()[0]);
}
