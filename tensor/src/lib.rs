//! A small array autograd in the spirit of micrograd and PyTorch, on top of
//! [`ndarray`].
//!
//! A [`Tensor`] is a cheap-to-clone handle to a node of a computation graph.
//! Each node owns an array of its [`Element`] type (`f64` by default, or `f32`), an optional
//! gradient, the tensors it was computed from (its *parents*) and a closure
//! that turns the gradient of the node into gradients of its parents.
//! Calling [`Tensor::backward`] walks the graph in reverse topological order
//! and **adds** the resulting gradients into every leaf that
//! [requires a gradient](Tensor::requires_grad), as PyTorch does.
//!
//! # API conventions
//!
//! * Operations that can fail because of the shapes or axes involved return
//!   `Result<Tensor<T>, TensorError>`, with a message that names the shapes: the `try_`
//!   arithmetic, [`Tensor::matmul`], [`Tensor::reshape`], the reductions along axes, the
//!   selections, ...
//! * The operators `+ - * /` (on `Tensor`, `&Tensor` and a scalar on either side; on the left
//!   `f64` only) and unary `-` are shorthands for the `try_` forms that **panic** with the same
//!   message when the shapes do not broadcast. Operations that can never fail (`exp`, `tanh`,
//!   `sum`, `t`, ...) return a `Tensor` directly.
//! * Binary elementwise operations follow NumPy broadcasting; the gradient that flows back to
//!   an input is summed over the broadcast axes so that it always has the input's shape (see
//!   [`broadcast`]). Axes are `isize`; negative ones count from the end.
//! * Elementwise operations are the rules of [`shared_ops::rules`], so the tensors follow the
//!   rule table's conventions exactly as the scalar modes do: kinks (`abs` and `relu` have
//!   derivative 0 at 0, ties of `maximum`/`minimum` split ½ and ½) and structural zeros (a
//!   zero gradient through an infinite partial gives 0, not NaN). A user's rule applies too:
//!   [`Tensor::apply1`], [`Tensor::apply2`]. A rule evaluates a whole array at once
//!   ([`Unary::eval_slice`](shared_ops::Unary::eval_slice)); `tanh`'s does so by a vectorised
//!   kernel of the table, within 1 ulp of the exact value, so its values may differ from the
//!   scalar modes' (the platform's `libm`, also within 1 ulp) by an ulp or two.
//! * The element type is generic ([`Element`]: `f64`, the default, or `f32`). Where nothing
//!   else fixes it (`Tensor::zeros(&[2])` alone), name it: `let z: Tensor = …` or
//!   `Tensor::<f32>::zeros(…)`.
//! * Changing a tensor's data ([`Tensor::set_data`], [`Tensor::update`], an optimiser's step)
//!   counts a new [`version`](Tensor::version); a `backward` through an operation computed
//!   from the old data returns [`TensorError::Modified`] instead of a wrong gradient.
//! * Only tensors that require a gradient (or are computed from one) record their parents;
//!   inside [`no_grad`] nothing is recorded at all.
//! * `Tensor` uses `Rc`/`RefCell`, so it is neither `Send` nor `Sync`.
//!
//! # Operations
//!
//! | family | methods (file) |
//! |--------|----------------|
//! | constructors | [`Tensor::new`] (any `Array1`/`Array2`/`ArrayD`), [`Tensor::from_vec`], [`Tensor::scalar`], [`Tensor::zeros`], [`Tensor::ones`], [`Tensor::with_grad`] |
//! | binary, broadcasting (`ops/binary.rs`) | [`Tensor::try_add`], [`Tensor::try_sub`], [`Tensor::try_mul`], [`Tensor::try_div`], [`Tensor::maximum`], [`Tensor::minimum`], [`Tensor::apply2`] (any rule), [`Tensor::neg`], operators |
//! | elementwise (`ops/unary.rs`) | [`Tensor::exp`], [`Tensor::ln`] ([`Tensor::log`]), [`Tensor::sin`], [`Tensor::cos`], [`Tensor::tanh`], [`Tensor::sigmoid`], [`Tensor::relu`], [`Tensor::powi`], [`Tensor::powf`], [`Tensor::sqrt`], [`Tensor::abs`], [`Tensor::clamp`], [`Tensor::apply1`] (any rule) |
//! | matrix product (`ops/matmul.rs`) | [`Tensor::matmul`] (NumPy rules, batch axes broadcast) |
//! | reductions (`ops/reduce.rs`) | [`Tensor::sum`], [`Tensor::mean`], [`Tensor::sum_axis`], [`Tensor::mean_axis`], [`Tensor::sum_axes`], [`Tensor::mean_axes`], [`Tensor::max_axis`], [`Tensor::min_axis`], [`Tensor::logsumexp`] |
//! | softmax and loss (`ops/softmax.rs`) | [`Tensor::softmax`], [`Tensor::log_softmax`], [`Tensor::cross_entropy`] |
//! | shape (`ops/shape.rs`) | [`Tensor::t`], [`Tensor::transpose`], [`Tensor::reshape`], [`Tensor::squeeze`], [`Tensor::unsqueeze`], [`Tensor::expand`] |
//! | selection and assembly (`ops/index.rs`) | [`Tensor::index_select`], [`Tensor::select_rows`], [`Tensor::narrow`], [`Tensor::slice_rows`], [`Tensor::gather`], [`Tensor::cat`], [`Tensor::stack`], [`Tensor::where_`], [`Tensor::masked_fill`] |
//! | user-defined (`ops/custom.rs`) | [`CustomOp`], [`Tensor::custom`] |
//! | graph | [`Tensor::backward`], [`Tensor::backward_with`], [`Tensor::zero_grad`], [`Tensor::detach`], [`Tensor::retain_grad`], [`Tensor::version`], [`no_grad`] |
//! | optimiser helpers | [`Tensor::sgd_step`], [`Tensor::update`], [`Tensor::set_data`] |
//!
//! # Example
//!
//! ```
//! use tensor::ndarray::array; // the re-exported ndarray: always the version `Tensor` holds
//! use tensor::Tensor;
//!
//! # fn main() -> Result<(), tensor::TensorError> {
//! let x = Tensor::new(array![2.0, 3.0], true);
//! let w = Tensor::new(array![[1.0, 2.0], [3.0, 4.0]], true);
//! let loss = w.matmul(&x)?.tanh().sum();
//! loss.backward()?;
//! assert_eq!(x.grad().unwrap().shape(), &[2]);
//! assert_eq!(w.grad().unwrap().shape(), &[2, 2]);
//! # Ok(())
//! # }
//! ```
// `unsafe` is denied but where docs/unsafe.md lists it, with its invariant, its test and the
// measurement that pays for it (a test keeps the list and the code in step).
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod broadcast;
mod element;
mod error;
mod grad_mode;
mod graph;
mod mutation;
mod node;
mod ops;
pub mod optim;
mod pool;
mod storage;
mod tensor;

pub use element::Element;
pub use error::TensorError;
pub use grad_mode::{is_grad_enabled, no_grad};
/// The `ndarray` that [`Tensor`] holds, so that a user's arrays are of the same version.
pub use ndarray;
pub use node::Tensor;
pub use ops::custom::CustomOp;
