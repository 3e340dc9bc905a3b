//! Reductions: `sum`, `mean` and `logsumexp`, over everything, one axis or several.
//!
//! Axes are `isize`: negative ones count from the end (−1 is the last), as in NumPy and
//! PyTorch. The backward of a sum copies the output gradient to every input element that was
//! summed (a broadcast); a mean also divides by the count; `logsumexp` weights by the softmax.

use ndarray::{ArrayD, ArrayRefD, Axis, CowArray, IxDyn, Zip};

use super::{axes, axis};
use crate::{Element, Tensor, TensorError};

/// The shape of `input` with the reduced `axes` (sorted) kept at length 1.
fn kept_shape(input: &[usize], axes: &[usize]) -> Vec<usize> {
    let mut s = input.to_vec();
    for &a in axes {
        s[a] = 1;
    }
    s
}

/// Sums `x` over the sorted `axes`, keeping them at length 1.
fn sum_kept<T: Element>(x: &ArrayRefD<T>, axes: &[usize]) -> ArrayD<T> {
    let mut out = CowArray::from(x.view());
    for &a in axes {
        out = out.sum_axis(Axis(a)).insert_axis(Axis(a)).into();
    }
    out.into_owned()
}

/// The reduced result: with the axes kept at length 1, or removed.
fn finish<T: Element>(
    kept: ArrayD<T>,
    input: &[usize],
    axes: &[usize],
    keepdims: bool,
) -> ArrayD<T> {
    if keepdims {
        return kept;
    }
    let shape: Vec<usize> = (0..input.len())
        .filter(|a| !axes.contains(a))
        .map(|a| input[a])
        .collect();
    kept.into_shape_with_order(IxDyn(&shape))
        .expect("the kept axes have length 1")
}

/// The output gradient, reshaped with the reduced axes at length 1 and broadcast back over
/// the input.
fn spread<T: Element>(grad: &ArrayRefD<T>, input: &[usize], axes: &[usize]) -> ArrayD<T> {
    let kept = kept_shape(input, axes);
    let g = grad
        .to_shape(IxDyn(&kept))
        .expect("the gradient has the reduced shape");
    g.broadcast(IxDyn(input))
        .expect("the reduced shape broadcasts back")
        .to_owned()
}

impl<T: Element> Tensor<T> {
    /// Sum of all elements, as a 0-d tensor.
    ///
    /// ```
    /// use tensor::ndarray::{array, ArrayD};
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::new(array![[1.0, 2.0], [3.0, 4.0]], true);
    /// let s = x.sum();
    /// assert_eq!(s.item().unwrap(), 10.0);
    /// s.backward().unwrap();
    /// assert_eq!(x.grad().unwrap(), ArrayD::ones(vec![2, 2]));
    /// ```
    pub fn sum(&self) -> Tensor<T> {
        self.reduce_all("sum", false)
    }

    /// Mean of all elements, as a 0-d tensor (`NaN` for an empty tensor).
    ///
    /// ```
    /// use tensor::ndarray::{array, ArrayD};
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::new(array![1.0, 2.0, 3.0, 6.0], true);
    /// let m = x.mean();
    /// assert_eq!(m.item().unwrap(), 3.0);
    /// m.backward().unwrap();
    /// assert_eq!(x.grad().unwrap(), ArrayD::from_elem(vec![4], 0.25));
    /// ```
    pub fn mean(&self) -> Tensor<T> {
        self.reduce_all("mean", true)
    }

    fn reduce_all(&self, op: &'static str, mean: bool) -> Tensor<T> {
        let (total, n) = {
            let x = self.read();
            let x = x.view();
            (x.sum(), T::from_f64(x.len() as f64))
        };
        let scale = if mean { n.recip() } else { T::one() };
        let out = ndarray::arr0(total * scale).into_dyn();
        Tensor::from_op(out, op, &[self], move |args| {
            let g = args.grad.iter().next().copied().unwrap_or(T::zero()) * scale;
            vec![Some(ArrayD::from_elem(args.inputs[0].raw_dim(), g))]
        })
    }

    /// Sum along `axis` (negative: from the end). With `keepdims` the axis stays with length
    /// 1 (handy for broadcasting the result back), otherwise it is removed.
    ///
    /// Returns [`TensorError::Axis`] if the axis is out of range.
    ///
    /// ```
    /// use tensor::ndarray::array;
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::new(array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], false);
    /// assert_eq!(x.sum_axis(0, false).unwrap().data(), array![5.0, 7.0, 9.0].into_dyn());
    /// assert_eq!(x.sum_axis(-1, true).unwrap().data(), array![[6.0], [15.0]].into_dyn());
    /// assert!(x.sum_axis(2, false).is_err());
    /// ```
    pub fn sum_axis(&self, axis: isize, keepdims: bool) -> Result<Tensor<T>, TensorError> {
        self.reduce_axes("sum_axis", &[axis], keepdims, false)
    }

    /// Mean along `axis`, with or without keeping it (see [`sum_axis`](Tensor::sum_axis)).
    ///
    /// ```
    /// use tensor::ndarray::{array, ArrayD};
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::new(array![[1.0, 2.0], [3.0, 6.0]], true);
    /// let m = x.mean_axis(1, false).unwrap();
    /// assert_eq!(m.data(), array![1.5, 4.5].into_dyn());
    /// m.sum().backward().unwrap();
    /// assert_eq!(x.grad().unwrap(), ArrayD::from_elem(vec![2, 2], 0.5));
    /// ```
    pub fn mean_axis(&self, axis: isize, keepdims: bool) -> Result<Tensor<T>, TensorError> {
        self.reduce_axes("mean_axis", &[axis], keepdims, true)
    }

    /// Sum over several distinct axes at once (`torch.sum(x, dim=(0, 2))`).
    ///
    /// ```
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::<f64>::ones(&[2, 3, 4]);
    /// assert_eq!(x.sum_axes(&[0, -1], false).unwrap().shape(), vec![3]);
    /// assert_eq!(x.sum_axes(&[0, 2], true).unwrap().shape(), vec![1, 3, 1]);
    /// assert_eq!(x.sum_axes(&[0, 2], false).unwrap().data()[[0]], 8.0);
    /// assert!(x.sum_axes(&[1, -2], false).is_err()); // the same axis twice
    /// ```
    pub fn sum_axes(&self, axes: &[isize], keepdims: bool) -> Result<Tensor<T>, TensorError> {
        self.reduce_axes("sum_axes", axes, keepdims, false)
    }

    /// Mean over several distinct axes at once.
    ///
    /// ```
    /// use tensor::ndarray::array;
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::new(array![[[1.0, 2.0], [3.0, 4.0]]], false); // (1, 2, 2)
    /// assert_eq!(x.mean_axes(&[1, 2], false).unwrap().data(), array![2.5].into_dyn());
    /// ```
    pub fn mean_axes(&self, axes: &[isize], keepdims: bool) -> Result<Tensor<T>, TensorError> {
        self.reduce_axes("mean_axes", axes, keepdims, true)
    }

    fn reduce_axes(
        &self,
        op: &'static str,
        given: &[isize],
        keepdims: bool,
        mean: bool,
    ) -> Result<Tensor<T>, TensorError> {
        let (out, axes, scale) = {
            let x = self.read();
            let x = x.view();
            let axes = axes(op, given, x.shape())?;
            let count: usize = axes.iter().map(|&a| x.shape()[a]).product();
            let scale = if mean {
                T::from_f64(count as f64).recip()
            } else {
                T::one()
            };
            let mut kept = sum_kept(&x, &axes);
            if mean {
                kept.mapv_inplace(|v| v * scale);
            }
            (finish(kept, x.shape(), &axes, keepdims), axes, scale)
        };
        Ok(Tensor::from_op(out, op, &[self], move |args| {
            let mut g = spread(&args.grad, args.inputs[0].shape(), &axes);
            if mean {
                g.mapv_inplace(|v| v * scale);
            }
            vec![Some(g)]
        }))
    }

    /// The largest element along `axis` (`torch.amax`). The gradient is shared equally among
    /// the elements that attain it (a tie of k gets 1/k each, as the rule table's `max` gives
    /// ½ and ½ to a tie of two); NaN elements are ignored, as `f64::max` ignores them, and get
    /// none. A slice of only NaN gives NaN.
    ///
    /// ```
    /// use tensor::ndarray::array;
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::new(array![[1.0, 3.0, 3.0], [2.0, f64::NAN, 0.0]], true);
    /// let m = x.max_axis(-1, false).unwrap();
    /// assert_eq!(m.data(), array![3.0, 2.0].into_dyn());
    /// m.sum().backward().unwrap();
    /// assert_eq!(x.grad().unwrap(), array![[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]].into_dyn());
    /// ```
    pub fn max_axis(&self, axis: isize, keepdims: bool) -> Result<Tensor<T>, TensorError> {
        self.extreme("max_axis", axis, keepdims, T::max)
    }

    /// The smallest element along `axis` (`torch.amin`); ties and NaN as
    /// [`max_axis`](Tensor::max_axis).
    ///
    /// ```
    /// use tensor::ndarray::array;
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::new(array![[1.0, 3.0], [4.0, -2.0]], false);
    /// assert_eq!(x.min_axis(0, true).unwrap().data(), array![[1.0, -2.0]].into_dyn());
    /// ```
    pub fn min_axis(&self, axis: isize, keepdims: bool) -> Result<Tensor<T>, TensorError> {
        self.extreme("min_axis", axis, keepdims, T::min)
    }

    fn extreme(
        &self,
        op: &'static str,
        axis_: isize,
        keepdims: bool,
        pick: fn(T, T) -> T,
    ) -> Result<Tensor<T>, TensorError> {
        let (out, k, share) = {
            let x = self.read();
            let x = x.view();
            let k = axis(op, axis_, x.shape(), x.ndim())?;
            let kept = x
                .fold_axis(Axis(k), T::nan(), |&m, &v| pick(m, v))
                .insert_axis(Axis(k));
            // Each element's share of the gradient: 1/(number of ties) where it attains the
            // extreme, else 0.
            let hits = Zip::from(x.view())
                .and_broadcast(&kept)
                .map_collect(|&v, &m| if v == m { T::one() } else { T::zero() });
            let count = hits.sum_axis(Axis(k)).insert_axis(Axis(k));
            let share = Zip::from(&hits)
                .and_broadcast(&count)
                .map_collect(|&h, &c| if h.is_zero() { h } else { h / c });
            (finish(kept, x.shape(), &[k], keepdims), k, share)
        };
        Ok(Tensor::from_op(out, op, &[self], move |args| {
            let g = spread(&args.grad, args.inputs[0].shape(), &[k]);
            vec![Some(
                Zip::from(&g)
                    .and(&share)
                    .map_collect(|&g, &s| super::chain(g, s)),
            )]
        }))
    }

    /// `ln Σ eˣ` along `axis`, computed stably (shifted by the largest element; a slice of
    /// only `−∞` gives `−∞`, one holding `+∞` gives `+∞`). Its gradient is the softmax
    /// along the axis.
    ///
    /// ```
    /// use tensor::ndarray::array;
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::new(array![[0.0, 0.0], [1000.0, 1000.0]], true);
    /// let l = x.logsumexp(-1, false).unwrap();
    /// let ln2 = 2.0_f64.ln();
    /// assert_eq!(l.data(), array![ln2, 1000.0 + ln2].into_dyn());
    /// l.sum().backward().unwrap();
    /// assert_eq!(x.grad().unwrap(), array![[0.5, 0.5], [0.5, 0.5]].into_dyn());
    /// ```
    pub fn logsumexp(&self, axis_: isize, keepdims: bool) -> Result<Tensor<T>, TensorError> {
        let (out, k, softmax) = {
            let x = self.read();
            let x = x.view();
            let k = axis("logsumexp", axis_, x.shape(), x.ndim())?;
            let (lse, softmax) = logsumexp_kept(&x, k);
            (finish(lse, x.shape(), &[k], keepdims), k, softmax)
        };
        Ok(Tensor::from_op(out, "logsumexp", &[self], move |args| {
            let g = spread(&args.grad, args.inputs[0].shape(), &[k]);
            vec![Some(
                Zip::from(&g)
                    .and(&softmax)
                    .map_collect(|&g, &p| super::chain(g, p)),
            )]
        }))
    }
}

/// `ln Σ eˣ` along axis `k`, kept at length 1, and the softmax along it.
pub(crate) fn logsumexp_kept<T: Element>(x: &ArrayRefD<T>, k: usize) -> (ArrayD<T>, ArrayD<T>) {
    // The shift: the largest element, or 0 where it is infinite (all −∞, or some +∞), so that
    // the sum gives −∞ or +∞ instead of NaN.
    let shift = x
        .fold_axis(Axis(k), T::neg_infinity(), |&m, &v| m.max(v))
        .mapv(|m| if m.is_finite() { m } else { T::zero() })
        .insert_axis(Axis(k));
    let e = (x - &*shift).mapv(T::exp);
    let sum = e.sum_axis(Axis(k)).insert_axis(Axis(k));
    let lse = Zip::from(&sum).and(&shift).map_collect(|&s, &m| s.ln() + m);
    // From the shifted exponentials, not e^(x − lse): that would carry lse's rounding error,
    // as large as ulp(lse), into every probability.
    let softmax = Zip::from(&e)
        .and_broadcast(&sum)
        .map_collect(|&e, &s| e / s);
    (lse, softmax)
}
