//! Second derivatives: the dense Hessian by each mode pair and by `Auto`, and Hessian-vector
//! products, on Rosenbrock (a chain, tridiagonal Hessian) and on `SinQuad` (every entry of the
//! Hessian non-zero), with echidna's Hessians timed in the same run (`--features peers`).
//!
//! Ids per group `hessian_<function>_n=<n>`: `f64` (the plain function, the unit of every
//! ratio), `gradient` (ours, one recording and one sweep), `auto`, one id per pair
//! (`forward_over_reverse`, …), `hvp` (one Hessian-vector product), `prepared_hvp` and
//! `compiled_hvp` (a [`PreparedHvp`]'s product at the same point: its recording re-evaluated,
//! and compiled), `prepared_hessian` and `compiled_hessian` (a [`PreparedHessian`]'s whole
//! Hessian at the same point: reverse over reverse recorded once, re-evaluated, and compiled),
//! `hvp_many_8` (eight
//! directions in one recording) against `hvp_8_calls` (eight `hvp`s), and with peers
//! `echidna_hessian_vec8` (record, then `hessian_vec::<8>`: 8 directions per sweep),
//! `echidna_hessian` (record, then one direction per sweep), `echidna_hvp` (record, then `hvp`)
//! and `echidna_hessian_vec8_prerecorded` (the recording outside the timed call: echidna's
//! bytecode tape re-evaluated at a new point, as `prepared_hvp` re-evaluates ours).
//!
//! ```text
//! cargo bench -p benches --features peers --bench hessian
//! python3 benches/table.py --filter hessian
//! ```

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, criterion_group, criterion_main};
use jacobian::{Pair, Preparation, PreparedHessian, PreparedHvp};
use std::hint::black_box;
use workloads::{
    Function, Rosenbrock, SinQuad, assert_close, rosenbrock_hessian, rosenbrock_input,
};

/// Pair ids as they appear in the tables.
fn id(pair: Pair) -> &'static str {
    match pair {
        Pair::ForwardOverReverse => "forward_over_reverse",
        Pair::ReverseOverForward => "reverse_over_forward",
        Pair::ForwardOverForward => "forward_over_forward",
        Pair::ReverseOverReverse => "reverse_over_reverse",
        Pair::Auto => "auto",
    }
}

/// Times every pair, `Auto`, the gradient and one HVP of `f` at `x`, each Hessian checked
/// against `want` (row-major) before it is timed.
fn pairs<F: Function + Sync>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    f: &F,
    x: &[f64],
    want: &[f64],
) {
    group.bench_function("f64", |b| b.iter(|| f.eval(black_box(x))));
    group.bench_function("gradient", |b| {
        b.iter(|| jacobian::gradient(f, black_box(x)).unwrap())
    });
    for pair in [Pair::Auto].into_iter().chain(Pair::ALL) {
        let h = jacobian::hessian_with(f, x, pair).unwrap();
        assert_close(h.matrix.as_slice(), want, 1e-10, id(pair));
        group.bench_function(id(pair), |b| {
            b.iter(|| jacobian::hessian_with(f, black_box(x), pair).unwrap())
        });
    }
    let v: Vec<f64> = (0..x.len()).map(|i| 1.0 / (1.0 + i as f64)).collect();
    group.bench_function("hvp", |b| {
        b.iter(|| jacobian::hvp(f, black_box(x), black_box(&v)).unwrap())
    });
    // Prepared: the directional derivative recorded once, re-evaluated at each call, and
    // compiled (feature `jit`); both agree with `hvp` to rounding and with each other exactly.
    let want_hv = jacobian::hvp(f, x, &v).unwrap().product;
    let mut last = None;
    for (name, preparation) in [
        ("prepared_hvp", Preparation::Reevaluate),
        ("compiled_hvp", Preparation::Compile),
    ] {
        let mut p = PreparedHvp::with_preparation(f, x, preparation).unwrap();
        let got = p.hvp(x, &v).unwrap().product;
        assert_close(&got, &want_hv, 1e-12, name);
        assert_eq!(*last.get_or_insert_with(|| got.clone()), got, "{name}");
        group.bench_function(name, |b| {
            b.iter(|| p.hvp(black_box(x), black_box(&v)).unwrap())
        });
    }
    // The whole Hessian prepared (reverse over reverse recorded once): re-evaluated at each
    // call, and compiled (feature `jit`); both the one-shot reverse-over-reverse bits.
    let rr = jacobian::hessian_with(f, x, Pair::ReverseOverReverse).unwrap();
    for (name, preparation) in [
        ("prepared_hessian", Preparation::Reevaluate),
        ("compiled_hessian", Preparation::Compile),
    ] {
        let mut p = PreparedHessian::with_preparation(f, x, preparation).unwrap();
        assert_eq!(p.hessian(x).unwrap().matrix, rr.matrix, "{name}");
        group.bench_function(name, |b| b.iter(|| p.hessian(black_box(x)).unwrap()));
    }
    // Eight directions: one recording of 8-tangent duals, against eight `hvp` calls.
    let n = x.len();
    let vs = nalgebra::DMatrix::from_fn(n, 8, |i, k| ((i + 3 * k) as f64).sin());
    let many = jacobian::hvp_many(f, x, &vs).unwrap();
    let one = jacobian::hvp(f, x, vs.column(3).as_slice())
        .unwrap()
        .product;
    assert_close(many.column(3).as_slice(), &one, 1e-12, "hvp_many");
    group.bench_function("hvp_many_8", |b| {
        b.iter(|| jacobian::hvp_many(f, black_box(x), black_box(&vs)).unwrap())
    });
    group.bench_function("hvp_8_calls", |b| {
        b.iter(|| {
            for k in 0..8 {
                black_box(jacobian::hvp(f, black_box(x), vs.column(k).as_slice()).unwrap());
            }
        })
    });
}

fn bench(c: &mut Criterion) {
    for n in [4, 16, 100] {
        let f = Rosenbrock::new(n);
        let x = rosenbrock_input(n);
        let mut group = c.benchmark_group(format!("hessian_rosenbrock_n={n}"));
        let want = rosenbrock_hessian(&x);
        pairs(&mut group, &f, &x, &want);
        #[cfg(feature = "peers")]
        peers::bench(
            &mut group,
            &|v| workloads::peers::rosenbrock_float(v),
            &x,
            &want,
        );
        group.finish();
    }
    for n in [8, 64] {
        let f = SinQuad::new(n);
        let x = workloads::dense_input(n);
        let mut group = c.benchmark_group(format!("hessian_sinquad_n={n}"));
        let want = f.hessian(&x);
        pairs(&mut group, &f, &x, &want);
        #[cfg(feature = "peers")]
        {
            use workloads::peers::FloatObjective;
            peers::bench(&mut group, &|v| f.eval_float(v), &x, &want);
        }
        group.finish();
    }
}

/// echidna's dense Hessians and HVP on its bytecode tape, checked before they are timed.
#[cfg(feature = "peers")]
mod peers {
    use super::*;
    use echidna::BReverse;

    pub(super) fn bench(
        group: &mut BenchmarkGroup<'_, WallTime>,
        f: &dyn Fn(&[BReverse<f64>]) -> BReverse<f64>,
        x: &[f64],
        want: &[f64],
    ) {
        let record = |x: &[f64]| echidna::record(f, x).0;
        let (_, _, h) = record(x).hessian_vec::<8>(x);
        assert_close(&h.concat(), want, 1e-10, "echidna_hessian_vec8");
        group.bench_function("echidna_hessian_vec8", |b| {
            b.iter(|| record(black_box(x)).hessian_vec::<8>(x))
        });
        let (_, _, h) = record(x).hessian(x);
        assert_close(&h.concat(), want, 1e-10, "echidna_hessian");
        group.bench_function("echidna_hessian", |b| {
            b.iter(|| record(black_box(x)).hessian(x))
        });
        let v: Vec<f64> = (0..x.len()).map(|i| 1.0 / (1.0 + i as f64)).collect();
        group.bench_function("echidna_hvp", |b| {
            b.iter(|| record(black_box(x)).hvp(x, black_box(&v)))
        });
        let tape = record(x);
        group.bench_function("echidna_hessian_vec8_prerecorded", |b| {
            b.iter(|| tape.hessian_vec::<8>(black_box(x)))
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
