//! The dense tanh layer `f(x) = tanh(A·sin x)` (`Rⁿ → Rᵐ`): its full Jacobian by forward mode,
//! by reverse mode and by the plan's choice, for a tall (n = 4, m = 256: more outputs than
//! inputs), a wide (n = 256, m = 4) and a square (64 × 64) shape.
//!
//! Forward mode costs ⌈n/N⌉ sweeps of N tangents (N = n up to 4, else 16 here), reverse mode
//! one recording plus ⌈m/Q⌉ sweeps of Q adjoints (Q = m up to 4, else 8), so forward should win
//! the tall shape and reverse the wide one; `auto` should match the winner.
//!
//! Ids per group `dense_n=<n>_m=<m>`: `f64`, `forward`, `reverse`, `auto`, and a
//! `PreparedJacobian` in reverse mode at a new point, `prepared_reverse` (its recording
//! re-evaluated by the interpreter) and `compiled_reverse` (compiled, feature `jit`); with
//! `--features peers` also `num_dual_jacobian_static`, `num_dual_jacobian_dyn` (num-dual's
//! forward mode, all n tangents in one sweep), `echidna_forward_dualvec8` (echidna's `DualVec<f64, 8>`,
//! ⌈n/8⌉ sweeps), `ad_trait_reverse`, `ad_trait_forward` (one
//! tangent per sweep) and `ad_trait_forward_multi8` (eight per sweep).
//!
//! The `jacobian` drivers may split their sweeps across threads (rayon's pool) when the work
//! is large; the peers run on one thread. `RAYON_NUM_THREADS=1` makes every entry
//! single-threaded, for a like-for-like table (and steadier numbers on a shared machine):
//!
//! ```sh
//! RAYON_NUM_THREADS=1 CARGO_BUILD_JOBS=1 cargo bench -p benches --bench dense --features peers -- --warm-up-time 1 --measurement-time 3
//! ```

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use jacobian::{Mode, Preparation, PreparedJacobian};
use workloads::{DenseTanh, Function, dense_input};

/// `(n, m)`: inputs and outputs.
const SHAPES: [(usize, usize); 3] = [(4, 256), (256, 4), (64, 64)];

fn bench(c: &mut Criterion) {
    for (n, m) in SHAPES {
        let f = DenseTanh::new(n, m);
        let x = dense_input(n);
        let mut group = c.benchmark_group(format!("dense_n={n}_m={m}"));

        group.bench_function("f64", |b| b.iter(|| f.eval(black_box(&x[..]))));
        for (id, mode) in [
            ("forward", Mode::Forward),
            ("reverse", Mode::Reverse),
            ("auto", Mode::Auto),
        ] {
            group.bench_function(id, |b| {
                b.iter(|| jacobian::jacobian_with(&f, black_box(&x), mode).unwrap())
            });
        }

        // A prepared Jacobian in reverse mode at a new point: its recording re-evaluated and
        // swept by the interpreter, or compiled (forward pass, scalar and vector sweeps).
        let y: Vec<f64> = x.iter().map(|v| v * 0.9 + 0.05).collect();
        for (id, how) in [
            ("prepared_reverse", Preparation::Reevaluate),
            ("compiled_reverse", Preparation::Compile),
        ] {
            let mut p = PreparedJacobian::with_preparation(&f, &x, Mode::Reverse, how).unwrap();
            let mut j = p.jacobian(&y).unwrap();
            if let Some(c) = &j.plan.compiled {
                println!("dense_n={n}_m={m}/{id}: {c}");
            }
            group.bench_function(id, |b| {
                b.iter(|| p.jacobian_into(black_box(&y), &mut j).unwrap())
            });
        }

        #[cfg(feature = "peers")]
        peers::bench(&mut group, &f, &x);

        group.finish();
    }
}

/// num-dual and ad_trait on the same layer, each checked against the analytic Jacobian before
/// it is timed.
#[cfg(feature = "peers")]
mod peers {
    use super::*;
    use ad_trait::differentiable_function::{ForwardAD, ForwardADMulti, ReverseAD};
    use ad_trait::forward_ad::adfn::adfn;
    use ad_trait::function_engine::FunctionEngine;
    use criterion::{BenchmarkGroup, measurement::WallTime};
    use nalgebra::{DMatrix, DVector, SMatrix, SVector};
    use num_dual::{DualDVec64, DualSVec64};
    use workloads::assert_close;
    use workloads::peers::{AdDense, dense_num_dual};

    /// Peer results must match ours to this relative difference before they are timed.
    const REL: f64 = 1e-10;

    /// num-dual's Jacobian with compile-time sizes: one sweep carrying all N tangents.
    fn num_dual_static<const N: usize, const M: usize>(
        f: &DenseTanh,
        x: &SVector<f64, N>,
    ) -> (SVector<f64, M>, SMatrix<f64, M, N>) {
        num_dual::jacobian(
            |v: SVector<DualSVec64<N>, N>| {
                SVector::<DualSVec64<N>, M>::from_iterator(dense_num_dual(f, v.as_slice()))
            },
            x,
        )
    }

    fn num_dual_dyn(f: &DenseTanh, x: &DVector<f64>) -> (DVector<f64>, DMatrix<f64>) {
        num_dual::jacobian(
            |v: DVector<DualDVec64>| DVector::from_vec(dense_num_dual(f, v.as_slice())),
            x,
        )
    }

    fn static_sized<const N: usize, const M: usize>(
        group: &mut BenchmarkGroup<'_, WallTime>,
        f: &DenseTanh,
        x: &[f64],
        want: &[f64],
    ) {
        let xs = SVector::<f64, N>::from_column_slice(x);
        let (_, j) = num_dual_static::<N, M>(f, &xs);
        assert_close(
            j.transpose().as_slice(),
            want,
            REL,
            "num_dual_jacobian_static",
        );
        group.bench_function("num_dual_jacobian_static", |b| {
            b.iter(|| num_dual_static::<N, M>(f, black_box(&xs)))
        });
    }

    pub(super) fn bench(group: &mut BenchmarkGroup<'_, WallTime>, f: &DenseTanh, x: &[f64]) {
        let want = f.jacobian(x);
        match (f.n, f.m) {
            (4, 256) => static_sized::<4, 256>(group, f, x, &want),
            (256, 4) => static_sized::<256, 4>(group, f, x, &want),
            (64, 64) => static_sized::<64, 64>(group, f, x, &want),
            _ => {}
        }

        let xd = DVector::from_column_slice(x);
        let (_, j) = num_dual_dyn(f, &xd);
        assert_close(
            j.transpose().as_slice(),
            &want,
            REL,
            "num_dual_jacobian_dyn",
        );
        group.bench_function("num_dual_jacobian_dyn", |b| {
            b.iter(|| num_dual_dyn(f, black_box(&xd)))
        });

        let j = workloads::peers::echidna_dense_jacobian8(f, x);
        assert_close(&j, &want, REL, "echidna_forward_dualvec8");
        group.bench_function("echidna_forward_dualvec8", |b| {
            b.iter(|| workloads::peers::echidna_dense_jacobian8(f, black_box(x)))
        });

        let ad = AdDense(f.clone());
        let reverse = FunctionEngine::new(ad.clone(), ad.clone(), ReverseAD::new());
        let (_, j) = reverse.derivative(x);
        assert_close(j.transpose().as_slice(), &want, REL, "ad_trait_reverse");
        group.bench_function("ad_trait_reverse", |b| {
            b.iter(|| reverse.derivative(black_box(x)))
        });

        let forward = FunctionEngine::new(ad.clone(), ad.clone(), ForwardAD::new());
        let (_, j) = forward.derivative(x);
        assert_close(j.transpose().as_slice(), &want, REL, "ad_trait_forward");
        group.bench_function("ad_trait_forward", |b| {
            b.iter(|| forward.derivative(black_box(x)))
        });

        let multi = FunctionEngine::new(ad.clone(), ad, ForwardADMulti::<adfn<8>>::new());
        let (_, j) = multi.derivative(x);
        assert_close(
            j.transpose().as_slice(),
            &want,
            REL,
            "ad_trait_forward_multi8",
        );
        group.bench_function("ad_trait_forward_multi8", |b| {
            b.iter(|| multi.derivative(black_box(x)))
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
