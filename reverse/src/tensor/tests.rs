//! Unit tests and property tests (gradients against central finite
//! differences) for the tensor module.

use approx::assert_abs_diff_eq;
use ndarray::{ArrayD, IxDyn, array};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use crate::tensor::broadcast::{broadcast_shapes, reduce_to_shape};
use crate::tensor::{CustomOp, Tensor, TensorError, is_grad_enabled, no_grad};

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

fn arr(shape: &[usize], data: Vec<f64>) -> ArrayD<f64> {
    ArrayD::from_shape_vec(IxDyn(shape), data).unwrap()
}

/// Elementwise `|a - b| <= eps` with equal shapes (ndarray's own `approx`
/// support needs a cargo feature, so this stays dependency-free).
#[track_caller]
fn assert_close(a: &ArrayD<f64>, b: &ArrayD<f64>, eps: f64) {
    assert_eq!(a.shape(), b.shape(), "shapes differ: {a} vs {b}");
    for (x, y) in a.iter().zip(b.iter()) {
        assert!((x - y).abs() <= eps, "{a} != {b} (eps {eps})");
    }
}

fn grad_of(t: &Tensor) -> ArrayD<f64> {
    t.grad().expect("tensor should have a gradient")
}

/// Fixed, non-uniform weights so that `sum(out * w)` tells the output
/// elements apart (a plain sum would hide swapped gradients).
fn weights(shape: &[usize]) -> ArrayD<f64> {
    let n: usize = shape.iter().product();
    let w = (0..n)
        .map(|k| 1.0 + 0.5 * (1.7 * k as f64 + 0.3).sin())
        .collect();
    arr(shape, w)
}

/// Checks the gradients of `L = sum(f(inputs) * w)` with respect to every
/// input against central finite differences.
fn check_gradients(
    f: &dyn Fn(&[Tensor]) -> Tensor,
    inputs: &[ArrayD<f64>],
) -> Result<(), TestCaseError> {
    const H: f64 = 1e-5;
    const TOL: f64 = 1e-6;

    let leaves: Vec<Tensor> = inputs
        .iter()
        .map(|a| Tensor::new(a.clone(), true))
        .collect();
    let out = f(&leaves);
    let w = weights(&out.shape());
    let loss = (&out * &Tensor::new(w.clone(), false)).sum();
    loss.backward()
        .map_err(|e| TestCaseError::fail(e.to_string()))?;

    // The loss at given input values, without recording a graph.
    let eval = |arrays: &[ArrayD<f64>]| -> f64 {
        no_grad(|| {
            let ts: Vec<Tensor> = arrays
                .iter()
                .map(|a| Tensor::new(a.clone(), false))
                .collect();
            let o = f(&ts);
            (&*o.data() * &w).sum()
        })
    };

    for (i, x) in inputs.iter().enumerate() {
        let analytic = leaves[i]
            .grad()
            .unwrap_or_else(|| ArrayD::zeros(x.raw_dim()));
        prop_assert_eq!(analytic.shape(), x.shape());
        // Logical (row-major) order, whatever the gradient's memory layout.
        let x_flat = x.as_slice().expect("inputs are built in standard layout");
        for (j, (&a, &xj)) in analytic.iter().zip(x_flat).enumerate() {
            let mut shifted = inputs.to_vec();
            shifted[i].as_slice_mut().unwrap()[j] = xj + H;
            let plus = eval(&shifted);
            shifted[i].as_slice_mut().unwrap()[j] = xj - H;
            let minus = eval(&shifted);
            let numeric = (plus - minus) / (2.0 * H);
            prop_assert!(
                (a - numeric).abs() <= TOL * numeric.abs().max(1.0),
                "input {} element {}: analytic {} vs numeric {}",
                i,
                j,
                a,
                numeric
            );
        }
    }
    Ok(())
}

/// An array of the given shape with values drawn from `values`.
fn array_strategy(
    shape: Vec<usize>,
    values: impl Strategy<Value = f64>,
) -> impl Strategy<Value = ArrayD<f64>> {
    let n: usize = shape.iter().product();
    prop::collection::vec(values, n).prop_map(move |v| arr(&shape, v))
}

/// Values in `[lo, hi]` with a random sign: never close to zero.
fn away_from_zero(lo: f64, hi: f64) -> impl Strategy<Value = f64> {
    (lo..hi, any::<bool>()).prop_map(|(v, neg)| if neg { -v } else { v })
}

// ---------------------------------------------------------------------------
// The seed example
// ---------------------------------------------------------------------------

/// L = sum(tanh(W x)); with z = W x and g = 1 - tanh(z)^2,
/// dL/dx = W^T g and dL/dW = g x^T.
#[test]
fn seed_tanh_matvec_matches_analytic_gradients() {
    let x = Tensor::new(array![2.0, 3.0], true);
    let w = Tensor::new(array![[1.0, 2.0], [3.0, 4.0]], true);
    let loss = w.matmul(&x).unwrap().tanh().sum();
    loss.backward().unwrap();

    let z: [f64; 2] = [1.0 * 2.0 + 2.0 * 3.0, 3.0 * 2.0 + 4.0 * 3.0]; // [8, 18]
    let g = [1.0 - z[0].tanh().powi(2), 1.0 - z[1].tanh().powi(2)];
    let x_expected = array![1.0 * g[0] + 3.0 * g[1], 2.0 * g[0] + 4.0 * g[1]].into_dyn();
    let w_expected = array![[g[0] * 2.0, g[0] * 3.0], [g[1] * 2.0, g[1] * 3.0]].into_dyn();

    assert_close(&grad_of(&x), &x_expected, 1e-12);
    assert_close(&grad_of(&w), &w_expected, 1e-12);
    assert_abs_diff_eq!(
        loss.item().unwrap(),
        z[0].tanh() + z[1].tanh(),
        epsilon = 1e-12
    );
    // Sanity: the values are not trivially zero.
    assert!(grad_of(&x)[0] > 1e-15);
}

// ---------------------------------------------------------------------------
// Forward values and hand-computed gradients
// ---------------------------------------------------------------------------

#[test]
fn broadcast_add_forward_and_backward() {
    let a = Tensor::new(array![[1.0], [2.0], [3.0]], true); // (3, 1)
    let b = Tensor::new(array![10.0, 20.0, 30.0, 40.0], true); // (4,)
    let c = &a + &b;
    assert_eq!(c.shape(), vec![3, 4]);
    assert_eq!(c.data()[[2, 3]], 43.0);
    c.backward_with(ArrayD::ones(IxDyn(&[3, 4]))).unwrap();
    assert_eq!(grad_of(&a), ArrayD::from_elem(IxDyn(&[3, 1]), 4.0));
    assert_eq!(grad_of(&b), ArrayD::from_elem(IxDyn(&[4]), 3.0));
}

#[test]
fn binary_ops_hand_gradients() {
    let a = Tensor::new(array![1.0, 2.0], true);
    let b = Tensor::new(array![4.0, 8.0], true);
    (&a / &b).sum().backward().unwrap();
    assert_eq!(grad_of(&a), array![0.25, 0.125].into_dyn());
    assert_eq!(grad_of(&b), array![-1.0 / 16.0, -2.0 / 64.0].into_dyn());

    let (a, b) = (a.detach().with_grad(), b.detach().with_grad());
    (&a - &b).sum().backward().unwrap();
    assert_eq!(grad_of(&a), array![1.0, 1.0].into_dyn());
    assert_eq!(grad_of(&b), array![-1.0, -1.0].into_dyn());
}

#[test]
fn scalar_arithmetic_on_both_sides() {
    let x = Tensor::new(array![1.0, 2.0], true);
    let y = (2.0 - &x) * 3.0 + 1.0 / &x + x.clone() / 2.0 - 1.0;
    // y = 3(2 - x) + 1/x + x/2 - 1
    assert_eq!(
        *y.data(),
        array![3.0 + 1.0 + 0.5 - 1.0, 0.0 + 0.5 + 1.0 - 1.0].into_dyn()
    );
    y.sum().backward().unwrap();
    // dy/dx = -3 - 1/x^2 + 1/2
    assert_eq!(
        grad_of(&x),
        array![-3.0 - 1.0 + 0.5, -3.0 - 0.25 + 0.5].into_dyn()
    );
    let n = -&x;
    assert_eq!(*n.data(), array![-1.0, -2.0].into_dyn());
    assert_eq!(*(-(x.clone())).data(), array![-1.0, -2.0].into_dyn());
}

#[test]
fn same_tensor_used_twice() {
    let x = Tensor::new(array![3.0, -1.0], true);
    (&x * &x).sum().backward().unwrap();
    assert_eq!(grad_of(&x), array![6.0, -2.0].into_dyn());
}

#[test]
fn diamond_graph_accumulates_within_one_pass() {
    let x = Tensor::scalar(1.5).with_grad();
    let y = &x * 2.0;
    let z = &y * &y + &y; // z = 4x^2 + 2x, dz/dx = 8x + 2
    z.backward().unwrap();
    assert_eq!(x.grad().unwrap()[[]], 14.0);
}

#[test]
fn matmul_all_rank_combinations() {
    let m = Tensor::new(array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], true); // (2, 3)
    let v3 = Tensor::new(array![1.0, -1.0, 2.0], true);
    let v2 = Tensor::new(array![2.0, -3.0], true);

    // vector . vector -> 0-d
    let s = v3.matmul(&v3).unwrap();
    assert_eq!(s.shape(), Vec::<usize>::new());
    assert_eq!(s.item().unwrap(), 6.0);
    s.backward().unwrap();
    assert_eq!(grad_of(&v3), array![2.0, -2.0, 4.0].into_dyn());
    v3.zero_grad();

    // matrix . vector -> (2,)
    let mv = m.matmul(&v3).unwrap();
    assert_eq!(*mv.data(), array![5.0, 11.0].into_dyn());
    mv.backward_with(array![1.0, 10.0]).unwrap();
    assert_eq!(
        grad_of(&m),
        array![[1.0, -1.0, 2.0], [10.0, -10.0, 20.0]].into_dyn()
    );
    assert_eq!(grad_of(&v3), array![41.0, 52.0, 63.0].into_dyn());
    m.zero_grad();

    // vector . matrix -> (3,)
    let vm = v2.matmul(&m).unwrap();
    assert_eq!(*vm.data(), array![-10.0, -11.0, -12.0].into_dyn());
    vm.backward_with(array![1.0, 0.0, -1.0]).unwrap();
    assert_eq!(grad_of(&v2), array![-2.0, -2.0].into_dyn());
    assert_eq!(
        grad_of(&m),
        array![[2.0, 0.0, -2.0], [-3.0, 0.0, 3.0]].into_dyn()
    );
    m.zero_grad();

    // matrix . matrix -> (2, 2)
    let mm = m.matmul(&m.t()).unwrap();
    assert_eq!(*mm.data(), array![[14.0, 32.0], [32.0, 77.0]].into_dyn());
    mm.sum().backward().unwrap();
    // d/dM sum(M M^T) = (1 1^T) M + ((1 1^T)^T M) = 2 * column sums broadcast
    assert_eq!(
        grad_of(&m),
        array![[10.0, 14.0, 18.0], [10.0, 14.0, 18.0]].into_dyn()
    );
}

#[test]
fn matmul_skips_gradient_of_constants() {
    let x = Tensor::new(array![[1.0, 2.0]], false);
    let w = Tensor::new(array![[1.0], [1.0]], true);
    x.matmul(&w).unwrap().sum().backward().unwrap();
    assert!(x.grad().is_none());
    assert_eq!(grad_of(&w), array![[1.0], [2.0]].into_dyn());
}

#[test]
fn reductions_forward_values() {
    let x = Tensor::new(array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], false);
    assert_eq!(x.sum().item().unwrap(), 21.0);
    assert_eq!(x.mean().item().unwrap(), 3.5);
    assert_eq!(
        *x.mean_axis(0, false).unwrap().data(),
        array![2.5, 3.5, 4.5].into_dyn()
    );
    assert_eq!(
        *x.mean_axis(0, true).unwrap().data(),
        array![[2.5, 3.5, 4.5]].into_dyn()
    );
    assert_eq!(
        *x.sum_axis(1, false).unwrap().data(),
        array![6.0, 15.0].into_dyn()
    );
}

#[test]
fn unary_values_and_derivatives_at_kinks() {
    let x = Tensor::new(array![-1.0, 0.0, 4.0], true);
    assert_eq!(*x.relu().data(), array![0.0, 0.0, 4.0].into_dyn());
    assert_eq!(*x.abs().data(), array![1.0, 0.0, 4.0].into_dyn());
    (x.relu() + x.abs()).sum().backward().unwrap();
    // relu' = [0, 0, 1]; abs' = [-1, 0, 1] (0 at 0 for both)
    assert_eq!(grad_of(&x), array![-1.0, 0.0, 2.0].into_dyn());

    let p = Tensor::new(array![4.0], true);
    assert_eq!(p.sqrt().item().unwrap(), 2.0);
    assert_eq!(p.powf(0.5).item().unwrap(), 2.0);
    assert_eq!(p.powi(3).item().unwrap(), 64.0);
    assert_eq!(p.powi(0).item().unwrap(), 1.0);
    p.powi(0).sum().backward().unwrap();
    assert_eq!(grad_of(&p), array![0.0].into_dyn());
    assert_abs_diff_eq!(
        Tensor::scalar(1.0).exp().ln().item().unwrap(),
        1.0,
        epsilon = 1e-15
    );
    // The stable sigmoid does not overflow.
    assert_eq!(Tensor::scalar(-1000.0).sigmoid().item().unwrap(), 0.0);
    assert_eq!(Tensor::scalar(1000.0).sigmoid().item().unwrap(), 1.0);
}

#[test]
fn transpose_reshape_and_rows() {
    let v = Tensor::new(array![1.0, 2.0, 3.0], true);
    assert_eq!(*v.t().data(), *v.data()); // 1-D transpose is the identity
    let m = v.reshape(&[3, 1]).unwrap();
    assert_eq!(m.t().shape(), vec![1, 3]);
    let cube = Tensor::zeros(&[2, 3, 4]);
    assert_eq!(cube.t().shape(), vec![4, 3, 2]);

    let x = Tensor::new(array![[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], true);
    let picked = x.select_rows(&[1, 1, 0]).unwrap();
    let sliced = x.slice_rows(1..3).unwrap();
    assert_eq!(*sliced.data(), array![[3.0, 4.0], [5.0, 6.0]].into_dyn());
    (picked.sum() + (&sliced * 10.0).sum()).backward().unwrap();
    assert_eq!(
        grad_of(&x),
        array![[1.0, 1.0], [12.0, 12.0], [10.0, 10.0]].into_dyn()
    );
    assert_eq!(x.slice_rows(1..1).unwrap().shape(), vec![0, 2]);
}

#[test]
fn broadcast_helpers() {
    assert_eq!(
        broadcast_shapes("t", &[2, 1, 3], &[4, 1]).unwrap(),
        vec![2, 4, 3]
    );
    assert_eq!(broadcast_shapes("t", &[1], &[0]).unwrap(), vec![0]);
    let g = arr(&[2, 3], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    assert_eq!(
        reduce_to_shape(g.view(), &[1, 3]),
        arr(&[1, 3], vec![5.0, 7.0, 9.0])
    );
    assert_eq!(
        reduce_to_shape(g.view(), &[2, 1]),
        arr(&[2, 1], vec![6.0, 15.0])
    );
    assert_eq!(
        reduce_to_shape(g.view(), &[3]),
        arr(&[3], vec![5.0, 7.0, 9.0])
    );
    assert_eq!(reduce_to_shape(g.view(), &[1]), arr(&[1], vec![21.0]));
}

// ---------------------------------------------------------------------------
// Graph semantics: accumulation, zero_grad, detach, no_grad, retain_grad
// ---------------------------------------------------------------------------

#[test]
fn gradients_accumulate_across_backward_calls() {
    let x = Tensor::new(array![1.0, 2.0], true);
    let w = Tensor::new(array![[0.5, -1.0], [2.0, 0.25]], true);
    let loss = w.matmul(&x).unwrap().tanh().sum();
    loss.backward().unwrap();
    let (gx, gw) = (grad_of(&x), grad_of(&w));
    loss.backward().unwrap();
    assert_close(&grad_of(&x), &(&gx * 2.0), 1e-15);
    assert_close(&grad_of(&w), &(&gw * 2.0), 1e-15);

    x.zero_grad();
    w.zero_grad();
    assert!(x.grad().is_none() && w.grad().is_none());
    loss.backward().unwrap();
    assert_close(&grad_of(&x), &gx, 1e-15);
    assert_close(&grad_of(&w), &gw, 1e-15);
}

#[test]
fn intermediate_gradients_are_not_kept_unless_retained() {
    let x = Tensor::scalar(2.0).with_grad();
    let y = &x * 3.0;
    let z = &y * &y;
    y.retain_grad();
    z.backward().unwrap();
    z.backward().unwrap();
    // Retained grads accumulate like leaves: 2 * (2y) = 24.
    assert_eq!(y.grad().unwrap()[[]], 24.0);
    assert_eq!(x.grad().unwrap()[[]], 72.0); // 2 * 18 x
    assert!(z.grad().is_none());
}

#[test]
fn detach_stops_the_gradient() {
    let x = Tensor::new(array![1.0, 2.0], true);
    let d = x.detach();
    assert!(!d.requires_grad() && d.is_leaf() && d.parents().is_empty());
    let y = (&d * &x).sum(); // only the second factor is differentiated
    y.backward().unwrap();
    assert_eq!(grad_of(&x), array![1.0, 2.0].into_dyn());
    assert!(d.grad().is_none());
    // The detached copy does not follow later updates of x.
    x.set_data(array![5.0, 5.0]).unwrap();
    assert_eq!(*d.data(), array![1.0, 2.0].into_dyn());
    // A graph made only of detached tensors cannot be differentiated.
    assert!(matches!(
        d.exp().sum().backward(),
        Err(TensorError::NoGraph { .. })
    ));
}

#[test]
fn no_grad_records_nothing() {
    let w = Tensor::new(array![1.0, 2.0], true);
    let y = no_grad(|| {
        assert!(!is_grad_enabled());
        let inner = no_grad(|| w.exp());
        assert!(!is_grad_enabled(), "nested scope restores the outer mode");
        (&w * 2.0 + inner).sum()
    });
    assert!(is_grad_enabled());
    assert!(!y.requires_grad());
    assert!(y.parents().is_empty());
    assert_eq!(y.op_name(), "sum");
    assert!(matches!(y.backward(), Err(TensorError::NoGraph { .. })));
    assert!(w.grad().is_none());
    // Outside the scope recording works again.
    assert!((&w * 2.0).requires_grad());
}

#[test]
fn no_grad_is_restored_after_a_panic() {
    let result = std::panic::catch_unwind(|| no_grad(|| panic!("boom")));
    assert!(result.is_err());
    assert!(is_grad_enabled());
}

#[test]
fn only_tensors_depending_on_a_parameter_record_parents() {
    let a = Tensor::ones(&[2]);
    let b = Tensor::ones(&[2]);
    let c = &a + &b;
    assert!(!c.requires_grad() && c.parents().is_empty());
    let p = Tensor::ones(&[2]).with_grad();
    let d = &c * &p;
    assert!(d.requires_grad());
    assert_eq!(d.parents().len(), 2);
    assert_eq!(d.op_name(), "mul");
    d.sum().backward().unwrap();
    assert!(c.grad().is_none());
    assert_eq!(grad_of(&p), array![2.0, 2.0].into_dyn());
}

#[test]
fn long_chain_backward_and_drop_do_not_overflow_the_stack() {
    let x = Tensor::scalar(0.0).with_grad();
    let step = Tensor::scalar(1e-3);
    let mut y = x.clone();
    for _ in 0..100_000 {
        y = &y + &step;
    }
    y.backward().unwrap();
    assert_eq!(x.grad().unwrap()[[]], 1.0);
    assert_abs_diff_eq!(y.item().unwrap(), 100.0, epsilon = 1e-9);
    drop(y); // iterative Drop of 100k nodes
}

#[test]
fn optimiser_updates() {
    let w = Tensor::new(array![1.0, -1.0], true);
    w.sgd_step(0.1); // no gradient yet: no-op
    assert_eq!(*w.data(), array![1.0, -1.0].into_dyn());
    w.powi(2).sum().backward().unwrap(); // grad = 2w
    w.sgd_step(0.25);
    assert_eq!(*w.data(), array![0.5, -0.5].into_dyn());
    w.update(|mut d, g| {
        assert!(g.is_some());
        d.fill(7.0);
    });
    assert_eq!(*w.data(), array![7.0, 7.0].into_dyn());
}

#[test]
fn display_and_debug_show_op_and_shape() {
    let x = Tensor::new(array![1.0, 2.0], true);
    let y = x.tanh();
    let shown = y.to_string();
    assert!(
        shown.contains("op=tanh") && shown.contains("shape=[2]"),
        "{shown}"
    );
    assert!(format!("{x:?}").contains("leaf"));
}

// ---------------------------------------------------------------------------
// Custom ops
// ---------------------------------------------------------------------------

/// A sigmoid written by the user, backward s (1 - s) from the output.
struct UserSigmoid;

impl CustomOp for UserSigmoid {
    fn name(&self) -> &str {
        "user_sigmoid"
    }
    fn forward(&self, inputs: &[&ArrayD<f64>]) -> ArrayD<f64> {
        inputs[0].mapv(|x| 1.0 / (1.0 + (-x).exp()))
    }
    fn backward(
        &self,
        _inputs: &[&ArrayD<f64>],
        output: &ArrayD<f64>,
        grad_out: &ArrayD<f64>,
    ) -> Vec<ArrayD<f64>> {
        vec![grad_out * &output.mapv(|s| s * (1.0 - s))]
    }
}

/// softplus(x) = ln(1 + e^x), derivative sigmoid(x), computed from the input.
struct Softplus;

impl CustomOp for Softplus {
    fn name(&self) -> &str {
        "softplus"
    }
    fn forward(&self, inputs: &[&ArrayD<f64>]) -> ArrayD<f64> {
        inputs[0].mapv(|x| x.exp().ln_1p())
    }
    fn backward(
        &self,
        inputs: &[&ArrayD<f64>],
        _output: &ArrayD<f64>,
        grad_out: &ArrayD<f64>,
    ) -> Vec<ArrayD<f64>> {
        vec![grad_out * &inputs[0].mapv(|x| 1.0 / (1.0 + (-x).exp()))]
    }
}

/// Deliberately wrong ops, to check that `backward` reports them.
struct WrongCount;

impl CustomOp for WrongCount {
    fn name(&self) -> &str {
        "wrong_count"
    }
    fn forward(&self, inputs: &[&ArrayD<f64>]) -> ArrayD<f64> {
        inputs[0].clone()
    }
    fn backward(&self, _: &[&ArrayD<f64>], _: &ArrayD<f64>, g: &ArrayD<f64>) -> Vec<ArrayD<f64>> {
        vec![g.clone(), g.clone()]
    }
}

struct WrongShape;

impl CustomOp for WrongShape {
    fn name(&self) -> &str {
        "wrong_shape"
    }
    fn forward(&self, inputs: &[&ArrayD<f64>]) -> ArrayD<f64> {
        inputs[0].clone()
    }
    fn backward(&self, _: &[&ArrayD<f64>], _: &ArrayD<f64>, _: &ArrayD<f64>) -> Vec<ArrayD<f64>> {
        vec![ArrayD::zeros(IxDyn(&[7]))]
    }
}

#[test]
fn custom_sigmoid_matches_builtin() {
    let x = Tensor::new(array![-2.0, 0.0, 1.5], true);
    let y = Tensor::custom(UserSigmoid, &[&x]);
    assert_eq!(y.op_name(), "user_sigmoid");
    (&y * &y).sum().backward().unwrap();
    let g_custom = grad_of(&x);

    let x2 = Tensor::new(array![-2.0, 0.0, 1.5], true);
    let s = x2.sigmoid();
    assert_close(&y.data(), &s.data(), 1e-15);
    (&s * &s).sum().backward().unwrap();
    assert_close(&g_custom, &grad_of(&x2), 1e-15);
}

#[test]
fn custom_softplus_finite_differences() {
    let x = arr(&[2, 2], vec![-1.5, -0.2, 0.3, 2.0]);
    check_gradients(&|t| Tensor::custom(Softplus, &[&t[0]]).tanh(), &[x]).unwrap();
}

#[test]
fn custom_op_errors() {
    let x = Tensor::new(array![1.0, 2.0], true);
    let err = Tensor::custom(WrongCount, &[&x])
        .sum()
        .backward()
        .unwrap_err();
    assert_eq!(
        err,
        TensorError::GradientCount {
            op: "wrong_count".into(),
            expected: 1,
            got: 2
        }
    );
    assert!(err.to_string().contains("wrong_count"));
    let err = Tensor::custom(WrongShape, &[&x])
        .sum()
        .backward()
        .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("wrong_shape") && msg.contains("[2]") && msg.contains("[7]"),
        "{msg}"
    );
}

// ---------------------------------------------------------------------------
// Errors: returned as values, messages name the shapes
// ---------------------------------------------------------------------------

fn assert_err_mentions<T: std::fmt::Debug>(
    result: Result<T, TensorError>,
    parts: &[&str],
) -> TensorError {
    let err = result.expect_err("expected an error");
    let msg = err.to_string();
    for part in parts {
        assert!(
            msg.contains(part),
            "message {msg:?} should mention {part:?}"
        );
    }
    // It is a std error with a Debug form.
    let _: &dyn std::error::Error = &err;
    assert!(!format!("{err:?}").is_empty());
    err
}

#[test]
fn error_broadcast() {
    let a = Tensor::zeros(&[2, 3]);
    let b = Tensor::zeros(&[4]);
    for r in [a.try_add(&b), a.try_sub(&b), a.try_mul(&b), a.try_div(&b)] {
        let e = assert_err_mentions(r, &["[2, 3]", "[4]", "broadcast"]);
        assert!(matches!(e, TensorError::Broadcast { .. }));
    }
}

#[test]
#[should_panic(expected = "mul: shapes [2, 3] and [4] cannot be broadcast together")]
fn operator_panics_with_the_same_message() {
    let _ = Tensor::zeros(&[2, 3]) * Tensor::zeros(&[4]);
}

#[test]
fn error_matmul() {
    let m = Tensor::zeros(&[2, 3]);
    let e = assert_err_mentions(m.matmul(&Tensor::zeros(&[2])), &["[2, 3]", "[2]", "3 != 2"]);
    assert!(matches!(e, TensorError::MatMul { .. }));
    assert_err_mentions(m.matmul(&Tensor::zeros(&[2, 3])), &["[2, 3]", "3 != 2"]);
    assert_err_mentions(
        Tensor::zeros(&[3]).matmul(&Tensor::zeros(&[4])),
        &["[3]", "[4]"],
    );
    assert_err_mentions(
        Tensor::zeros(&[2, 2, 2]).matmul(&m),
        &["[2, 2, 2]", "1-D or 2-D"],
    );
    assert_err_mentions(Tensor::scalar(1.0).matmul(&m), &["[]", "[2, 3]"]);
}

#[test]
fn error_backward_non_scalar_and_grad_shape() {
    let x = Tensor::zeros(&[2, 3]).with_grad();
    let y = x.exp();
    let e = assert_err_mentions(y.backward(), &["[2, 3]", "backward"]);
    assert!(matches!(e, TensorError::NotScalar { .. }));
    let e = assert_err_mentions(
        y.backward_with(ArrayD::ones(IxDyn(&[3, 2]))),
        &["[2, 3]", "[3, 2]"],
    );
    assert!(matches!(e, TensorError::ShapeMismatch { .. }));
    assert!(x.grad().is_none(), "failed calls change nothing");
    assert_err_mentions(y.item(), &["[2, 3]", "item"]);
    // A (1, 1) tensor counts as a scalar.
    x.sum_axis(1, true)
        .unwrap()
        .slice_rows(0..1)
        .unwrap()
        .backward()
        .unwrap();
}

#[test]
fn error_reshape_and_construction() {
    let e = assert_err_mentions(
        Tensor::zeros(&[2, 3]).reshape(&[4]),
        &["[2, 3]", "[4]", "6", "4"],
    );
    assert!(matches!(e, TensorError::Reshape { .. }));
    assert_err_mentions(Tensor::from_vec(&[2, 2], vec![1.0; 3]), &["[3]", "[2, 2]"]);
    assert_err_mentions(
        Tensor::zeros(&[2]).set_data(array![1.0, 2.0, 3.0]),
        &["[2]", "[3]", "set_data"],
    );
}

#[test]
fn error_axis_out_of_range() {
    let x = Tensor::zeros(&[2, 3]);
    for r in [x.sum_axis(2, false), x.mean_axis(5, true)] {
        let e = assert_err_mentions(r, &["[2, 3]", "axis"]);
        assert!(matches!(e, TensorError::Axis { .. }));
    }
    assert_err_mentions(Tensor::scalar(1.0).select_rows(&[0]), &["[]", "axis 0"]);
    assert_err_mentions(Tensor::scalar(1.0).slice_rows(0..1), &["[]", "axis 0"]);
}

#[test]
fn error_row_index_out_of_range() {
    let x = Tensor::zeros(&[3, 2]);
    let e = assert_err_mentions(x.select_rows(&[0, 3]), &["[3, 2]", "row 3"]);
    assert!(matches!(e, TensorError::RowIndex { index: 3, .. }));
    let e = assert_err_mentions(x.slice_rows(1..4), &["[3, 2]", "1..4"]);
    assert!(matches!(e, TensorError::RowRange { .. }));
    #[allow(clippy::reversed_empty_ranges)]
    let reversed = 2..1;
    assert_err_mentions(x.slice_rows(reversed), &["[3, 2]", "2..1"]);
}

// ---------------------------------------------------------------------------
// Property tests: gradients against central finite differences
// ---------------------------------------------------------------------------

/// Pairs of shapes that broadcast together, including scalars.
fn broadcast_pairs() -> Vec<(Vec<usize>, Vec<usize>)> {
    vec![
        (vec![3, 1], vec![1, 4]),
        (vec![2, 3], vec![3]),
        (vec![3], vec![2, 3]),
        (vec![], vec![2, 3]),
        (vec![2, 3], vec![]),
        (vec![], vec![]),
        (vec![4], vec![4]),
        (vec![2, 1, 3], vec![4, 1]),
        (vec![1], vec![3, 2]),
        (vec![3, 2], vec![3, 1]),
        (vec![1, 3], vec![2, 1]),
    ]
}

fn binary_case() -> impl Strategy<Value = (usize, ArrayD<f64>, ArrayD<f64>)> {
    prop::sample::select(broadcast_pairs()).prop_flat_map(|(sa, sb)| {
        (
            0..4usize,
            array_strategy(sa, -2.0..2.0),
            // Kept away from zero so that division is smooth.
            array_strategy(sb, away_from_zero(0.5, 2.0)),
        )
    })
}

fn apply_binary(op: usize, a: &Tensor, b: &Tensor) -> Tensor {
    match op {
        0 => a.try_add(b).unwrap(),
        1 => a.try_sub(b).unwrap(),
        2 => a.try_mul(b).unwrap(),
        _ => a.try_div(b).unwrap(),
    }
}

/// Unary steps that map [0.01, 4] into [0.01, 4], so any chain stays in the
/// smooth domain of every op (ln, sqrt, powf need positive inputs).
const UNARY_STEPS: usize = 12;

fn apply_unary(step: usize, x: &Tensor) -> Tensor {
    match step {
        0 => x.tanh(),
        1 => x.sigmoid(),
        2 => x.sqrt(),
        3 => (x + 1.0).ln(),
        4 => (-x).exp(),
        5 => (x + 1.0).powi(2) * 0.16,
        6 => (x + 1.0).powf(1.5) * 0.35,
        7 => (-x).abs(),
        8 => x.relu(),
        9 => x.exp() * 0.07,
        10 => 1.0 / (x + 1.0),
        _ => (x * 0.5 + 0.1).powi(-1) * 0.1, // 0.1 / (x/2 + 0.1), in (0.05, 1)
    }
}

/// A reduction chosen by `kind`, or the identity.
fn apply_reduction(kind: usize, axis: usize, x: &Tensor) -> Tensor {
    let nd = x.ndim();
    match kind {
        1 => x.sum(),
        2 => x.mean(),
        3 if nd > 0 => x.sum_axis(axis % nd, false).unwrap(),
        4 if nd > 0 => x.sum_axis(axis % nd, true).unwrap(),
        5 if nd > 0 => x.mean_axis(axis % nd, false).unwrap(),
        6 if nd > 0 => x.mean_axis(axis % nd, true).unwrap(),
        _ => x.clone(),
    }
}

fn single_shapes() -> Vec<Vec<usize>> {
    vec![
        vec![],
        vec![1],
        vec![3],
        vec![2, 3],
        vec![1, 4],
        vec![2, 1, 2],
        vec![3, 2, 2],
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn prop_binary_ops_with_broadcasting((op, a, b) in binary_case()) {
        check_gradients(&|t| apply_binary(op, &t[0], &t[1]), &[a, b])?;
    }

    #[test]
    fn prop_binary_ops_composed_with_self((op, a, b) in binary_case()) {
        // (a op b) * a: an input used twice, plus broadcasting.
        check_gradients(&|t| &apply_binary(op, &t[0], &t[1]) * &t[0], &[a, b])?;
    }

    #[test]
    fn prop_unary_chains_and_reductions(
        x in prop::sample::select(single_shapes())
            .prop_flat_map(|s| array_strategy(s, 0.1..3.0)),
        steps in prop::collection::vec(0..UNARY_STEPS, 1..5),
        reduction in 0..7usize,
        axis in 0..3usize,
    ) {
        let f = |t: &[Tensor]| {
            let y = steps.iter().fold(t[0].clone(), |acc, &s| apply_unary(s, &acc));
            apply_reduction(reduction, axis, &y)
        };
        check_gradients(&f, &[x])?;
    }

    #[test]
    fn prop_kinks_away_from_zero(
        x in prop::sample::select(single_shapes())
            .prop_flat_map(|s| array_strategy(s, away_from_zero(0.1, 2.0))),
    ) {
        // relu and abs on mixed signs, neg, and a reduction.
        check_gradients(&|t| (t[0].relu() * 2.0 - t[0].abs() + -&t[0]).powi(2).mean(), &[x])?;
    }

    #[test]
    fn prop_scalar_operands(
        x in prop::sample::select(single_shapes())
            .prop_flat_map(|s| array_strategy(s, away_from_zero(0.5, 2.0))),
        c in 0.5..2.0f64,
        op in 0..8usize,
    ) {
        let f = move |t: &[Tensor]| {
            let x = &t[0];
            match op {
                0 => x + c,
                1 => c + x,
                2 => x - c,
                3 => c - x,
                4 => x * c,
                5 => c * x,
                6 => x / c,
                _ => c / x,
            }
        };
        check_gradients(&f, &[x])?;
    }

    #[test]
    fn prop_matmul(
        (a, b) in (1..5usize, 1..5usize, 1..5usize, 0..4usize).prop_flat_map(|(m, n, p, case)| {
            let (sa, sb) = match case {
                0 => (vec![n], vec![n]),
                1 => (vec![m, n], vec![n]),
                2 => (vec![n], vec![n, p]),
                _ => (vec![m, n], vec![n, p]),
            };
            (array_strategy(sa, -2.0..2.0), array_strategy(sb, -2.0..2.0))
        }),
    ) {
        check_gradients(&|t| t[0].matmul(&t[1]).unwrap().tanh(), &[a, b])?;
    }

    #[test]
    fn prop_matmul_with_transposes(
        (a, b) in (1..5usize, 1..5usize, 1..5usize).prop_flat_map(|(m, n, p)| {
            (array_strategy(vec![n, m], -2.0..2.0), array_strategy(vec![p, n], -2.0..2.0))
        }),
    ) {
        // a^T b^T, on non-contiguous (transposed) data.
        check_gradients(&|t| t[0].t().matmul(&t[1].t()).unwrap(), &[a, b])?;
    }

    #[test]
    fn prop_shape_ops(
        (x, idx, start, end) in (1..5usize, 1..4usize).prop_flat_map(|(r, c)| {
            (
                array_strategy(vec![r, c], -2.0..2.0),
                prop::collection::vec(0..r, 0..6),
                0..=r,
                0..=r,
            )
        }),
        which in 0..4usize,
    ) {
        let (lo, hi) = (start.min(end), start.max(end));
        let f = move |t: &[Tensor]| {
            let x = &t[0];
            let (r, c) = (x.shape()[0], x.shape()[1]);
            match which {
                0 => x.select_rows(&idx).unwrap() * 1.5,
                1 => x.slice_rows(lo..hi).unwrap().exp(),
                2 => x.reshape(&[c, r]).unwrap().powi(3),
                _ => (x.t() * x.t()).reshape(&[r * c]).unwrap(),
            }
        };
        check_gradients(&f, &[x])?;
    }

    #[test]
    fn prop_two_layer_network(
        (x, w1, b1, w2) in (1..4usize, 1..4usize, 1..4usize).prop_flat_map(|(batch, d, h)| {
            (
                array_strategy(vec![batch, d], -1.0..1.0),
                array_strategy(vec![d, h], -1.0..1.0),
                array_strategy(vec![h], -1.0..1.0),
                array_strategy(vec![h, 1], -1.0..1.0),
            )
        }),
    ) {
        // The MLP loss: mean((tanh(x W1 + b1) W2 - 0.5)^2), gradients for all.
        let f = |t: &[Tensor]| {
            let hidden = (t[0].matmul(&t[1]).unwrap() + &t[2]).tanh();
            (hidden.matmul(&t[3]).unwrap() - 0.5).powi(2).mean()
        };
        check_gradients(&f, &[x, w1, b1, w2])?;
    }
}
