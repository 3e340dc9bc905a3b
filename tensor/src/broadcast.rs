//! NumPy broadcasting of shapes, and its adjoint: summing a gradient back to
//! the shape of the input that was broadcast.
//!
//! If `a` of shape `(3, 1)` is added to `b` of shape `(4,)`, both are
//! (virtually) repeated to the common shape `(3, 4)`. An element of `a` was
//! used 4 times, so its gradient is the sum of the 4 corresponding output
//! gradients: the gradient is summed over the broadcast axes.
//!
//! These helpers are public so that [`CustomOp`](crate::CustomOp)
//! implementations can broadcast too.

use ndarray::{ArrayD, ArrayViewD, Axis, CowArray, IxDyn};

use crate::{Element, TensorError};

/// The shape that `lhs` and `rhs` broadcast to under NumPy rules: align the
/// shapes on the right; two dimensions are compatible when they are equal or
/// one of them is 1.
///
/// `op` only names the operation in the error.
///
/// ```
/// use tensor::broadcast::broadcast_shapes;
///
/// assert_eq!(broadcast_shapes("add", &[3, 1], &[4]).unwrap(), vec![3, 4]);
/// assert_eq!(broadcast_shapes("add", &[], &[2, 3]).unwrap(), vec![2, 3]);
/// assert!(broadcast_shapes("add", &[2, 3], &[2]).is_err());
/// ```
pub fn broadcast_shapes(
    op: &'static str,
    lhs: &[usize],
    rhs: &[usize],
) -> Result<Vec<usize>, TensorError> {
    let n = lhs.len().max(rhs.len());
    // Missing leading dimensions count as 1.
    let dim = |s: &[usize], i: usize| {
        let pad = n - s.len();
        if i < pad { 1 } else { s[i - pad] }
    };
    (0..n)
        .map(|i| match (dim(lhs, i), dim(rhs, i)) {
            (a, b) if a == b => Ok(a),
            (1, b) => Ok(b),
            (a, 1) => Ok(a),
            _ => Err(TensorError::Broadcast {
                op,
                lhs: lhs.to_vec(),
                rhs: rhs.to_vec(),
            }),
        })
        .collect()
}

/// Sums `grad` (of a broadcast shape) back down to `shape`: over the extra
/// leading axes, and over the axes where `shape` has 1 but `grad` does not.
///
/// Returns a copy when the shapes already match; see
/// [`reduce_to_shape_owned`] to avoid it.
///
/// ```
/// use tensor::broadcast::reduce_to_shape;
/// use ndarray::{array, ArrayD};
///
/// let g = ArrayD::<f64>::ones(vec![3, 4]);
/// assert_eq!(reduce_to_shape(g.view(), &[3, 1]), ArrayD::from_elem(vec![3, 1], 4.0));
/// assert_eq!(reduce_to_shape(g.view(), &[4]), ArrayD::from_elem(vec![4], 3.0));
/// assert_eq!(reduce_to_shape(g.view(), &[]), ArrayD::from_elem(vec![], 12.0));
/// ```
pub fn reduce_to_shape<T: Element>(grad: ArrayViewD<'_, T>, shape: &[usize]) -> ArrayD<T> {
    debug_assert!(grad.ndim() >= shape.len());
    let lead = grad.ndim() - shape.len();
    // One leading axis over contiguous rows: where `sum_axis` adds whole rows.
    if lead == 1
        && grad.shape()[1..] == *shape
        && let Some(data) = grad.as_slice()
    {
        return sum_rows(data, shape);
    }
    let mut acc: CowArray<'_, T, IxDyn> = grad.into();
    // Walk the axes from the last one so removing a leading axis does not
    // shift the indices still to visit.
    for ax in (0..acc.ndim()).rev() {
        if ax < lead {
            acc = acc.sum_axis(Axis(ax)).into();
        } else if shape[ax - lead] == 1 && acc.shape()[ax] != 1 {
            acc = acc.sum_axis(Axis(ax)).insert_axis(Axis(ax)).into();
        }
    }
    acc.into_owned()
}

/// The sum over the first axis of a row-major array whose other axes are `shape` (a bias's
/// gradient): the rows added one after another into one accumulator, in the order
/// `sum_axis` adds them (it takes rows, not lanes, whenever the first axis's stride is not
/// the smallest, which in a row-major layout it never is: so the same bits), as one loop the
/// compiler vectorises. `sum_axis` on the MLP's 64 × 256 gradient builds a temporary array per
/// row, a visible share of the `f32` loss and gradient; on its 64 × 1 one, 64 of them.
fn sum_rows<T: Element>(data: &[T], shape: &[usize]) -> ArrayD<T> {
    let width: usize = shape.iter().product();
    let mut acc = vec![T::zero(); width];
    let mut run = || {
        for row in data.chunks_exact(width.max(1)) {
            for (a, &v) in acc.iter_mut().zip(row) {
                *a += v;
            }
        }
    };
    if data.len() >= crate::element::WIDE {
        pulp::Arch::new().dispatch(run);
    } else {
        run();
    }
    ArrayD::from_shape_vec(shape, acc).expect("the trailing axes hold `width` elements")
}

/// Like [`reduce_to_shape`] but takes ownership, so no copy is made when the
/// shapes already match (the common case).
///
/// ```
/// use tensor::broadcast::reduce_to_shape_owned;
/// use ndarray::ArrayD;
///
/// let g = ArrayD::from_elem(vec![2, 3], 1.0);
/// assert_eq!(reduce_to_shape_owned(g.clone(), &[2, 3]), g);
/// assert_eq!(reduce_to_shape_owned(g, &[1, 3]), ArrayD::from_elem(vec![1, 3], 2.0));
/// ```
pub fn reduce_to_shape_owned<T: Element>(grad: ArrayD<T>, shape: &[usize]) -> ArrayD<T> {
    if grad.shape() == shape {
        grad
    } else {
        reduce_to_shape(grad.view(), shape)
    }
}
