//! The element type of a tensor: any number of the rule table that ndarray can multiply.

use ndarray::{LinalgScalar, ScalarOperand};
use shared_ops::Op;

/// What a [`Tensor`](super::Tensor) may hold: an [`Op`] (so every rule of
/// [`shared_ops::rules`] applies to it elementwise) that ndarray can use in matrix products
/// and with scalars. `f32` and `f64` are elements; the default is `f64`.
///
/// Implemented for every type with those traits, so nothing needs to be written for a new one.
///
/// ```
/// use tensor::Tensor;
///
/// let x = Tensor::<f32>::from_vec(&[2], vec![1.0, 2.0]).unwrap().with_grad();
/// (&x * &x).sum().backward().unwrap();
/// assert_eq!(x.grad().unwrap().as_slice().unwrap(), &[2.0_f32, 4.0]);
/// ```
pub trait Element: Op + LinalgScalar + ScalarOperand {}

impl<T: Op + LinalgScalar + ScalarOperand> Element for T {}

/// Elements from which a loop of the backward pass (gradients through partials, a bias's
/// row sums) runs through `pulp`'s dispatch, compiled for the CPU's widest vectors: the
/// baseline build's SSE2 takes two elements per instruction, AVX-512 eight. Below it (a
/// one-element tensor's backward, say) the loop runs inline, without the dispatch's call.
pub(crate) const WIDE: usize = 256;
