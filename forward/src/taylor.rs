use core::fmt;
use core::ops::{Add, Div, Mul, Sub};
use num_traits::{One, Zero};
use shared_ops::{Binary, Op, Unary, rules, series};

/// A truncated Taylor series: the first `N` coefficients `c[0..N]` of a curve `t ↦ x(t)` at
/// t = 0, so `c[0]` is the value and the derivative of order k is `k!·c[k]`
/// ([`derivative`](Taylor::derivative)).
///
/// Univariate Taylor mode: every operation maps the coefficients of its arguments to those of
/// its value by the recurrence beside its rule in [`shared_ops::rules`], O(N²) operations, where
/// nesting N − 1 [`Dual`](crate::Dual)s costs O(2^N). Seeding `x + t·v` gives the directional
/// derivatives of every order along `v` in one sweep (the driver [`taylor`](crate::taylor)).
///
/// Generic over any [`Op`] (so it nests) and an `Op` itself; the coefficients sit in a fixed
/// array, so no operation allocates. Comparisons (`<`, `==`, `max`'s branch) look at `c[0]` only,
/// like the `f64` code it replaces, and so does [`is_zero`](Zero::is_zero); the structural zero
/// of the rule table's convention is every coefficient zero ([`Op::is_structural_zero`]).
///
/// ```
/// use forward::{Float, Taylor};
///
/// // x(t) = 0 + t: sin has the series t − t³/6 + t⁵/120.
/// let x = Taylor::<f64, 6>::variable(0.0, 1.0);
/// let y = x.sin();
/// assert_eq!(y.c[3], -1.0 / 6.0);
/// assert_eq!(y.derivative(5), 1.0); // sin⁽⁵⁾(0) = cos 0
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Taylor<T, const N: usize> {
    /// The coefficients: `c[0]` the value, `c[k]` the k-th derivative divided by k!.
    pub c: [T; N],
}

impl<T: Op, const N: usize> Taylor<T, N> {
    /// Rejects `N = 0` at compile time: a series needs at least its value.
    const AT_LEAST_ONE: () = assert!(N >= 1, "Taylor<T, N> needs N ≥ 1 (c[0] is the value)");

    /// A series with the given coefficients.
    ///
    /// ```
    /// let x = forward::Taylor::new([1.0_f64, 2.0, 3.0]);
    /// assert_eq!(x.c[2], 3.0);
    /// ```
    #[inline(always)]
    pub fn new(c: [T; N]) -> Self {
        let () = Self::AT_LEAST_ONE;
        Taylor { c }
    }

    /// An independent variable moving along a direction: `x(t) = x + t·v` (c₀ = x, c₁ = v, the
    /// rest 0). With N = 1 there is no c₁ and `v` is not used.
    ///
    /// ```
    /// let x = forward::Taylor::<f64, 3>::variable(2.0, 0.5);
    /// assert_eq!(x.c, [2.0, 0.5, 0.0]);
    /// ```
    #[inline(always)]
    pub fn variable(x: T, v: T) -> Self {
        let mut c = series::constant(x);
        if N > 1 {
            c[1] = v;
        }
        Taylor::new(c)
    }

    /// The derivative of order `k` of `t ↦ x(t)` at t = 0: `k!·c[k]`.
    ///
    /// # Panics
    ///
    /// If `k ≥ N`: the series does not carry that order.
    ///
    /// ```
    /// use forward::Float;
    /// // x³ along x(t) = 2 + t: the third derivative is 6.
    /// let y = forward::Taylor::<f64, 4>::variable(2.0, 1.0).powi(3);
    /// assert_eq!(y.derivative(3), 6.0);
    /// ```
    #[track_caller]
    pub fn derivative(&self, k: usize) -> T {
        assert!(
            k < N,
            "derivative of order {k} asked of a Taylor series of {N} coefficients (orders 0 to {})",
            N - 1
        );
        self.c[k] * factorial(k)
    }

    /// All derivatives `[x, x', …, x^{(N−1)}]` at t = 0: `k!·c[k]` for each k.
    ///
    /// ```
    /// use forward::Float;
    /// // e^{2t}: the derivatives are the powers of 2.
    /// let y = forward::Taylor::<f64, 4>::variable(0.0, 2.0).exp();
    /// assert_eq!(y.derivatives(), [1.0, 2.0, 4.0, 8.0]);
    /// ```
    pub fn derivatives(&self) -> [T; N] {
        let mut f = T::one();
        core::array::from_fn(|k| {
            if k > 1 {
                f *= T::constant(k as f64);
            }
            self.c[k] * f
        })
    }
}

/// `k!` as a number of type `T` (exact in `f64` up to 22!).
fn factorial(k: usize) -> f64 {
    (2..=k).map(|i| i as f64).product()
}

/// Lifts a value as a constant series: every coefficient but the value is zero (for an `f64`
/// constant at any nesting, [`Op::constant`]).
///
/// ```
/// let x = forward::Taylor::<f64, 3>::from(2.0);
/// assert_eq!(x.c, [2.0, 0.0, 0.0]);
/// ```
impl<T: Op, const N: usize> From<T> for Taylor<T, N> {
    #[inline(always)]
    fn from(x: T) -> Self {
        Taylor::new(series::constant(x))
    }
}

impl<T: Op, const N: usize> Default for Taylor<T, N> {
    fn default() -> Self {
        Self::zero()
    }
}

impl<T: Op, const N: usize> Op for Taylor<T, N> {
    /// Sparse exactly when the numbers one level down are: a dual of floats is cheap
    /// arithmetic, a dual of tape variables records every operation.
    const SPARSE_TANGENTS: bool = T::SPARSE_TANGENTS;
    #[inline(always)]
    fn constant(c: f64) -> Self {
        Taylor::from(T::constant(c))
    }
    #[inline(always)]
    fn value(&self) -> f64 {
        self.c[0].value()
    }
    /// Every coefficient is zero.
    #[inline(always)]
    fn is_structural_zero(&self) -> bool {
        self.c.iter().all(Op::is_structural_zero)
    }
    #[inline(always)]
    fn has_nan(&self) -> bool {
        self.c.iter().any(Op::has_nan)
    }
    /// The rule's recurrence; for a rule without one (a user's), its derivative evaluated on this
    /// series and integrated (see [`Unary`]'s Taylor mode). A constant stays a constant.
    #[inline]
    fn apply1<R: Unary>(self, rule: R) -> Self {
        if series::is_constant(&self.c) {
            return Taylor::from(rule.eval(self.c[0]).0);
        }
        let c = rule.taylor(&self.c).unwrap_or_else(|| {
            let (v, d) = rule.eval(self);
            series::integrate(&self.c, v.c[0], &d.c)
        });
        Taylor::new(c)
    }
    /// As [`apply1`](Op::apply1), with `y' = ∂f/∂a·a' + ∂f/∂b·b'` for a rule without recurrence.
    #[inline]
    fn apply2<R: Binary>(self, other: Self, rule: R) -> Self {
        if series::is_constant(&self.c) && series::is_constant(&other.c) {
            return Taylor::from(rule.eval(self.c[0], other.c[0]).0);
        }
        let c = rule.taylor(&self.c, &other.c).unwrap_or_else(|| {
            let (v, da, db) = rule.eval(self, other);
            series::integrate2(&self.c, &other.c, v.c[0], &da.c, &db.c)
        });
        Taylor::new(c)
    }
}

impl<T: Op, const N: usize> Taylor<T, N> {
    /// The fused multiply-add rule (`Float::mul_add` calls it).
    #[inline]
    fn fused_mul_add(self, a: Self, b: Self) -> Self {
        Taylor::new(rules::mul_add_taylor(&self.c, &a.c, &b.c))
    }
}

shared_ops::impl_float_via_rules!(
    impl [T: Op, const N: usize] for Taylor<T, N>, inner T, primal |s| s.c[0]
);
#[cfg(any(feature = "nalgebra", feature = "nalgebra_v0_34"))]
shared_ops::impl_real_field!(impl [T: Op, const N: usize] for Taylor<T, N>);

impl<T: Op, const N: usize> Zero for Taylor<T, N> {
    #[inline(always)]
    fn zero() -> Self {
        Taylor::from(T::zero())
    }
    /// The value `c[0]` is zero, as for the `f64` it replaces (structural zero, every
    /// coefficient, is [`Op::is_structural_zero`]).
    #[inline(always)]
    fn is_zero(&self) -> bool {
        self.c[0].is_zero()
    }
}

impl<T: Op, const N: usize> One for Taylor<T, N> {
    #[inline(always)]
    fn one() -> Self {
        Taylor::from(T::one())
    }
}

/// `c₀ + c₁·t + c₂·t^2 + …`.
impl<T: Op, const N: usize> fmt::Display for Taylor<T, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.c[0])?;
        for (k, c) in self.c.iter().enumerate().skip(1) {
            match k {
                1 => write!(f, " + {c}·t")?,
                _ => write!(f, " + {c}·t^{k}")?,
            }
        }
        Ok(())
    }
}

/// `self · c`: each coefficient scaled (by a zero or non-finite `c`, the product's recurrence).
impl<T: Op, const N: usize> Mul<f64> for Taylor<T, N> {
    type Output = Self;
    #[inline]
    fn mul(self, c: f64) -> Self {
        if c != 0.0 && c.is_finite() {
            Taylor::new(self.c.map(|x| x * c))
        } else {
            self * Self::constant(c)
        }
    }
}

/// `self / c`: each coefficient divided (by a zero or non-finite `c`, the quotient's
/// recurrence).
impl<T: Op, const N: usize> Div<f64> for Taylor<T, N> {
    type Output = Self;
    #[inline]
    fn div(self, c: f64) -> Self {
        if c != 0.0 && c.is_finite() {
            Taylor::new(self.c.map(|x| x / c))
        } else {
            self / Self::constant(c)
        }
    }
}

/// `self + c`: the constant coefficient moved.
impl<T: Op, const N: usize> Add<f64> for Taylor<T, N> {
    type Output = Self;
    #[inline]
    fn add(self, c: f64) -> Self {
        let mut s = self;
        s.c[0] += c;
        s
    }
}

/// `self − c`: the constant coefficient moved.
impl<T: Op, const N: usize> Sub<f64> for Taylor<T, N> {
    type Output = Self;
    #[inline]
    fn sub(self, c: f64) -> Self {
        let mut s = self;
        s.c[0] -= c;
        s
    }
}

shared_ops::impl_constant_ops!(impl [T: Op, const N: usize] for Taylor<T, N>);
