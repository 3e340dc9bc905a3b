//! A small array autograd in the spirit of micrograd and PyTorch, on top of
//! [`ndarray`].
//!
//! A [`Tensor`] is a cheap-to-clone handle to a node of a computation graph.
//! Each node owns an `f64` array (`ndarray::ArrayD<f64>`), an optional
//! gradient, the tensors it was computed from (its *parents*) and a closure
//! that turns the gradient of the node into gradients of its parents.
//! Calling [`Tensor::backward`] walks the graph in reverse topological order
//! and **adds** the resulting gradients into every leaf that
//! [requires a gradient](Tensor::requires_grad), as PyTorch does.
//!
//! # API conventions
//!
//! * Operations that can fail because of the shapes involved return
//!   `Result<Tensor, TensorError>`: [`Tensor::try_add`], [`Tensor::try_sub`],
//!   [`Tensor::try_mul`], [`Tensor::try_div`], [`Tensor::matmul`],
//!   [`Tensor::reshape`], [`Tensor::sum_axis`], [`Tensor::mean_axis`],
//!   [`Tensor::select_rows`], [`Tensor::slice_rows`], ...
//! * The operators `+ - * /` (on `Tensor`, `&Tensor` and `f64`, in any
//!   combination) and unary `-` are shorthands for the `try_` forms that
//!   **panic** with the same message when the shapes do not broadcast.
//!   Operations that can never fail (`exp`, `tanh`, `sum`, `t`, ...) return a
//!   `Tensor` directly.
//! * Binary elementwise operations follow NumPy broadcasting; the gradient
//!   that flows back to an input is summed over the broadcast axes so that it
//!   always has the input's shape (see [`broadcast`]).
//! * Only tensors that require a gradient (or are computed from one) record
//!   their parents; inside [`no_grad`] nothing is recorded at all.
//! * `Tensor` uses `Rc`/`RefCell`, so it is neither `Send` nor `Sync`.
//!
//! # Operations
//!
//! | family | methods (file) |
//! |--------|----------------|
//! | constructors | [`Tensor::new`] (any `Array1`/`Array2`/`ArrayD`), [`Tensor::from_vec`], [`Tensor::scalar`], [`Tensor::zeros`], [`Tensor::ones`], [`Tensor::with_grad`] |
//! | binary, broadcasting (`ops/binary.rs`) | [`Tensor::try_add`], [`Tensor::try_sub`], [`Tensor::try_mul`], [`Tensor::try_div`], [`Tensor::neg`], operators with `f64` on either side |
//! | matrix product (`ops/matmul.rs`) | [`Tensor::matmul`] (NumPy rules for 1-D/2-D) |
//! | elementwise (`ops/unary.rs`) | [`Tensor::exp`], [`Tensor::ln`], [`Tensor::tanh`], [`Tensor::sigmoid`], [`Tensor::relu`], [`Tensor::powi`], [`Tensor::powf`], [`Tensor::sqrt`], [`Tensor::abs`] |
//! | reductions (`ops/reduce.rs`) | [`Tensor::sum`], [`Tensor::mean`], [`Tensor::sum_axis`], [`Tensor::mean_axis`] |
//! | shape (`ops/shape.rs`) | [`Tensor::t`], [`Tensor::reshape`], [`Tensor::select_rows`], [`Tensor::slice_rows`] |
//! | user-defined (`ops/custom.rs`) | [`CustomOp`], [`Tensor::custom`] |
//! | graph | [`Tensor::backward`], [`Tensor::backward_with`], [`Tensor::zero_grad`], [`Tensor::detach`], [`Tensor::retain_grad`], [`no_grad`] |
//! | optimiser helpers | [`Tensor::sgd_step`], [`Tensor::update`], [`Tensor::set_data`] |
//!
//! # Example
//!
//! ```
//! use reverse::tensor::Tensor;
//! use ndarray::array;
//!
//! # fn main() -> Result<(), reverse::tensor::TensorError> {
//! let x = Tensor::new(array![2.0, 3.0], true);
//! let w = Tensor::new(array![[1.0, 2.0], [3.0, 4.0]], true);
//! let loss = w.matmul(&x)?.tanh().sum();
//! loss.backward()?;
//! assert_eq!(x.grad().unwrap().shape(), &[2]);
//! assert_eq!(w.grad().unwrap().shape(), &[2, 2]);
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]

pub mod broadcast;
mod ops;

#[cfg(test)]
mod tests;

pub use ops::custom::CustomOp;

use std::borrow::Cow;
use std::cell::{Cell, Ref, RefCell};
use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;

use ndarray::{Array, ArrayD, ArrayViewMutD, Dimension, IxDyn};

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

/// Everything that can go wrong when building or differentiating a graph.
///
/// Every message names the shapes involved, e.g.
/// `matmul: shapes [2, 3] and [2] are not aligned (3 != 2)`.
///
/// ```
/// use reverse::tensor::{Tensor, TensorError};
///
/// let a = Tensor::zeros(&[2, 3]);
/// let b = Tensor::zeros(&[4]);
/// let err = a.try_add(&b).unwrap_err();
/// assert!(matches!(err, TensorError::Broadcast { .. }));
/// assert!(err.to_string().contains("[2, 3]"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TensorError {
    /// Two shapes do not broadcast together (NumPy rules).
    Broadcast {
        /// Name of the operation.
        op: &'static str,
        /// Shape of the left operand.
        lhs: Vec<usize>,
        /// Shape of the right operand.
        rhs: Vec<usize>,
    },
    /// `matmul` operands are not 1-D/2-D or their inner dimensions differ.
    MatMul {
        /// Shape of the left operand.
        lhs: Vec<usize>,
        /// Shape of the right operand.
        rhs: Vec<usize>,
    },
    /// An operation that needs exactly one element got more (or none).
    NotScalar {
        /// Name of the operation (`backward`, `item`).
        op: &'static str,
        /// Shape of the tensor.
        shape: Vec<usize>,
    },
    /// A gradient or a replacement array does not have the expected shape.
    ShapeMismatch {
        /// Where the array was supplied (`backward_with`, `set_data`, a custom
        /// op's name, ...).
        op: String,
        /// The shape that was required.
        expected: Vec<usize>,
        /// The shape that was given.
        got: Vec<usize>,
    },
    /// `backward` was called on a tensor that does not require a gradient.
    NoGraph {
        /// Shape of the tensor.
        shape: Vec<usize>,
    },
    /// The number of elements does not match the requested shape.
    Reshape {
        /// Current shape (or the length of the data, as a 1-D shape).
        from: Vec<usize>,
        /// Requested shape.
        to: Vec<usize>,
    },
    /// An axis index is not smaller than the number of dimensions.
    Axis {
        /// Name of the operation.
        op: &'static str,
        /// The offending axis.
        axis: usize,
        /// Shape of the tensor.
        shape: Vec<usize>,
    },
    /// A row index or row range lies outside the first axis.
    RowIndex {
        /// Name of the operation.
        op: &'static str,
        /// The offending index (or range end).
        index: usize,
        /// Shape of the tensor.
        shape: Vec<usize>,
    },
    /// A row range is reversed or ends past the last row.
    RowRange {
        /// Name of the operation.
        op: &'static str,
        /// Start of the range.
        start: usize,
        /// End of the range (exclusive).
        end: usize,
        /// Shape of the tensor.
        shape: Vec<usize>,
    },
    /// A custom op's backward returned the wrong number of gradients.
    GradientCount {
        /// Name of the custom op.
        op: String,
        /// Number of inputs.
        expected: usize,
        /// Number of gradients returned.
        got: usize,
    },
}

impl fmt::Display for TensorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TensorError::Broadcast { op, lhs, rhs } => {
                write!(
                    f,
                    "{op}: shapes {lhs:?} and {rhs:?} cannot be broadcast together"
                )
            }
            TensorError::MatMul { lhs, rhs } => {
                if lhs.is_empty() || rhs.is_empty() || lhs.len() > 2 || rhs.len() > 2 {
                    write!(
                        f,
                        "matmul: shapes {lhs:?} and {rhs:?} are not supported (operands must be 1-D or 2-D)"
                    )
                } else {
                    let k1 = lhs[lhs.len() - 1];
                    let k2 = rhs[0];
                    write!(
                        f,
                        "matmul: shapes {lhs:?} and {rhs:?} are not aligned ({k1} != {k2})"
                    )
                }
            }
            TensorError::NotScalar { op, shape } => write!(
                f,
                "{op}: expected a tensor with exactly one element, got shape {shape:?} \
                 (use backward_with to pass an explicit gradient)"
            ),
            TensorError::ShapeMismatch { op, expected, got } => {
                write!(
                    f,
                    "{op}: expected an array of shape {expected:?}, got shape {got:?}"
                )
            }
            TensorError::NoGraph { shape } => write!(
                f,
                "backward: tensor of shape {shape:?} does not require grad (no graph was recorded)"
            ),
            TensorError::Reshape { from, to } => {
                let n: usize = from.iter().product();
                let m: usize = to.iter().product();
                write!(
                    f,
                    "reshape: cannot reshape {from:?} ({n} elements) into {to:?} ({m} elements)"
                )
            }
            TensorError::Axis { op, axis, shape } => write!(
                f,
                "{op}: axis {axis} is out of range for shape {shape:?} ({} dimensions)",
                shape.len()
            ),
            TensorError::RowIndex { op, index, shape } => write!(
                f,
                "{op}: row {index} is out of range for shape {shape:?} ({} rows)",
                shape.first().copied().unwrap_or(0)
            ),
            TensorError::RowRange {
                op,
                start,
                end,
                shape,
            } => write!(
                f,
                "{op}: row range {start}..{end} is not within shape {shape:?} ({} rows)",
                shape.first().copied().unwrap_or(0)
            ),
            TensorError::GradientCount { op, expected, got } => write!(
                f,
                "custom op {op}: backward returned {got} gradients for {expected} inputs"
            ),
        }
    }
}

impl std::error::Error for TensorError {}

// ---------------------------------------------------------------------------
// Gradient mode (no_grad)
// ---------------------------------------------------------------------------

thread_local! {
    static GRAD_ENABLED: Cell<bool> = const { Cell::new(true) };
}

/// Whether new operations currently record a graph (false inside
/// [`no_grad`]).
///
/// ```
/// use reverse::tensor::{is_grad_enabled, no_grad};
///
/// assert!(is_grad_enabled());
/// no_grad(|| assert!(!is_grad_enabled()));
/// assert!(is_grad_enabled());
/// ```
pub fn is_grad_enabled() -> bool {
    GRAD_ENABLED.with(Cell::get)
}

/// Restores the previous gradient mode when dropped, even on panic.
struct GradModeGuard(bool);

impl Drop for GradModeGuard {
    fn drop(&mut self) {
        GRAD_ENABLED.with(|g| g.set(self.0));
    }
}

/// Runs `f` with graph recording switched off, like `torch.no_grad()`.
///
/// Tensors created inside are plain constants: they do not require a
/// gradient and keep no parents, which makes inference cheaper. Scopes nest.
///
/// ```
/// use reverse::tensor::{no_grad, Tensor};
///
/// let w = Tensor::ones(&[3]).with_grad();
/// let y = no_grad(|| &w * 2.0);
/// assert!(!y.requires_grad());
/// assert!(y.parents().is_empty());
/// ```
pub fn no_grad<R>(f: impl FnOnce() -> R) -> R {
    let _guard = GradModeGuard(GRAD_ENABLED.with(|g| g.replace(false)));
    f()
}

// ---------------------------------------------------------------------------
// The graph node
// ---------------------------------------------------------------------------

/// What an op's backward closure is given.
///
/// Inputs are read from the parents when `backward` runs rather than copied
/// when the op is built, so building a graph costs no extra array copies.
pub(crate) struct BackwardArgs<'a> {
    /// Data of the parents, in the order they were given to the op.
    pub inputs: &'a [&'a ArrayD<f64>],
    /// Data of the op's result (handy for `exp`, `tanh`, `sigmoid`, ...).
    pub output: &'a ArrayD<f64>,
    /// Gradient of the loss with respect to the op's result.
    pub grad: &'a ArrayD<f64>,
    /// Which parents need a gradient; the others may get `None`.
    pub needs_grad: &'a [bool],
}

/// Maps the gradient of a node to one gradient per parent (`None` = skip).
pub(crate) type BackwardFn = Box<dyn Fn(&BackwardArgs<'_>) -> Vec<Option<ArrayD<f64>>>>;

struct Node {
    data: RefCell<ArrayD<f64>>,
    grad: RefCell<Option<ArrayD<f64>>>,
    requires_grad: Cell<bool>,
    retain_grad: Cell<bool>,
    parents: Vec<Tensor>,
    op: Cow<'static, str>,
    backward: Option<BackwardFn>,
}

impl Node {
    fn accumulate_grad(&self, g: ArrayD<f64>) {
        let mut slot = self.grad.borrow_mut();
        match slot.as_mut() {
            Some(acc) => *acc += &g,
            None => *slot = Some(g),
        }
    }
}

// Dropping a long chain node by node would recurse once per node and can
// overflow the stack; unlink the parents iteratively instead.
impl Drop for Node {
    fn drop(&mut self) {
        let mut stack = std::mem::take(&mut self.parents);
        while let Some(t) = stack.pop() {
            if let Ok(mut node) = Rc::try_unwrap(t.0) {
                stack.append(&mut node.parents);
            }
        }
    }
}

/// An `f64` n-dimensional array that remembers how it was computed.
///
/// Cloning is cheap (it clones an `Rc`): clones are the *same* tensor and
/// share data and gradient. See the [module docs](self) for conventions.
///
/// ```
/// use reverse::tensor::Tensor;
///
/// let a = Tensor::from_vec(&[2], vec![1.0, 2.0]).unwrap().with_grad();
/// let b = &a * &a + 1.0; // broadcasting with a scalar
/// b.sum().backward().unwrap();
/// assert_eq!(a.grad().unwrap().as_slice().unwrap(), &[2.0, 4.0]);
/// ```
#[derive(Clone)]
pub struct Tensor(Rc<Node>);

impl Tensor {
    // ----- constructors ---------------------------------------------------

    /// Wraps an array of any dimensionality (e.g. `Array1`, `Array2`,
    /// `ArrayD`) as a leaf tensor.
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    /// use ndarray::array;
    ///
    /// let w = Tensor::new(array![[1.0, 2.0], [3.0, 4.0]], true);
    /// assert_eq!(w.shape(), vec![2, 2]);
    /// assert!(w.requires_grad());
    /// ```
    pub fn new<D: Dimension>(data: Array<f64, D>, requires_grad: bool) -> Tensor {
        Tensor::leaf(data.into_dyn(), requires_grad, "leaf")
    }

    /// Builds a constant from a shape and row-major data.
    ///
    /// Returns [`TensorError::Reshape`] if `data.len()` is not the product of
    /// `shape`. Chain [`with_grad`](Tensor::with_grad) to make it trainable.
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    ///
    /// let t = Tensor::from_vec(&[2, 3], vec![1., 2., 3., 4., 5., 6.]).unwrap();
    /// assert_eq!(t.data()[[1, 0]], 4.0);
    /// assert!(Tensor::from_vec(&[2, 2], vec![1.0]).is_err());
    /// ```
    pub fn from_vec(shape: &[usize], data: Vec<f64>) -> Result<Tensor, TensorError> {
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
    /// use reverse::tensor::Tensor;
    ///
    /// let s = Tensor::scalar(2.5);
    /// assert_eq!(s.shape(), Vec::<usize>::new());
    /// assert_eq!(s.item().unwrap(), 2.5);
    /// ```
    pub fn scalar(value: f64) -> Tensor {
        Tensor::new(ndarray::arr0(value), false)
    }

    /// A constant filled with zeros.
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    ///
    /// assert_eq!(Tensor::zeros(&[2, 3]).sum().item().unwrap(), 0.0);
    /// ```
    pub fn zeros(shape: &[usize]) -> Tensor {
        Tensor::new(ArrayD::zeros(IxDyn(shape)), false)
    }

    /// A constant filled with ones.
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    ///
    /// assert_eq!(Tensor::ones(&[2, 3]).sum().item().unwrap(), 6.0);
    /// ```
    pub fn ones(shape: &[usize]) -> Tensor {
        Tensor::new(ArrayD::ones(IxDyn(shape)), false)
    }

    /// Marks a leaf as requiring a gradient (a trainable parameter) and
    /// returns it. On a tensor produced by a recorded op it changes nothing.
    ///
    /// Ops built from this tensor *before* the call did not record it.
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    ///
    /// let p = Tensor::zeros(&[3]).with_grad();
    /// assert!(p.requires_grad());
    /// ```
    pub fn with_grad(self) -> Tensor {
        self.0.requires_grad.set(true);
        self
    }

    fn leaf(data: ArrayD<f64>, requires_grad: bool, op: impl Into<Cow<'static, str>>) -> Tensor {
        Tensor(Rc::new(Node {
            data: RefCell::new(data),
            grad: RefCell::new(None),
            requires_grad: Cell::new(requires_grad),
            retain_grad: Cell::new(false),
            parents: Vec::new(),
            op: op.into(),
            backward: None,
        }))
    }

    /// Builds the result of an op. The graph is recorded only when gradients
    /// are enabled and some parent requires a gradient; otherwise the result
    /// is a constant and `backward` is dropped unused.
    pub(crate) fn from_op(
        data: ArrayD<f64>,
        op: impl Into<Cow<'static, str>>,
        parents: &[&Tensor],
        backward: impl Fn(&BackwardArgs<'_>) -> Vec<Option<ArrayD<f64>>> + 'static,
    ) -> Tensor {
        let record = is_grad_enabled() && parents.iter().any(|p| p.requires_grad());
        if !record {
            return Tensor::leaf(data, false, op);
        }
        Tensor(Rc::new(Node {
            data: RefCell::new(data),
            grad: RefCell::new(None),
            requires_grad: Cell::new(true),
            retain_grad: Cell::new(false),
            parents: parents.iter().map(|&p| p.clone()).collect(),
            op: op.into(),
            backward: Some(Box::new(backward)),
        }))
    }

    // ----- accessors ------------------------------------------------------

    /// Borrows the data.
    ///
    /// This is a `RefCell` borrow: drop it before calling
    /// [`set_data`](Tensor::set_data), [`update`](Tensor::update) or
    /// [`sgd_step`](Tensor::sgd_step) on the same tensor.
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    /// use ndarray::array;
    ///
    /// let t = Tensor::new(array![1.0, 2.0], false);
    /// assert_eq!(t.data()[1], 2.0);
    /// let owned = t.data().clone();
    /// assert_eq!(owned.len(), 2);
    /// ```
    pub fn data(&self) -> Ref<'_, ArrayD<f64>> {
        self.0.data.borrow()
    }

    /// A copy of the accumulated gradient, or `None` if no backward pass has
    /// reached this tensor since the last [`zero_grad`](Tensor::zero_grad).
    ///
    /// Only leaves (and tensors marked with
    /// [`retain_grad`](Tensor::retain_grad)) keep their gradient.
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    ///
    /// let x = Tensor::scalar(3.0).with_grad();
    /// assert!(x.grad().is_none());
    /// (&x * &x).backward().unwrap();
    /// assert_eq!(x.grad().unwrap()[[]], 6.0);
    /// ```
    pub fn grad(&self) -> Option<ArrayD<f64>> {
        self.0.grad.borrow().clone()
    }

    /// The shape of the data.
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    ///
    /// assert_eq!(Tensor::zeros(&[4, 1]).shape(), vec![4, 1]);
    /// ```
    pub fn shape(&self) -> Vec<usize> {
        self.0.data.borrow().shape().to_vec()
    }

    /// Number of dimensions.
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    ///
    /// assert_eq!(Tensor::zeros(&[4, 1]).ndim(), 2);
    /// ```
    pub fn ndim(&self) -> usize {
        self.0.data.borrow().ndim()
    }

    /// Number of elements.
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    ///
    /// assert_eq!(Tensor::zeros(&[4, 3]).numel(), 12);
    /// assert_eq!(Tensor::scalar(1.0).numel(), 1);
    /// ```
    pub fn numel(&self) -> usize {
        self.0.data.borrow().len()
    }

    /// The value of a one-element tensor (any shape with one element).
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    ///
    /// assert_eq!(Tensor::ones(&[1, 1]).item().unwrap(), 1.0);
    /// assert!(Tensor::ones(&[2]).item().is_err());
    /// ```
    pub fn item(&self) -> Result<f64, TensorError> {
        let data = self.data();
        match data.iter().next() {
            Some(&v) if data.len() == 1 => Ok(v),
            _ => Err(TensorError::NotScalar {
                op: "item",
                shape: data.shape().to_vec(),
            }),
        }
    }

    /// Name of the op that produced this tensor (`"leaf"` for tensors built
    /// by constructors). Kept even when no graph was recorded.
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    ///
    /// let x = Tensor::ones(&[2]);
    /// assert_eq!(x.op_name(), "leaf");
    /// assert_eq!(x.tanh().op_name(), "tanh");
    /// ```
    pub fn op_name(&self) -> &str {
        &self.0.op
    }

    /// The tensors this one was computed from (empty for leaves and for
    /// results computed without recording a graph).
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    ///
    /// let a = Tensor::ones(&[2]).with_grad();
    /// let b = &a + &a;
    /// assert_eq!(b.parents().len(), 2);
    /// ```
    pub fn parents(&self) -> &[Tensor] {
        &self.0.parents
    }

    /// Whether gradients flow to this tensor.
    ///
    /// ```
    /// use reverse::tensor::Tensor;
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
    /// or under [`no_grad`]) rather than by a recorded op.
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    ///
    /// let a = Tensor::ones(&[2]).with_grad();
    /// assert!(a.is_leaf());
    /// assert!(!a.exp().is_leaf());
    /// ```
    pub fn is_leaf(&self) -> bool {
        self.0.backward.is_none()
    }

    /// Asks `backward` to also keep (and accumulate) the gradient of this
    /// non-leaf tensor, like PyTorch's `retain_grad`.
    ///
    /// ```
    /// use reverse::tensor::Tensor;
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

    // ----- mutation (for optimisers) --------------------------------------

    /// Replaces the data by an array of the same shape.
    ///
    /// Ops already built from this tensor read its data during `backward`,
    /// so change parameters only between a backward pass and the next
    /// forward pass (as an optimiser does).
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    /// use ndarray::array;
    ///
    /// let t = Tensor::zeros(&[2]);
    /// t.set_data(array![1.0, 2.0]).unwrap();
    /// assert_eq!(t.data()[1], 2.0);
    /// assert!(t.set_data(array![1.0]).is_err());
    /// ```
    pub fn set_data<D: Dimension>(&self, data: Array<f64, D>) -> Result<(), TensorError> {
        let mut slot = self.0.data.borrow_mut();
        if slot.shape() != data.shape() {
            return Err(TensorError::ShapeMismatch {
                op: "set_data".into(),
                expected: slot.shape().to_vec(),
                got: data.shape().to_vec(),
            });
        }
        *slot = data.into_dyn();
        Ok(())
    }

    /// Updates the data in place from the data and the current gradient
    /// (a mutable *view* is passed, so the shape cannot change).
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    ///
    /// let w = Tensor::ones(&[2]).with_grad();
    /// (&w * 3.0).sum().backward().unwrap();
    /// // Gradient descent with momentum-free SGD, written by hand:
    /// w.update(|mut data, grad| {
    ///     if let Some(g) = grad {
    ///         data.scaled_add(-0.1, g);
    ///     }
    /// });
    /// assert!((w.data()[0] - 0.7).abs() < 1e-12);
    /// ```
    pub fn update(&self, f: impl FnOnce(ArrayViewMutD<'_, f64>, Option<&ArrayD<f64>>)) {
        let grad = self.0.grad.borrow();
        let mut data = self.0.data.borrow_mut();
        f(data.view_mut(), grad.as_ref());
    }

    /// One step of plain gradient descent: `data -= lr * grad` (no-op when
    /// there is no gradient).
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    ///
    /// let w = Tensor::scalar(1.0).with_grad();
    /// (&w * &w).backward().unwrap(); // grad = 2
    /// w.sgd_step(0.25);
    /// assert_eq!(w.item().unwrap(), 0.5);
    /// ```
    pub fn sgd_step(&self, lr: f64) {
        self.update(|mut data, grad| {
            if let Some(g) = grad {
                data.scaled_add(-lr, g);
            }
        });
    }

    /// Forgets the accumulated gradient (sets it to `None`).
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    ///
    /// let x = Tensor::scalar(1.0).with_grad();
    /// (&x * 2.0).backward().unwrap();
    /// x.zero_grad();
    /// assert!(x.grad().is_none());
    /// ```
    pub fn zero_grad(&self) {
        *self.0.grad.borrow_mut() = None;
    }

    /// A new leaf with a copy of the data that does not require a gradient:
    /// gradients stop here.
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    ///
    /// let x = Tensor::scalar(2.0).with_grad();
    /// let y = &x.detach() * &x; // d/dx = detached value = 2
    /// y.backward().unwrap();
    /// assert_eq!(x.grad().unwrap()[[]], 2.0);
    /// ```
    pub fn detach(&self) -> Tensor {
        Tensor::leaf(self.data().clone(), false, "detach")
    }

    // ----- backward -------------------------------------------------------

    /// Backpropagates from a one-element tensor, seeding its gradient with 1.
    ///
    /// Gradients are **added** to the leaves' existing gradients; call
    /// [`zero_grad`](Tensor::zero_grad) between steps. The graph is kept, so
    /// `backward` may be called again.
    ///
    /// Errors: [`TensorError::NotScalar`] if the tensor has more than one
    /// element, [`TensorError::NoGraph`] if it does not require a gradient.
    /// A [`CustomOp`] whose backward returns gradients of the wrong number or
    /// shape stops the pass with [`TensorError::GradientCount`] or
    /// [`TensorError::ShapeMismatch`]; gradients already added to leaves by
    /// then are kept.
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    /// use ndarray::array;
    ///
    /// let x = Tensor::new(array![1.0, 2.0], true);
    /// x.powi(2).sum().backward().unwrap();
    /// assert_eq!(x.grad().unwrap(), array![2.0, 4.0].into_dyn());
    /// assert!(x.powi(2).backward().is_err()); // not a scalar
    /// ```
    pub fn backward(&self) -> Result<(), TensorError> {
        if self.numel() != 1 {
            return Err(TensorError::NotScalar {
                op: "backward",
                shape: self.shape(),
            });
        }
        self.run_backward(ArrayD::ones(IxDyn(&self.shape())))
    }

    /// Backpropagates an explicit gradient of this tensor's shape (a
    /// vector-Jacobian product), e.g. for a non-scalar output.
    ///
    /// Errors: [`TensorError::ShapeMismatch`] if `grad` has the wrong shape,
    /// [`TensorError::NoGraph`] if the tensor does not require a gradient.
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    /// use ndarray::array;
    ///
    /// let x = Tensor::new(array![1.0, 2.0], true);
    /// let y = &x * 3.0;
    /// y.backward_with(array![1.0, 10.0]).unwrap();
    /// assert_eq!(x.grad().unwrap(), array![3.0, 30.0].into_dyn());
    /// assert!(y.backward_with(array![1.0]).is_err());
    /// ```
    pub fn backward_with<D: Dimension>(&self, grad: Array<f64, D>) -> Result<(), TensorError> {
        if grad.shape() != self.data().shape() {
            return Err(TensorError::ShapeMismatch {
                op: "backward_with".into(),
                expected: self.shape(),
                got: grad.shape().to_vec(),
            });
        }
        self.run_backward(grad.into_dyn())
    }

    /// Tensors that require a gradient and reach `self`, parents before
    /// children (so `self` is last). Iterative DFS: no recursion depth limit.
    fn topo_order(&self) -> Vec<Tensor> {
        let mut order = Vec::new();
        let mut visited = std::collections::HashSet::new();
        // `true` = all parents already emitted, emit the node itself.
        let mut stack = vec![(self.clone(), false)];
        while let Some((t, parents_done)) = stack.pop() {
            if parents_done {
                order.push(t);
                continue;
            }
            if !visited.insert(Rc::as_ptr(&t.0)) {
                continue;
            }
            stack.push((t.clone(), true));
            for p in t.parents() {
                if p.requires_grad() && !visited.contains(&Rc::as_ptr(&p.0)) {
                    stack.push((p.clone(), false));
                }
            }
        }
        order
    }

    fn run_backward(&self, seed: ArrayD<f64>) -> Result<(), TensorError> {
        if !self.requires_grad() {
            return Err(TensorError::NoGraph {
                shape: self.shape(),
            });
        }
        let order = self.topo_order();
        let index: HashMap<*const Node, usize> = order
            .iter()
            .enumerate()
            .map(|(i, t)| (Rc::as_ptr(&t.0), i))
            .collect();
        // Gradients of this pass live here, not in the nodes, so that a
        // second `backward` does not re-add stale intermediate gradients.
        let mut grads: Vec<Option<ArrayD<f64>>> = vec![None; order.len()];
        grads[order.len() - 1] = Some(seed);

        for (i, tensor) in order.iter().enumerate().rev() {
            let Some(g) = grads[i].take() else { continue };
            let node = &tensor.0;
            let Some(backward) = &node.backward else {
                node.accumulate_grad(g); // a leaf: store (move, no copy)
                continue;
            };
            if node.retain_grad.get() {
                node.accumulate_grad(g.clone());
            }
            let parent_grads = {
                let datas: Vec<Ref<'_, ArrayD<f64>>> =
                    node.parents.iter().map(|p| p.data()).collect();
                let inputs: Vec<&ArrayD<f64>> = datas.iter().map(|d| &**d).collect();
                let needs_grad: Vec<bool> =
                    node.parents.iter().map(Tensor::requires_grad).collect();
                let output = node.data.borrow();
                backward(&BackwardArgs {
                    inputs: &inputs,
                    output: &output,
                    grad: &g,
                    needs_grad: &needs_grad,
                })
            };
            if parent_grads.len() != node.parents.len() {
                return Err(TensorError::GradientCount {
                    op: node.op.to_string(),
                    expected: node.parents.len(),
                    got: parent_grads.len(),
                });
            }
            for (parent, pg) in node.parents.iter().zip(parent_grads) {
                let Some(pg) = pg else { continue };
                if !parent.requires_grad() {
                    continue;
                }
                // Built-in ops always get this right; custom ops may not.
                if pg.shape() != parent.data().shape() {
                    return Err(TensorError::ShapeMismatch {
                        op: format!("backward of {}", node.op),
                        expected: parent.shape(),
                        got: pg.shape().to_vec(),
                    });
                }
                let slot = &mut grads[index[&Rc::as_ptr(&parent.0)]];
                match slot {
                    Some(acc) => *acc += &pg,
                    None => *slot = Some(pg),
                }
            }
        }
        Ok(())
    }
}

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tensor")
            .field("op", &self.op_name())
            .field("shape", &self.shape())
            .field("requires_grad", &self.requires_grad())
            .field("data", &*self.data())
            .field("grad", &*self.0.grad.borrow())
            .finish()
    }
}

/// Shows the op, shape and data, e.g. `Tensor(op=tanh, shape=[2], data=[0.5, 0.1])`.
impl fmt::Display for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let data = self.data();
        let values: Vec<f64> = data.iter().copied().collect();
        write!(
            f,
            "Tensor(op={}, shape={:?}, data={:?}",
            self.op_name(),
            data.shape(),
            values
        )?;
        if self.requires_grad() {
            write!(f, ", requires_grad")?;
        }
        write!(f, ")")
    }
}
