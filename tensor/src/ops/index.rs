//! Selection and assembly: `index_select`, `narrow`, `gather`, `cat`, `stack`, `where_` and
//! `masked_fill`. Each backward sends every gradient entry back to the element it came from
//! (adding where an element was picked more than once) and gives 0 to the rest.

use std::ops::Range;

use ndarray::{ArrayD, ArrayRefD, Axis, IxDyn, Slice, Zip};

use super::axis;
use super::shape::scatter_add;
use crate::broadcast::{broadcast_shapes, reduce_to_shape_owned};
use crate::{Element, Tensor, TensorError};

impl<T: Element> Tensor<T> {
    /// Picks entries along `axis` by index (`torch.index_select`); indices may repeat and come
    /// in any order. The backward adds each entry's gradient back where it came from.
    ///
    /// ```
    /// use tensor::ndarray::array;
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::new(array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], true);
    /// let y = x.index_select(-1, &[2, 2, 0]).unwrap();
    /// assert_eq!(y.data(), array![[3.0, 3.0, 1.0], [6.0, 6.0, 4.0]].into_dyn());
    /// y.sum().backward().unwrap();
    /// assert_eq!(x.grad().unwrap(), array![[1.0, 0.0, 2.0], [1.0, 0.0, 2.0]].into_dyn());
    /// assert!(x.index_select(1, &[3]).is_err());
    /// ```
    pub fn index_select(&self, axis_: isize, indices: &[usize]) -> Result<Tensor<T>, TensorError> {
        self.select_along("index_select", axis_, indices)
    }

    /// Picks rows (entries along axis 0) by index: [`index_select`](Tensor::index_select)
    /// along axis 0.
    ///
    /// ```
    /// use tensor::ndarray::array;
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::new(array![[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], true);
    /// let y = x.select_rows(&[2, 0, 2]).unwrap();
    /// assert_eq!(y.data(), array![[5.0, 6.0], [1.0, 2.0], [5.0, 6.0]].into_dyn());
    /// y.sum().backward().unwrap();
    /// assert_eq!(x.grad().unwrap(), array![[1.0, 1.0], [0.0, 0.0], [2.0, 2.0]].into_dyn());
    /// assert!(x.select_rows(&[3]).is_err());
    /// ```
    pub fn select_rows(&self, indices: &[usize]) -> Result<Tensor<T>, TensorError> {
        self.select_along("select_rows", 0, indices)
    }

    fn select_along(
        &self,
        op: &'static str,
        axis_: isize,
        indices: &[usize],
    ) -> Result<Tensor<T>, TensorError> {
        let (out, a) = {
            let x = self.read();
            let x = x.view();
            let a = axis(op, axis_, x.shape(), x.ndim())?;
            if let Some(&bad) = indices.iter().find(|&&i| i >= x.shape()[a]) {
                return Err(TensorError::Index {
                    op,
                    axis: a,
                    index: bad,
                    shape: x.shape().to_vec(),
                });
            }
            (x.select(Axis(a), indices), a)
        };
        let indices = indices.to_vec();
        Ok(Tensor::from_op(out, op, &[self], move |args| {
            vec![Some(scatter_add(
                &args.grad,
                args.inputs[0].shape(),
                a,
                &indices,
            ))]
        }))
    }

    /// The entries `start..start + len` along `axis` (`torch.narrow`).
    ///
    /// ```
    /// use tensor::ndarray::array;
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::new(array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], true);
    /// let y = x.narrow(1, 1, 2).unwrap();
    /// assert_eq!(y.data(), array![[2.0, 3.0], [5.0, 6.0]].into_dyn());
    /// assert!(x.narrow(1, 2, 2).is_err());
    /// ```
    pub fn narrow(&self, axis_: isize, start: usize, len: usize) -> Result<Tensor<T>, TensorError> {
        self.slice_along("narrow", axis_, start..start.saturating_add(len))
    }

    /// The rows `range.start..range.end`: [`narrow`](Tensor::narrow) along axis 0.
    ///
    /// ```
    /// use tensor::ndarray::array;
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::new(array![10.0, 20.0, 30.0, 40.0], true);
    /// let y = x.slice_rows(1..3).unwrap();
    /// assert_eq!(y.data(), array![20.0, 30.0].into_dyn());
    /// y.sum().backward().unwrap();
    /// assert_eq!(x.grad().unwrap(), array![0.0, 1.0, 1.0, 0.0].into_dyn());
    /// assert!(x.slice_rows(2..5).is_err());
    /// ```
    pub fn slice_rows(&self, range: Range<usize>) -> Result<Tensor<T>, TensorError> {
        self.slice_along("slice_rows", 0, range)
    }

    fn slice_along(
        &self,
        op: &'static str,
        axis_: isize,
        range: Range<usize>,
    ) -> Result<Tensor<T>, TensorError> {
        let (out, a) = {
            let x = self.read();
            let x = x.view();
            let a = axis(op, axis_, x.shape(), x.ndim())?;
            if range.end > x.shape()[a] || range.start > range.end {
                return Err(TensorError::Range {
                    op,
                    axis: a,
                    start: range.start,
                    end: range.end,
                    shape: x.shape().to_vec(),
                });
            }
            let slice = Slice::from(range.clone());
            (x.slice_axis(Axis(a), slice).to_owned(), a)
        };
        Ok(Tensor::from_op(out, op, &[self], move |args| {
            let mut g = ArrayD::zeros(args.inputs[0].raw_dim());
            g.slice_axis_mut(Axis(a), Slice::from(range.clone()))
                .assign(&args.grad);
            vec![Some(g)]
        }))
    }

    /// `torch.gather`: along `axis`, the entry named by `index` at every position:
    /// `out[i][j] = x[i][index[i][j]]` for axis 1 of a matrix. `index` has as many axes as
    /// `self`, and along every other axis at most its length. The backward adds each
    /// gradient entry back at the position it was gathered from.
    ///
    /// ```
    /// use tensor::ndarray::array;
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::new(array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], true);
    /// let picked = x.gather(1, &array![[2], [0]].into_dyn()).unwrap();
    /// assert_eq!(picked.data(), array![[3.0], [4.0]].into_dyn());
    /// picked.sum().backward().unwrap();
    /// assert_eq!(x.grad().unwrap(), array![[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]].into_dyn());
    /// assert!(x.gather(1, &array![[3], [0]].into_dyn()).is_err());
    /// ```
    pub fn gather(&self, axis_: isize, index: &ArrayD<usize>) -> Result<Tensor<T>, TensorError> {
        let (out, a) = {
            let x = self.read();
            let x = x.view();
            let a = axis("gather", axis_, x.shape(), x.ndim())?;
            let fits = index.ndim() == x.ndim()
                && (0..x.ndim()).all(|d| d == a || index.shape()[d] <= x.shape()[d]);
            if !fits {
                return Err(TensorError::ShapeMismatch {
                    op: format!("gather along axis {a}: the index's shape, at most"),
                    expected: x.shape().to_vec(),
                    got: index.shape().to_vec(),
                });
            }
            if let Some(&bad) = index.iter().find(|&&i| i >= x.shape()[a]) {
                return Err(TensorError::Index {
                    op: "gather",
                    axis: a,
                    index: bad,
                    shape: x.shape().to_vec(),
                });
            }
            let out = ArrayD::from_shape_fn(index.raw_dim(), |mut pos| {
                pos[a] = index[&pos];
                x[&pos]
            });
            (out, a)
        };
        let index = index.clone();
        Ok(Tensor::from_op(out, "gather", &[self], move |args| {
            let mut g = ArrayD::zeros(args.inputs[0].raw_dim());
            for (pos, &v) in args.grad.indexed_iter() {
                let mut at = pos.clone();
                at[a] = index[&pos];
                g[&at] += v;
            }
            vec![Some(g)]
        }))
    }

    /// Joins tensors along an existing `axis` (`torch.cat`); their shapes must agree on every
    /// other axis.
    ///
    /// ```
    /// use tensor::ndarray::array;
    /// use tensor::Tensor;
    ///
    /// let a = Tensor::new(array![[1.0, 2.0]], true);
    /// let b = Tensor::new(array![[3.0, 4.0], [5.0, 6.0]], true);
    /// let c = Tensor::cat(&[&a, &b], 0).unwrap();
    /// assert_eq!(c.shape(), vec![3, 2]);
    /// (&c * &c).sum().backward().unwrap();
    /// assert_eq!(b.grad().unwrap(), array![[6.0, 8.0], [10.0, 12.0]].into_dyn());
    /// assert!(Tensor::cat(&[&a, &b], 1).is_err());
    /// ```
    pub fn cat(tensors: &[&Tensor<T>], axis_: isize) -> Result<Tensor<T>, TensorError> {
        Self::join("cat", tensors, axis_, false)
    }

    /// Stacks tensors of one shape along a new `axis` (`torch.stack`).
    ///
    /// ```
    /// use tensor::ndarray::array;
    /// use tensor::Tensor;
    ///
    /// let a = Tensor::new(array![1.0, 2.0], true);
    /// let b = Tensor::new(array![3.0, 4.0], false);
    /// let s = Tensor::stack(&[&a, &b], -1).unwrap();
    /// assert_eq!(s.data(), array![[1.0, 3.0], [2.0, 4.0]].into_dyn());
    /// s.sum().backward().unwrap();
    /// assert_eq!(a.grad().unwrap(), array![1.0, 1.0].into_dyn());
    /// ```
    pub fn stack(tensors: &[&Tensor<T>], axis_: isize) -> Result<Tensor<T>, TensorError> {
        Self::join("stack", tensors, axis_, true)
    }

    fn join(
        op: &'static str,
        tensors: &[&Tensor<T>],
        axis_: isize,
        new_axis: bool,
    ) -> Result<Tensor<T>, TensorError> {
        let Some(first) = tensors.first() else {
            return Err(TensorError::ShapeMismatch {
                op: format!("{op} of no tensors"),
                expected: vec![],
                got: vec![],
            });
        };
        let shape0 = first.shape();
        let ndim = shape0.len() + new_axis as usize;
        let a = axis(op, axis_, &shape0, ndim)?;
        let datas: Vec<_> = tensors.iter().map(|t| t.read()).collect();
        for d in &datas {
            let agrees = d.shape().len() == shape0.len()
                && (0..shape0.len()).all(|k| (k == a && !new_axis) || d.shape()[k] == shape0[k]);
            if !agrees {
                return Err(TensorError::ShapeMismatch {
                    op: format!("{op} along axis {a}"),
                    expected: shape0,
                    got: d.shape().to_vec(),
                });
            }
        }
        let views: Vec<_> = datas.iter().map(|d| d.view()).collect();
        let out = if new_axis {
            ndarray::stack(Axis(a), &views)
        } else {
            ndarray::concatenate(Axis(a), &views)
        }
        .expect("shapes were checked");
        // Where each input starts along the joined axis.
        let lengths: Vec<usize> = datas
            .iter()
            .map(|d| if new_axis { 1 } else { d.shape()[a] })
            .collect();
        drop(datas);
        Ok(Tensor::from_op(out, op, tensors, move |args| {
            let mut start = 0;
            lengths
                .iter()
                .zip(args.needs_grad)
                .map(|(&len, &needed)| {
                    let part = Slice::from(start..start + len);
                    start += len;
                    needed.then(|| {
                        let g = args.grad.slice_axis(Axis(a), part);
                        if new_axis {
                            g.index_axis(Axis(a), 0).to_owned()
                        } else {
                            g.to_owned()
                        }
                    })
                })
                .collect()
        }))
    }

    /// `torch.where(condition, x, y)`: `x` where `condition` holds, else `y`, all three
    /// broadcast together. The gradient goes to the side that was taken (0 to the other).
    ///
    /// ```
    /// use tensor::ndarray::array;
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::new(array![1.0, 2.0, 3.0], true);
    /// let cond = x.data().mapv(|v| v > 1.5);
    /// let y = Tensor::where_(&cond, &x, &Tensor::scalar(0.0)).unwrap();
    /// assert_eq!(y.data(), array![0.0, 2.0, 3.0].into_dyn());
    /// y.sum().backward().unwrap();
    /// assert_eq!(x.grad().unwrap(), array![0.0, 1.0, 1.0].into_dyn());
    /// ```
    pub fn where_(
        condition: &ArrayD<bool>,
        x: &Tensor<T>,
        y: &Tensor<T>,
    ) -> Result<Tensor<T>, TensorError> {
        let (out, cond) = {
            let (a, b) = (x.read(), y.read());
            let (a, b) = (a.view(), b.view());
            let ab = broadcast_shapes("where_", a.shape(), b.shape())?;
            let shape = broadcast_shapes("where_", condition.shape(), &ab)?;
            let view = |s: &[usize]| IxDyn(s);
            let cond = condition
                .broadcast(view(&shape))
                .expect("checked")
                .to_owned();
            let out = Zip::from(&cond)
                .and_broadcast(&*a)
                .and_broadcast(&*b)
                .map_collect(|&c, &a, &b| if c { a } else { b });
            (out, cond)
        };
        Ok(Tensor::from_op(out, "where_", &[x, y], move |args| {
            let g = &args.grad;
            let side = |take: bool, input: &ArrayRefD<T>| {
                let picked = Zip::from(g)
                    .and(&cond)
                    .map_collect(|&g, &c| if c == take { g } else { T::zero() });
                reduce_to_shape_owned(picked, input.shape())
            };
            vec![
                args.needs_grad[0].then(|| side(true, args.inputs[0])),
                args.needs_grad[1].then(|| side(false, args.inputs[1])),
            ]
        }))
    }

    /// `value` where `mask` (broadcast to this tensor's shape) holds, the data elsewhere;
    /// filled entries get no gradient.
    ///
    /// ```
    /// use tensor::ndarray::array;
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::new(array![[1.0, 2.0], [3.0, 4.0]], true);
    /// let y = x.masked_fill(&array![true, false].into_dyn(), -1.0).unwrap();
    /// assert_eq!(y.data(), array![[-1.0, 2.0], [-1.0, 4.0]].into_dyn());
    /// y.sum().backward().unwrap();
    /// assert_eq!(x.grad().unwrap(), array![[0.0, 1.0], [0.0, 1.0]].into_dyn());
    /// assert!(x.masked_fill(&array![true, false, true].into_dyn(), 0.0).is_err());
    /// ```
    pub fn masked_fill(&self, mask: &ArrayD<bool>, value: T) -> Result<Tensor<T>, TensorError> {
        let shape = self.shape();
        let Some(mask) = mask.broadcast(IxDyn(&shape)) else {
            return Err(TensorError::Broadcast {
                op: "masked_fill",
                lhs: mask.shape().to_vec(),
                rhs: shape,
            });
        };
        let mask = mask.to_owned();
        let out = Zip::from(self.read().view())
            .and(&mask)
            .map_collect(|&v, &m| if m { value } else { v });
        Ok(Tensor::from_op(out, "masked_fill", &[self], move |args| {
            let g = Zip::from(&args.grad)
                .and(&mask)
                .map_collect(|&g, &m| if m { T::zero() } else { g });
            vec![Some(g)]
        }))
    }
}
