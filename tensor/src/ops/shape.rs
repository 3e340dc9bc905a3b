//! Shape ops: `t`, `transpose`, `reshape`, `squeeze`, `unsqueeze` and `expand`.
//!
//! They move elements around without changing them, so each backward moves the gradient back
//! the same way (`expand` sums it over the axes it repeated). Axes are `isize`, negative ones
//! counting from the end.

use ndarray::{ArrayD, ArrayRefD, Axis, IxDyn};

use super::axis;
use crate::broadcast::{broadcast_shapes, reduce_to_shape};
use crate::{Element, Tensor, TensorError};

/// `a` in `shape` (the element count was checked), without a copy when `a` is contiguous.
pub(crate) fn reshape_owned<T: Element>(a: ArrayD<T>, shape: &[usize]) -> ArrayD<T> {
    if a.is_standard_layout() {
        a.into_shape_with_order(IxDyn(shape))
            .expect("element count was checked")
    } else {
        a.to_shape(IxDyn(shape))
            .expect("element count was checked")
            .into_owned()
    }
}

impl<T: Element> Tensor<T> {
    /// Transpose: reverses the order of the axes, like NumPy's `.T`
    /// (rows and columns swap for a matrix; 0-d and 1-d tensors are
    /// returned unchanged in value).
    ///
    /// ```
    /// use tensor::ndarray::array;
    /// use tensor::Tensor;
    ///
    /// let m = Tensor::new(array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], false);
    /// assert_eq!(m.t().data(), array![[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]].into_dyn());
    /// ```
    pub fn t(&self) -> Tensor<T> {
        let out = self.read().view().t().as_standard_layout().into_owned();
        Tensor::from_op(out, "t", &[self], |args| {
            vec![Some(args.grad.t().as_standard_layout().into_owned())]
        })
    }

    /// Swaps two axes (`torch.transpose(x, d0, d1)`); the others stay in place.
    ///
    /// ```
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::<f64>::zeros(&[2, 3, 4]).with_grad();
    /// let y = x.transpose(0, -1).unwrap();
    /// assert_eq!(y.shape(), vec![4, 3, 2]);
    /// y.sum().backward().unwrap();
    /// assert_eq!(x.grad().unwrap().shape(), &[2, 3, 4]);
    /// assert!(x.transpose(0, 3).is_err());
    /// ```
    pub fn transpose(&self, d0: isize, d1: isize) -> Result<Tensor<T>, TensorError> {
        let (out, a, b) = {
            let x = self.read();
            let x = x.view();
            let a = axis("transpose", d0, x.shape(), x.ndim())?;
            let b = axis("transpose", d1, x.shape(), x.ndim())?;
            let mut v = x.view();
            v.swap_axes(a, b);
            (v.as_standard_layout().into_owned(), a, b)
        };
        Ok(Tensor::from_op(out, "transpose", &[self], move |args| {
            let mut g = args.grad.view();
            g.swap_axes(a, b);
            vec![Some(g.as_standard_layout().into_owned())]
        }))
    }

    /// Same elements (in row-major order) in a new shape with the same
    /// number of elements.
    ///
    /// Returns [`TensorError::Reshape`] if the element counts differ.
    ///
    /// ```
    /// use tensor::ndarray::array;
    /// use tensor::Tensor;
    ///
    /// let v = Tensor::new(array![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], false);
    /// let m = v.reshape(&[2, 3]).unwrap();
    /// assert_eq!(m.data()[[1, 0]], 4.0);
    /// assert!(v.reshape(&[4, 2]).is_err());
    /// ```
    pub fn reshape(&self, shape: &[usize]) -> Result<Tensor<T>, TensorError> {
        let out = {
            let x = self.read();
            let x = x.view();
            if x.len() != shape.iter().product::<usize>() {
                return Err(TensorError::Reshape {
                    from: x.shape().to_vec(),
                    to: shape.to_vec(),
                });
            }
            x.to_shape(IxDyn(shape))
                .expect("element count was checked")
                .into_owned()
        };
        Ok(Tensor::from_op(out, "reshape", &[self], |args| {
            let g = args
                .grad
                .to_shape(args.inputs[0].raw_dim())
                .expect("same element count")
                .into_owned();
            vec![Some(g)]
        }))
    }

    /// Removes an axis of length 1.
    ///
    /// Returns [`TensorError::Axis`] if the axis is out of range, and
    /// [`TensorError::ShapeMismatch`] if its length is not 1.
    ///
    /// ```
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::<f64>::zeros(&[2, 1, 3]);
    /// assert_eq!(x.squeeze(1).unwrap().shape(), vec![2, 3]);
    /// assert_eq!(x.squeeze(-2).unwrap().shape(), vec![2, 3]);
    /// assert!(x.squeeze(0).is_err()); // length 2
    /// ```
    pub fn squeeze(&self, axis_: isize) -> Result<Tensor<T>, TensorError> {
        let shape = self.shape();
        let a = axis("squeeze", axis_, &shape, shape.len())?;
        if shape[a] != 1 {
            let mut expected = shape.clone();
            expected[a] = 1;
            return Err(TensorError::ShapeMismatch {
                op: format!("squeeze of axis {axis_}"),
                expected,
                got: shape,
            });
        }
        let mut to = shape;
        to.remove(a);
        self.reshape(&to)
    }

    /// Inserts an axis of length 1 at `axis` (from `−(ndim + 1)` to `ndim`).
    ///
    /// ```
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::<f64>::zeros(&[2, 3]);
    /// assert_eq!(x.unsqueeze(0).unwrap().shape(), vec![1, 2, 3]);
    /// assert_eq!(x.unsqueeze(-1).unwrap().shape(), vec![2, 3, 1]);
    /// assert!(x.unsqueeze(3).is_err());
    /// ```
    pub fn unsqueeze(&self, axis_: isize) -> Result<Tensor<T>, TensorError> {
        let shape = self.shape();
        let a = axis("unsqueeze", axis_, &shape, shape.len() + 1)?;
        let mut to = shape;
        to.insert(a, 1);
        self.reshape(&to)
    }

    /// Broadcasts to `shape` (NumPy rules: leading axes are added, axes of length 1 repeat).
    /// The backward sums the gradient over the repeated axes.
    ///
    /// ```
    /// use tensor::ndarray::array;
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::new(array![[1.0], [2.0]], true); // (2, 1)
    /// let y = x.expand(&[3, 2, 4]).unwrap();
    /// assert_eq!(y.shape(), vec![3, 2, 4]);
    /// y.sum().backward().unwrap();
    /// assert_eq!(x.grad().unwrap(), array![[12.0], [12.0]].into_dyn());
    /// assert!(x.expand(&[3, 3]).is_err());
    /// ```
    pub fn expand(&self, shape: &[usize]) -> Result<Tensor<T>, TensorError> {
        let out = {
            let x = self.read();
            let x = x.view();
            let to = broadcast_shapes("expand", x.shape(), shape)?;
            if to != shape {
                return Err(TensorError::Broadcast {
                    op: "expand",
                    lhs: x.shape().to_vec(),
                    rhs: shape.to_vec(),
                });
            }
            x.broadcast(IxDyn(shape))
                .expect("checked by broadcast_shapes")
                .to_owned()
        };
        Ok(Tensor::from_op(out, "expand", &[self], |args| {
            vec![Some(reduce_to_shape(
                args.grad.view(),
                args.inputs[0].shape(),
            ))]
        }))
    }
}

/// The gradient of a selection along `axis`: `grad`'s entries added back at `indices`.
pub(crate) fn scatter_add<T: Element>(
    grad: &ArrayRefD<T>,
    input: &[usize],
    axis: usize,
    indices: &[usize],
) -> ArrayD<T> {
    let mut g = ArrayD::zeros(IxDyn(input));
    for (k, &i) in indices.iter().enumerate() {
        let mut slot = g.index_axis_mut(Axis(axis), i);
        slot += &grad.index_axis(Axis(axis), k);
    }
    g
}
