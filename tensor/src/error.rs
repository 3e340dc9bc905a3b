//! What can go wrong when building or differentiating a graph.

use std::fmt;

/// Everything that can go wrong when building or differentiating a graph.
///
/// Every message names the shapes involved, e.g.
/// `matmul: shapes [2, 3] and [2] are not aligned (3 != 2)`.
///
/// ```
/// use tensor::{Tensor, TensorError};
///
/// let a = Tensor::<f64>::zeros(&[2, 3]);
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
    /// An axis lies outside the tensor's dimensions (negative axes count from the end: −1 is
    /// the last), or is given twice.
    Axis {
        /// Name of the operation.
        op: &'static str,
        /// The offending axis, as given.
        axis: isize,
        /// Shape of the tensor.
        shape: Vec<usize>,
    },
    /// An index lies outside its axis.
    Index {
        /// Name of the operation.
        op: &'static str,
        /// The axis indexed.
        axis: usize,
        /// The offending index.
        index: usize,
        /// Shape of the tensor.
        shape: Vec<usize>,
    },
    /// A range is reversed or ends past its axis.
    Range {
        /// Name of the operation.
        op: &'static str,
        /// The axis sliced.
        axis: usize,
        /// Start of the range.
        start: usize,
        /// End of the range (exclusive).
        end: usize,
        /// Shape of the tensor.
        shape: Vec<usize>,
    },
    /// The data of an operation's input (or result) was changed in place
    /// ([`Tensor::set_data`](super::Tensor::set_data), [`Tensor::update`](super::Tensor::update),
    /// an optimiser's step) after the operation was computed from it: its gradient would be
    /// that of other data. Compute the graph again after changing the data.
    Modified {
        /// The operation whose backward needed the data.
        op: String,
        /// Which of its tensors changed: `input 0`, `input 1`, … or `the result`.
        which: String,
        /// The changed tensor: the op that made it and its shape.
        tensor: String,
        /// Its version when the operation was computed.
        saved: u32,
        /// Its version now.
        version: u32,
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
                let inner = |s: &[usize], left: bool| match s.len() {
                    1 => s[0],
                    n if left => s[n - 1],
                    n => s[n - 2],
                };
                if lhs.is_empty() || rhs.is_empty() {
                    write!(
                        f,
                        "matmul: shapes {lhs:?} and {rhs:?} are not supported (a 0-d operand)"
                    )
                } else if inner(lhs, true) != inner(rhs, false) {
                    let (k1, k2) = (inner(lhs, true), inner(rhs, false));
                    write!(
                        f,
                        "matmul: shapes {lhs:?} and {rhs:?} are not aligned ({k1} != {k2})"
                    )
                } else {
                    write!(
                        f,
                        "matmul: the batch axes of shapes {lhs:?} and {rhs:?} do not broadcast"
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
                "{op}: axis {axis} is out of range, or repeated, for shape {shape:?} ({} \
                 dimensions: axes {} to {})",
                shape.len(),
                -(shape.len() as isize),
                shape.len() as isize - 1
            ),
            TensorError::Index {
                op,
                axis,
                index,
                shape,
            } => write!(
                f,
                "{op}: index {index} is out of range for axis {axis} of shape {shape:?} \
                 (length {})",
                shape[*axis]
            ),
            TensorError::Range {
                op,
                axis,
                start,
                end,
                shape,
            } => write!(
                f,
                "{op}: range {start}..{end} is not within axis {axis} of shape {shape:?} \
                 (length {})",
                shape[*axis]
            ),
            TensorError::Modified {
                op,
                which,
                tensor,
                saved,
                version,
            } => write!(
                f,
                "backward of {op}: {which} ({tensor}) was modified in place after {op} used it \
                 (version {version}, saved at version {saved}); compute the graph again after \
                 changing the data"
            ),
            TensorError::GradientCount { op, expected, got } => write!(
                f,
                "custom op {op}: backward returned {got} gradients for {expected} inputs"
            ),
        }
    }
}

impl std::error::Error for TensorError {}
