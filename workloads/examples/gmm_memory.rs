//! The gradient of the largest GMM objective of the benchmark (d = 64, k = 100, n = 1000, the
//! GradBench `gmm` workload `64_100_1000`): tape size, time and the peak resident memory of the
//! process, which is what decides whether it runs on a machine at all.
//!
//! Run: `cargo run --release -p workloads --example gmm_memory [-- d k n]`; with
//! `--features peers -- d k n echidna` the same for echidna's reverse tape.

use reverse::Tape;
use std::time::Instant;
use workloads::Function;
use workloads::gradbench::Gmm;

/// A field of /proc/self/status in MiB (Linux; 0 elsewhere).
fn status_mib(field: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(0.0, |kib| kib / 1024.0)
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let with_echidna = std::env::args().any(|a| a == "echidna");
    let (d, k, n) = match args[..] {
        [d, k, n] => (d, k, n),
        _ => (64, 100, 1000),
    };
    let f = Gmm::new(d, k, n);
    let p = f.input();
    println!("gmm d = {d}, k = {k}, n = {n}: {} parameters", p.len());
    let start = Instant::now();
    let y = f.eval(&p)[0];
    println!(
        "f(p) = {y:.6e} in {:.3} s (plain f64)",
        start.elapsed().as_secs_f64()
    );
    let baseline = status_mib("VmRSS:");
    if with_echidna {
        peer(&f, &p, baseline);
        return;
    }

    let start = Instant::now();
    let tape = Tape::new();
    let xs = tape.vars(&p);
    let out = f.eval(&xs)[0];
    let recorded = start.elapsed().as_secs_f64();
    let s = tape.stats();
    let g = tape.gradient(out).wrt_all(&xs);
    let total = start.elapsed().as_secs_f64();
    println!(
        "tape: {} nodes, {} weighted and {} unit edges, {:.2} GB ({:.2} bytes per node)",
        s.nodes,
        s.edges,
        s.unit_edges,
        s.bytes as f64 / 1e9,
        s.bytes_per_node()
    );
    println!(
        "reverse gradient: {total:.3} s ({recorded:.3} s recording, {:.3} s sweep)",
        total - recorded
    );
    println!(
        "gradient: ‖g‖∞ = {:.6e}, all finite: {}",
        g.iter().fold(0.0_f64, |m, v| m.max(v.abs())),
        g.iter().all(|v| v.is_finite())
    );
    drop(tape);
    println!(
        "resident memory: {baseline:.0} MiB before recording, peak {:.0} MiB, {:.0} MiB after the tape is dropped",
        status_mib("VmHWM:"),
        status_mib("VmRSS:")
    );
}

/// echidna's Adept-style reverse gradient of the same objective, for its time and memory.
#[cfg(feature = "peers")]
fn peer(f: &Gmm, p: &[f64], baseline: f64) {
    use workloads::peers::FloatObjective;
    let start = Instant::now();
    let g = echidna::grad(|v: &[echidna::Reverse<f64>]| f.eval_float(v), p);
    println!(
        "echidna reverse gradient: {:.3} s, ‖g‖∞ = {:.6e}",
        start.elapsed().as_secs_f64(),
        g.iter().fold(0.0_f64, |m, v| m.max(v.abs()))
    );
    println!(
        "resident memory: {baseline:.0} MiB before, peak {:.0} MiB",
        status_mib("VmHWM:")
    );
}

#[cfg(not(feature = "peers"))]
fn peer(_: &Gmm, _: &[f64], _: f64) {
    eprintln!("echidna needs --features peers");
}
