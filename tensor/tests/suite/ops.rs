//! The shape, selection and batched-matmul operators: exact values, gradients against finite
//! differences, and the batched product against the scalar tape.

use super::*;
use ndarray::{Axis, Zip, s};
use reverse::{Tape, Var};

/// Operand shapes of batched products, batch axes broadcasting, 1-D operands included.
fn matmul_pairs() -> Vec<(Vec<usize>, Vec<usize>)> {
    vec![
        (vec![2, 3, 4], vec![4, 2]),
        (vec![3, 4], vec![2, 4, 5]),
        (vec![2, 1, 2, 3], vec![3, 3, 1]),
        (vec![4], vec![2, 4, 3]),
        (vec![2, 3, 4], vec![4]),
        (vec![1, 2, 3], vec![2, 3, 2]),
    ]
}

fn matmul_case() -> impl Strategy<Value = (ArrayD<f64>, ArrayD<f64>)> {
    prop::sample::select(matmul_pairs())
        .prop_flat_map(|(sa, sb)| (array_strategy(sa, -2.0..2.0), array_strategy(sb, -2.0..2.0)))
}

const SHAPE_OPS: usize = 11;

/// A shape or selection op of a (2, 3) tensor `x` (and `y` of the same shape).
fn shape_op(k: usize, x: &Tensor, y: &Tensor) -> Tensor {
    let cond = array![[true, false, true], [false, false, true]].into_dyn();
    match k {
        0 => x.transpose(0, -1).unwrap(),
        1 => x.unsqueeze(1).unwrap().expand(&[2, 4, 3]).unwrap(),
        2 => x.unsqueeze(-1).unwrap().squeeze(2).unwrap(),
        3 => x.index_select(1, &[2, 0, 2]).unwrap(),
        4 => x.narrow(-1, 1, 2).unwrap(),
        5 => x.gather(1, &array![[2, 2], [0, 1]].into_dyn()).unwrap(),
        6 => Tensor::cat(&[x, y, x], 1).unwrap(),
        7 => Tensor::stack(&[x, y], 1).unwrap(),
        8 => Tensor::where_(&cond, x, y).unwrap(),
        9 => x
            .masked_fill(&array![false, true, false].into_dyn(), 5.0)
            .unwrap(),
        _ => x.gather(0, &array![[1, 0, 1]].into_dyn()).unwrap(),
    }
}

/// The same op by ndarray on arrays of tape variables: the reference semantics.
fn shape_op_on_vars(k: usize, x: &ArrayD<Var>, y: &ArrayD<Var>) -> ArrayD<Var> {
    let cond = array![[true, false, true], [false, false, true]].into_dyn();
    let five = Var::constant(5.0);
    match k {
        0 => x.t().to_owned(),
        1 => x
            .clone()
            .insert_axis(Axis(1))
            .broadcast(IxDyn(&[2, 4, 3]))
            .unwrap()
            .to_owned(),
        2 => x.clone(),
        3 => x.select(Axis(1), &[2, 0, 2]),
        4 => x.slice(s![.., 1..3]).to_owned().into_dyn(),
        5 => array![[x[[0, 2]], x[[0, 2]]], [x[[1, 0]], x[[1, 1]]]].into_dyn(),
        6 => ndarray::concatenate(Axis(1), &[x.view(), y.view(), x.view()]).unwrap(),
        7 => ndarray::stack(Axis(1), &[x.view(), y.view()]).unwrap(),
        8 => Zip::from(&cond)
            .and(x)
            .and(y)
            .map_collect(|&c, &a, &b| if c { a } else { b }),
        9 => {
            let mut out = x.clone();
            out.slice_mut(s![.., 1]).fill(five);
            out
        }
        _ => array![[x[[1, 0]], x[[0, 1]], x[[1, 2]]]].into_dyn(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Each shape or selection op against the same op done by ndarray on tape variables:
    /// values equal, gradients of `Σ w·s²` equal to 1e-12.
    #[test]
    fn shape_ops_match_the_scalar_tape(
        k in 0..SHAPE_OPS,
        x in array_strategy(vec![2, 3], -2.0..2.0),
        y in array_strategy(vec![2, 3], -2.0..2.0),
    ) {
        let (tx, ty) = (Tensor::new(x.clone(), true), Tensor::new(y.clone(), true));
        let out = shape_op(k, &tx, &ty);
        let w = weights(&out.shape());
        (&(&out * &out) * &Tensor::new(w.clone(), false)).sum().backward().unwrap();

        let tape = Tape::new();
        let (vx, vy) = (x.mapv(|v| tape.var(v)), y.mapv(|v| tape.var(v)));
        let reference = shape_op_on_vars(k, &vx, &vy);
        prop_assert_eq!(reference.shape().to_vec(), out.shape());
        for (r, o) in reference.iter().zip(out.data().iter()) {
            prop_assert_eq!(r.value(), *o);
        }
        let loss: Var = reference.iter().zip(w.iter()).map(|(&r, &wi)| r * r * Var::constant(wi)).sum();
        let grads = tape.gradient(loss);
        let zero = ArrayD::zeros(x.raw_dim());
        for (t, vars) in [(&tx, &vx), (&ty, &vy)] {
            let g = t.grad().unwrap_or_else(|| zero.clone());
            for (&gi, &v) in g.iter().zip(vars.iter()) {
                prop_assert!((gi - grads.wrt(v)).abs() <= 1e-12, "op {}: {} vs {}", k, gi, grads.wrt(v));
            }
        }
    }

    #[test]
    fn batched_matmul_against_finite_differences((a, b) in matmul_case()) {
        check_gradients(&|ts: &[Tensor]| ts[0].matmul(&ts[1]).unwrap(), &[a, b])?;
    }

    /// Every output element of the batched product is a dot product on the tape; the
    /// gradients sum over the batch axes that broadcast, as the tape's adjoints accumulate.
    #[test]
    fn batched_matmul_matches_the_scalar_tape((a, b) in matmul_case()) {
        let (ta, tb) = (Tensor::new(a.clone(), true), Tensor::new(b.clone(), true));
        let c = ta.matmul(&tb).unwrap();
        let w = weights(&c.shape());
        (&c * &Tensor::new(w.clone(), false)).sum().backward().unwrap();

        // The same product by hand: promote, broadcast, and multiply matrix by matrix.
        let tape = Tape::new();
        let pa = if a.ndim() == 1 { a.clone().insert_axis(ndarray::Axis(0)) } else { a.clone() };
        let pb = if b.ndim() == 1 { b.clone().insert_axis(ndarray::Axis(1)) } else { b.clone() };
        let va = pa.mapv(|v| tape.var(v));
        let vb = pb.mapv(|v| tape.var(v));
        let (m, k, n) = (pa.shape()[pa.ndim() - 2], pa.shape()[pa.ndim() - 1], pb.shape()[pb.ndim() - 1]);
        let batch = broadcast_shapes("t", &pa.shape()[..pa.ndim() - 2], &pb.shape()[..pb.ndim() - 2]).unwrap();
        let full = |s: &[usize], r: usize, c: usize| -> Vec<usize> { s.iter().copied().chain([r, c]).collect() };
        let ba = va.broadcast(IxDyn(&full(&batch, m, k))).unwrap().to_owned();
        let bb = vb.broadcast(IxDyn(&full(&batch, k, n))).unwrap().to_owned();
        let count: usize = batch.iter().product();
        let ba = ba.to_shape((count, m, k)).unwrap().to_owned();
        let bb = bb.to_shape((count, k, n)).unwrap().to_owned();
        let flat_w: Vec<f64> = w.iter().copied().collect();
        let mut terms = Vec::new();
        for i in 0..count {
            for r in 0..m {
                for col in 0..n {
                    let dot: Var = (0..k).map(|j| ba[[i, r, j]] * bb[[i, j, col]]).sum();
                    let at = (i * m + r) * n + col;
                    prop_assert!((c.data().iter().nth(at).unwrap() - dot.value()).abs() <= 1e-12);
                    terms.push(dot * Var::constant(flat_w[at]));
                }
            }
        }
        let grads = tape.gradient(terms.into_iter().sum::<Var>());
        for (&g, &v) in grad_of(&ta).iter().zip(va.iter()) {
            prop_assert!((g - grads.wrt(v)).abs() <= 1e-12, "{} vs {}", g, grads.wrt(v));
        }
        for (&g, &v) in grad_of(&tb).iter().zip(vb.iter()) {
            prop_assert!((g - grads.wrt(v)).abs() <= 1e-12, "{} vs {}", g, grads.wrt(v));
        }
    }

    #[test]
    fn shape_ops_against_finite_differences(
        k in 0..SHAPE_OPS,
        x in array_strategy(vec![2, 3], -2.0..2.0),
        y in array_strategy(vec![2, 3], -2.0..2.0),
    ) {
        // Squared, so that the gradient depends on the values moved.
        let f = move |ts: &[Tensor]| {
            let s = shape_op(k, &ts[0], &ts[1]);
            &s * &s
        };
        check_gradients(&f, &[x, y])?;
    }
}

#[test]
fn shape_ops_give_numpy_values() {
    let x = Tensor::new(array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], false);
    let y = Tensor::new(array![[10.0, 20.0, 30.0], [40.0, 50.0, 60.0]], false);
    let v = |k| shape_op(k, &x, &y).data();
    assert_eq!(v(0), array![[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]].into_dyn());
    assert_eq!(v(1).shape(), &[2, 4, 3]);
    assert_eq!(v(1).index_axis(ndarray::Axis(1), 3), x.data().view());
    assert_eq!(v(5), array![[3.0, 3.0], [4.0, 5.0]].into_dyn());
    assert_eq!(v(6).shape(), &[2, 9]);
    assert_eq!(v(6)[[1, 4]], 50.0);
    assert_eq!(
        v(7),
        array![
            [[1.0, 2.0, 3.0], [10.0, 20.0, 30.0]],
            [[4.0, 5.0, 6.0], [40.0, 50.0, 60.0]]
        ]
        .into_dyn()
    );
    assert_eq!(v(8), array![[1.0, 20.0, 3.0], [40.0, 50.0, 6.0]].into_dyn());
    assert_eq!(v(9), array![[1.0, 5.0, 3.0], [4.0, 5.0, 6.0]].into_dyn());
    assert_eq!(v(10), array![[4.0, 2.0, 6.0]].into_dyn());
}

#[test]
fn shape_op_errors_name_the_shapes() {
    let x = Tensor::<f64>::zeros(&[2, 3]);
    let msg = |r: Result<Tensor, TensorError>| r.unwrap_err().to_string();
    assert!(msg(x.transpose(0, 2)).contains("axis 2"));
    assert!(msg(x.squeeze(1)).contains("[2, 3]"));
    assert!(msg(x.expand(&[2, 4])).contains("[2, 4]"));
    assert!(msg(x.index_select(0, &[2])).contains("index 2"));
    assert!(msg(x.narrow(1, 2, 5)).contains("2..7"));
    assert!(
        msg(x.gather(
            1,
            &array![[0]]
                .into_dyn()
                .into_shape_with_order(IxDyn(&[1]))
                .unwrap()
        ))
        .contains("gather")
    );
    assert!(msg(x.gather(0, &array![[0, 0, 0, 0]].into_dyn())).contains("[1, 4]"));
    let z = Tensor::<f64>::zeros(&[3, 3]);
    assert!(msg(Tensor::cat(&[&x, &z], 1)).contains("[3, 3]"));
    assert!(msg(Tensor::stack(&[&x, &z], 0)).contains("[3, 3]"));
    assert!(Tensor::<f64>::cat(&[], 0).is_err());
    assert!(msg(Tensor::where_(&array![true, false].into_dyn(), &x, &z)).contains("[2, 3]"));
}

/// `a · b` by plain sums in f64, the reference for the product kernels.
fn plain_product(a: &ndarray::Array2<f64>, b: &ndarray::Array2<f64>) -> ndarray::Array2<f64> {
    ndarray::Array2::from_shape_fn((a.nrows(), b.ncols()), |(i, j)| {
        (0..a.ncols()).map(|l| a[[i, l]] * b[[l, j]]).sum()
    })
}

/// The kernels behind `matmul` (the `gemm` crate's for f32 and f64) on sizes that leave a
/// remainder in every block of theirs, degenerate and empty ones included, in both element
/// types: the product, and both gradients (whose products take transposed, strided operands),
/// against plain sums.
#[test]
fn product_kernels_against_plain_sums() {
    for (m, k, n) in [
        (67, 130, 71),
        (1, 300, 5),
        (33, 1, 17),
        (5, 300, 1),
        (0, 4, 3),
        (4, 0, 3),
    ] {
        let a = ndarray::Array2::from_shape_fn((m, k), |(i, j)| {
            ((i * 7 + j * 3) % 19) as f64 / 9.0 - 1.0
        });
        let b = ndarray::Array2::from_shape_fn((k, n), |(i, j)| {
            ((i * 5 + j * 11) % 23) as f64 / 11.0 - 1.0
        });
        let w =
            ndarray::Array2::from_shape_fn((m, n), |(i, j)| 1.0 + ((i * 3 + j) % 5) as f64 / 4.0);
        // L = Σ w ∘ (a·b): ∂L/∂a = w·bᵀ, ∂L/∂b = aᵀ·w.
        let want = [
            plain_product(&a, &b),
            plain_product(&w, &b.t().to_owned()),
            plain_product(&a.t().to_owned(), &w),
        ];
        let scale = k.max(1) as f64;

        let (ta, tb) = (Tensor::new(a.clone(), true), Tensor::new(b.clone(), true));
        let c = ta.matmul(&tb).unwrap();
        (&c * &Tensor::new(w.clone(), false))
            .sum()
            .backward()
            .unwrap();
        let got = [c.data(), ta.grad().unwrap(), tb.grad().unwrap()];
        for (g, e) in got.iter().zip(&want) {
            assert_eq!(g.shape(), e.shape(), "{m}×{k}·{k}×{n}");
            for (x, y) in g.iter().zip(e) {
                assert!(
                    (x - y).abs() <= 1e-14 * scale,
                    "f64, {m}×{k}·{k}×{n}: {x} against {y}"
                );
            }
        }

        let f32s = |x: &ndarray::Array2<f64>| x.mapv(|v| v as f32);
        let (ta, tb) = (
            Tensor::<f32>::new(f32s(&a), true),
            Tensor::<f32>::new(f32s(&b), true),
        );
        let c = ta.matmul(&tb).unwrap();
        (&c * &Tensor::<f32>::new(f32s(&w), false))
            .sum()
            .backward()
            .unwrap();
        let got = [c.data(), ta.grad().unwrap(), tb.grad().unwrap()];
        for (g, e) in got.iter().zip(&want) {
            for (x, y) in g.iter().zip(e) {
                assert!(
                    (f64::from(*x) - y).abs() <= 1e-6 * scale,
                    "f32, {m}×{k}·{k}×{n}: {x} against {y}"
                );
            }
        }
    }
}
