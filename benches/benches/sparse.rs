//! Sparse Jacobians and Hessians: detection, colouring and compressed sweeps against the plain
//! function, against dense Jacobians, and against echidna's sparse drivers (`--features peers`).
//!
//! Groups and ids:
//! - `sparse_tridiagonal_n=<n>` (n = 10⁴, 10⁵): `f64` (the unit), `one_shot`
//!   ([`sparse_jacobian`]: detection, colouring, sweeps, CSR), `prepared` (at a new x, a new
//!   CSR matrix), `prepared_into` (at a new x, written over the last result),
//!   `detect_global`, `detect_local`, `colour_columns`, by rows (n = 10⁴ only, forced:
//!   3 colours, one sweep of 4 adjoints) `rows_recorded`, `rows_reevaluated` and
//!   `rows_compiled` (a prepared Jacobian recording `f` at each call, re-evaluating one
//!   recording, running it compiled), and with peers `echidna_one_shot`
//!   (n = 10⁴ only: its detection keeps n bits per tape entry, 8.75 GB at 10⁵) and
//!   `echidna_prepared`.
//! - `sparse_grid_k=100` (Bratu, 10⁴ unknowns): `f64`, `one_shot`, `prepared`,
//!   `prepared_into`, `detect_global` and `colour_columns` (the one-shot's other two parts),
//!   `dense` (the dense [`jacobian`](jacobian::jacobian), 800 MB of matrix).
//! - `sparse_ba` (GradBench `ba`, 49 cameras, 7 776 points, 31 843 observations): `f64`,
//!   `prepared`, `prepared_into`, `one_shot`, `f_on_seeded_duals` (f on the 16-lane duals of
//!   the prepared sweep, built once: the floor of any one-sweep forward method), and
//!   `echidna_prepared_with_our_pattern` (echidna's detection would take 17 GB there).
//! - `sparse_hessian_rosenbrock_n=<n>` (n = 100, 10⁴): `f64`, `one_shot`, `prepared` (forward
//!   over reverse, recorded afresh), `prepared_compiled` (one compiled Hessian-vector product
//!   per colour, [`Preparation::Compile`]), and with peers `echidna_one_shot`,
//!   `echidna_prepared`.
//! - `sparse_hessian_sinquad_n=64`: `f64`, `one_shot`, `dense_hessian` (`jacobian::hessian`),
//!   `pattern` (`hessian_pattern`): a dense Hessian asked of the sparse driver.
//! - `kmeans_newton` (GradBench `kmeans`, k = 100, n = 1000, d = 8): `f64`, `prepared` (the
//!   Hessian's diagonal by one compressed product, then gradient ⊘ diagonal),
//!   `prepared_compiled` (that product compiled), `one_shot`, and
//!   `hvp_all_ones` (one [`hvp`](jacobian::hvp) along all-ones: what knowing the Hessian is
//!   diagonal allows).
//!
//! ```text
//! RAYON_NUM_THREADS=1 cargo bench -p benches --features peers --bench sparse
//! python3 benches/table.py --filter sparse
//! ```

use criterion::{Criterion, criterion_group, criterion_main};
use forward::DualVec;
use jacobian::sparse::{
    Detection, Order, PreparedSparseHessian, PreparedSparseJacobian, SparseJacobian, SparseOptions,
    colour_columns, hessian_pattern, jacobian_pattern, sparse_hessian, sparse_jacobian,
};
use jacobian::{Mode, Preparation};
use std::hint::black_box;
use workloads::gradbench::Kmeans;
use workloads::sparse::{BundleAdjustment, Grid, Tridiagonal};
use workloads::{Function, Rosenbrock, SinQuad, assert_close, dense_input, rosenbrock_input};

/// A point near `x` but not equal: where the prepared objects are timed.
fn shifted(x: &[f64]) -> Vec<f64> {
    x.iter()
        .enumerate()
        .map(|(i, v)| v + 1e-3 * ((i % 7) as f64 - 3.0))
        .collect()
}

/// The nonzeros of a CSR matrix in row order.
fn values(j: &SparseJacobian) -> Vec<f64> {
    j.matrix.values().to_vec()
}

/// `f64`, `one_shot` and `prepared` for a sparse Jacobian, checked against `dense` (values in
/// the pattern's order) where given.
fn jacobian_ids<F: Function + Sync>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    f: &F,
    x: &[f64],
    want: Option<&[f64]>,
) {
    let y = shifted(x);
    group.bench_function("f64", |b| b.iter(|| f.eval(black_box(&y))));
    let one = sparse_jacobian(f, x).unwrap();
    if let Some(want) = want {
        assert_close(&values(&one), want, 1e-12, "one-shot sparse Jacobian");
    }
    println!("{}", one.plan);
    group.bench_function("one_shot", |b| {
        b.iter(|| sparse_jacobian(f, black_box(x)).unwrap())
    });
    let mut prepared = PreparedSparseJacobian::new(f, x).unwrap();
    assert_eq!(
        values(&prepared.jacobian(&y).unwrap()),
        values(&sparse_jacobian(f, &y).unwrap())
    );
    group.bench_function("prepared", |b| {
        b.iter(|| prepared.jacobian(black_box(&y)).unwrap())
    });
    // A Newton loop's call: the values written over the last result, the pattern not copied.
    let mut j = prepared.jacobian(&y).unwrap();
    group.bench_function("prepared_into", |b| {
        b.iter(|| prepared.jacobian_into(black_box(&y), &mut j).unwrap())
    });
}

/// A prepared sparse Jacobian swept by rows (forced), its recording obtained three ways:
/// `rows_recorded` records `f` at each call, `rows_reevaluated` re-evaluates one recording,
/// `rows_compiled` runs it compiled (feature `jit`). All three give the same bits.
fn by_rows<F: Function + Sync>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    f: &F,
    x: &[f64],
) {
    let y = shifted(x);
    let rows = SparseOptions {
        mode: Mode::Reverse,
        ..SparseOptions::default()
    };
    let mut want = None;
    for (id, preparation) in [
        ("rows_recorded", Preparation::Record),
        ("rows_reevaluated", Preparation::Reevaluate),
        ("rows_compiled", Preparation::Compile),
    ] {
        let mut p = PreparedSparseJacobian::with_preparation(f, x, rows, preparation).unwrap();
        let mut j = p.jacobian(&y).unwrap();
        println!("{id}: {}", j.plan);
        let got = values(&j);
        assert_eq!(got, *want.get_or_insert_with(|| got.clone()), "{id}");
        group.bench_function(id, |b| {
            b.iter(|| p.jacobian_into(black_box(&y), &mut j).unwrap())
        });
    }
}

fn tridiagonal(c: &mut Criterion) {
    for n in [10_000, 100_000] {
        let f = Tridiagonal::new(n);
        let x = f.input();
        let mut group = c.benchmark_group(format!("sparse_tridiagonal_n={n}"));
        group.sample_size(20);
        // Exact values: cos xᵢ − 2 on the diagonal, 1 beside it.
        let want: Vec<f64> = (0..n)
            .flat_map(|i| {
                let mut row = Vec::new();
                if i > 0 {
                    row.push(1.0);
                }
                row.push(x[i].cos() - 2.0);
                if i + 1 < n {
                    row.push(1.0);
                }
                row
            })
            .collect();
        jacobian_ids(&mut group, &f, &x, Some(&want));
        group.bench_function("detect_global", |b| {
            b.iter(|| jacobian_pattern(&f, black_box(&x), Detection::Global).unwrap())
        });
        group.bench_function("detect_local", |b| {
            b.iter(|| jacobian_pattern(&f, black_box(&x), Detection::Local).unwrap())
        });
        let p = f.pattern();
        group.bench_function("colour_columns", |b| {
            b.iter(|| colour_columns(black_box(&p), Order::Natural))
        });
        if n <= 10_000 {
            by_rows(&mut group, &f, &x);
        }
        #[cfg(feature = "peers")]
        {
            use workloads::peers::{EchidnaSparseJacobian, echidna_sparse_jacobian};
            if n <= 10_000 {
                let (_, _, v) = echidna_sparse_jacobian(&f, &x);
                assert_close(&v, &want, 1e-12, "echidna one-shot");
                group.bench_function("echidna_one_shot", |b| {
                    b.iter(|| echidna_sparse_jacobian(&f, black_box(&x)))
                });
            }
            let mut e = EchidnaSparseJacobian::with_pattern(&f, &x, &p);
            group.bench_function("echidna_prepared", |b| {
                b.iter(|| e.at(black_box(&shifted(&x))))
            });
        }
        group.finish();
    }
}

fn grid(c: &mut Criterion) {
    let f = Grid::new(100);
    let x = f.input();
    let mut group = c.benchmark_group("sparse_grid_k=100");
    group.sample_size(10);
    jacobian_ids(&mut group, &f, &x, None);
    let dense = jacobian::jacobian(&f, &x).unwrap();
    let sparse = sparse_jacobian(&f, &x).unwrap();
    for (i, j, v) in sparse.triplets() {
        assert_eq!(v, dense.matrix[(i, j)], "({i}, {j})");
    }
    assert_eq!(sparse.to_dense(), dense.matrix);
    drop((dense, sparse));
    // Where the one-shot's time goes, beside `prepared_into` (the sweep).
    let p = f.pattern();
    assert_eq!(jacobian_pattern(&f, &x, Detection::Global).unwrap(), p);
    group.bench_function("detect_global", |b| {
        b.iter(|| jacobian_pattern(&f, black_box(&x), Detection::Global).unwrap())
    });
    group.bench_function("colour_columns", |b| {
        b.iter(|| colour_columns(black_box(&p), Order::Natural))
    });
    group.bench_function("dense", |b| {
        b.iter(|| jacobian::jacobian(&f, black_box(&x)).unwrap())
    });
    group.finish();
}

fn bundle_adjustment(c: &mut Criterion) {
    let f = BundleAdjustment::new(49, 7_776, 31_843);
    let x = f.input();
    let mut group = c.benchmark_group("sparse_ba");
    group.sample_size(10);
    jacobian_ids(&mut group, &f, &x, None);
    // The floor of any one-sweep forward method here: f on the 16-lane duals the prepared sweep
    // seeds (lane = the column's colour), built once; no inputs written, no outputs read.
    let y = shifted(&x);
    let mut prepared = PreparedSparseJacobian::new(&f, &x).unwrap();
    let colouring = prepared
        .colouring()
        .expect("ba is swept by a column colouring")
        .clone();
    assert_eq!((prepared.plan().lanes, prepared.plan().sweeps), (16, 1));
    let duals: Vec<DualVec<f64, 16>> = (y.iter().zip(&colouring.colours))
        .map(|(&v, &colour)| DualVec::variable(v, colour))
        .collect();
    // The same sweep: its tangents are the prepared Jacobian's entries, bit for bit.
    let swept = f.eval(&duals);
    assert_eq!(
        swept.iter().map(|d| d.primal).collect::<Vec<_>>(),
        f.eval(&y)
    );
    for (i, j, v) in prepared.jacobian(&y).unwrap().triplets() {
        assert_eq!(
            swept[i].tangent[colouring.colours[j]], v,
            "entry ({i}, {j})"
        );
    }
    group.bench_function("f_on_seeded_duals", |b| {
        b.iter(|| f.eval(black_box(&duals)))
    });
    #[cfg(feature = "peers")]
    {
        use workloads::peers::EchidnaSparseJacobian;
        let y = shifted(&x);
        let mut e = EchidnaSparseJacobian::with_pattern(&f, &x, &f.pattern());
        let ours = sparse_jacobian(&f, &y).unwrap();
        assert_close(&e.at(&y).1, &values(&ours), 1e-10, "echidna ba");
        group.bench_function("echidna_prepared_with_our_pattern", |b| {
            b.iter(|| e.at(black_box(&y)))
        });
    }
    group.finish();
}

fn hessians(c: &mut Criterion) {
    for n in [100, 10_000] {
        let f = Rosenbrock::new(n);
        let x = rosenbrock_input(n);
        let y = shifted(&x);
        let mut group = c.benchmark_group(format!("sparse_hessian_rosenbrock_n={n}"));
        group.bench_function("f64", |b| b.iter(|| f.eval(black_box(&y))));
        let h = sparse_hessian(&f, &x).unwrap();
        println!("{}", h.plan);
        if n <= 100 {
            let dense = jacobian::hessian(&f, &x).unwrap().matrix;
            for (i, j, v) in h.triplets() {
                assert!((v - dense[(i, j)]).abs() <= 1e-10 * dense[(i, j)].abs().max(1.0));
            }
        }
        group.bench_function("one_shot", |b| {
            b.iter(|| sparse_hessian(&f, black_box(&x)).unwrap())
        });
        let mut prepared = PreparedSparseHessian::new(&f, &x).unwrap();
        group.bench_function("prepared", |b| {
            b.iter(|| prepared.hessian(black_box(&y)).unwrap())
        });
        let options = SparseOptions::default();
        let mut compiled =
            PreparedSparseHessian::with_preparation(&f, &x, options, Preparation::Compile).unwrap();
        let (ours, want) = (compiled.hessian(&y).unwrap(), prepared.hessian(&y).unwrap());
        println!("{}", ours.plan);
        assert_close(
            ours.matrix.values(),
            want.matrix.values(),
            1e-12,
            "compiled products",
        );
        group.bench_function("prepared_compiled", |b| {
            b.iter(|| compiled.hessian(black_box(&y)).unwrap())
        });
        #[cfg(feature = "peers")]
        {
            use workloads::peers::{EchidnaSparseHessian, echidna_sparse_hessian};
            group.bench_function("echidna_one_shot", |b| {
                b.iter(|| echidna_sparse_hessian(&f, black_box(&x)))
            });
            let e = EchidnaSparseHessian::new(&f, &x);
            group.bench_function("echidna_prepared", |b| b.iter(|| e.at(black_box(&y))));
        }
        group.finish();
    }
}

fn kmeans(c: &mut Criterion) {
    let f = Kmeans::new(100, 1000, 8);
    let x = f.input();
    let mut group = c.benchmark_group("kmeans_newton");
    group.bench_function("f64", |b| b.iter(|| f.eval(black_box(&x))));
    let direction = |h: &jacobian::sparse::SparseHessian| -> Vec<f64> {
        // The Hessian is diagonal: its nonzeros are the diagonal, in order.
        assert_eq!(h.matrix.nnz(), h.gradient.len());
        h.gradient
            .iter()
            .zip(h.matrix.values())
            .map(|(g, d)| g / d)
            .collect()
    };
    let h = sparse_hessian(&f, &x).unwrap();
    println!("{}", h.plan);
    assert_close(&direction(&h), &f.dir(&x), 1e-12, "kmeans Newton direction");
    let mut prepared = PreparedSparseHessian::new(&f, &x).unwrap();
    group.bench_function("prepared", |b| {
        b.iter(|| direction(&prepared.hessian(black_box(&x)).unwrap()))
    });
    let options = SparseOptions::default();
    let mut compiled =
        PreparedSparseHessian::with_preparation(&f, &x, options, Preparation::Compile).unwrap();
    let h = compiled.hessian(&x).unwrap();
    println!("{}", h.plan);
    assert_close(
        &direction(&h),
        &f.dir(&x),
        1e-12,
        "kmeans Newton direction, compiled",
    );
    group.bench_function("prepared_compiled", |b| {
        b.iter(|| direction(&compiled.hessian(black_box(&x)).unwrap()))
    });
    group.bench_function("one_shot", |b| {
        b.iter(|| direction(&sparse_hessian(&f, black_box(&x)).unwrap()))
    });
    // What a user who knows the Hessian is diagonal writes: one hvp along all-ones.
    let ones = vec![1.0; x.len()];
    group.bench_function("hvp_all_ones", |b| {
        b.iter(|| jacobian::hvp(&f, black_box(&x), &ones).unwrap())
    });
    group.finish();
}

/// A dense Hessian asked of the sparse driver: `SinQuad`, every entry nonzero. The plan should
/// see the full pattern and pay little more than the dense Hessian.
fn dense_hessian(c: &mut Criterion) {
    let n = 64;
    let f = SinQuad::new(n);
    let x = dense_input(n);
    let mut group = c.benchmark_group(format!("sparse_hessian_sinquad_n={n}"));
    group.bench_function("f64", |b| b.iter(|| f.eval(black_box(&x))));
    let h = sparse_hessian(&f, &x).unwrap();
    println!("{}", h.plan);
    let dense = jacobian::hessian(&f, &x).unwrap().matrix;
    assert_eq!(h.to_dense(), dense);
    group.bench_function("one_shot", |b| {
        b.iter(|| sparse_hessian(&f, black_box(&x)).unwrap())
    });
    group.bench_function("dense_hessian", |b| {
        b.iter(|| jacobian::hessian(&f, black_box(&x)).unwrap())
    });
    group.bench_function("pattern", |b| {
        b.iter(|| hessian_pattern(&f, black_box(&x), Detection::Auto).unwrap())
    });
    group.finish();
}

criterion_group!(
    benches,
    tridiagonal,
    grid,
    bundle_adjustment,
    hessians,
    dense_hessian,
    kmeans
);
criterion_main!(benches);
