//! The operations on [`Tensor`](crate::Tensor), one family per file
//! (in the style of dfdx). Each op computes its result eagerly and records a
//! backward closure that maps the result's gradient to its inputs' gradients.

pub(crate) mod binary;
pub(crate) mod custom;
mod gemm;
pub(crate) mod index;
pub(crate) mod matmul;
pub(crate) mod reduce;
pub(crate) mod shape;
pub(crate) mod softmax;
pub(crate) mod unary;

use crate::Element;

/// `g · d`, the gradient through a local partial, under the structural-zero convention of the
/// rule table: a zero factor gives exactly 0, where `0 · ∞` and `0 · NaN` would give NaN. So
/// `sqrt(x) * 0` at `x = 0` has gradient 0 here as in the scalar modes. Only a NaN product can
/// hide such a case. The tests are combined without short-circuits, into one select, so that
/// a loop of them vectorises (a branch per element kept the elementwise backward scalar).
#[inline(always)]
pub(crate) fn chain<T: Element>(g: T, d: T) -> T {
    let p = g * d;
    if p.is_nan() & (g.is_zero() | d.is_zero()) {
        T::zero()
    } else {
        p
    }
}

/// The axis `axis` of a tensor of shape `shape` (of `ndim` axes: `shape.len()`, or one more
/// where an axis is being inserted), negative axes counting from the end as in NumPy.
pub(crate) fn axis(
    op: &'static str,
    axis: isize,
    shape: &[usize],
    ndim: usize,
) -> Result<usize, crate::TensorError> {
    let n = ndim as isize;
    let a = if axis < 0 { axis + n } else { axis };
    if (0..n).contains(&a) {
        Ok(a as usize)
    } else {
        Err(crate::TensorError::Axis {
            op,
            axis,
            shape: shape.to_vec(),
        })
    }
}

/// Several distinct axes, normalised and sorted.
pub(crate) fn axes(
    op: &'static str,
    given: &[isize],
    shape: &[usize],
) -> Result<Vec<usize>, crate::TensorError> {
    let mut out = Vec::with_capacity(given.len());
    for &a in given {
        let k = axis(op, a, shape, shape.len())?;
        if out.contains(&k) {
            return Err(crate::TensorError::Axis {
                op,
                axis: a,
                shape: shape.to_vec(),
            });
        }
        out.push(k);
    }
    out.sort_unstable();
    Ok(out)
}
