//! Taylor-coefficient recurrences: the higher-order companions of the rules.
//!
//! A truncated Taylor series `x(t) = x₀ + x₁t + … + x_{N−1}t^{N−1}` is stored as its coefficient
//! array `[x₀, …, x_{N−1}]` (so the derivative of order k is k!·x_k). Each function here maps the
//! coefficients of the argument(s) to those of the result in O(N²) operations (a few
//! convolutions), where nesting N − 1 duals costs O(2^N). They are generic over `T: Op`, like the
//! rules, and fixed-size: no allocation. The rules of [`rules`](crate::rules) call them from
//! [`Unary::taylor`](crate::Unary::taylor) and [`Binary::taylor`](crate::Binary::taylor); the
//! formulas are those of Griewank and Walther, *Evaluating Derivatives*, §13.2.
//!
//! Most recurrences come from an ordinary differential equation the result satisfies. The
//! general one is [`integrate`]: if `y' = φ'(x)·x'` and `d(t)` is the series of `φ'(x(t))`, then
//! `k·y_k = Σ_{j=1..k} j·x_j·d_{k−j}`; [`integrate_with`] interleaves it with a derivative that
//! depends on `y` itself (`tan' = 1 + tan²`).
//!
//! Every coefficient product keeps the structural-zero convention of the rules: a factor that is
//! exactly zero gives exactly zero, even against an infinite or NaN factor, as a zero tangent
//! does in `Dual` (so a constant argument stays constant through `√` at 0).
//!
//! ```
//! use shared_ops::series;
//!
//! // x(t) = 1 + t: exp(x) = e·(1 + t + t²/2 + t³/6).
//! let y = series::exp(&[1.0_f64, 1.0, 0.0, 0.0]);
//! let e = 1.0_f64.exp();
//! assert!((y[3] - e / 6.0).abs() < 1e-15);
//! ```

use crate::Op;

/// `a·b`, but exactly zero when either factor is (structurally) zero: the convention of the
/// rules, so `0·∞` contributes nothing.
#[inline(always)]
pub(crate) fn prod<T: Op>(a: T, b: T) -> T {
    if a.is_structural_zero() || b.is_structural_zero() {
        T::zero()
    } else {
        a * b
    }
}

/// `k` as a number of type `T`.
#[inline(always)]
fn num<T: Op>(k: usize) -> T {
    T::constant(k as f64)
}

/// The series of a constant: `[c, 0, …, 0]`.
///
/// ```
/// assert_eq!(shared_ops::series::constant::<f64, 3>(2.0), [2.0, 0.0, 0.0]);
/// ```
#[inline]
pub fn constant<T: Op, const N: usize>(c: T) -> [T; N] {
    core::array::from_fn(|k| if k == 0 { c } else { T::zero() })
}

/// True if every coefficient beyond the value is structurally zero: the series of a constant.
///
/// ```
/// use shared_ops::series::is_constant;
/// assert!(is_constant(&[3.0_f64, 0.0, 0.0]));
/// assert!(!is_constant(&[3.0_f64, 0.0, 1.0]));
/// ```
#[inline]
pub fn is_constant<T: Op, const N: usize>(x: &[T; N]) -> bool {
    x.iter().skip(1).all(Op::is_structural_zero)
}

/// Coefficient `m` of `y²`, from `y₀..y_m`: `Σ_{i=0..m} y_i·y_{m−i}`, each pair once.
///
/// ```
/// // (1 + 2t + 3t²)²: the t² coefficient is 2·3 + 2·2 = 10.
/// assert_eq!(shared_ops::series::square_at(&[1.0_f64, 2.0, 3.0], 2), 10.0);
/// ```
#[inline]
pub fn square_at<T: Op, const N: usize>(y: &[T; N], m: usize) -> T {
    let mut s = T::zero();
    for i in 0..m.div_ceil(2) {
        s += prod(y[i], y[m - i]);
    }
    s = s + s;
    if m.is_multiple_of(2) {
        s += prod(y[m / 2], y[m / 2]);
    }
    s
}

/// The square `x²`, each pair of coefficients once ([`square_at`] order by order).
///
/// ```
/// assert_eq!(shared_ops::series::square(&[1.0_f64, 2.0, 3.0]), [1.0, 4.0, 10.0]);
/// ```
pub fn square<T: Op, const N: usize>(x: &[T; N]) -> [T; N] {
    core::array::from_fn(|k| if k == 0 { x[0] * x[0] } else { square_at(x, k) })
}

/// The product: `c_k = Σ_{j=0..k} a_j·b_{k−j}` (the Cauchy product, a convolution).
///
/// ```
/// // (1 + t)(1 − t) = 1 − t².
/// assert_eq!(shared_ops::series::mul(&[1.0_f64, 1.0, 0.0], &[1.0, -1.0, 0.0]), [1.0, 0.0, -1.0]);
/// ```
pub fn mul<T: Op, const N: usize>(a: &[T; N], b: &[T; N]) -> [T; N] {
    core::array::from_fn(|k| {
        if k == 0 {
            a[0] * b[0] // the rule's value, 0·∞ = NaN included
        } else {
            (0..=k).map(|j| prod(a[j], b[k - j])).sum()
        }
    })
}

/// The quotient `y = a/b`, from `b·y = a`: `y_k = (a_k − Σ_{j=1..k} b_j·y_{k−j}) / b₀`.
///
/// ```
/// // 1/(1 − t) = 1 + t + t² + ….
/// assert_eq!(shared_ops::series::div(&[1.0_f64, 0.0, 0.0], &[1.0, -1.0, 0.0]), [1.0; 3]);
/// ```
pub fn div<T: Op, const N: usize>(a: &[T; N], b: &[T; N]) -> [T; N] {
    let mut y = [T::zero(); N];
    y[0] = a[0] / b[0];
    for k in 1..N {
        let s: T = (1..=k).map(|j| prod(b[j], y[k - j])).sum();
        y[k] = (a[k] - s) / b[0];
    }
    y
}

/// The square root `y = √x`, from `y² = x`: `y_k = (x_k − Σ_{j=1..k−1} y_j·y_{k−j}) / (2y₀)`.
/// At x₀ = 0 the coefficients are infinite or NaN, as the derivatives are.
///
/// ```
/// // √(4 + t) = 2 + t/4 − t²/64 + ….
/// assert_eq!(shared_ops::series::sqrt(&[4.0_f64, 1.0, 0.0]), [2.0, 0.25, -1.0 / 64.0]);
/// ```
pub fn sqrt<T: Op, const N: usize>(x: &[T; N]) -> [T; N] {
    let mut y = [T::zero(); N];
    y[0] = x[0].sqrt();
    let two_y0 = y[0] + y[0];
    for k in 1..N {
        let s: T = (1..k).map(|j| prod(y[j], y[k - j])).sum();
        y[k] = (x[k] - s) / two_y0;
    }
    y
}

/// The cube root `y = ∛x`, from `y³ = x` (with `s = y²`):
/// `y_k = (x_k − y₀·Σ_{j=1..k−1} y_j y_{k−j} − Σ_{j=1..k−1} y_j s_{k−j}) / (3y₀²)`.
/// Defined for negative x₀ too; at x₀ = 0 the first coefficient is infinite, as the rule's
/// derivative, and the later ones NaN.
///
/// ```
/// // ∛(8 + t) = 2 + t/12 − t²/288 + ….
/// let y = shared_ops::series::cbrt(&[8.0_f64, 1.0, 0.0]);
/// assert!((y[1] - 1.0 / 12.0).abs() < 1e-16 && (y[2] + 1.0 / 288.0).abs() < 1e-17);
/// ```
pub fn cbrt<T: Op, const N: usize>(x: &[T; N]) -> [T; N] {
    let (mut y, mut s) = ([T::zero(); N], [T::zero(); N]);
    y[0] = x[0].cbrt();
    s[0] = y[0] * y[0];
    let three_s0 = num::<T>(3) * s[0];
    for k in 1..N {
        let inner: T = (1..k).map(|j| prod(y[j], y[k - j])).sum();
        let cross: T = (1..k).map(|j| prod(y[j], s[k - j])).sum();
        y[k] = (x[k] - prod(y[0], inner) - cross) / three_s0;
        s[k] = prod(y[0], y[k]) + prod(y[0], y[k]) + inner;
    }
    y
}

/// The power `y = x^r` for a constant real `r`, from `x·y' = r·x'·y`:
/// `y_k = Σ_{j=1..k} (r·j − (k − j))·x_j·y_{k−j} / (k·x₀)`.
///
/// `y0` is the value x₀^r as the caller computes it (`powi` for an integer r, `1/√u` for
/// r = −½). The recurrence divides by x₀: at x₀ = 0 use repeated multiplication (an
/// integer r) or accept non-finite coefficients.
///
/// ```
/// // (1 + t)^½ = 1 + t/2 − t²/8 + ….
/// let y = shared_ops::series::powf(&[1.0_f64, 1.0, 0.0], 0.5, 1.0);
/// assert_eq!(y, [1.0, 0.5, -0.125]);
/// ```
pub fn powf<T: Op, const N: usize>(x: &[T; N], r: T, y0: T) -> [T; N] {
    let mut y = [T::zero(); N];
    y[0] = y0;
    for k in 1..N {
        let s: T = (1..=k)
            .map(|j| prod(r * j as f64 - (k - j) as f64, prod(x[j], y[k - j])))
            .sum();
        y[k] = s / (num::<T>(k) * x[0]);
    }
    y
}

/// The exponential `y = eˣ`, from `y' = y·x'`: `y_k = (1/k) Σ_{j=1..k} j·x_j·y_{k−j}`.
///
/// ```
/// // e^t = 1 + t + t²/2 + t³/6.
/// assert_eq!(shared_ops::series::exp(&[0.0_f64, 1.0, 0.0, 0.0]), [1.0, 1.0, 0.5, 1.0 / 6.0]);
/// ```
pub fn exp<T: Op, const N: usize>(x: &[T; N]) -> [T; N] {
    let y0 = x[0].exp();
    integrate_with(x, (y0, y0), |y, m| y[m])
}

/// The natural logarithm `y = ln x`, from `x·y' = x'`:
/// `y_k = (x_k − (1/k) Σ_{j=1..k−1} (k − j)·x_j·y_{k−j}) / x₀`.
///
/// ```
/// // ln(1 + t) = t − t²/2 + t³/3.
/// assert_eq!(shared_ops::series::ln(&[1.0_f64, 1.0, 0.0, 0.0]), [0.0, 1.0, -0.5, 1.0 / 3.0]);
/// ```
pub fn ln<T: Op, const N: usize>(x: &[T; N]) -> [T; N] {
    let mut y = [T::zero(); N];
    y[0] = x[0].ln();
    for k in 1..N {
        let s: T = (1..k).map(|j| prod(num(k - j), prod(x[j], y[k - j]))).sum();
        y[k] = (x[k] - s / k as f64) / x[0];
    }
    y
}

/// Sine and cosine together, from `s' = c·x'` and `c' = −s·x'`:
/// `s_k = (1/k) Σ j·x_j·c_{k−j}`, `c_k = −(1/k) Σ j·x_j·s_{k−j}`.
///
/// ```
/// let (s, c) = shared_ops::series::sin_cos(&[0.0_f64, 1.0, 0.0, 0.0]);
/// assert_eq!(s, [0.0, 1.0, 0.0, -1.0 / 6.0]);
/// assert_eq!(c, [1.0, 0.0, -0.5, 0.0]);
/// ```
pub fn sin_cos<T: Op, const N: usize>(x: &[T; N]) -> ([T; N], [T; N]) {
    trig_pair(x, x[0].sin_cos(), -T::one())
}

/// Hyperbolic sine and cosine together, from `s' = c·x'` and `c' = s·x'`.
///
/// ```
/// let (s, c) = shared_ops::series::sinh_cosh(&[0.0_f64, 1.0, 0.0, 0.0]);
/// assert_eq!(s, [0.0, 1.0, 0.0, 1.0 / 6.0]);
/// assert_eq!(c, [1.0, 0.0, 0.5, 0.0]);
/// ```
pub fn sinh_cosh<T: Op, const N: usize>(x: &[T; N]) -> ([T; N], [T; N]) {
    trig_pair(x, (x[0].sinh(), x[0].cosh()), T::one())
}

/// `s' = c·x'`, `c' = sign·s·x'`, from `(s₀, c₀)`.
fn trig_pair<T: Op, const N: usize>(x: &[T; N], (s0, c0): (T, T), sign: T) -> ([T; N], [T; N]) {
    let jx = scaled(x);
    let (mut s, mut c) = ([T::zero(); N], [T::zero(); N]);
    (s[0], c[0]) = (s0, c0);
    for k in 1..N {
        let ds: T = (1..=k).map(|j| prod(jx[j], c[k - j])).sum();
        let dc: T = (1..=k).map(|j| prod(jx[j], s[k - j])).sum();
        s[k] = ds / k as f64;
        c[k] = sign * dc / k as f64;
    }
    (s, c)
}

/// `[0, 1·x₁, 2·x₂, …]`: the coefficients of `x'(t)`, shifted up by one order.
#[inline]
fn scaled<T: Op, const N: usize>(x: &[T; N]) -> [T; N] {
    core::array::from_fn(|j| {
        if j == 0 {
            T::zero()
        } else {
            num::<T>(j) * x[j]
        }
    })
}

/// Integrates the derivative: `y(t) = y₀ + ∫ d·x'`, i.e.
/// `y_k = (1/k) Σ_{j=1..k} j·x_j·d_{k−j}`, where `d` is the series of `φ'(x(t))` and `y0 = φ(x₀)`.
///
/// The recurrence of every function whose derivative is simpler than itself (`atan`, `asin`,
/// `acosh`, …), and the fallback for a user's rule: `d` then comes from evaluating the rule's
/// derivative on the series. Only `d₀..d_{N−2}` are read.
///
/// ```
/// use shared_ops::series;
/// // atan(t) = t − t³/3: the derivative 1/(1 + t²) = 1 − t² + ….
/// let x = [0.0_f64, 1.0, 0.0, 0.0];
/// let d = series::div(&series::constant(1.0), &[1.0, 0.0, 1.0, 0.0]);
/// assert_eq!(series::integrate(&x, 0.0, &d), [0.0, 1.0, 0.0, -1.0 / 3.0]);
/// ```
pub fn integrate<T: Op, const N: usize>(x: &[T; N], y0: T, d: &[T; N]) -> [T; N] {
    let jx = scaled(x);
    core::array::from_fn(|k| {
        if k == 0 {
            y0
        } else {
            (1..=k).map(|j| prod(jx[j], d[k - j])).sum::<T>() / k as f64
        }
    })
}

/// [`integrate`] for a function of two arguments: `y' = da·a' + db·b'`.
///
/// ```
/// use shared_ops::series;
/// // a·b with a = 1 + t, b = 2 + t: the partials are b and a; y = 2 + 3t + t².
/// let (a, b) = ([1.0_f64, 1.0, 0.0], [2.0, 1.0, 0.0]);
/// assert_eq!(series::integrate2(&a, &b, 2.0, &b, &a), [2.0, 3.0, 1.0]);
/// ```
pub fn integrate2<T: Op, const N: usize>(
    a: &[T; N],
    b: &[T; N],
    y0: T,
    da: &[T; N],
    db: &[T; N],
) -> [T; N] {
    let (ja, jb) = (scaled(a), scaled(b));
    core::array::from_fn(|k| {
        if k == 0 {
            y0
        } else {
            (1..=k)
                .map(|j| prod(ja[j], da[k - j]) + prod(jb[j], db[k - j]))
                .sum::<T>()
                / k as f64
        }
    })
}

/// [`integrate`] for a derivative that depends on the result, order by order: `(y0, d0)` is the
/// rule's value and derivative at x₀, and `next_d(y, m)` returns the coefficient `d_m` (m ≥ 1)
/// from `y₀..y_m`. So `tan` (d = 1 + y²) passes `|y, m| square_at(y, m)`.
///
/// ```
/// use shared_ops::series::{integrate_with, square_at};
/// // tan t = t + t³/3 + 2t⁵/15.
/// let y = integrate_with(&[0.0_f64, 1.0, 0.0, 0.0, 0.0, 0.0], (0.0, 1.0), |y, m| square_at(y, m));
/// assert_eq!(y, [0.0, 1.0, 0.0, 1.0 / 3.0, 0.0, 2.0 / 15.0]);
/// ```
pub fn integrate_with<T: Op, const N: usize>(
    x: &[T; N],
    (y0, d0): (T, T),
    mut next_d: impl FnMut(&[T; N], usize) -> T,
) -> [T; N] {
    let jx = scaled(x);
    let (mut y, mut d) = ([T::zero(); N], [T::zero(); N]);
    (y[0], d[0]) = (y0, d0);
    for k in 1..N {
        if k >= 2 {
            d[k - 1] = next_d(&y, k - 1);
        }
        y[k] = (1..=k).map(|j| prod(jx[j], d[k - j])).sum::<T>() / k as f64;
    }
    y
}

/// A function that is linear near x₀ with slope `d` (the piecewise-linear rules: `abs`, `floor`,
/// `relu`, …): `[v, d·x₁, d·x₂, …]`. At a kink the rule's choice of `d` holds at every order,
/// as it does for nested duals (`abs` at 0: all zero).
///
/// ```
/// assert_eq!(shared_ops::series::linear(&[-2.0_f64, 1.0, 3.0], (2.0, -1.0)), [2.0, -1.0, -3.0]);
/// ```
pub fn linear<T: Op, const N: usize>(x: &[T; N], (v, d): (T, T)) -> [T; N] {
    core::array::from_fn(|k| if k == 0 { v } else { prod(d, x[k]) })
}

/// [`linear`] in two arguments: `[v, da·a₁ + db·b₁, …]` (`max`, `min`, `rem`).
///
/// ```
/// // max at a tie: the average of both series.
/// let y = shared_ops::series::linear2(&[1.0_f64, 2.0], &[1.0, 0.0], (1.0, 0.5, 0.5));
/// assert_eq!(y, [1.0, 1.0]);
/// ```
pub fn linear2<T: Op, const N: usize>(a: &[T; N], b: &[T; N], (v, da, db): (T, T, T)) -> [T; N] {
    core::array::from_fn(|k| {
        if k == 0 {
            v
        } else {
            prod(da, a[k]) + prod(db, b[k])
        }
    })
}

/// `xⁿ` for an integer n by binary powering (repeated convolution): exact where the recurrence
/// of [`powf`] would divide by x₀ = 0. A negative n takes the reciprocal of `x^|n|`.
///
/// ```
/// // t³ at t = 0.
/// assert_eq!(shared_ops::series::powi(&[0.0_f64, 1.0, 0.0, 0.0], 3), [0.0, 0.0, 0.0, 1.0]);
/// ```
pub fn powi<T: Op, const N: usize>(x: &[T; N], n: i32) -> [T; N] {
    let mut e = n.unsigned_abs();
    let mut base = *x;
    let mut acc: Option<[T; N]> = None;
    while e > 0 {
        if e & 1 == 1 {
            acc = Some(match acc {
                Some(a) => mul(&a, &base),
                None => base,
            });
        }
        e >>= 1;
        if e > 0 {
            base = mul(&base, &base);
        }
    }
    let y = acc.unwrap_or_else(|| constant(T::one()));
    if n < 0 {
        div(&constant(T::one()), &y)
    } else {
        y
    }
}

/// The hypotenuse `y = √(a² + b²)` for y₀ ≠ 0, in coordinates turned to the point (a₀, b₀):
/// with the unit vector `u = (a₀, b₀)/y₀`, the radial part `p = u·(a, b)` and the tangential
/// part `q = u⊥·(a, b)` (q₀ = 0), `y = p + z` where `z·(2p + z) = q²`, so
/// `z_k = ((q²)_k − Σ_{j=1..k−1} z_j·(p_{k−j} + y_{k−j})) / (2y₀)`.
///
/// Squaring a₀ or b₀ is avoided (no overflow where `hypot` has none), and so is the
/// cancellation of `a² + b² − y²` along a nearly radial direction, where the small tangential
/// part carries all of the curvature.
///
/// ```
/// // (3 + t, 4): y = 5 + (3/5)t + (8/125)t².
/// let y = shared_ops::series::hypot(&[3.0_f64, 1.0, 0.0], &[4.0, 0.0, 0.0], 5.0);
/// assert!((y[1] - 0.6).abs() < 1e-16 && (y[2] - 0.064).abs() < 1e-16);
/// ```
pub fn hypot<T: Op, const N: usize>(a: &[T; N], b: &[T; N], y0: T) -> [T; N] {
    let (ua, ub) = (a[0] / y0, b[0] / y0);
    let p: [T; N] = core::array::from_fn(|k| prod(ua, a[k]) + prod(ub, b[k]));
    let q: [T; N] = core::array::from_fn(|k| {
        if k == 0 {
            T::zero()
        } else {
            prod(ua, b[k]) - prod(ub, a[k])
        }
    });
    let two_y0 = y0 + y0;
    let (mut y, mut z) = ([T::zero(); N], [T::zero(); N]);
    y[0] = y0;
    for k in 1..N {
        let s: T = (1..k).map(|j| prod(z[j], p[k - j] + y[k - j])).sum();
        z[k] = (square_at(&q, k) - s) / two_y0;
        y[k] = p[k] + z[k];
    }
    y
}

/// The power `y = aᵇ` of two series (the rule `Powf`).
///
/// For a₀ ≠ 0: with a constant exponent the recurrence of [`powf`]; otherwise `y = e^{b·ln a}`,
/// `y_k = (1/k) Σ j·z_j·y_{k−j}` with `z = b·ln a` (NaN beyond order 0 for a₀ < 0 and a varying
/// b, as the rule's ∂/∂b). At a₀ = 0, where both divide by a₀, the rule itself nested once per
/// order, as nested duals evaluate it: level ℓ is the series of `a^{b−ℓ}`, its partial in a is
/// `(b − ℓ)·a^{b−ℓ−1}` (the next level; 0 where b₀ = ℓ, the rule's convention at 0⁰) and its
/// partial in b is 0 where `a^{b₀−ℓ} = 0` (and not finite elsewhere). So an exponent that is a
/// non-negative integer gives the exact polynomial, and 0^2.5 gives 0, 0, 0, ∞. That edge costs
/// O(N³).
///
/// ```
/// use shared_ops::series::pow;
/// // (2 + t)^(1 + t) at t = 0: 2, then 2·(ln 2 + ½).
/// let y = pow(&[2.0_f64, 1.0], &[1.0, 1.0]);
/// assert!((y[1] - 2.0 * (2.0_f64.ln() + 0.5)).abs() < 1e-15);
/// // t^2.0 at t = 0, exactly.
/// assert_eq!(pow(&[0.0_f64, 1.0, 0.0, 0.0], &[2.0, 0.0, 0.0, 0.0]), [0.0, 0.0, 1.0, 0.0]);
/// ```
pub fn pow<T: Op, const N: usize>(a: &[T; N], b: &[T; N]) -> [T; N] {
    let y0 = a[0].powf(b[0]);
    if a[0] == T::zero() {
        pow_at_zero(a, b)
    } else if is_constant(b) {
        powf(a, b[0], y0)
    } else {
        let z = mul(b, &ln(a));
        integrate_with(&z, (y0, y0), |y, m| y[m])
    }
}

/// [`pow`] at a₀ = 0: level ℓ = N − 1 down to 0, each valid to order N − 1 − ℓ.
fn pow_at_zero<T: Op, const N: usize>(a: &[T; N], b: &[T; N]) -> [T; N] {
    let ln_a0 = a[0].ln();
    let mut below = [T::zero(); N]; // a^{b−ℓ−1}, the level below
    for l in (0..N).rev() {
        let mut e = *b;
        e[0] = b[0] - l as f64;
        let p0 = a[0].powf(e[0]);
        let da = if e[0] == T::zero() {
            [T::zero(); N]
        } else {
            mul(&e, &below)
        };
        let db = if p0 == T::zero() {
            [T::zero(); N]
        } else {
            core::array::from_fn(|k| if k == 0 { p0 * ln_a0 } else { T::nan() })
        };
        below = integrate2(a, b, p0, &da, &db);
    }
    below
}
