//! Matrix product with NumPy's `matmul` semantics for 1-D and 2-D operands.
//!
//! A 1-D left operand is treated as a row `(1, n)` and a 1-D right operand
//! as a column `(n, 1)`; the added axis is removed from the result. So
//! vector·vector gives a 0-d scalar, matrix·vector a vector, and so on. With
//! that promotion every case has the same backward:
//! `dA = G · Bᵀ` and `dB = Aᵀ · G`, computed with ndarray's `dot` on 2-D
//! views (no copies of the operands).

use ndarray::{ArrayD, CowArray, Ix2};

use crate::tensor::ops::shape::reshape_owned;
use crate::tensor::{Element, Tensor, TensorError};

/// `a` as a matrix: 2-D as is, 1-D as a row (`left`) or a column.
fn as_matrix<T: Element>(a: &ArrayD<T>, left: bool) -> CowArray<'_, T, Ix2> {
    if a.ndim() == 2 {
        a.view()
            .into_dimensionality::<Ix2>()
            .expect("checked 2-D")
            .into()
    } else {
        let n = a.len();
        let shape = if left { (1, n) } else { (n, 1) };
        a.to_shape(shape).expect("checked 1-D")
    }
}

/// The NumPy result shape of `lhs @ rhs`, or the error naming both shapes.
fn matmul_shape(lhs: &[usize], rhs: &[usize]) -> Result<Vec<usize>, TensorError> {
    let err = || TensorError::MatMul {
        lhs: lhs.to_vec(),
        rhs: rhs.to_vec(),
    };
    let supported = |s: &[usize]| s.len() == 1 || s.len() == 2;
    if !supported(lhs) || !supported(rhs) || lhs[lhs.len() - 1] != rhs[0] {
        return Err(err());
    }
    // Keep the rows of a matrix lhs and the columns of a matrix rhs.
    let mut out = Vec::new();
    if lhs.len() == 2 {
        out.push(lhs[0]);
    }
    if rhs.len() == 2 {
        out.push(rhs[1]);
    }
    Ok(out)
}

impl<T: Element> Tensor<T> {
    /// Matrix product `self @ other` (NumPy `matmul` for 1-D and 2-D):
    ///
    /// | `self`  | `other` | result |
    /// |---------|---------|--------|
    /// | `(n)`   | `(n)`   | `()` (dot product) |
    /// | `(m,n)` | `(n)`   | `(m)`  |
    /// | `(n)`   | `(n,p)` | `(p)`  |
    /// | `(m,n)` | `(n,p)` | `(m,p)`|
    ///
    /// Returns [`TensorError::MatMul`] for other ranks or if the inner
    /// dimensions differ. Batched (>2-D) products are not supported.
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    /// use ndarray::array;
    ///
    /// let w = Tensor::new(array![[1.0, 2.0], [3.0, 4.0]], true);
    /// let x = Tensor::new(array![2.0, 3.0], true);
    /// let y = w.matmul(&x).unwrap();
    /// assert_eq!(*y.data(), array![8.0, 18.0].into_dyn());
    /// assert_eq!(x.matmul(&x).unwrap().item().unwrap(), 13.0);
    /// assert!(w.matmul(&Tensor::zeros(&[3])).is_err());
    /// ```
    pub fn matmul(&self, other: &Tensor<T>) -> Result<Tensor<T>, TensorError> {
        let out = {
            let (a, b) = (self.data(), other.data());
            let out_shape = matmul_shape(a.shape(), b.shape())?;
            let product = as_matrix(&a, true).dot(&as_matrix(&b, false));
            reshape_owned(product.into_dyn(), &out_shape)
        };
        Ok(Tensor::from_op(out, "matmul", &[self, other], |args| {
            let (a, b) = (args.inputs[0], args.inputs[1]);
            let (a2, b2) = (as_matrix(a, true), as_matrix(b, false));
            // The output gradient as the (rows of A) x (cols of B) matrix.
            let g2 = args
                .grad
                .to_shape((a2.nrows(), b2.ncols()))
                .expect("gradient has the output's shape");
            let ga =
                args.needs_grad[0].then(|| reshape_owned(g2.dot(&b2.t()).into_dyn(), a.shape()));
            let gb =
                args.needs_grad[1].then(|| reshape_owned(a2.t().dot(&g2).into_dyn(), b.shape()));
            vec![ga, gb]
        }))
    }
}
