//! Tests and property tests (gradients against central finite differences) of
//! the `tensor` crate, through its public API.

use approx::assert_abs_diff_eq;
use ndarray::{ArrayD, ArrayViewD, IxDyn, array};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use tensor::broadcast::{broadcast_shapes, reduce_to_shape};
use tensor::{CustomOp, Tensor, TensorError, is_grad_enabled, no_grad};

// Helpers shared by the test files of this folder.

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
            (&o.data() * &w).sum()
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

mod custom;
mod errors;
mod graph;
mod ops;
mod optim;
mod properties;
mod rules;
mod softmax;
mod tensor_vs_scalar;
mod values;
