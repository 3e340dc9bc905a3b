//! `softmax`, `log_softmax` and the cross-entropy loss, each one op with its own backward
//! (fewer nodes and one pass, and stable where the composition of `exp`, `sum` and `ln`
//! would overflow).

use ndarray::{Axis, Zip};

use super::axis;
use super::reduce::logsumexp_kept;
use crate::{Element, Tensor, TensorError};

impl<T: Element> Tensor<T> {
    /// `e^xᵢ / Σⱼ e^xⱼ` along `axis` (negative: from the end), computed stably.
    /// The backward is `y ⊙ (g − Σ g ⊙ y)` along the axis.
    ///
    /// ```
    /// use tensor::ndarray::array;
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::new(array![[1.0, 1.0], [0.0, 1000.0]], true);
    /// let p = x.softmax(-1).unwrap();
    /// assert_eq!(p.data(), array![[0.5, 0.5], [0.0, 1.0]].into_dyn());
    /// // Softmax sums to one, so a plain sum has zero gradient.
    /// p.sum().backward().unwrap();
    /// assert!(x.grad().unwrap().iter().all(|g: &f64| g.abs() < 1e-15));
    /// ```
    pub fn softmax(&self, axis_: isize) -> Result<Tensor<T>, TensorError> {
        let (y, k) = {
            let x = self.read();
            let x = x.view();
            let k = axis("softmax", axis_, x.shape(), x.ndim())?;
            (logsumexp_kept(&x, k).1, k)
        };
        Ok(Tensor::from_op(y, "softmax", &[self], move |args| {
            let (y, g) = (args.output, &*args.grad);
            let dot = (g * y).sum_axis(Axis(k)).insert_axis(Axis(k));
            let dx = Zip::from(g)
                .and(y)
                .and_broadcast(&dot)
                .map_collect(|&g, &y, &d| y * (g - d));
            vec![Some(dx)]
        }))
    }

    /// `xᵢ − ln Σⱼ e^xⱼ` along `axis`, computed stably. The backward is
    /// `g − softmax ⊙ Σ g` along the axis.
    ///
    /// ```
    /// use tensor::ndarray::array;
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::new(array![0.0, 0.0], false);
    /// let l = x.log_softmax(0).unwrap();
    /// assert_eq!(l.data(), array![-(2.0_f64.ln()), -(2.0_f64.ln())].into_dyn());
    /// ```
    pub fn log_softmax(&self, axis_: isize) -> Result<Tensor<T>, TensorError> {
        let (out, k, softmax) = {
            let x = self.read();
            let x = x.view();
            let k = axis("log_softmax", axis_, x.shape(), x.ndim())?;
            let (lse, softmax) = logsumexp_kept(&x, k);
            (&*x - &*lse, k, softmax)
        };
        Ok(Tensor::from_op(out, "log_softmax", &[self], move |args| {
            let g = &args.grad;
            let total = g.sum_axis(Axis(k)).insert_axis(Axis(k));
            let dx = Zip::from(g)
                .and(&softmax)
                .and_broadcast(&total)
                .map_collect(|&g, &p, &s| g - p * s);
            vec![Some(dx)]
        }))
    }

    /// The cross-entropy loss of `self` as logits of shape `(N, C)` (or `(C,)` for one
    /// sample) against class indices `targets` (N of them, each below C): the mean over the
    /// samples of `−log_softmax(x)[i, targets[i]]`, as PyTorch's `cross_entropy` with its
    /// default mean reduction. One op: its backward is `(softmax(x) − onehot) / N`.
    ///
    /// Errors: [`TensorError::ShapeMismatch`] if the logits are not 1-D or 2-D or the number
    /// of targets is not N, [`TensorError::Index`] for a class index out of range.
    ///
    /// ```
    /// use tensor::ndarray::array;
    /// use tensor::Tensor;
    ///
    /// let logits = Tensor::new(array![[2.0, 0.0], [0.0, 0.0]], true);
    /// let loss = logits.cross_entropy(&[0, 1]).unwrap();
    /// let expected = ((1.0 + (-2.0_f64).exp()).ln() + 2.0_f64.ln()) / 2.0;
    /// assert!((loss.item().unwrap() - expected).abs() < 1e-15);
    /// loss.backward().unwrap();
    /// let g = logits.grad().unwrap();
    /// assert!((g[[1, 0]] - 0.25).abs() < 1e-15 && (g[[1, 1]] + 0.25).abs() < 1e-15);
    /// assert!(logits.cross_entropy(&[0, 2]).is_err()); // class 2 of 2
    /// ```
    pub fn cross_entropy(&self, targets: &[usize]) -> Result<Tensor<T>, TensorError> {
        let (loss, softmax, targets) = {
            let x = self.read();
            let x = x.view();
            let shape = x.shape().to_vec();
            let x2 = match shape.len() {
                1 => x.view().insert_axis(Axis(0)),
                2 => x.view(),
                _ => return Err(shape_error(&shape, targets.len())),
            };
            let (n, c) = (x2.shape()[0], x2.shape()[1]);
            if targets.len() != n {
                return Err(shape_error(&shape, targets.len()));
            }
            if let Some(&bad) = targets.iter().find(|&&t| t >= c) {
                return Err(TensorError::Index {
                    op: "cross_entropy (a class index)",
                    axis: shape.len() - 1,
                    index: bad,
                    shape,
                });
            }
            let x2 = x2.to_owned().into_dyn();
            let (lse, softmax) = logsumexp_kept(&x2, 1);
            let total = targets
                .iter()
                .enumerate()
                .fold(T::zero(), |acc, (i, &t)| acc + (lse[[i, 0]] - x2[[i, t]]));
            let loss = total / T::from_f64(n as f64);
            (loss, softmax, targets.to_vec())
        };
        Ok(Tensor::from_op(
            ndarray::arr0(loss).into_dyn(),
            "cross_entropy",
            &[self],
            move |args| {
                let n = targets.len();
                let scale =
                    args.grad.iter().next().copied().unwrap_or(T::zero()) / T::from_f64(n as f64);
                let mut d = softmax.clone();
                for (i, &t) in targets.iter().enumerate() {
                    d[[i, t]] -= T::one();
                }
                d.mapv_inplace(|v| super::chain(scale, v));
                let d = d
                    .into_shape_with_order(args.inputs[0].raw_dim())
                    .expect("the same elements");
                vec![Some(d)]
            },
        ))
    }
}

/// Logits that are not `(N, C)` or `(C,)` for `targets` class indices.
fn shape_error(shape: &[usize], targets: usize) -> TensorError {
    TensorError::ShapeMismatch {
        op: format!("cross_entropy of {targets} targets: logits (N, C) with N = {targets}"),
        expected: vec![targets, shape.last().copied().unwrap_or(0)],
        got: shape.to_vec(),
    }
}
