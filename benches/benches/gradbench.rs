//! The objectives of the GradBench suite: the plain function and its reverse gradient, at the
//! sizes of the suite, and echidna's two reverse modes on the same code.
//!
//! Groups: `llsq_n=1024_m=128`, `llsq_n=16392_m=128`, `lse_n=640000`, `det_ell=9`,
//! `gmm_d=10_k=10_n=1000`, `gmm_d=64_k=100_n=1000`, `lstm_l=4_c=1024`, `lstm_l=4_c=4096` (b =
//! 14), `ode_n=1000_s=100`, `kmeans_k=100_n=1000_d=8`. Ids: `f64` (the plain function),
//! `reverse_gradient` (`jacobian::gradient`: one recording and one sweep), `compiled_gradient` (a
//! `PreparedGradient` by `Preparation::Compile`: the gradient compiled to machine code, where
//! the recording compiles) and there `compile` (`Recording::compile_gradient` of a fresh
//! recording: the compile time), `reevaluated_gradient` (`Preparation::Reevaluate`, the
//! interpreter) and `auto_gradient` (`Preparation::Auto`, the plan's choice); with
//! `--features peers` also `echidna_reverse` (`echidna::grad`, its Adept-style tape) and
//! `echidna_bytecode` (`echidna::record` and one `gradient` of the bytecode tape). Every peer's gradient is checked
//! against ours before it is timed. The k-means group times the suite's `dir` (a Newton step:
//! gradient over Hessian diagonal) instead: `hand_written`, `hvp_dir` (ours: one
//! forward-over-reverse `jacobian::hvp` along all-ones gives both) and with peers
//! `echidna_hvp_dir` (echidna's bytecode tape recorded, then its `hvp`).
//!
//! ```sh
//! RAYON_NUM_THREADS=1 cargo bench -p benches --bench gradbench --features peers -- --warm-up-time 1 --measurement-time 3
//! ```

use std::hint::black_box;

use criterion::{
    BenchmarkGroup, Criterion, criterion_group, criterion_main, measurement::WallTime,
};
use workloads::gradbench::{Det, Gmm, Kmeans, Llsq, Lse, Lstm, Ode};
use workloads::{Function, assert_close};

/// Times the plain function and our reverse gradient (of group `name`); returns the gradient
/// for the peers' checks.
fn ours<F: Function>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    f: &F,
    x: &[f64],
) -> Vec<f64> {
    group.bench_function("f64", |b| b.iter(|| f.eval(black_box(x))));
    group.bench_function("reverse_gradient", |b| {
        b.iter(|| jacobian::gradient(f, black_box(x)).unwrap())
    });
    let (_, g) = jacobian::gradient(f, x).unwrap();
    // Compiled (feature `jit`): the gradient by machine code, where the recording compiles (a
    // recording past the compiler's limit is recorded afresh instead, and not timed here).
    use jacobian::{Preparation, PreparedGradient};
    let mut p = PreparedGradient::with(f, x, Preparation::Compile).unwrap();
    eprintln!("compiled: {}", p.plan());
    if p.plan()
        .compilation
        .as_ref()
        .is_none_or(|c| c.code_bytes == 0)
    {
        return g;
    }
    assert_eq!(p.gradient(x).unwrap().1, g, "compiled = interpreted");
    // What it keeps and its code, for the results page (`benches/results.py` reads this line).
    let (plan, code) = (p.plan(), p.plan().compilation.as_ref().expect("compiled"));
    eprintln!(
        "plan {name} kept_bytes={} recording_bytes={} code_bytes={}",
        plan.kept_bytes, plan.recording_bytes, code.code_bytes
    );
    group.bench_function("compiled_gradient", |b| {
        b.iter(|| p.gradient(black_box(x)).unwrap())
    });
    drop(p);
    // Compiling alone: the gradient of a fresh recording compiled (ten samples at least, each
    // a compilation).
    let record = || {
        let tape = reverse::Tape::replayable();
        let y = f.eval(&tape.vars(x))[0];
        (tape.finish(), y)
    };
    group.bench_function("compile", |b| {
        b.iter_batched(
            record,
            |(rec, y)| rec.compile_gradient(y).map_err(|e| e.error).unwrap(),
            criterion::BatchSize::PerIteration,
        )
    });
    // Where it compiles, the interpreted re-evaluation, and what `Auto` makes of the choice
    // (its target: within 1.1× of the better of the two).
    for (id, how) in [
        ("reevaluated_gradient", Preparation::Reevaluate),
        ("auto_gradient", Preparation::Auto),
    ] {
        let mut p = PreparedGradient::with(f, x, how).unwrap();
        eprintln!("{id}: {}", p.plan());
        assert_eq!(p.gradient(x).unwrap().1, g, "{id} = one-shot");
        group.bench_function(id, |b| b.iter(|| p.gradient(black_box(x)).unwrap()));
    }
    g
}

/// An objective of the suite: the peers' trait too where they are benched.
#[cfg(feature = "peers")]
trait Objective: Function + workloads::peers::FloatObjective {}
#[cfg(feature = "peers")]
impl<F: Function + workloads::peers::FloatObjective> Objective for F {}
#[cfg(not(feature = "peers"))]
trait Objective: Function {}
#[cfg(not(feature = "peers"))]
impl<F: Function> Objective for F {}

/// The group `name` of `samples` samples: ours at `x`, then (with `peers`, if `echidna`) echidna's
/// two modes; returns our gradient.
fn group<F: Objective>(
    c: &mut Criterion,
    name: &str,
    samples: usize,
    f: &F,
    x: &[f64],
    echidna: bool,
) -> Vec<f64> {
    let mut group = c.benchmark_group(name);
    group.sample_size(samples);
    let g = ours(&mut group, name, f, x);
    #[cfg(feature = "peers")]
    if echidna {
        peers::echidna(&mut group, x, &g, f);
    }
    #[cfg(not(feature = "peers"))]
    let _ = echidna;
    group.finish();
    g
}

fn bench(c: &mut Criterion) {
    for n in [1024, 16_392] {
        let f = Llsq::new(128, n);
        let x = f.input();
        let samples = if n > 1024 { 20 } else { 100 };
        let g = group(c, &format!("llsq_n={n}_m=128"), samples, &f, &x, true);
        assert_close(&g, &f.gradient(&x), 1e-10, "llsq by hand");
    }
    let f = Lse::new(640_000);
    group(c, "lse_n=640000", 20, &f, &f.input(), true);
    let f = Det::new(9);
    group(c, "det_ell=9", 10, &f, &f.input(), true);
    for (d, k) in [(10, 10), (64, 100)] {
        let f = Gmm::new(d, k, 1000);
        // The large one has 4.5·10⁸ multiply-adds: echidna's tape of them is too slow and too
        // large per gradient to sample here; `cargo run --release -p benches --features peers
        // --example gmm_memory -- 64 100 1000 echidna` measures one gradient instead.
        let name = format!("gmm_d={d}_k={k}_n=1000");
        group(c, &name, 10, &f, &f.input(), d == 10);
    }
}

/// GradBench `lstm` (l = 4, b = 14 at the suite's two lengths) and `ode` (n = 1 000, s = 100).
fn sequences(c: &mut Criterion) {
    for chars in [1024, 4096] {
        let f = Lstm::new(4, 14, chars);
        group(c, &format!("lstm_l=4_c={chars}"), 10, &f, &f.input(), true);
    }
    let f = Ode::new(1000, 100);
    group(c, "ode_n=1000_s=100", 10, &f, &f.input(), true);
}

/// GradBench `kmeans`: the Newton direction at the suite's largest default size.
fn kmeans(c: &mut Criterion) {
    let f = Kmeans::new(100, 1000, 8);
    let x = f.input();
    let ones = vec![1.0; x.len()];
    let dir = |x: &[f64]| {
        let p = jacobian::hvp(&f, x, &ones).unwrap();
        let d: Vec<f64> = p
            .gradient
            .iter()
            .zip(&p.product)
            .map(|(g, h)| g / h)
            .collect();
        d
    };
    let want = f.dir(&x);
    assert_close(&dir(&x), &want, 1e-12, "hvp_dir");
    let mut group = c.benchmark_group("kmeans_k=100_n=1000_d=8");
    group.sample_size(10);
    group.bench_function("f64", |b| b.iter(|| f.eval(black_box(&x))));
    group.bench_function("hand_written", |b| b.iter(|| f.dir(black_box(&x))));
    group.bench_function("hvp_dir", |b| b.iter(|| dir(black_box(&x))));
    #[cfg(feature = "peers")]
    peers::echidna_dir(&mut group, &x, &want, &f);
    group.finish();
}

#[cfg(feature = "peers")]
mod peers {
    use super::*;
    use echidna::{BReverse, Reverse};
    use workloads::peers::FloatObjective;

    /// Relative agreement asked of a peer's gradient before it is timed.
    const REL: f64 = 1e-9;

    /// echidna's Adept-style reverse tape, and its bytecode tape (recorded and swept once per
    /// gradient, as ours records once per gradient), on `f` written for `num_traits::Float`.
    pub(super) fn echidna<F: FloatObjective>(
        group: &mut BenchmarkGroup<'_, WallTime>,
        x: &[f64],
        want: &[f64],
        f: &F,
    ) {
        let g = echidna::grad(|v: &[Reverse<f64>]| f.eval_float(v), x);
        assert_close(&g, want, REL, "echidna_reverse");
        group.bench_function("echidna_reverse", |b| {
            b.iter(|| echidna::grad(|v: &[Reverse<f64>]| f.eval_float(v), black_box(x)))
        });
        let bytecode = |x: &[f64]| {
            let (mut tape, _) = echidna::record(|v: &[BReverse<f64>]| f.eval_float(v), x);
            tape.gradient(x)
        };
        assert_close(&bytecode(x), want, REL, "echidna_bytecode");
        group.bench_function("echidna_bytecode", |b| b.iter(|| bytecode(black_box(x))));
    }

    /// echidna's Newton direction for k-means: its bytecode tape recorded, then one `hvp`
    /// along all-ones (gradient and Hessian diagonal, as ours).
    pub(super) fn echidna_dir(
        group: &mut BenchmarkGroup<'_, WallTime>,
        x: &[f64],
        want: &[f64],
        f: &Kmeans,
    ) {
        let ones = vec![1.0; x.len()];
        let dir = |x: &[f64]| {
            let (tape, _) = echidna::record(|v: &[BReverse<f64>]| f.eval_float(v), x);
            let (g, h) = tape.hvp(x, &ones);
            g.iter().zip(&h).map(|(g, h)| g / h).collect::<Vec<f64>>()
        };
        assert_close(&dir(x), want, REL, "echidna_hvp_dir");
        group.bench_function("echidna_hvp_dir", |b| b.iter(|| dir(black_box(x))));
    }
}

criterion_group!(benches, bench, sequences, kmeans);
criterion_main!(benches);
