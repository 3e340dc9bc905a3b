//! Matrix product with NumPy's `matmul` semantics, batched dimensions included.
//!
//! A 1-D left operand is treated as a row `(1, n)` and a 1-D right operand as a column
//! `(n, 1)`; the added axis is removed from the result. Operands of 3 or more axes are stacks
//! of matrices in their last two axes, and the leading (batch) axes broadcast. With that
//! promotion every case has the same backward, matrix by matrix: `dA = G · Bᵀ` and
//! `dB = Aᵀ · G`, summed over the batch axes that were broadcast.

use ndarray::{ArrayD, ArrayRefD, Axis, CowArray, Ix3, IxDyn};

use crate::broadcast::{broadcast_shapes, reduce_to_shape_owned};
use crate::ops::gemm::mat_mul_into;
use crate::ops::shape::reshape_owned;
use crate::{Element, Tensor, TensorError, pool};

/// The shapes of a product: both operands promoted to at least 2-D, the broadcast batch
/// axes, and the result's shape with the promoted axes removed.
struct Plan {
    a: Vec<usize>,
    b: Vec<usize>,
    batch: Vec<usize>,
    out: Vec<usize>,
}

fn plan(lhs: &[usize], rhs: &[usize]) -> Result<Plan, TensorError> {
    let err = || TensorError::MatMul {
        lhs: lhs.to_vec(),
        rhs: rhs.to_vec(),
    };
    if lhs.is_empty() || rhs.is_empty() {
        return Err(err());
    }
    let a = if lhs.len() == 1 {
        vec![1, lhs[0]]
    } else {
        lhs.to_vec()
    };
    let b = if rhs.len() == 1 {
        vec![rhs[0], 1]
    } else {
        rhs.to_vec()
    };
    let (m, k) = (a[a.len() - 2], a[a.len() - 1]);
    let (k2, n) = (b[b.len() - 2], b[b.len() - 1]);
    if k != k2 {
        return Err(err());
    }
    let batch =
        broadcast_shapes("matmul", &a[..a.len() - 2], &b[..b.len() - 2]).map_err(|_| err())?;
    let mut out = batch.clone();
    if lhs.len() > 1 {
        out.push(m);
    }
    if rhs.len() > 1 {
        out.push(n);
    }
    Ok(Plan { a, b, batch, out })
}

/// `x` (of the promoted shape `promoted`) broadcast over `batch` as a `(count, rows, cols)`
/// stack, without a copy when nothing is broadcast.
fn stack<'a, T: Element>(
    x: &'a ArrayRefD<T>,
    promoted: &[usize],
    batch: &[usize],
) -> CowArray<'a, T, Ix3> {
    let (r, c) = (promoted[promoted.len() - 2], promoted[promoted.len() - 1]);
    let count = batch.iter().product::<usize>();
    if x.len() == count * r * c {
        // No batch axis is broadcast: a view of `x` (copied only if not in standard layout).
        return x.to_shape((count, r, c)).expect("the same elements");
    }
    let full: Vec<usize> = batch.iter().copied().chain([r, c]).collect();
    let v = x.to_shape(IxDyn(promoted)).expect("the same elements");
    let v = v.broadcast(IxDyn(&full)).expect("batch axes broadcast");
    v.to_shape((count, r, c))
        .expect("a standard layout")
        .into_owned()
        .into()
}

impl<T: Element> Tensor<T> {
    /// Matrix product `self @ other`, as NumPy's `matmul`:
    ///
    /// | `self`  | `other` | result |
    /// |---------|---------|--------|
    /// | `(n)`   | `(n)`   | `()` (dot product) |
    /// | `(m,n)` | `(n)`   | `(m)`  |
    /// | `(n)`   | `(n,p)` | `(p)`  |
    /// | `(m,n)` | `(n,p)` | `(m,p)`|
    /// | `(…,m,n)` | `(…,n,p)` | `(…,m,p)`, the batch axes `…` broadcast |
    ///
    /// Returns [`TensorError::MatMul`] for 0-d operands, inner dimensions that differ, or
    /// batch axes that do not broadcast.
    ///
    /// ```
    /// use tensor::ndarray::array;
    /// use tensor::Tensor;
    ///
    /// let w = Tensor::new(array![[1.0, 2.0], [3.0, 4.0]], true);
    /// let x = Tensor::new(array![2.0, 3.0], true);
    /// let y = w.matmul(&x).unwrap();
    /// assert_eq!(y.data(), array![8.0, 18.0].into_dyn());
    /// assert_eq!(x.matmul(&x).unwrap().item().unwrap(), 13.0);
    /// assert!(w.matmul(&Tensor::zeros(&[3])).is_err());
    ///
    /// // A batch of 4 matrices times one matrix (broadcast over the batch).
    /// let a = Tensor::<f64>::ones(&[4, 2, 3]).with_grad();
    /// let b = Tensor::<f64>::ones(&[3, 5]).with_grad();
    /// let c = a.matmul(&b).unwrap();
    /// assert_eq!(c.shape(), vec![4, 2, 5]);
    /// c.sum().backward().unwrap();
    /// assert_eq!(b.grad().unwrap()[[0, 0]], 8.0); // 4 matrices × 2 rows
    /// ```
    pub fn matmul(&self, other: &Tensor<T>) -> Result<Tensor<T>, TensorError> {
        let (out, plan) = {
            let (a, b) = (self.read(), other.read());
            let (a, b) = (a.view(), b.view());
            let plan = plan(a.shape(), b.shape())?;
            let (sa, sb) = (
                stack(&a, &plan.a, &plan.batch),
                stack(&b, &plan.b, &plan.batch),
            );
            (
                reshape_owned(batched(&sa, &sb, false, false), &plan.out),
                plan,
            )
        };
        Ok(Tensor::from_op(
            out,
            "matmul",
            &[self, other],
            move |args| {
                let (a, b) = (args.inputs[0], args.inputs[1]);
                let (sa, sb) = (
                    stack(a, &plan.a, &plan.batch),
                    stack(b, &plan.b, &plan.batch),
                );
                let (m, n) = (sa.shape()[1], sb.shape()[2]);
                let g = args
                    .grad
                    .to_shape((sa.shape()[0], m, n))
                    .expect("the gradient has the output's shape");
                // Summed back over broadcast batch axes, then the promoted axis removed.
                let back = |d: ArrayD<T>, promoted: &[usize], shape: &[usize]| {
                    let full: Vec<usize> = plan
                        .batch
                        .iter()
                        .copied()
                        .chain(promoted[promoted.len() - 2..].iter().copied())
                        .collect();
                    let d = reshape_owned(d, &full);
                    reshape_owned(reduce_to_shape_owned(d, promoted), shape)
                };
                let ga = args.needs_grad[0]
                    .then(|| back(batched(&g, &sb, false, true), &plan.a, a.shape()));
                let gb = args.needs_grad[1]
                    .then(|| back(batched(&sa, &g, true, false), &plan.b, b.shape()));
                drop(g);
                pool::give_array(args.grad);
                vec![ga, gb]
            },
        ))
    }
}

/// `l[i] · r[i]` for every matrix `i` of two `(count, ·, ·)` stacks, each factor transposed
/// where asked, as a `(count, rows, cols)` array.
fn batched<T: Element>(
    l: &CowArray<'_, T, Ix3>,
    r: &CowArray<'_, T, Ix3>,
    lt: bool,
    rt: bool,
) -> ArrayD<T> {
    let count = l.shape()[0];
    let rows = if lt { l.shape()[2] } else { l.shape()[1] };
    let cols = if rt { r.shape()[1] } else { r.shape()[2] };
    // Every element is written by its matrix's product: scratch from the pool will do.
    let mut out =
        ndarray::Array3::from_shape_vec((count, rows, cols), pool::take(count * rows * cols))
            .expect("one element per index");
    for i in 0..count {
        let mut slot = out.index_axis_mut(Axis(0), i);
        let (a, b) = (l.index_axis(Axis(0), i), r.index_axis(Axis(0), i));
        let a = if lt { a.reversed_axes() } else { a };
        let b = if rt { b.reversed_axes() } else { b };
        mat_mul_into(&a, &b, &mut slot);
    }
    out.into_dyn()
}
