//! Shape ops: `t` (transpose), `reshape`, and row selection
//! (`select_rows`, `slice_rows`).
//!
//! They move elements around without changing them, so each backward moves
//! the gradient back the same way (rows selected twice get both gradients).

use std::ops::Range;

use ndarray::{ArrayD, Axis, IxDyn, Slice};

use crate::tensor::{Element, Tensor, TensorError};

/// Reshapes an owned array, reusing its buffer when the layout allows.
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
    /// use reverse::tensor::Tensor;
    /// use ndarray::array;
    ///
    /// let m = Tensor::new(array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], false);
    /// assert_eq!(*m.t().data(), array![[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]].into_dyn());
    /// ```
    pub fn t(&self) -> Tensor<T> {
        let out = self.data().t().to_owned();
        Tensor::from_op(out, "t", &[self], |args| {
            vec![Some(args.grad.t().to_owned())]
        })
    }

    /// Same elements (in row-major order) in a new shape with the same
    /// number of elements.
    ///
    /// Returns [`TensorError::Reshape`] if the element counts differ.
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    /// use ndarray::array;
    ///
    /// let v = Tensor::new(array![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], false);
    /// let m = v.reshape(&[2, 3]).unwrap();
    /// assert_eq!(m.data()[[1, 0]], 4.0);
    /// assert!(v.reshape(&[4, 2]).is_err());
    /// ```
    pub fn reshape(&self, shape: &[usize]) -> Result<Tensor<T>, TensorError> {
        let out = {
            let x = self.data();
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

    /// Picks rows (entries along axis 0) by index; indices may repeat and
    /// come in any order. The backward adds each row's gradient back into
    /// the row it came from.
    ///
    /// Returns [`TensorError::Axis`] for a 0-d tensor and
    /// [`TensorError::RowIndex`] for an index past the last row.
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    /// use ndarray::array;
    ///
    /// let x = Tensor::new(array![[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], true);
    /// let y = x.select_rows(&[2, 0, 2]).unwrap();
    /// assert_eq!(*y.data(), array![[5.0, 6.0], [1.0, 2.0], [5.0, 6.0]].into_dyn());
    /// y.sum().backward().unwrap();
    /// assert_eq!(x.grad().unwrap(), array![[1.0, 1.0], [0.0, 0.0], [2.0, 2.0]].into_dyn());
    /// assert!(x.select_rows(&[3]).is_err());
    /// ```
    pub fn select_rows(&self, indices: &[usize]) -> Result<Tensor<T>, TensorError> {
        let out = {
            let x = self.data();
            let rows = self.rows("select_rows")?;
            if let Some(&bad) = indices.iter().find(|&&i| i >= rows) {
                return Err(TensorError::RowIndex {
                    op: "select_rows",
                    index: bad,
                    shape: x.shape().to_vec(),
                });
            }
            x.select(Axis(0), indices)
        };
        let indices = indices.to_vec();
        Ok(Tensor::from_op(out, "select_rows", &[self], move |args| {
            let mut g = ArrayD::zeros(args.inputs[0].raw_dim());
            for (k, &i) in indices.iter().enumerate() {
                let mut row = g.index_axis_mut(Axis(0), i);
                row += &args.grad.index_axis(Axis(0), k);
            }
            vec![Some(g)]
        }))
    }

    /// The rows `range.start..range.end` (a contiguous slice along axis 0).
    ///
    /// Returns [`TensorError::Axis`] for a 0-d tensor and
    /// [`TensorError::RowRange`] if the range is reversed or ends past the
    /// last row.
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    /// use ndarray::array;
    ///
    /// let x = Tensor::new(array![10.0, 20.0, 30.0, 40.0], true);
    /// let y = x.slice_rows(1..3).unwrap();
    /// assert_eq!(*y.data(), array![20.0, 30.0].into_dyn());
    /// y.sum().backward().unwrap();
    /// assert_eq!(x.grad().unwrap(), array![0.0, 1.0, 1.0, 0.0].into_dyn());
    /// assert!(x.slice_rows(2..5).is_err());
    /// ```
    pub fn slice_rows(&self, range: Range<usize>) -> Result<Tensor<T>, TensorError> {
        let out = {
            let x = self.data();
            let rows = self.rows("slice_rows")?;
            if range.end > rows || range.start > range.end {
                return Err(TensorError::RowRange {
                    op: "slice_rows",
                    start: range.start,
                    end: range.end,
                    shape: x.shape().to_vec(),
                });
            }
            x.slice_axis(Axis(0), Slice::from(range.clone())).to_owned()
        };
        Ok(Tensor::from_op(out, "slice_rows", &[self], move |args| {
            let mut g = ArrayD::zeros(args.inputs[0].raw_dim());
            g.slice_axis_mut(Axis(0), Slice::from(range.clone()))
                .assign(args.grad);
            vec![Some(g)]
        }))
    }

    /// Number of rows, or an axis error for a 0-d tensor.
    fn rows(&self, op: &'static str) -> Result<usize, TensorError> {
        let x = self.data();
        x.shape().first().copied().ok_or_else(|| TensorError::Axis {
            op,
            axis: 0,
            shape: vec![],
        })
    }
}
