//! The two-argument rows of the table and the fused multiply-add, each with its Taylor
//! recurrence beside it.

use super::{c, half};
use crate::{Op, series};

binary! {
    /// a + b.
    Add "+" unit |a, b| (a + b, T::one(), T::one()),
        taylor |a, b| core::array::from_fn(|k| a[k] + b[k]);
    /// a − b.
    Sub "-" unit |a, b| (a - b, T::one(), -T::one()),
        taylor |a, b| core::array::from_fn(|k| a[k] - b[k]);
    /// a · b.
    Mul "*" |a, b| (a * b, b, a),
        taylor |a, b| series::mul(a, b);
    /// a / b (the value by a true division, as `f64`); ∂/∂b = −a/b² is −y/b.
    Div "/" |a, b| { let y = a / b; let r = b.recip(); (y, r, -(y * r)) },
        taylor |a, b| series::div(a, b);
    /// The truncated remainder a − b·trunc(a/b) (Rust's `%`).
    Rem "%" |a, b| (a % b, T::one(), -(a / b).trunc()),
        taylor |a, b| series::linear2(a, b, Self.eval(a[0], b[0]));
    /// aᵇ with both arguments variable. ∂/∂a is 0 at a = b = 0 (where b·aᵇ⁻¹ would be 0·∞); ∂/∂b
    /// is 0 where aᵇ = 0, and NaN for a < 0, where aᵇ is not differentiable in b.
    Powf "powf" |a, b| {
        let y = a.powf(b);
        // b·aᵇ⁻¹ is 0 at b = 0 for any a ≠ 0, and so is computed, so that nested numbers keep
        // its derivative in b (1/a); only 0·∞ at a = b = 0 takes the convention.
        let da = if b == T::zero() && a == T::zero() {
            T::zero()
        } else {
            b * a.powf(b - T::one())
        };
        let db = if y == T::zero() { T::zero() } else { y * a.ln() };
        (y, da, db)
    },
        taylor |a, b| series::pow(a, b);
    /// log_b a = ln a / ln b.
    Log "log" |a, b| {
        let lb = b.ln();
        let y = a.ln() / lb;
        (y, (a * lb).recip(), -y / (b * lb))
    },
        taylor |a, b| series::div(&series::ln(a), &series::ln(b));
    /// atan2(a, b), the angle of the point (b, a), with partials b/r² and −a/r². Where r² = a² + b²
    /// would overflow or leave the normal range they divide by r = hypot(a, b) twice instead.
    /// At the origin they are NaN (every order: atan2 jumps there).
    Atan2 "atan2" |a, b| {
        let r2 = a * a + b * b;
        // Compared, not read (see `within`): guards where the rule runs on tape variables.
        let origin = a == T::zero() && b == T::zero();
        if origin || (r2 >= c(f64::MIN_POSITIVE) && r2 < c(f64::INFINITY)) {
            (a.atan2(b), b / r2, -a / r2)
        } else {
            let r = a.hypot(b);
            (a.atan2(b), b / r / r, -a / r / r)
        }
    },
        taylor |a, b| {
            let (a2, b2) = (series::square(a), series::square(b));
            let r2 = core::array::from_fn(|k| a2[k] + b2[k]);
            let (da, db) = (series::div(b, &r2), series::div(a, &r2).map(|v| -v));
            series::integrate2(a, b, a[0].atan2(b[0]), &da, &db)
        };
    /// √(a² + b²) without overflow. At the origin both partials are 0 (the kink, like `abs`).
    Hypot "hypot" |a, b| {
        let y = a.hypot(b);
        if y == T::zero() { (y, T::zero(), T::zero()) } else { (y, a / y, b / y) }
    },
        taylor |a, b| {
            let first = Self.eval(a[0], b[0]);
            if first.0 == T::zero() {
                series::linear2(a, b, first)
            } else {
                series::hypot(a, b, first.0)
            }
        };
    /// max(a, b). At a tie each argument gets ½; a NaN argument is ignored (as `f64::max`).
    Max "max" |a, b| {
        let y = a.max(b);
        if a > b || b.is_nan() {
            (y, T::one(), T::zero())
        } else if a < b || a.is_nan() {
            (y, T::zero(), T::one())
        } else {
            (y, half(), half())
        }
    },
        taylor |a, b| series::linear2(a, b, Self.eval(a[0], b[0]));
    /// min(a, b). At a tie each argument gets ½; a NaN argument is ignored (as `f64::min`).
    Min "min" |a, b| {
        let y = a.min(b);
        if a < b || b.is_nan() {
            (y, T::one(), T::zero())
        } else if a > b || a.is_nan() {
            (y, T::zero(), T::one())
        } else {
            (y, half(), half())
        }
    },
        taylor |a, b| series::linear2(a, b, Self.eval(a[0], b[0]));
}

/// The fused a·b + c: returns the value and the partials `[∂/∂a, ∂/∂b, ∂/∂c] = [b, a, 1]`.
///
/// The only three-argument rule, so it is a function rather than a trait.
///
/// ```
/// assert_eq!(shared_ops::rules::mul_add(2.0_f64, 3.0, 1.0), (7.0, [3.0, 2.0, 1.0]));
/// ```
#[inline(always)]
pub fn mul_add<T: Op>(a: T, b: T, c: T) -> (T, [T; 3]) {
    (a.mul_add(b, c), [b, a, T::one()])
}

/// The Taylor coefficients of a·b + c: the product series plus c, the value fused as in
/// [`mul_add`].
///
/// ```
/// // (1 + t)(2 + t) + t = 2 + 4t + t².
/// let y = shared_ops::rules::mul_add_taylor(&[1.0_f64, 1.0, 0.0], &[2.0, 1.0, 0.0], &[0.0, 1.0, 0.0]);
/// assert_eq!(y, [2.0, 4.0, 1.0]);
/// ```
pub fn mul_add_taylor<T: Op, const N: usize>(a: &[T; N], b: &[T; N], c: &[T; N]) -> [T; N] {
    let mut y = series::mul(a, b);
    y[0] = a[0].mul_add(b[0], c[0]);
    for k in 1..N {
        y[k] += c[k];
    }
    y
}
