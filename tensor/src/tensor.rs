//! The methods of [`Tensor`]: constructors, data and gradient access, recording an operation's
//! node, formatting.

use crate::node::{Backward, BackwardArgs, Node, Parents, Tensor};
use crate::storage::{Buf, Storage};
use crate::{Element, TensorError, is_grad_enabled};

use std::cell::{Cell, Ref, RefCell};
use std::fmt;
use std::rc::Rc;

use ndarray::{Array, ArrayD, ArrayViewD, Dimension, IxDyn};

impl<T: Element> Tensor<T> {
    // ----- constructors ---------------------------------------------------

    /// Wraps an array of any dimensionality (e.g. `Array1`, `Array2`,
    /// `ArrayD`) as a leaf tensor.
    ///
    /// ```
    /// use tensor::Tensor;
    /// use ndarray::array;
    ///
    /// let w = Tensor::new(array![[1.0, 2.0], [3.0, 4.0]], true);
    /// assert_eq!(w.shape(), vec![2, 2]);
    /// assert!(w.requires_grad());
    /// ```
    pub fn new<D: Dimension>(data: Array<T, D>, requires_grad: bool) -> Tensor<T> {
        Tensor::leaf(data.into_dyn(), requires_grad, "leaf")
    }

    /// Builds a constant from a shape and row-major data.
    ///
    /// Returns [`TensorError::Reshape`] if `data.len()` is not the product of
    /// `shape`. Chain [`with_grad`](Tensor::with_grad) to make it trainable.
    ///
    /// ```
    /// use tensor::Tensor;
    ///
    /// let t = Tensor::from_vec(&[2, 3], vec![1., 2., 3., 4., 5., 6.]).unwrap();
    /// assert_eq!(t.data()[[1, 0]], 4.0);
    /// assert!(Tensor::from_vec(&[2, 2], vec![1.0]).is_err());
    /// ```
    pub fn from_vec(shape: &[usize], data: Vec<T>) -> Result<Tensor<T>, TensorError> {
        let len = data.len();
        let array =
            ArrayD::from_shape_vec(IxDyn(shape), data).map_err(|_| TensorError::Reshape {
                from: vec![len],
                to: shape.to_vec(),
            })?;
        Ok(Tensor::new(array, false))
    }

    /// A 0-dimensional constant.
    ///
    /// ```
    /// use tensor::Tensor;
    ///
    /// let s = Tensor::scalar(2.5);
    /// assert_eq!(s.shape(), Vec::<usize>::new());
    /// assert_eq!(s.item().unwrap(), 2.5);
    /// ```
    pub fn scalar(value: T) -> Tensor<T> {
        Tensor::new(ndarray::arr0(value), false)
    }

    /// A constant filled with zeros.
    ///
    /// ```
    /// use tensor::Tensor;
    ///
    /// // The element type is inferred; where nothing fixes it, name it (the default is f64).
    /// let z: Tensor = Tensor::zeros(&[2, 3]);
    /// assert_eq!(z.sum().item().unwrap(), 0.0);
    /// assert_eq!(Tensor::<f32>::zeros(&[2]).item(), Err(tensor::TensorError::NotScalar { op: "item", shape: vec![2] }));
    /// ```
    pub fn zeros(shape: &[usize]) -> Tensor<T> {
        Tensor::new(ArrayD::zeros(IxDyn(shape)), false)
    }

    /// A constant filled with ones.
    ///
    /// ```
    /// use tensor::Tensor;
    ///
    /// assert_eq!(Tensor::<f64>::ones(&[2, 3]).sum().item().unwrap(), 6.0);
    /// ```
    pub fn ones(shape: &[usize]) -> Tensor<T> {
        Tensor::new(ArrayD::ones(IxDyn(shape)), false)
    }

    /// Marks a leaf as requiring a gradient (a trainable parameter) and
    /// returns it. On a tensor produced by a recorded op it changes nothing.
    ///
    /// Ops built from this tensor *before* the call did not record it.
    ///
    /// ```
    /// use tensor::Tensor;
    ///
    /// let p = Tensor::<f64>::zeros(&[3]).with_grad();
    /// assert!(p.requires_grad());
    /// ```
    pub fn with_grad(self) -> Tensor<T> {
        self.0.requires_grad.set(true);
        self
    }

    fn leaf(data: ArrayD<T>, requires_grad: bool, op: &'static str) -> Tensor<T> {
        Tensor::node(
            Storage::from_array(data),
            requires_grad,
            op,
            Parents::None,
            Backward::None,
        )
    }

    pub(crate) fn node(
        data: Storage<T>,
        requires_grad: bool,
        op: &'static str,
        parents: Parents<T>,
        backward: Backward<T>,
    ) -> Tensor<T> {
        Tensor(Rc::new(Node {
            data: RefCell::new(data),
            grad: Cell::new(None),
            parents,
            version: Cell::new(0),
            requires_grad: Cell::new(requires_grad),
            retain_grad: Cell::new(false),
            op,
            backward,
        }))
    }

    /// Builds the result of an op. The graph is recorded only when gradients
    /// are enabled and some parent requires a gradient; otherwise the result
    /// is a constant and `backward` is dropped unused.
    pub(crate) fn from_op(
        data: ArrayD<T>,
        op: &'static str,
        parents: &[&Tensor<T>],
        backward: impl Fn(BackwardArgs<'_, T>) -> Vec<Option<ArrayD<T>>> + 'static,
    ) -> Tensor<T> {
        let data = Storage::from_array(data);
        if !Tensor::records(parents) {
            return Tensor::node(data, false, op, Parents::None, Backward::None);
        }
        Tensor::recorded(data, op, parents, Backward::Closure(Box::new(backward)))
    }

    /// Whether an op on `parents` records a graph: gradients are enabled and some parent
    /// requires one.
    pub(crate) fn records(parents: &[&Tensor<T>]) -> bool {
        is_grad_enabled() && parents.iter().any(|p| p.requires_grad())
    }

    /// The result of an elementwise op of `self` whose partials are `partials` (`None` when
    /// nothing is recorded, see [`records`](Tensor::records)).
    pub(crate) fn elementwise_result(
        &self,
        data: Storage<T>,
        op: &'static str,
        partials: Option<Buf<T>>,
    ) -> Tensor<T> {
        match partials {
            Some(d) => Tensor::recorded(data, op, &[self], Backward::Partials(d)),
            None => Tensor::node(data, false, op, Parents::None, Backward::None),
        }
    }

    /// A recorded node, not generic over the op's closure: one copy for all ops, not one per
    /// closure type.
    fn recorded(
        data: Storage<T>,
        op: &'static str,
        parents: &[&Tensor<T>],
        backward: Backward<T>,
    ) -> Tensor<T> {
        Tensor::node(data, true, op, Parents::of(parents), backward)
    }

    // ----- accessors ------------------------------------------------------

    /// A copy of the data, as [`grad`](Tensor::grad) is a copy of the gradient. To read
    /// large data without copying it, use [`with_data`](Tensor::with_data).
    ///
    /// ```
    /// use tensor::Tensor;
    /// use ndarray::array;
    ///
    /// let t = Tensor::new(array![1.0, 2.0], false);
    /// assert_eq!(t.data()[1], 2.0);
    /// assert_eq!(t.data(), array![1.0, 2.0].into_dyn());
    /// ```
    pub fn data(&self) -> ArrayD<T> {
        self.read().to_array()
    }

    /// Calls `f` with a view of the data, without copying it. A tensor's data is always in
    /// row-major order, so the view's `as_slice` is never `None`.
    ///
    /// The view borrows the data: inside `f`, do not call [`set_data`](Tensor::set_data),
    /// [`update`](Tensor::update) or an optimiser's step on the same tensor (they would panic).
    ///
    /// ```
    /// use tensor::Tensor;
    ///
    /// let t = Tensor::from_vec(&[2, 2], vec![1.0, 2.0, 3.0, 4.0]).unwrap();
    /// assert_eq!(t.with_data(|v| v.sum()), 10.0);
    /// assert_eq!(t.with_data(|v| v.as_slice().unwrap().to_vec()), [1.0, 2.0, 3.0, 4.0]);
    /// ```
    pub fn with_data<R>(&self, f: impl FnOnce(ArrayViewD<'_, T>) -> R) -> R {
        f(self.read().view())
    }

    /// Borrows the data, for the ops.
    pub(crate) fn read(&self) -> Ref<'_, Storage<T>> {
        self.0.data.borrow()
    }

    /// A copy of the accumulated gradient, or `None` if no backward pass has
    /// reached this tensor since the last [`zero_grad`](Tensor::zero_grad).
    ///
    /// Only leaves (and tensors marked with
    /// [`retain_grad`](Tensor::retain_grad)) keep their gradient.
    ///
    /// ```
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::scalar(3.0).with_grad();
    /// assert!(x.grad().is_none());
    /// (&x * &x).backward().unwrap();
    /// assert_eq!(x.grad().unwrap()[[]], 6.0);
    /// ```
    pub fn grad(&self) -> Option<ArrayD<T>> {
        self.0.with_grad(|g| g.cloned())
    }

    /// The shape of the data.
    ///
    /// ```
    /// use tensor::Tensor;
    ///
    /// assert_eq!(Tensor::<f64>::zeros(&[4, 1]).shape(), vec![4, 1]);
    /// ```
    pub fn shape(&self) -> Vec<usize> {
        self.read().shape().to_vec()
    }

    /// Number of dimensions.
    ///
    /// ```
    /// use tensor::Tensor;
    ///
    /// assert_eq!(Tensor::<f64>::zeros(&[4, 1]).ndim(), 2);
    /// ```
    pub fn ndim(&self) -> usize {
        self.read().shape().len()
    }

    /// Number of elements.
    ///
    /// ```
    /// use tensor::Tensor;
    ///
    /// assert_eq!(Tensor::<f64>::zeros(&[4, 3]).numel(), 12);
    /// assert_eq!(Tensor::scalar(1.0).numel(), 1);
    /// ```
    pub fn numel(&self) -> usize {
        self.read().len()
    }

    /// The value of a one-element tensor (any shape with one element).
    ///
    /// ```
    /// use tensor::Tensor;
    ///
    /// assert_eq!(Tensor::<f64>::ones(&[1, 1]).item().unwrap(), 1.0);
    /// assert!(Tensor::<f64>::ones(&[2]).item().is_err());
    /// ```
    pub fn item(&self) -> Result<T, TensorError> {
        match *self.read().as_slice() {
            [v] => Ok(v),
            _ => Err(TensorError::NotScalar {
                op: "item",
                shape: self.shape(),
            }),
        }
    }

    /// Name of the op that produced this tensor (`"leaf"` for tensors built
    /// by constructors). Kept even when no graph was recorded.
    ///
    /// ```
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::<f64>::ones(&[2]);
    /// assert_eq!(x.op_name(), "leaf");
    /// assert_eq!(x.tanh().op_name(), "tanh");
    /// ```
    pub fn op_name(&self) -> &'static str {
        self.0.op
    }

    /// The tensors this one was computed from (empty for leaves and for
    /// results computed without recording a graph).
    ///
    /// ```
    /// use tensor::Tensor;
    ///
    /// let a = Tensor::<f64>::ones(&[2]).with_grad();
    /// let b = &a + &a;
    /// assert_eq!(b.parents().len(), 2);
    /// ```
    pub fn parents(&self) -> &[Tensor<T>] {
        &self.0.parents
    }

    /// Whether gradients flow to this tensor.
    ///
    /// ```
    /// use tensor::Tensor;
    ///
    /// let a = Tensor::ones(&[2]);
    /// let b = Tensor::ones(&[2]).with_grad();
    /// assert!(!(&a * 2.0).requires_grad());
    /// assert!((&a * &b).requires_grad());
    /// ```
    pub fn requires_grad(&self) -> bool {
        self.0.requires_grad.get()
    }

    /// Whether this is a leaf: made by a constructor (or [`detach`](Tensor::detach),
    /// or under [`no_grad`](crate::no_grad)) rather than by a recorded op.
    ///
    /// ```
    /// use tensor::Tensor;
    ///
    /// let a = Tensor::<f64>::ones(&[2]).with_grad();
    /// assert!(a.is_leaf());
    /// assert!(!a.exp().is_leaf());
    /// ```
    pub fn is_leaf(&self) -> bool {
        matches!(self.0.backward, Backward::None)
    }

    /// How many times the data was changed in place ([`set_data`](Tensor::set_data),
    /// [`update`](Tensor::update), an optimiser's step). An operation remembers the versions
    /// of its inputs; `backward` refuses to run through one whose input (or own result) has
    /// changed since, with [`TensorError::Modified`], because its gradient would be that of
    /// other data (PyTorch raises the same way).
    ///
    /// ```
    /// use tensor::ndarray::array;
    /// use tensor::{Tensor, TensorError};
    ///
    /// let x = Tensor::new(array![1.0, 2.0], true);
    /// let y = (&x * &x).sum();
    /// assert_eq!(x.version(), 0);
    /// x.set_data(array![10.0, 20.0]).unwrap();
    /// assert_eq!(x.version(), 1);
    /// let err = y.backward().unwrap_err();
    /// assert!(matches!(err, TensorError::Modified { .. }));
    /// assert!(x.grad().is_none()); // nothing was accumulated
    /// ```
    pub fn version(&self) -> u32 {
        self.0.version.get()
    }

    /// Asks `backward` to also keep (and accumulate) the gradient of this
    /// non-leaf tensor, like PyTorch's `retain_grad`.
    ///
    /// ```
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::scalar(2.0).with_grad();
    /// let y = &x * 3.0;
    /// y.retain_grad();
    /// (&y * &y).backward().unwrap();
    /// assert_eq!(y.grad().unwrap()[[]], 12.0);
    /// ```
    pub fn retain_grad(&self) {
        self.0.retain_grad.set(true);
    }
}

impl<T: Element> fmt::Debug for Tensor<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tensor")
            .field("op", &self.op_name())
            .field("shape", &self.shape())
            .field("requires_grad", &self.requires_grad())
            .field("data", &self.data())
            .field("grad", &self.grad())
            .finish()
    }
}

/// Shows the op, shape and data, e.g. `Tensor(op=tanh, shape=[2], data=[0.5, 0.1])`.
impl<T: Element> fmt::Display for Tensor<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let data = self.read();
        write!(
            f,
            "Tensor(op={}, shape={:?}, data={:?}",
            self.op_name(),
            data.shape(),
            data.as_slice()
        )?;
        if self.requires_grad() {
            write!(f, ", requires_grad")?;
        }
        write!(f, ")")
    }
}
