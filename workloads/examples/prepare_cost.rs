//! What preparing a gradient costs against one plain recording, on the largest GradBench
//! objectives: time, and the resident memory the process grows by. One mode per process, so
//! that each starts from an empty heap.
//!
//! Run: `cargo run --release -p workloads --example prepare_cost -- OBJECTIVE MODE` with
//! OBJECTIVE one of `det` (ℓ = 11), `gmm` (d = 64, k = 100, n = 1000), `llsq` (m = 128,
//! n = 16 392, or the n given after MODE) and MODE one of `record` (one plain recording and its
//! sweep), `prepare` ([`PreparedGradient::new`], then calls), `replay` or `rerecord` (the same,
//! by [`Preparation::Reevaluate`] or [`Preparation::Record`]), `oneshot` (seven one-shot
//! gradients: the first and the median of the rest) or `oneshot-floor` (the same with the
//! spare limit at its floor); `gmm20` is gmm with d = 20, k = 25.

use jacobian::{Preparation, PreparedGradient};
use reverse::Tape;
use std::time::Instant;
use workloads::Function;
use workloads::gradbench::{Det, Gmm, Llsq};

/// The resident set of the process in MiB (Linux; 0 elsewhere).
fn rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<f64>().ok())
        .map_or(0.0, |pages| pages * 4096.0 / (1 << 20) as f64)
}

fn run<F: Function>(f: F, x: &[f64], mode: &str) {
    let before = rss_mib();
    let start = Instant::now();
    match mode {
        "record" => {
            let tape = Tape::new();
            let xs = tape.vars(x);
            let y = f.eval(&xs)[0];
            let recorded = start.elapsed();
            let g = tape.gradient(y).wrt_all(&xs);
            println!(
                "record {:.6} s, record+sweep {:.6} s, {} nodes, {:.0} MiB recorded, rss +{:.0} MiB, g0 {}",
                recorded.as_secs_f64(),
                start.elapsed().as_secs_f64(),
                tape.stats().nodes,
                tape.stats().bytes as f64 / (1 << 20) as f64,
                rss_mib() - before,
                g[0]
            );
        }
        "oneshot" | "oneshot-floor" => {
            if mode == "oneshot-floor" {
                shared_ops::memory::set_spare_limit(shared_ops::memory::SPARE_FLOOR);
            }
            let mut times = Vec::new();
            for _ in 0..7 {
                let t = Instant::now();
                let (_, g) = jacobian::gradient(&f, x).unwrap();
                times.push(t.elapsed().as_secs_f64());
                assert!(g[0].is_finite());
            }
            let first = times.remove(0);
            times.sort_by(f64::total_cmp);
            println!(
                "one-shot gradient: first {first:.6} s, median of the next {} {:.6} s, rss +{:.0} MiB",
                times.len(),
                times[times.len() / 2],
                rss_mib() - before
            );
        }
        _ => {
            let preparation = match mode {
                "replay" => Preparation::Reevaluate,
                "rerecord" => Preparation::Record,
                _ => Preparation::Auto,
            };
            let mut p = PreparedGradient::with(f, x, preparation).unwrap();
            let prepared = start.elapsed();
            let (_, g) = p.gradient(x).unwrap();
            let first = start.elapsed();
            let t = Instant::now();
            let calls = 3;
            let mut g2 = Vec::new();
            for _ in 0..calls {
                g2 = p.gradient(x).unwrap().1;
            }
            let steady = t.elapsed() / calls;
            assert_eq!(g, g2);
            println!(
                "prepare {:.6} s, first call {:.6} s, steady call {:.6} s, rss +{:.0} MiB, g0 {}\n  {}",
                prepared.as_secs_f64(),
                (first - prepared).as_secs_f64(),
                steady.as_secs_f64(),
                rss_mib() - before,
                g[0],
                p.plan()
            );
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (objective, mode) = (args[0].as_str(), args[1].as_str());
    match objective {
        "det" => {
            let f = Det::new(11);
            let x = f.input();
            run(f, &x, mode)
        }
        "gmm20" => {
            let f = Gmm::new(20, 25, 1000);
            let x = f.input();
            run(f, &x, mode)
        }
        "gmm" => {
            let f = Gmm::new(64, 100, 1000);
            let x = f.input();
            run(f, &x, mode)
        }
        _ => {
            let n = args.get(2).map_or(16392, |n| n.parse().unwrap());
            let f = Llsq::new(128, n);
            let x = f.input();
            run(f, &x, mode)
        }
    }
}
