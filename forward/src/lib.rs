//! Forward-mode automatic differentiation: tangent numbers, and truncated Taylor series for
//! higher orders.
//!
//! A [`Dual<T>`] carries a primal value and one tangent. Every operation computes its value and
//! pushes the tangent through its local partials, `v̇ = Σ ∂v/∂u · u̇` (the rules of
//! [`shared_ops::rules`]). Seeding one input with tangent 1 gives one column of the Jacobian per
//! sweep: a full Jacobian of `f: Rⁿ → Rᵐ` costs n sweeps, or ⌈n/N⌉ sweeps with the N tangents of
//! a [`DualVec<T, N>`].
//!
//! `Dual<T>` is generic over any [`Op`], itself an `Op`, so `Dual<Dual<f64>>` gives second
//! derivatives with no extra code, and the nesting levels are kept apart by type (no
//! perturbation confusion).
//!
//! ```
//! use forward::{derivative, Dual};
//! use shared_ops::Op;
//!
//! fn f<T: Op>(x: T) -> T {
//!     x.sin() * x.exp()
//! }
//!
//! // f'(x) by one forward sweep.
//! let (y, dy) = derivative(f, 0.7_f64);
//! assert!((dy - (0.7_f64.cos() + 0.7_f64.sin()) * 0.7_f64.exp()).abs() < 1e-15);
//!
//! // f''(x) by nesting: the derivative of the derivative.
//! let (_, d2y) = derivative(|x: Dual<f64>| derivative(f, x).1, 0.7_f64);
//! assert!((d2y - 2.0 * 0.7_f64.cos() * 0.7_f64.exp()).abs() < 1e-14);
//! # let _ = y;
//! ```
//!
//! # Higher orders: Taylor mode
//!
//! Nesting k duals gives k-th derivatives at a cost that doubles with each level. A
//! [`Taylor<T, N>`] instead carries the first N Taylor coefficients of a curve `t ↦ x(t)` and
//! maps them through each operation by a recurrence (beside the rule, in
//! [`shared_ops::rules`]), O(N²) per operation: all directional derivatives up to order N − 1 in
//! one sweep. The driver [`taylor`](crate::taylor()) seeds `x + t·v`.
//!
//! ```
//! use forward::{Float, Taylor};
//!
//! // The derivatives of order 0..5 of f(x) = sin x · eˣ at 0.7, in one sweep.
//! let y = Taylor::<f64, 6>::variable(0.7, 1.0);
//! let d = (y.sin() * y.exp()).derivatives();
//! // f'' = 2 cos x · eˣ, as by nesting two duals above.
//! assert!((d[2] - 2.0 * 0.7_f64.cos() * 0.7_f64.exp()).abs() < 1e-14);
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod drivers;
mod dual;
mod dual_vec;
mod taylor;

pub use drivers::{derivative, gradient, jacobian, jvp, taylor};
pub use dual::Dual;
pub use dual_vec::DualVec;
pub use shared_ops::num_traits::Float;
pub use shared_ops::{Error, Op};
pub use taylor::Taylor;

/// The tangent contribution `∂ · u̇` with the structural-zero convention of
/// [`shared_ops::rules`]: a zero factor (a constant's tangent, an input not being seeded, a zero
/// partial) makes the contribution exactly zero, even when the other factor is infinite or NaN
/// (√ at 0, `atan2` at the origin). Reverse mode applies the same convention to adjoints.
///
/// Branch-free: the product, then a select. The result has the same bits as
/// [`scale_lanes`] gives for a lane (a finite partial keeps the sign of a zero product).
///
/// For numbers with [`Op::SPARSE_TANGENTS`] (nested duals, tape variables) a zero tangent is
/// returned as it is, without the product: a tape variable would record it.
#[inline(always)]
pub(crate) fn scale<T: Op>(partial: T, tangent: T) -> T {
    if T::SPARSE_TANGENTS && tangent.is_zero() {
        return tangent;
    }
    let product = partial * tangent;
    let zero = partial.is_zero() | (tangent.is_zero() & !partial.is_finite());
    if zero { T::zero() } else { product }
}

/// `t[i] ← ∂ · t[i]` for every lane, with the convention of [`scale`]. The partial is tested
/// once per operation, so the common case is a plain, vectorised multiply.
#[inline(always)]
pub(crate) fn scale_lanes<T: Op, const N: usize>(partial: T, tangent: &mut [T; N]) {
    if partial.is_finite() && !partial.is_zero() {
        for t in tangent.iter_mut() {
            if !(T::SPARSE_TANGENTS && t.is_zero()) {
                *t = partial * *t;
            }
        }
    } else if partial.is_zero() {
        *tangent = [T::zero(); N];
    } else {
        for t in tangent.iter_mut() {
            *t = if t.is_zero() { T::zero() } else { partial * *t };
        }
    }
}

/// `a + b` for two tangent contributions; with [`Op::SPARSE_TANGENTS`] a structural zero is
/// skipped rather than added (a tape variable would record the sum).
#[inline(always)]
pub(crate) fn add<T: Op>(a: T, b: T) -> T {
    if T::SPARSE_TANGENTS {
        if b.is_zero() {
            return a;
        }
        if a.is_zero() {
            return b;
        }
    }
    a + b
}
