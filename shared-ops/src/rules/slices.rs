//! Rules over many points at once, for array code (the tensors of `reverse`), in forms the
//! compiler vectorises: no branches and no calls into `libm`, so one loop of plain arithmetic
//! serves a whole slice.
//!
//! A rule opts in by naming one of these kernels in its row of the table (`slice tanh
//! tanh_f32,`): `Unary::eval_slice` then calls the first for `f64` slices (other numbers take the
//! rule point by point), `Unary::eval_slice_f32` the second for `f32` slices. The kernels are as accurate as the table asks of a rule (values within 2
//! ulps, partials within 4, checked against a 200-bit reference in `tests/accuracy.rs`), but
//! they are polynomials of our own, not the platform's `libm`: a value may differ from the
//! rule's `eval` in its last bits.

use core::any::TypeId;

use crate::Op;

/// Applies `kernel` (value and partial at one `f64` point) to each point of a slice of `f64`;
/// `false` (nothing written) for any other number type.
#[inline(always)]
fn map<T: Op>(
    x: &[T],
    y: &mut [T],
    d: Option<&mut [T]>,
    kernel: impl Fn(f64) -> (f64, f64),
) -> bool {
    if TypeId::of::<T>() != TypeId::of::<f64>() {
        return false;
    }
    match d {
        Some(d) => {
            for ((x, y), d) in x.iter().zip(y.iter_mut()).zip(d.iter_mut()) {
                let (v, p) = kernel(x.value());
                (*y, *d) = (T::constant(v), T::constant(p));
            }
        }
        None => {
            for (x, y) in x.iter().zip(y.iter_mut()) {
                *y = T::constant(kernel(x.value()).0);
            }
        }
    }
    true
}

/// tanh a and its derivative for `f64` slices: see [`tanh_at`]. Always inlined, so that the
/// loop is compiled for the instruction set of the caller (the tensors dispatch on the CPU
/// found at run time).
#[inline(always)]
pub(super) fn tanh<T: Op>(x: &[T], y: &mut [T], d: Option<&mut [T]>) -> bool {
    map(x, y, d, tanh_at::<12>)
}

/// [`tanh`] for `f32` slices, computed in `f64` with 7 terms of the series instead of 12: a
/// relative error below 2⁻³⁰, against 2⁻²⁴ for an `f32` ulp.
#[inline(always)]
pub(super) fn tanh_f32(x: &[f32], y: &mut [f32], d: Option<&mut [f32]>) {
    match d {
        Some(d) => {
            for ((x, y), d) in x.iter().zip(y.iter_mut()).zip(d.iter_mut()) {
                let (v, p) = tanh_at::<7>(f64::from(*x));
                (*y, *d) = (v as f32, p as f32);
            }
        }
        None => {
            for (x, y) in x.iter().zip(y.iter_mut()) {
                *y = tanh_at::<7>(f64::from(*x)).0 as f32;
            }
        }
    }
}

/// `(tanh a, 1 − tanh² a)` from one exponential and one division, with `K` terms of the
/// exponential's series ([`exp_expm1_terms`]): with p = e^(−2|a|) and m = p − 1 (computed as
/// `expm1`, without cancellation), y = tanh |a| = −m/(1 + p), and the derivative
/// 4p/(1 + p)², the rule's form in the tails, is p·(1 + y)², since 1 + y = 2/(1 + p): no term
/// cancels, and no second division (which would cost as much as the rest of the kernel).
/// tanh(±0) = ±0, tanh(±∞) = ±1 with derivative 0, NaN gives NaN.
#[inline(always)]
fn tanh_at<const K: usize>(a: f64) -> (f64, f64) {
    let t = -2.0 * a.abs();
    // e^t has underflowed long before t = −1100; the clamp bounds the exponent below. (A NaN
    // stays NaN: the comparison is false.)
    let t = if t < -1100.0 { -1100.0 } else { t };
    let (p, m) = exp_expm1_terms::<K>(t);
    let y = -m / (1.0 + p);
    let s = 1.0 + y;
    (y.copysign(a), p * s * s)
}

/// ln 2 = `LN2_HI` + `LN2_LO`, the first with 40 significant bits, so that n·`LN2_HI` is exact
/// for every |n| < 2¹³ (Cody and Waite's reduction). Computed with mpmath.
const LN2_HI: f64 = 0.6931471805592082;
const LN2_LO: f64 = 7.371002565167799e-13;

/// 1/k! for k = 2 … 13: expm1 r = r + r²·Σ r^(k−2)/k!, the Taylor series, whose first omitted
/// term r¹⁴/14! is below 2⁻⁵⁸ of the sum for |r| ≤ ln 2/2.
const INV_FACTORIAL: [f64; 12] = [
    0.5,
    0.16666666666666666,
    0.041666666666666664,
    0.008333333333333333,
    0.001388888888888889,
    0.0001984126984126984,
    2.48015873015873e-05,
    2.7557319223985893e-06,
    2.755731922398589e-07,
    2.505210838544172e-08,
    2.08767569878681e-09,
    1.6059043836821613e-10,
];

/// Σ_{k<K} `INV_FACTORIAL[k]`·rᵏ by Estrin's scheme: pairs `c + c'·r`, then pairs of those with
/// r², r⁴, …: a chain of ⌈log₂ K⌉ multiply-adds instead of Horner's K − 1, so that the
/// vectorised loop is not bound by the latency of one long chain, as it is with Horner's.
/// `tests/accuracy.rs` checks the result against the 200-bit table, as it checks every rule.
#[inline(always)]
fn estrin<const K: usize>(r: f64) -> f64 {
    const { assert!(K >= 2 && K <= 16) };
    // Four levels (r, r², r⁴, r⁸) cover 16 coefficients. Coefficient i of a level of n is
    // c₂ᵢ + c₂ᵢ₊₁·x, or c₂ᵢ alone at the odd end; n is a constant, so each level unrolls to
    // exactly its multiply-adds.
    #[inline(always)]
    fn pair(c: &[f64], n: usize, i: usize, x: f64) -> f64 {
        if 2 * i + 1 < n {
            c[2 * i] + c[2 * i + 1] * x
        } else if 2 * i < n {
            c[2 * i]
        } else {
            0.0
        }
    }
    let (r2, n1, n2) = (r * r, K.div_ceil(2), K.div_ceil(4));
    let r4 = r2 * r2;
    let a: [f64; 8] = core::array::from_fn(|i| pair(&INV_FACTORIAL, K, i, r));
    let b: [f64; 4] = core::array::from_fn(|i| pair(&a, n1, i, r2));
    let c: [f64; 2] = core::array::from_fn(|i| pair(&b, n2, i, r4));
    pair(&c, K.div_ceil(8), 0, r4 * r4)
}

/// `(e^t, e^t − 1)` for −1100 ≤ t ≤ 0 (or NaN), with `K` terms of the series (1/2! …
/// 1/(K+1)!): with K = 12 each within about 1 ulp.
///
/// t = n·ln 2 + r with |r| ≤ ln 2/2; s = expm1 r by its series, whose first omitted term is
/// r^(K+2)/(K+2)! of r, below 2⁻⁵⁸ for K = 12 and 2⁻³⁰ for K = 7; then e^t = 2ⁿ + 2ⁿ·s and
/// e^t − 1 = (2ⁿ − 1) + 2ⁿ·s, each rounded once (for the subnormal results of n < −1022, twice).
#[inline(always)]
fn exp_expm1_terms<const K: usize>(t: f64) -> (f64, f64) {
    // n = round(t/ln 2): adding 1.5·2⁵² rounds to an integer and leaves it in the low bits,
    // where `round` would be a call (SSE2 has no rounding instruction) and stop vectorisation.
    const SHIFT: f64 = 6755399441055744.0;
    let k = t * core::f64::consts::LOG2_E + SHIFT;
    let nf = k - SHIFT;
    let n = (k.to_bits() as i64).wrapping_sub(SHIFT.to_bits() as i64);
    let r = (t - nf * LN2_HI) - nf * LN2_LO;

    let q = estrin::<K>(r);
    let s = r + r * r * q;

    // 2ⁿ exactly (0 below 2⁻¹⁰⁷⁴): 2^(n+600), a normal number for every n ≥ −1587 that
    // t ≥ −1100 allows, times 2⁻⁶⁰⁰. Wrapping: a NaN's n is garbage, and the result NaN anyway.
    let biased = n.wrapping_add(600 + 1023) as u64;
    let two_n = f64::from_bits(biased.wrapping_shl(52)) * f64::from_bits((1023 - 600) << 52);
    let scaled = two_n * s;
    (two_n + scaled, (two_n - 1.0) + scaled)
}
