use crate::chain_lanes;
use core::fmt;
use core::ops::{Add, Div, Mul, Sub};
use num_traits::{One, Zero};
use shared_ops::{Binary, Op, Unary, rules};

/// A dual number with `N` tangents: one forward sweep computes `N` directional derivatives.
///
/// A Jacobian of `f: Rⁿ → Rᵐ` then takes ⌈n/N⌉ sweeps instead of n. The partials of each
/// operation are computed once and applied to all `N` tangents, which sit in one array so the
/// compiler vectorises the lane loop. The structural-zero convention holds lane by lane, so the
/// result does not depend on `N`.
///
/// ```
/// use forward::{DualVec, Float};
///
/// // f(x, y) = x·y + sin(x), gradient in one sweep with two tangents.
/// let x = DualVec::<f64, 2>::variable(1.0, 0);
/// let y = DualVec::<f64, 2>::variable(2.0, 1);
/// let f = x * y + x.sin();
/// assert_eq!(f.tangent, [2.0 + 1.0_f64.cos(), 1.0]);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct DualVec<T, const N: usize> {
    /// The value.
    pub primal: T,
    /// `N` directional derivatives.
    pub tangent: [T; N],
}

impl<T: Op, const N: usize> DualVec<T, N> {
    /// A dual with the given primal and tangents.
    ///
    /// ```
    /// let d = forward::DualVec::new(1.0_f64, [0.0, 1.0]);
    /// assert_eq!(d.tangent[1], 1.0);
    /// ```
    #[inline(always)]
    pub fn new(primal: T, tangent: [T; N]) -> Self {
        DualVec { primal, tangent }
    }

    /// Input number `lane` of a chunk: its tangent is the unit vector `e_lane`.
    /// A `lane` ≥ `N` gives a constant (used for the tail of the last chunk).
    ///
    /// ```
    /// let x = forward::DualVec::<f64, 3>::variable(4.0, 2);
    /// assert_eq!(x.tangent, [0.0, 0.0, 1.0]);
    /// ```
    #[inline(always)]
    pub fn variable(primal: T, lane: usize) -> Self {
        let mut tangent = [T::zero(); N];
        if lane < N {
            tangent[lane] = T::one();
        }
        DualVec { primal, tangent }
    }
}

impl<T: Op, const N: usize> From<T> for DualVec<T, N> {
    #[inline(always)]
    fn from(primal: T) -> Self {
        DualVec {
            primal,
            tangent: [T::zero(); N],
        }
    }
}

impl<T: Op, const N: usize> Default for DualVec<T, N> {
    fn default() -> Self {
        Self::zero()
    }
}

impl<T: Op, const N: usize> Op for DualVec<T, N> {
    #[inline(always)]
    fn has_nan(&self) -> bool {
        self.primal.has_nan() || self.tangent.iter().any(Op::has_nan)
    }
    /// Sparse exactly when the numbers one level down are: a dual of floats is cheap
    /// arithmetic, a dual of tape variables records every operation.
    const SPARSE_TANGENTS: bool = T::SPARSE_TANGENTS;
    #[inline(always)]
    fn constant(c: f64) -> Self {
        DualVec::from(T::constant(c))
    }
    #[inline(always)]
    fn value(&self) -> f64 {
        self.primal.value()
    }
    /// Zero in the primal and in every tangent.
    #[inline(always)]
    fn is_structural_zero(&self) -> bool {
        self.primal.is_structural_zero() && self.tangent.iter().all(Op::is_structural_zero)
    }
    #[inline(always)]
    fn apply1<R: Unary>(self, rule: R) -> Self {
        let (v, d) = rule.eval(self.primal);
        let tangent = chain_lanes(R::UNIT_PARTIALS, [d], [&self.tangent]);
        DualVec { primal: v, tangent }
    }
    #[inline(always)]
    fn apply2<R: Binary>(self, other: Self, rule: R) -> Self {
        let (v, da, db) = rule.eval(self.primal, other.primal);
        let tangent = chain_lanes(R::UNIT_PARTIALS, [da, db], [&self.tangent, &other.tangent]);
        DualVec { primal: v, tangent }
    }
}

impl<T: Op, const N: usize> DualVec<T, N> {
    /// The fused multiply-add rule (`Float::mul_add` calls it).
    #[inline(always)]
    fn fused_mul_add(self, a: Self, b: Self) -> Self {
        let (v, [da, db, dc]) = rules::mul_add(self.primal, a.primal, b.primal);
        let tangent = chain_lanes(false, [da, db, dc], [&self.tangent, &a.tangent, &b.tangent]);
        DualVec { primal: v, tangent }
    }
}

shared_ops::impl_float_via_rules!(
    impl [T: Op, const N: usize] for DualVec<T, N>, inner T, primal |s| s.primal
);
#[cfg(any(feature = "nalgebra", feature = "nalgebra_v0_34"))]
shared_ops::impl_real_field!(impl [T: Op, const N: usize] for DualVec<T, N>);

impl<T: Op, const N: usize> Zero for DualVec<T, N> {
    #[inline(always)]
    fn zero() -> Self {
        DualVec::from(T::zero())
    }
    /// The primal is zero, as for the `f64` it replaces (structural zero is
    /// [`Op::is_structural_zero`]).
    #[inline(always)]
    fn is_zero(&self) -> bool {
        self.primal.is_zero()
    }
}

impl<T: Op, const N: usize> One for DualVec<T, N> {
    #[inline(always)]
    fn one() -> Self {
        DualVec::from(T::one())
    }
}

impl<T: Op, const N: usize> fmt::Display for DualVec<T, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} + {:?}ε", self.primal, self.tangent)
    }
}

impl<T: Op, const N: usize> DualVec<T, N> {
    /// Every lane times a constant `k`: by a zero or non-finite `k`, the convention's products
    /// (`0·∞` is 0), as [`Dual`](crate::Dual) does. Through `chain_lanes`, whose test of the
    /// partial is on its bits: a float comparison before the lanes would keep a dot product of
    /// `DualVec`s from vectorising.
    #[inline(always)]
    fn tangent_times(&self, k: f64) -> [T; N] {
        chain_lanes(false, [T::constant(k)], [&self.tangent])
    }
}

/// `self · c`: each component scaled, no tangent formed for the constant.
impl<T: Op, const N: usize> Mul<f64> for DualVec<T, N> {
    type Output = Self;
    #[inline(always)]
    fn mul(self, c: f64) -> Self {
        DualVec {
            primal: self.primal * c,
            tangent: self.tangent_times(c),
        }
    }
}

/// `self / c`: the value divided, the lanes times the partial `1/c`, as the division rule's.
impl<T: Op, const N: usize> Div<f64> for DualVec<T, N> {
    type Output = Self;
    #[inline(always)]
    fn div(self, c: f64) -> Self {
        DualVec {
            primal: self.primal / c,
            tangent: self.tangent_times(c.recip()),
        }
    }
}

/// `self + c`: the lanes unchanged.
impl<T: Op, const N: usize> Add<f64> for DualVec<T, N> {
    type Output = Self;
    #[inline(always)]
    fn add(self, c: f64) -> Self {
        DualVec {
            primal: self.primal + c,
            tangent: self.tangent,
        }
    }
}

/// `self − c`: the lanes unchanged.
impl<T: Op, const N: usize> Sub<f64> for DualVec<T, N> {
    type Output = Self;
    #[inline(always)]
    fn sub(self, c: f64) -> Self {
        DualVec {
            primal: self.primal - c,
            tangent: self.tangent,
        }
    }
}

shared_ops::impl_constant_ops!(impl [T: Op, const N: usize] for DualVec<T, N>);
