//! User-defined operations with their own forward and backward, like
//! `torch.autograd.Function`.

use ndarray::{ArrayD, ArrayViewD};

use crate::{Element, Tensor};

/// An operation defined outside this module: implement it and apply it with
/// [`Tensor::custom`].
///
/// `backward` receives the inputs, the output computed by `forward` and the
/// gradient of the loss with respect to that output, and must return one
/// gradient per input, each of that input's shape (checked during
/// `backward`, which reports [`TensorError::ShapeMismatch`](crate::TensorError::ShapeMismatch)
/// or [`TensorError::GradientCount`](crate::TensorError::GradientCount)
/// otherwise).
///
/// ```
/// use tensor::{CustomOp, Tensor};
/// use ndarray::{ArrayD, ArrayViewD};
///
/// /// softplus(x) = ln(1 + e^x); its derivative is the sigmoid.
/// struct Softplus;
///
/// impl CustomOp for Softplus {
///     fn name(&self) -> &'static str {
///         "softplus"
///     }
///     fn forward(&self, inputs: &[ArrayViewD<f64>]) -> ArrayD<f64> {
///         inputs[0].mapv(|x| x.exp().ln_1p())
///     }
///     fn backward(
///         &self,
///         inputs: &[ArrayViewD<f64>],
///         _output: &ArrayViewD<f64>,
///         grad_out: &ArrayViewD<f64>,
///     ) -> Vec<ArrayD<f64>> {
///         vec![grad_out * &inputs[0].mapv(|x| 1.0 / (1.0 + (-x).exp()))]
///     }
/// }
///
/// let x = Tensor::scalar(0.0).with_grad();
/// let y = Tensor::custom(Softplus, &[&x]);
/// assert_eq!(y.op_name(), "softplus");
/// y.backward().unwrap();
/// assert_eq!(x.grad().unwrap()[[]], 0.5);
/// ```
pub trait CustomOp<T: Element = f64> {
    /// Name shown by [`Tensor::op_name`] and in error messages.
    fn name(&self) -> &'static str;

    /// Computes the output from the input arrays.
    fn forward(&self, inputs: &[ArrayViewD<'_, T>]) -> ArrayD<T>;

    /// Gradients of the loss with respect to each input, given the gradient
    /// `grad_out` with respect to the output.
    fn backward(
        &self,
        inputs: &[ArrayViewD<'_, T>],
        output: &ArrayViewD<'_, T>,
        grad_out: &ArrayViewD<'_, T>,
    ) -> Vec<ArrayD<T>>;
}

impl<T: Element> Tensor<T> {
    /// Applies a user-defined [`CustomOp`] to `inputs`, recording it in the
    /// graph like a built-in op.
    ///
    /// ```
    /// use tensor::{CustomOp, Tensor};
    /// use ndarray::{ArrayD, ArrayViewD};
    ///
    /// /// x * y, written by hand.
    /// struct Product;
    ///
    /// impl CustomOp for Product {
    ///     fn name(&self) -> &'static str {
    ///         "product"
    ///     }
    ///     fn forward(&self, x: &[ArrayViewD<f64>]) -> ArrayD<f64> {
    ///         &x[0] * &x[1]
    ///     }
    ///     fn backward(&self, x: &[ArrayViewD<f64>], _: &ArrayViewD<f64>, g: &ArrayViewD<f64>) -> Vec<ArrayD<f64>> {
    ///         vec![g * &x[1], g * &x[0]]
    ///     }
    /// }
    ///
    /// let a = Tensor::scalar(3.0).with_grad();
    /// let b = Tensor::scalar(4.0).with_grad();
    /// Tensor::custom(Product, &[&a, &b]).backward().unwrap();
    /// assert_eq!((a.grad().unwrap()[[]], b.grad().unwrap()[[]]), (4.0, 3.0));
    /// ```
    pub fn custom(op: impl CustomOp<T> + 'static, inputs: &[&Tensor<T>]) -> Tensor<T> {
        let out = {
            let datas: Vec<_> = inputs.iter().map(|t| t.read()).collect();
            let views: Vec<_> = datas.iter().map(|d| d.view()).collect();
            op.forward(&views)
        };
        Tensor::from_op(out, op.name(), inputs, move |args| {
            let inputs: Vec<_> = args.inputs.iter().map(|a| a.view()).collect();
            op.backward(&inputs, &args.output.view(), &args.grad.view())
                .into_iter()
                .map(Some)
                .collect()
        })
    }
}
