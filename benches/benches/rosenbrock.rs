//! Rosenbrock's function (`Rⁿ → R`): the plain function, its gradient by reverse mode, by
//! chunked forward mode and by hand, and one Jacobian-vector product, for n = 10 … 10 000.
//!
//! A reverse gradient should cost a small constant times the function whatever n; the chunked
//! forward gradient costs ⌈n/16⌉ sweeps, so its ratio to `f64` grows like n.
//!
//! Ids per group `rosenbrock_n=<n>`: `f64`, `reverse_gradient` (and its halves
//! `reverse_record` and `reverse_sweep`), `forward_gradient`,
//! `forward_jvp` (and where its time goes: `jvp_inputs`, building its dual inputs; `jvp_eval`,
//! f on inputs built once; `jvp_by_hand`, the same directional derivative written by hand),
//! `analytic`; with `--features peers` also `num_dual_gradient_static`
//! (n = 10, 100), `num_dual_gradient_dyn` (n ≤ 1000), `ad_trait_reverse`, `ad_trait_forward`
//! (one tangent per sweep), `ad_trait_forward_multi8` (eight tangents per sweep; ours carry 16),
//! `echidna_jvp` (echidna's single-tangent `Dual`, one sweep like `forward_jvp`),
//! `echidna_reverse` (echidna's Adept-style tape), `echidna_bytecode` (its bytecode tape,
//! recorded and swept once per gradient) and `echidna_bytecode_replay` (recorded once,
//! re-evaluated at a new point per gradient). `replay_gradient` is ours the same way (a
//! `Tape::replayable` recording re-evaluated and swept), `replay_reevaluate` its first half, `replay_record` the recording
//! on a replayable tape; `compiled_replay` and `compiled_reevaluate` are the same recording
//! compiled to machine code (`Recording::compile`, feature `jit`), and `compiled_gradient` its
//! gradient compiled alone (`Recording::compile_gradient`, `CompiledGradient::gradient`).
//!
//! The `jacobian` drivers may split their sweeps across threads (rayon's pool) when the work
//! is large; the peers run on one thread. `RAYON_NUM_THREADS=1` makes every entry
//! single-threaded, for a like-for-like table (and steadier numbers on a shared machine):
//!
//! ```sh
//! RAYON_NUM_THREADS=1 CARGO_BUILD_JOBS=1 cargo bench -p benches --bench rosenbrock --features peers -- --warm-up-time 1 --measurement-time 3
//! ```

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use jacobian::Mode;
use workloads::{
    Function, Rosenbrock, rosenbrock, rosenbrock_gradient, rosenbrock_input, rosenbrock_jvp,
};

/// Input sizes, one group each.
const SIZES: [usize; 4] = [10, 100, 1_000, 10_000];

fn bench(c: &mut Criterion) {
    for n in SIZES {
        let f = Rosenbrock::new(n);
        let x = rosenbrock_input(n);

        let mut group = c.benchmark_group(format!("rosenbrock_n={n}"));
        if n >= 1_000 {
            // Slow sweeps: fewer samples keep the run within minutes.
            group.sample_size(10);
        }

        group.bench_function("f64", |b| b.iter(|| rosenbrock(black_box(&x))));

        // One recording and one reverse sweep, the tape built inside the timed call.
        group.bench_function("reverse_gradient", |b| {
            b.iter(|| jacobian::gradient(&f, black_box(&x)).unwrap())
        });

        // The two halves of it: recording the tape (inputs and the 8n − 9 operations of f),
        // and one sweep of a recorded tape.
        group.bench_function("reverse_record", |b| {
            b.iter(|| {
                let tape = reverse::Tape::with_capacity(4 * n);
                let xs = tape.vars(black_box(&x));
                black_box(rosenbrock(&xs));
            })
        });
        let tape = reverse::Tape::with_capacity(4 * n);
        let xs = tape.vars(&x);
        let y = rosenbrock(&xs);
        group.bench_function("reverse_sweep", |b| {
            b.iter(|| tape.sweep_wrt(&[(y, 1.0)], black_box(&xs)))
        });
        drop(tape);

        // A recording re-evaluated at a new point, then swept: the gradient a solver gets from
        // a tape recorded once (`replay_reevaluate` is the re-evaluation alone).
        let tape = reverse::Tape::replayable();
        let xs = tape.vars(&x);
        let y = rosenbrock(&xs);
        let mut rec = tape.finish();
        let x_new = shifted(&x);
        group.bench_function("replay_gradient", |b| {
            b.iter(|| {
                rec.reevaluate(black_box(&x_new)).unwrap();
                rec.sweep_wrt(&[(y, 1.0)], &xs)
            })
        });
        group.bench_function("replay_reevaluate", |b| {
            b.iter(|| rec.reevaluate(black_box(&x_new)).unwrap())
        });
        drop(rec);
        // The same recording compiled to machine code (feature `jit`): re-evaluated and swept
        // by the compiled code, and its gradient by the code compiled for it alone.
        let tape = reverse::Tape::replayable();
        let xs = tape.vars(&x);
        let y = rosenbrock(&xs);
        let mut rec = tape.finish();
        rec.compile().unwrap();
        group.bench_function("compiled_replay", |b| {
            b.iter(|| {
                rec.reevaluate(black_box(&x_new)).unwrap();
                rec.sweep_wrt(&[(y, 1.0)], &xs)
            })
        });
        group.bench_function("compiled_reevaluate", |b| {
            b.iter(|| rec.reevaluate(black_box(&x_new)).unwrap())
        });
        let mut compiled = rec.compile_gradient(y).unwrap();
        let mut g = vec![0.0; n];
        group.bench_function("compiled_gradient", |b| {
            b.iter(|| compiled.gradient(black_box(&x_new), &mut g).unwrap())
        });
        drop(compiled);
        // Recording on a replayable tape: the program is kept beside the sweep's arrays.
        group.bench_function("replay_record", |b| {
            b.iter(|| {
                let tape = reverse::Tape::replayable();
                let xs = tape.vars(black_box(&x));
                black_box(rosenbrock(&xs));
            })
        });

        // ⌈n/16⌉ sweeps of 16 tangents: O(n²) work, 625 sweeps for n = 10 000, still short
        // enough to sample there.
        group.bench_function("forward_gradient", |b| {
            b.iter(|| jacobian::jacobian_with(&f, black_box(&x), Mode::Forward).unwrap())
        });

        // One forward sweep along all-ones: the directional derivative Σ ∂f/∂xᵢ.
        let ones = vec![1.0; n];
        group.bench_function("forward_jvp", |b| {
            b.iter(|| jacobian::jvp(&f, black_box(&x), black_box(&ones)).unwrap())
        });

        // Where the jvp's time goes: building its n dual inputs (`jvp_inputs`), and f on them
        // (`jvp_eval`, the inputs built once); and the same directional derivative written by
        // hand in one loop (`jvp_by_hand`), the floor for any forward mode.
        let dual = |(&primal, &tangent): (&f64, &f64)| forward::Dual::unchecked(primal, tangent);
        group.bench_function("jvp_inputs", |b| {
            b.iter(|| {
                black_box(&x)
                    .iter()
                    .zip(black_box(&ones))
                    .map(dual)
                    .collect::<Vec<_>>()
            })
        });
        let duals: Vec<_> = x.iter().zip(&ones).map(dual).collect();
        group.bench_function("jvp_eval", |b| b.iter(|| f.eval(black_box(&duals))));
        group.bench_function("jvp_by_hand", |b| {
            b.iter(|| rosenbrock_jvp(black_box(&x), black_box(&ones)))
        });

        let mut g = vec![0.0; n];
        group.bench_function("analytic", |b| {
            b.iter(|| {
                rosenbrock_gradient(black_box(&x), &mut g);
                black_box(&g);
            })
        });

        #[cfg(feature = "peers")]
        peers::bench(&mut group, &x);

        group.finish();
    }
}

/// The new point of the replay entries: every coordinate moved by 0.01.
fn shifted(x: &[f64]) -> Vec<f64> {
    x.iter().map(|v| v + 0.01).collect()
}

/// num-dual and ad_trait on the same function, each checked against the analytic gradient
/// before it is timed.
#[cfg(feature = "peers")]
mod peers {
    use super::*;
    use ad_trait::differentiable_function::{ForwardAD, ForwardADMulti, ReverseAD};
    use ad_trait::forward_ad::adfn::adfn;
    use ad_trait::function_engine::FunctionEngine;
    use criterion::{BenchmarkGroup, measurement::WallTime};
    use echidna::{BReverse, Dual, Reverse};
    use nalgebra::{DVector, SVector};
    use num_dual::{DualDVec64, DualSVec64};
    use workloads::assert_close;
    use workloads::peers::{AdRosenbrock, rosenbrock_float, rosenbrock_num_dual};

    /// Peer results must match ours to this relative difference before they are timed.
    const REL: f64 = 1e-10;

    /// num-dual's forward gradient with a compile-time size: one sweep carrying N tangents.
    fn num_dual_static<const N: usize>(x: &SVector<f64, N>) -> (f64, SVector<f64, N>) {
        num_dual::gradient(
            |v: SVector<DualSVec64<N>, N>| rosenbrock_num_dual(v.as_slice()),
            x,
        )
    }

    fn num_dual_dyn(x: &DVector<f64>) -> (f64, DVector<f64>) {
        num_dual::gradient(
            |v: DVector<DualDVec64>| rosenbrock_num_dual(v.as_slice()),
            x,
        )
    }

    fn static_sized<const N: usize>(
        group: &mut BenchmarkGroup<'_, WallTime>,
        x: &[f64],
        want: &[f64],
    ) {
        let xs = SVector::<f64, N>::from_column_slice(x);
        let (_, g) = num_dual_static(&xs);
        assert_close(g.as_slice(), want, REL, "num_dual_gradient_static");
        group.bench_function("num_dual_gradient_static", |b| {
            b.iter(|| num_dual_static(black_box(&xs)))
        });
    }

    pub(super) fn bench(group: &mut BenchmarkGroup<'_, WallTime>, x: &[f64]) {
        let n = x.len();
        let mut want = vec![0.0; n];
        rosenbrock_gradient(x, &mut want);
        let want = &want[..];
        // num-dual's gradient is forward mode with all n tangents in one dual number (a heap
        // vector for the dynamic size): O(n²) work and an allocation per operation. For
        // n = 10 000 one run is too long to sample, so it is skipped there.
        if n <= 1_000 {
            let xd = DVector::from_column_slice(x);
            let (_, g) = num_dual_dyn(&xd);
            assert_close(g.as_slice(), want, REL, "num_dual_gradient_dyn");
            group.bench_function("num_dual_gradient_dyn", |b| {
                b.iter(|| num_dual_dyn(black_box(&xd)))
            });
        }
        match n {
            10 => static_sized::<10>(group, x, want),
            100 => static_sized::<100>(group, x, want),
            _ => {}
        }

        let reverse = FunctionEngine::new(AdRosenbrock { n }, AdRosenbrock { n }, ReverseAD::new());
        let (_, g) = reverse.derivative(x);
        assert_close(g.as_slice(), want, REL, "ad_trait_reverse");
        group.bench_function("ad_trait_reverse", |b| {
            b.iter(|| reverse.derivative(black_box(x)))
        });

        // ForwardAD: n sweeps of one tangent each, O(n²) work.
        let forward = FunctionEngine::new(AdRosenbrock { n }, AdRosenbrock { n }, ForwardAD::new());
        let (_, g) = forward.derivative(x);
        assert_close(g.as_slice(), want, REL, "ad_trait_forward");
        group.bench_function("ad_trait_forward", |b| {
            b.iter(|| forward.derivative(black_box(x)))
        });

        // ForwardADMulti with 8 tangents: ⌈n/8⌉ sweeps, the same chunking as ours.
        let multi = FunctionEngine::new(
            AdRosenbrock { n },
            AdRosenbrock { n },
            ForwardADMulti::<adfn<8>>::new(),
        );
        let (_, g) = multi.derivative(x);
        assert_close(g.as_slice(), want, REL, "ad_trait_forward_multi8");
        group.bench_function("ad_trait_forward_multi8", |b| {
            b.iter(|| multi.derivative(black_box(x)))
        });

        // echidna's single-tangent `Dual`: one forward sweep along all-ones, as `forward_jvp`.
        let ones = vec![1.0; n];
        let want_jv: f64 = want.iter().sum();
        let (_, jv) = echidna::jvp(|v: &[Dual<f64>]| vec![rosenbrock_float(v)], x, &ones);
        assert_close(&jv, &[want_jv], REL, "echidna_jvp");
        group.bench_function("echidna_jvp", |b| {
            b.iter(|| {
                echidna::jvp(
                    |v: &[Dual<f64>]| vec![rosenbrock_float(v)],
                    black_box(x),
                    black_box(&ones),
                )
            })
        });

        let g = echidna::grad(|v: &[Reverse<f64>]| rosenbrock_float(v), x);
        assert_close(&g, want, REL, "echidna_reverse");
        group.bench_function("echidna_reverse", |b| {
            b.iter(|| echidna::grad(|v: &[Reverse<f64>]| rosenbrock_float(v), black_box(x)))
        });
        let bytecode = |x: &[f64]| {
            let (mut tape, _) = echidna::record(|v: &[BReverse<f64>]| rosenbrock_float(v), x);
            tape.gradient(x)
        };
        assert_close(&bytecode(x), want, REL, "echidna_bytecode");
        group.bench_function("echidna_bytecode", |b| b.iter(|| bytecode(black_box(x))));

        // echidna's bytecode tape recorded once and re-evaluated at a new point per gradient.
        let x_new = shifted(x);
        let mut want_new = vec![0.0; n];
        rosenbrock_gradient(&x_new, &mut want_new);
        let (mut tape, _) = echidna::record(|v: &[BReverse<f64>]| rosenbrock_float(v), x);
        assert_close(
            &tape.gradient(&x_new),
            &want_new,
            REL,
            "echidna_bytecode_replay",
        );
        group.bench_function("echidna_bytecode_replay", |b| {
            b.iter(|| tape.gradient(black_box(&x_new)))
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
