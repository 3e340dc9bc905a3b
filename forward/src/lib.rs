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
// `unsafe` is denied but where docs/unsafe.md lists it, with its invariant, its test and the
// measurement that pays for it (a test keeps the list and the code in step).
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod convention;
mod drivers;
mod dual;
mod dual_vec;
mod taylor;

pub use convention::{Checked, Convention, Unchecked};
pub use drivers::{derivative, gradient, jacobian_rows, jvp, taylor};
pub use dual::Dual;
pub use dual_vec::DualVec;
#[cfg(any(feature = "nalgebra", feature = "nalgebra_v0_34"))]
pub use shared_ops::Real;
pub use shared_ops::num_traits::Float;
pub use shared_ops::{Error, Op};
pub use taylor::Taylor;

/// One `use` line for forward mode: the number types, the drivers, and what they are written
/// against ([`Op`], the `Float` methods, `Function`).
///
/// ```
/// use forward::prelude::*;
///
/// let x = Dual::variable(0.5_f64);
/// let y = x.sin() * x; // `sin` without guessing which `Float` to import
/// assert_eq!(y.tangent, 0.5_f64.cos() * 0.5 + 0.5_f64.sin());
/// assert_eq!(derivative(|x: Dual<f64>| x * x, 3.0), (9.0, 6.0));
/// ```
pub mod prelude {
    pub use crate::{Dual, DualVec, Taylor, derivative, gradient, jacobian_rows, jvp, taylor};
    pub use shared_ops::prelude::*;
}

/// The tangent of an operation with K operands, `Σₖ ∂ₖ·u̇ₖ` summed in order from the first,
/// with the structural-zero convention of [`shared_ops::rules`]: a product that is NaN because
/// one factor is zero (`0·∞`, `0·NaN`: a constant's tangent or an unseeded input at √0, a zero
/// partial after an infinite tangent) contributes exactly zero.
///
/// The convention costs one test per operation, not per product: the sum is computed with
/// plain multiply-adds, and only if it holds a NaN ([`Op::has_nan`]), which every such product
/// would leave, are the products taken one by one by [`chain_slow`]. Both paths give the same
/// bits wherever the sum is not NaN, so the result does not depend on which ran, nor on how
/// many lanes a [`DualVec`] has.
///
/// `unit` says that every partial is ±1 ([`Unary::UNIT_PARTIALS`](shared_ops::Unary)): no
/// product can then be `0·∞`, and the test is skipped. For numbers with
/// [`Op::SPARSE_TANGENTS`] (tape variables, whose arithmetic records) every tangent goes the
/// slow way, where structural zeros are skipped rather than multiplied.
#[inline(always)]
pub(crate) fn chain<T: Op, const K: usize>(unit: bool, partials: [T; K], tangents: [T; K]) -> T {
    if !T::SPARSE_TANGENTS {
        let mut sum = partials[0] * tangents[0];
        for (&p, &t) in partials[1..].iter().zip(&tangents[1..]) {
            sum += p * t;
        }
        if unit || !sum.has_nan() {
            return sum;
        }
    }
    chain_slow(partials, tangents)
}

/// [`chain`] product by product: each `∂ₖ·u̇ₖ` by [`scale`], structural zeros skipped for
/// numbers with [`Op::SPARSE_TANGENTS`]. Out of line: it runs only where a NaN appears.
#[cold]
#[inline(never)]
fn chain_slow<T: Op, const K: usize>(partials: [T; K], tangents: [T; K]) -> T {
    let mut sum = scale(partials[0], tangents[0]);
    for (&p, &t) in partials[1..].iter().zip(&tangents[1..]) {
        let term = scale(p, t);
        sum = if T::SPARSE_TANGENTS && term.is_structural_zero() {
            sum
        } else if T::SPARSE_TANGENTS && sum.is_structural_zero() {
            term
        } else {
            sum + term
        };
    }
    sum
}

/// One contribution `∂·u̇`: the product, or exactly zero where the product is NaN because a
/// factor is zero. For an [`Op::SPARSE_TANGENTS`] number a structural-zero factor is returned
/// as it is, without the product: a tape variable would record it, and the test of its value
/// would not be kept, so a recording re-evaluated where the other factor is infinite would
/// give NaN where the convention gives 0.
#[inline(always)]
fn scale<T: Op>(partial: T, tangent: T) -> T {
    if T::SPARSE_TANGENTS {
        if tangent.is_structural_zero() {
            return tangent;
        }
        if partial.is_structural_zero() {
            return partial;
        }
    }
    let product = partial * tangent;
    if (partial.is_structural_zero() || tangent.is_structural_zero()) && product.has_nan() {
        T::zero()
    } else {
        product
    }
}

/// [`chain`] for every lane of K operands with N tangents each: a lane's result is the one
/// [`chain`] gives for its tangents alone. The sums for all lanes are plain multiply-adds (one
/// vectorised loop per operand); the test that decides whether they stand is per operation,
/// not per lane: a partial that is finite and nonzero times any tangent is already what the
/// convention asks, so if the product of the partials' values is finite and nonzero (no zero,
/// infinity or NaN among them; below 16 lanes, also not subnormal) the sums stand. Only
/// otherwise are the lanes tested for NaN, and only a NaN sends them lane by lane through
/// [`chain`]'s slow path.
#[inline(always)]
pub(crate) fn chain_lanes<T: Op, const K: usize, const N: usize>(
    unit: bool,
    partials: [T; K],
    tangents: [&[T; N]; K],
) -> [T; N] {
    if !T::SPARSE_TANGENTS {
        // A product of partials that underflows to 0 or overflows only sends the sums to the
        // NaN test.
        let product = partials.iter().fold(1.0, |q, p| q * p.value());
        // Finite and nonzero. Below 16 lanes, tested on the bits (normal: a biased exponent
        // from 1 to 2046; a subnormal product goes to the NaN test), which is faster than the
        // float comparisons on bundle adjustment's 1-lane duals. With 16 lanes the float
        // comparisons are the faster (the 2×15 block).
        #[allow(clippy::eq_op)]
        let regular = if N < 16 {
            ((product.to_bits() >> 52) & 0x7ff).wrapping_sub(1) < 0x7fe
        } else {
            // x − x is 0 exactly for finite x, NaN for ±∞ and NaN.
            product != 0.0 && product - product == 0.0
        };
        // Tested before the sums, so that no operand's tangents stay live past them for the
        // rare path: with 16 lanes, keeping them spilled every operand to the stack.
        if unit || regular {
            return plain_sums(partials, tangents);
        }
        return lanes_checked(partials, tangents.map(|t| *t));
    }
    core::array::from_fn(|l| chain_slow(partials, tangents.map(|t| t[l])))
}

/// `Σₖ ∂ₖ·u̇ₖ` lane by lane, in plain multiply-adds.
#[inline(always)]
fn plain_sums<T: Op, const K: usize, const N: usize>(
    partials: [T; K],
    tangents: [&[T; N]; K],
) -> [T; N] {
    let mut sum = tangents[0].map(|t| partials[0] * t);
    // Index loops: with `zip(..).skip(1)` here `Zip::nth` is not inlined, which slows the loop.
    #[allow(clippy::needless_range_loop)]
    for k in 1..K {
        for (s, &t) in sum.iter_mut().zip(tangents[k]) {
            *s += partials[k] * t;
        }
    }
    sum
}

/// The lanes of [`chain_lanes`] where a partial is zero or not finite: each lane that holds a
/// NaN is taken product by product. Out of line, so that the inlined operation stays small
/// enough for the optimiser to inline the user's closures around it; the tangents by value, so
/// that the common path takes no operand's address (which made it copy every operand to the
/// stack).
#[cold]
#[inline(never)]
fn lanes_checked<T: Op, const K: usize, const N: usize>(
    partials: [T; K],
    tangents: [[T; N]; K],
) -> [T; N] {
    let mut sum = plain_sums(partials, tangents.each_ref());
    for (l, s) in sum.iter_mut().enumerate() {
        if s.has_nan() {
            *s = chain_slow(partials, tangents.map(|t| t[l]));
        }
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Values where the convention and a plain product part ways, and ordinary ones.
    fn special() -> impl Strategy<Value = f64> {
        prop_oneof![
            Just(0.0),
            Just(-0.0),
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
            Just(f64::NAN),
            Just(1.0),
            Just(-1.0),
            Just(1e-310),
            Just(1e300),
            -3.0..3.0_f64,
        ]
    }

    fn same(a: f64, b: f64) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The one-test fast path gives what the product-by-product convention gives.
        #[test]
        fn chain_equals_the_convention(p in prop::array::uniform3(special()), t in prop::array::uniform3(special())) {
            prop_assert!(same(chain(false, [p[0]], [t[0]]), chain_slow([p[0]], [t[0]])));
            prop_assert!(same(chain(false, [p[0], p[1]], [t[0], t[1]]), chain_slow([p[0], p[1]], [t[0], t[1]])));
            prop_assert!(same(chain(false, p, t), chain_slow(p, t)));
            // The convention itself: a zero factor never leaves a NaN.
            for k in 0..3 {
                let s = scale(p[k], t[k]);
                if p[k] == 0.0 || t[k] == 0.0 {
                    prop_assert_eq!(s, 0.0);
                } else {
                    prop_assert!(same(s, p[k] * t[k]));
                }
            }
        }

        /// Every lane of `chain_lanes` is `chain` on that lane's tangents alone, whatever the
        /// other lanes hold (a NaN in one lane must not change another's zeros).
        #[test]
        fn lanes_equal_single_tangents(
            p in prop::array::uniform2(special()),
            a in prop::array::uniform4(special()),
            b in prop::array::uniform4(special()),
        ) {
            let lanes = chain_lanes(false, p, [&a, &b]);
            for l in 0..4 {
                prop_assert!(same(lanes[l], chain(false, p, [a[l], b[l]])), "lane {}", l);
            }
            let lanes = chain_lanes(false, [p[0]], [&a]);
            for l in 0..4 {
                prop_assert!(same(lanes[l], chain(false, [p[0]], [a[l]])), "lane {}", l);
            }
        }

        /// The same with 16 lanes, whose test of the partials is written differently. (The
        /// lanes are drawn as vectors: an array strategy of 16 overflowed a debug build's stack.)
        #[test]
        fn sixteen_lanes_equal_single_tangents(
            p in prop::array::uniform2(special()),
            a in prop::collection::vec(special(), 16),
            b in prop::collection::vec(special(), 16),
        ) {
            let (a, b): ([f64; 16], [f64; 16]) = (a.try_into().unwrap(), b.try_into().unwrap());
            let lanes = chain_lanes(false, p, [&a, &b]);
            for l in 0..16 {
                prop_assert!(same(lanes[l], chain(false, p, [a[l], b[l]])), "lane {}", l);
            }
        }
    }

    /// With unit partials the plain sum is the convention for any tangent, NaN included.
    #[test]
    fn unit_partials_need_no_test() {
        for t in [0.0, -0.0, f64::INFINITY, f64::NAN, 2.5] {
            for u in [0.0, f64::NEG_INFINITY, f64::NAN, -1.5] {
                assert!(same(
                    chain(true, [1.0, -1.0], [t, u]),
                    chain_slow([1.0, -1.0], [t, u])
                ));
            }
        }
    }
}
