//! Lanes per forward sweep, measured: the full Jacobian by forward sweeps of 8, 16 and 32
//! tangents (`PreparedJacobian::with_lanes`, written in place by `jacobian_into`), on the
//! dense tanh layer and on Rosenbrock's gradient; and one 2×15 block of bundle adjustment, the
//! prepared Jacobian against one hand-built sweep of 16 lanes.
//!
//! Ids per group `lanes_dense_n=<n>_m=<m>` and `lanes_rosenbrock_n=<n>`: `f64`, `lanes=8`,
//! `lanes=16`, `lanes=32`, `planned` (the lanes the plan chooses). Group `ba_block`: `f64`
//! (the block's residuals), `hand_16_lanes` (15 `DualVec<f64, 16>` inputs seeded by hand, one
//! evaluation, the tangents copied out), `prepared_into` (`PreparedJacobian::jacobian_into`),
//! `prepared` (`PreparedJacobian::jacobian`, a new result per call), `jacobian` (the one-shot
//! driver, planning every call).
//!
//! ```sh
//! RAYON_NUM_THREADS=1 cargo bench -p benches --bench lanes -- --warm-up-time 1 --measurement-time 3
//! ```

use std::hint::black_box;

use criterion::{
    BenchmarkGroup, Criterion, criterion_group, criterion_main, measurement::WallTime,
};
use forward::DualVec;
use jacobian::PreparedJacobian;
use workloads::sparse::{BaBlock, BundleAdjustment};
use workloads::{DenseTanh, Function, Rosenbrock, dense_input, rosenbrock_input};

/// Forward Jacobians of `f` at `x` with each lane count, and with the plan's.
fn by_lanes<F: Function + Sync + Clone>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    f: &F,
    x: &[f64],
) {
    group.bench_function("f64", |b| b.iter(|| f.eval(black_box(x))));
    let want = jacobian::jacobian_with(f, x, jacobian::Mode::Forward)
        .unwrap()
        .matrix;
    for lanes in [8, 16, 32] {
        let mut p = PreparedJacobian::with_lanes(f.clone(), x, lanes).unwrap();
        let mut j = p.jacobian(x).unwrap();
        assert_eq!(
            j.matrix, want,
            "lanes = {lanes}: every lane count gives the same bits"
        );
        group.bench_function(format!("lanes={lanes}"), |b| {
            b.iter(|| p.jacobian_into(black_box(x), &mut j).unwrap())
        });
    }
    let mut p = PreparedJacobian::with_mode(f.clone(), x, jacobian::Mode::Forward).unwrap();
    let mut j = p.jacobian(x).unwrap();
    group.bench_function("planned", |b| {
        b.iter(|| p.jacobian_into(black_box(x), &mut j).unwrap())
    });
}

/// One hand-built sweep of 16 lanes over the block's 15 inputs: the floor a prepared Jacobian
/// is measured against.
fn hand_16_lanes(f: &BaBlock, x: &[f64], out: &mut [[f64; 15]; 2]) {
    let xs: [DualVec<f64, 16>; 15] = std::array::from_fn(|j| DualVec::variable(x[j], j));
    let ys = f.eval(&xs);
    for (row, y) in out.iter_mut().zip(&ys) {
        row.copy_from_slice(&y.tangent[..15]);
    }
}

fn bench(c: &mut Criterion) {
    for (n, m) in [(256, 4), (64, 64)] {
        let mut group = c.benchmark_group(format!("lanes_dense_n={n}_m={m}"));
        by_lanes(&mut group, &DenseTanh::new(n, m), &dense_input(n));
        group.finish();
    }
    for n in [100, 1000] {
        let mut group = c.benchmark_group(format!("lanes_rosenbrock_n={n}"));
        if n >= 1000 {
            group.sample_size(20);
        }
        by_lanes(&mut group, &Rosenbrock::new(n), &rosenbrock_input(n));
        group.finish();
    }

    let ba = BundleAdjustment::new(49, 7776, 31_843);
    let (block, x) = BaBlock::of(&ba, 1234);
    let mut group = c.benchmark_group("ba_block");
    group.bench_function("f64", |b| b.iter(|| block.eval(black_box(&x[..]))));
    let mut hand = [[0.0; 15]; 2];
    hand_16_lanes(&block, &x, &mut hand);
    group.bench_function("hand_16_lanes", |b| {
        b.iter(|| hand_16_lanes(&block, black_box(&x), &mut hand))
    });
    let mut p = PreparedJacobian::new(block, &x).unwrap();
    let mut j = p.jacobian(&x).unwrap();
    for (i, row) in hand.iter().enumerate() {
        for (k, &v) in row.iter().enumerate() {
            assert_eq!(
                j.matrix[(i, k)],
                v,
                "the prepared block equals the hand-built sweep"
            );
        }
    }
    group.bench_function("prepared_into", |b| {
        b.iter(|| p.jacobian_into(black_box(&x), &mut j).unwrap())
    });
    group.bench_function("prepared", |b| {
        b.iter(|| p.jacobian(black_box(&x)).unwrap())
    });
    for lanes in [8, 16] {
        let mut p = PreparedJacobian::with_lanes(block, &x, lanes).unwrap();
        let mut j = p.jacobian(&x).unwrap();
        group.bench_function(format!("prepared_into_lanes={lanes}"), |b| {
            b.iter(|| p.jacobian_into(black_box(&x), &mut j).unwrap())
        });
    }
    group.bench_function("jacobian", |b| {
        b.iter(|| jacobian::jacobian(&block, black_box(&x)).unwrap())
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
