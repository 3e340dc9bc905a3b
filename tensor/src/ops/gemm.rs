//! One matrix product `c = a · b` of 2-D views, the kernel under [`Tensor::matmul`] and its
//! backward.
//!
//! `f32` and `f64` go to the `gemm` crate (the kernels under faer and candle), which picks
//! AVX-512, AVX2+FMA or scalar kernels at run time; every other element type goes to ndarray's
//! `general_mat_mul`. On the MLP's products `gemm` is faster than `general_mat_mul`
//! (matrixmultiply) in both `f32` and `f64` (docs/unsafe.md names the benchmark).
//!
//! [`Tensor::matmul`]: crate::Tensor::matmul

use std::any::TypeId;

use ndarray::{ArrayView2, ArrayViewMut2, linalg::general_mat_mul};

use crate::Element;

/// Calls a `gemm` kernel of element type `$t` on [`Operands`] of the tensor's element type,
/// which the caller has found (by `TypeId`) to be `$t`.
macro_rules! kernel_call {
    ($kernel:expr, $p:expr, $t:ty) => {{
        let p = $p;
        // SAFETY: the caller compared `TypeId`s, so the element type is `$t` and the casts
        // change no pointee type. `run` made the pointers and strides from live views: every
        // (i, l) with i < m, l < k addresses an element of `a`, every (l, j) one of `b`, and
        // every (i, j) with i < m, j < n a distinct element of `c` (checked there), which the
        // `&mut` view owns alone, so nothing the kernel reads aliases what it writes.
        // `read_dst = false` with β = 1 stores exactly a·b (α is not read) into every (i, j),
        // never reading the destination.
        #[allow(unsafe_code)]
        unsafe {
            $kernel(
                p.m,
                p.n,
                p.k,
                p.dst as *mut $t,
                p.dst_cs,
                p.dst_rs,
                false,
                p.lhs as *const $t,
                p.lhs_cs,
                p.lhs_rs,
                p.rhs as *const $t,
                p.rhs_cs,
                p.rhs_rs,
                0.0,
                1.0,
                false,
                false,
                false,
                gemm_common::Parallelism::None,
            )
        }
    }};
}

/// `c = a · b`, overwriting every element of `c` whatever it held (a buffer from the
/// [`pool`](crate::pool), say, stale values and NaNs included). The shapes must agree:
/// `a` is m × k, `b` k × n, `c` m × n (the caller's plan has checked them; a mismatch panics
/// here, before any kernel runs).
///
/// The `gemm` kernels never read `c`, so it is not zeroed first: zeroing each product's fresh
/// array would be a visible share of the MLP's loss and gradient.
pub(crate) fn mat_mul_into<T: Element>(
    a: &ArrayView2<'_, T>,
    b: &ArrayView2<'_, T>,
    c: &mut ArrayViewMut2<'_, T>,
) {
    let ((m, k), (k2, n)) = (a.dim(), b.dim());
    assert!(
        k == k2 && c.dim() == (m, n),
        "matrix product of {m}×{k} and {k2}×{n} into {:?}",
        c.dim()
    );
    if m == 0 || n == 0 || k == 0 {
        c.fill(T::zero());
        return;
    }
    let id = TypeId::of::<T>();
    let done = if id == TypeId::of::<f64>() {
        let kernel = gemm_f64::gemm::f64::get_gemm_fn();
        run(a, b, c, |p| kernel_call!(kernel, p, f64))
    } else if id == TypeId::of::<f32>() {
        let kernel = gemm_f32::gemm::f32::get_gemm_fn();
        run(a, b, c, |p| kernel_call!(kernel, p, f32))
    } else {
        false
    };
    if !done {
        // β = 0 still multiplies the old values by 0, which a NaN survives.
        c.fill(T::zero());
        general_mat_mul(T::one(), a, b, T::zero(), c);
    }
}

/// The raw operands of one product: pointers, sizes and strides in elements.
struct Operands<T> {
    m: usize,
    n: usize,
    k: usize,
    dst: *mut T,
    dst_rs: isize,
    dst_cs: isize,
    lhs: *const T,
    lhs_rs: isize,
    lhs_cs: isize,
    rhs: *const T,
    rhs_rs: isize,
    rhs_cs: isize,
}

/// Gathers the operands of `c = a · b` and hands them to `kernel`, in the orientation the
/// kernels are fast in: `gemm`'s micro-kernels store columns of the destination, so a
/// row-major `c` is computed as `cᵀ = bᵀ · aᵀ` (the same numbers, views swapped). Called with
/// a row-major destination as it stands, the kernel stores element by element, several times
/// slower on the MLP's 256 × 64 × 256 product. Returns `false`, calling nothing,
/// for negative strides (which our views never have; ndarray's product takes them).
fn run<T: Element>(
    a: &ArrayView2<'_, T>,
    b: &ArrayView2<'_, T>,
    c: &mut ArrayViewMut2<'_, T>,
    kernel: impl FnOnce(Operands<T>),
) -> bool {
    let (m, k) = a.dim();
    let n = b.dim().1;
    let (cs, as_, bs) = ([c.strides()[0], c.strides()[1]], a.strides(), b.strides());
    if cs.iter().chain(as_).chain(bs).any(|&s| s < 0) {
        return false;
    }
    // The kernel writes c[i, j] at dst + i·rs + j·cs: distinct for distinct (i, j) when the
    // larger stride steps over a whole run of the smaller one. Our callers pass standard
    // layouts; this keeps a future caller from handing over an overlapping view.
    let (rows, cols) = (cs[0].unsigned_abs(), cs[1].unsigned_abs());
    assert!(
        (m <= 1 || rows >= 1) && (n <= 1 || cols >= 1) && (rows >= cols * n || cols >= rows * m),
        "the product's destination has overlapping elements (strides {cs:?})"
    );
    let p = Operands {
        m,
        n,
        k,
        dst: c.as_mut_ptr(),
        dst_rs: cs[0],
        dst_cs: cs[1],
        lhs: a.as_ptr(),
        lhs_rs: as_[0],
        lhs_cs: as_[1],
        rhs: b.as_ptr(),
        rhs_rs: bs[0],
        rhs_cs: bs[1],
    };
    kernel(if p.dst_cs < p.dst_rs {
        Operands {
            m: n,
            n: m,
            dst_rs: p.dst_cs,
            dst_cs: p.dst_rs,
            lhs: p.rhs,
            lhs_rs: p.rhs_cs,
            lhs_cs: p.rhs_rs,
            rhs: p.lhs,
            rhs_rs: p.lhs_cs,
            rhs_cs: p.lhs_rs,
            ..p
        }
    } else {
        p
    });
    true
}
