//! Reductions: `sum` and `mean`, over everything or along one axis.
//!
//! The backward of a sum copies the output gradient to every input element
//! that was summed (a broadcast); a mean additionally divides by the count.

use ndarray::{ArrayD, Axis, IxDyn};

use crate::tensor::{Element, Tensor, TensorError};

/// Spreads `grad` (the gradient of a reduction along `axis`) back over
/// `input_shape`, scaled by `scale`.
fn spread_along_axis<T: Element>(
    grad: &ArrayD<T>,
    input_shape: &[usize],
    axis: usize,
    keepdims: bool,
    scale: T,
) -> ArrayD<T> {
    // Put the reduced axis back as length 1 so that it broadcasts.
    let g = if keepdims {
        grad.view()
    } else {
        grad.view().insert_axis(Axis(axis))
    };
    let g = g
        .broadcast(IxDyn(input_shape))
        .expect("reduced shape broadcasts back to the input shape");
    g.mapv(|v| v * scale)
}

impl<T: Element> Tensor<T> {
    /// Sum of all elements, as a 0-d tensor.
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    /// use ndarray::array;
    ///
    /// let x = Tensor::new(array![[1.0, 2.0], [3.0, 4.0]], true);
    /// let s = x.sum();
    /// assert_eq!(s.item().unwrap(), 10.0);
    /// s.backward().unwrap();
    /// assert_eq!(x.grad().unwrap(), ndarray::ArrayD::ones(vec![2, 2]));
    /// ```
    pub fn sum(&self) -> Tensor<T> {
        self.reduce_all("sum", false)
    }

    /// Mean of all elements, as a 0-d tensor (`NaN` for an empty tensor).
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    /// use ndarray::array;
    ///
    /// let x = Tensor::new(array![1.0, 2.0, 3.0, 6.0], true);
    /// let m = x.mean();
    /// assert_eq!(m.item().unwrap(), 3.0);
    /// m.backward().unwrap();
    /// assert_eq!(x.grad().unwrap(), ndarray::ArrayD::from_elem(vec![4], 0.25));
    /// ```
    pub fn mean(&self) -> Tensor<T> {
        self.reduce_all("mean", true)
    }

    fn reduce_all(&self, op: &'static str, mean: bool) -> Tensor<T> {
        let (total, n) = {
            let x = self.data();
            (x.sum(), T::constant(x.len() as f64))
        };
        let scale = if mean { n.recip() } else { T::one() };
        let out = ndarray::arr0(total * scale).into_dyn();
        Tensor::from_op(out, op, &[self], move |args| {
            let g = args.grad.iter().next().copied().unwrap_or(T::zero()) * scale;
            vec![Some(ArrayD::from_elem(args.inputs[0].raw_dim(), g))]
        })
    }

    /// Sum along `axis`. With `keepdims` the axis stays with length 1
    /// (handy for broadcasting the result back), otherwise it is removed.
    ///
    /// Returns [`TensorError::Axis`] if `axis >= ndim`.
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    /// use ndarray::array;
    ///
    /// let x = Tensor::new(array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], false);
    /// assert_eq!(*x.sum_axis(0, false).unwrap().data(), array![5.0, 7.0, 9.0].into_dyn());
    /// assert_eq!(*x.sum_axis(1, true).unwrap().data(), array![[6.0], [15.0]].into_dyn());
    /// assert!(x.sum_axis(2, false).is_err());
    /// ```
    pub fn sum_axis(&self, axis: usize, keepdims: bool) -> Result<Tensor<T>, TensorError> {
        self.reduce_axis("sum_axis", axis, keepdims, false)
    }

    /// Mean along `axis`, with or without keeping it (see
    /// [`sum_axis`](Tensor::sum_axis)).
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    /// use ndarray::array;
    ///
    /// let x = Tensor::new(array![[1.0, 2.0], [3.0, 6.0]], true);
    /// let m = x.mean_axis(1, false).unwrap();
    /// assert_eq!(*m.data(), array![1.5, 4.5].into_dyn());
    /// m.sum().backward().unwrap();
    /// assert_eq!(x.grad().unwrap(), ndarray::ArrayD::from_elem(vec![2, 2], 0.5));
    /// ```
    pub fn mean_axis(&self, axis: usize, keepdims: bool) -> Result<Tensor<T>, TensorError> {
        self.reduce_axis("mean_axis", axis, keepdims, true)
    }

    fn reduce_axis(
        &self,
        op: &'static str,
        axis: usize,
        keepdims: bool,
        mean: bool,
    ) -> Result<Tensor<T>, TensorError> {
        let (out, scale) = {
            let x = self.data();
            if axis >= x.ndim() {
                return Err(TensorError::Axis {
                    op,
                    axis,
                    shape: x.shape().to_vec(),
                });
            }
            let scale = if mean {
                T::constant(x.len_of(Axis(axis)) as f64).recip()
            } else {
                T::one()
            };
            let mut out = x.sum_axis(Axis(axis));
            if mean {
                out.mapv_inplace(|v| v * scale);
            }
            if keepdims {
                out = out.insert_axis(Axis(axis));
            }
            (out, scale)
        };
        Ok(Tensor::from_op(out, op, &[self], move |args| {
            vec![Some(spread_along_axis(
                args.grad,
                args.inputs[0].shape(),
                axis,
                keepdims,
                scale,
            ))]
        }))
    }
}
