//! Custom ops.

use super::*;

/// A sigmoid written by the user, backward s (1 - s) from the output.
struct UserSigmoid;

impl CustomOp for UserSigmoid {
    fn name(&self) -> &'static str {
        "user_sigmoid"
    }
    fn forward(&self, inputs: &[ArrayViewD<f64>]) -> ArrayD<f64> {
        inputs[0].mapv(|x| 1.0 / (1.0 + (-x).exp()))
    }
    fn backward(
        &self,
        _inputs: &[ArrayViewD<f64>],
        output: &ArrayViewD<f64>,
        grad_out: &ArrayViewD<f64>,
    ) -> Vec<ArrayD<f64>> {
        vec![grad_out * &output.mapv(|s| s * (1.0 - s))]
    }
}

/// softplus(x) = ln(1 + e^x), derivative sigmoid(x), computed from the input.
struct Softplus;

impl CustomOp for Softplus {
    fn name(&self) -> &'static str {
        "softplus"
    }
    fn forward(&self, inputs: &[ArrayViewD<f64>]) -> ArrayD<f64> {
        inputs[0].mapv(|x| x.exp().ln_1p())
    }
    fn backward(
        &self,
        inputs: &[ArrayViewD<f64>],
        _output: &ArrayViewD<f64>,
        grad_out: &ArrayViewD<f64>,
    ) -> Vec<ArrayD<f64>> {
        vec![grad_out * &inputs[0].mapv(|x| 1.0 / (1.0 + (-x).exp()))]
    }
}

/// Deliberately wrong ops, to check that `backward` reports them.
struct WrongCount;

impl CustomOp for WrongCount {
    fn name(&self) -> &'static str {
        "wrong_count"
    }
    fn forward(&self, inputs: &[ArrayViewD<f64>]) -> ArrayD<f64> {
        inputs[0].to_owned()
    }
    fn backward(
        &self,
        _: &[ArrayViewD<f64>],
        _: &ArrayViewD<f64>,
        g: &ArrayViewD<f64>,
    ) -> Vec<ArrayD<f64>> {
        vec![g.to_owned(), g.to_owned()]
    }
}

struct WrongShape;

impl CustomOp for WrongShape {
    fn name(&self) -> &'static str {
        "wrong_shape"
    }
    fn forward(&self, inputs: &[ArrayViewD<f64>]) -> ArrayD<f64> {
        inputs[0].to_owned()
    }
    fn backward(
        &self,
        _: &[ArrayViewD<f64>],
        _: &ArrayViewD<f64>,
        _: &ArrayViewD<f64>,
    ) -> Vec<ArrayD<f64>> {
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

/// A transpose whose backward hands on a column-major gradient (ndarray's `to_owned` keeps
/// the view's memory order): what a user's op may return.
struct ColumnMajorTranspose;

impl CustomOp for ColumnMajorTranspose {
    fn name(&self) -> &'static str {
        "column_major_transpose"
    }
    fn forward(&self, inputs: &[ArrayViewD<f64>]) -> ArrayD<f64> {
        inputs[0].t().as_standard_layout().into_owned()
    }
    fn backward(
        &self,
        _: &[ArrayViewD<f64>],
        _: &ArrayViewD<f64>,
        g: &ArrayViewD<f64>,
    ) -> Vec<ArrayD<f64>> {
        let back = g.t().to_owned();
        assert!(
            back.as_slice().is_none(),
            "the test needs a column-major gradient"
        );
        vec![back]
    }
}

/// An elementwise rule's backward given a gradient that is not row-major pairs each element
/// with its own partial: the partials are row-major, so pairing them with the gradient in
/// memory order would give wrong gradients.
#[test]
fn elementwise_backward_of_a_column_major_gradient() {
    let x = Tensor::new(array![[0.1, -0.7, 1.3], [2.0, -0.2, 0.5]], true);
    let w = array![[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]];
    let y = Tensor::custom(ColumnMajorTranspose, &[&x.tanh()]);
    (&y * &Tensor::new(w.clone(), false))
        .sum()
        .backward()
        .unwrap();
    let g = x.grad().unwrap();
    for ((i, j), &xv) in x
        .data()
        .clone()
        .into_dimensionality::<ndarray::Ix2>()
        .unwrap()
        .indexed_iter()
    {
        let want = w[[j, i]] * (1.0 - xv.tanh().powi(2));
        assert_abs_diff_eq!(g[[i, j]], want, epsilon = 1e-15);
    }
}
