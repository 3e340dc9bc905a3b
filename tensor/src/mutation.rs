//! Changing a tensor in place, for optimisers: each change counts a new version.

use ndarray::{Array, ArrayD, ArrayViewMutD, Dimension};

use super::storage::Storage;
use super::{Element, Tensor, TensorError};

impl<T: Element> Tensor<T> {
    /// Replaces the data by an array of the same shape, and counts a new
    /// [`version`](Tensor::version): a `backward` through an op built from the old data is
    /// then an error, not a gradient of other data. Change parameters between a backward pass
    /// and the next primal pass, as an optimiser does.
    ///
    /// ```
    /// use tensor::Tensor;
    /// use ndarray::array;
    ///
    /// let t = Tensor::zeros(&[2]);
    /// t.set_data(array![1.0, 2.0]).unwrap();
    /// assert_eq!(t.data()[1], 2.0);
    /// assert!(t.set_data(array![1.0]).is_err());
    /// ```
    pub fn set_data<D: Dimension>(&self, data: Array<T, D>) -> Result<(), TensorError> {
        let mut slot = self.0.data.borrow_mut();
        if slot.shape() != data.shape() {
            return Err(TensorError::ShapeMismatch {
                op: "set_data".into(),
                expected: slot.shape().to_vec(),
                got: data.shape().to_vec(),
            });
        }
        *slot = Storage::from_array(data.into_dyn());
        self.bump_version();
        Ok(())
    }

    /// Updates the data in place from the data and the current gradient
    /// (a mutable *view* is passed, so the shape cannot change).
    ///
    /// ```
    /// use tensor::Tensor;
    ///
    /// let w = Tensor::<f64>::ones(&[2]).with_grad();
    /// (&w * 3.0).sum().backward().unwrap();
    /// // Gradient descent with momentum-free SGD, written by hand:
    /// w.update(|mut data, grad| {
    ///     if let Some(g) = grad {
    ///         data.scaled_add(-0.1, g);
    ///     }
    /// });
    /// assert!((w.data()[0] - 0.7).abs() < 1e-12);
    /// ```
    pub fn update(&self, f: impl FnOnce(ArrayViewMutD<'_, T>, Option<&ArrayD<T>>)) {
        self.0
            .with_grad(|grad| f(self.0.data.borrow_mut().view_mut(), grad));
        self.bump_version();
    }

    fn bump_version(&self) {
        self.0.version.set(self.0.version.get().wrapping_add(1));
    }

    /// One step of plain gradient descent: `data -= lr * grad` (no-op when
    /// there is no gradient).
    ///
    /// ```
    /// use tensor::Tensor;
    ///
    /// let w = Tensor::scalar(1.0).with_grad();
    /// (&w * &w).backward().unwrap(); // grad = 2
    /// w.sgd_step(0.25);
    /// assert_eq!(w.item().unwrap(), 0.5);
    /// ```
    pub fn sgd_step(&self, lr: T) {
        self.update(|mut data, grad| {
            if let Some(g) = grad {
                data.scaled_add(-lr, g);
            }
        });
    }

    /// Forgets the accumulated gradient (sets it to `None`).
    ///
    /// ```
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::scalar(1.0).with_grad();
    /// (&x * 2.0).backward().unwrap();
    /// x.zero_grad();
    /// assert!(x.grad().is_none());
    /// ```
    pub fn zero_grad(&self) {
        if let Some(g) = self.0.grad.take() {
            crate::pool::give_array(*g);
        }
    }

    /// A new leaf with a copy of the data that does not require a gradient:
    /// gradients stop here.
    ///
    /// ```
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::scalar(2.0).with_grad();
    /// let y = &x.detach() * &x; // d/dx = detached value = 2
    /// y.backward().unwrap();
    /// assert_eq!(x.grad().unwrap()[[]], 2.0);
    /// ```
    pub fn detach(&self) -> Tensor<T> {
        let data = self.read().clone();
        Tensor::node(
            data,
            false,
            "detach",
            Default::default(),
            crate::node::Backward::None,
        )
    }
}
