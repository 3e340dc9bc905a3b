//! Repeats one workload's reverse gradient, for profilers: `perf record` this program.
//!
//! Run: `cargo run --release -p workloads --example profile_workload -- <llsq|lse|det|gmm> [reps]`

use std::time::Instant;
use workloads::gradbench::{Det, Gmm, Llsq, Lse};
use workloads::{Function, Rosenbrock, rosenbrock_input};

fn run<F: Function>(f: &F, x: &[f64], reps: usize) {
    let start = Instant::now();
    for _ in 0..reps {
        std::hint::black_box(f.eval(std::hint::black_box(x)));
    }
    let plain = start.elapsed().as_secs_f64() / reps as f64;
    let start = Instant::now();
    for _ in 0..reps {
        std::hint::black_box(jacobian::gradient(f, std::hint::black_box(x)).unwrap());
    }
    let grad = start.elapsed().as_secs_f64() / reps as f64;
    println!(
        "f {:.3} ms, gradient {:.3} ms: {:.1} × f",
        plain * 1e3,
        grad * 1e3,
        grad / plain
    );
}

fn main() {
    let which = std::env::args().nth(1).unwrap_or_else(|| "lse".into());
    let reps: usize = std::env::args()
        .nth(2)
        .and_then(|r| r.parse().ok())
        .unwrap_or(20);
    match which.as_str() {
        "llsq" => {
            let f = Llsq::new(128, 1024);
            run(&f, &f.input(), reps)
        }
        "lse" => {
            let f = Lse::new(640_000);
            run(&f, &f.input(), reps)
        }
        "det" => {
            let f = Det::new(9);
            run(&f, &f.input(), reps)
        }
        "gmm" => {
            let f = Gmm::new(10, 10, 1000);
            run(&f, &f.input(), reps)
        }
        "rosenbrock" => {
            let f = Rosenbrock::new(1000);
            run(&f, &rosenbrock_input(1000), reps)
        }
        other => eprintln!("unknown workload {other}"),
    }
}
