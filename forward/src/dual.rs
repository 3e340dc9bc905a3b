use crate::chain;
use crate::convention::{Checked, Convention, Unchecked};
use core::fmt;
use core::marker::PhantomData;
use core::ops::{Add, Div, Mul, Sub};
use num_traits::{One, Zero};
use shared_ops::{Binary, Op, Unary, rules};

/// A dual number `primal + tangent·ε` with ε² = 0: the value of an expression and its
/// directional derivative, carried together through every operation.
///
/// Generic over any [`Op`] (so it nests) and an `Op` itself. Comparisons (`<`, `==`, `max`'s
/// branch) look at the primal only, like the `f64` code it replaces.
///
/// ```
/// use forward::Dual;
/// use shared_ops::Op;
///
/// let x = Dual::variable(3.0_f64); // seed: dx/dx = 1
/// let y = x * x + 1.0;
/// assert_eq!((y.primal, y.tangent), (10.0, 6.0));
/// ```
///
/// The second parameter is the [`Convention`]: [`Checked`] (the default) tests each operation's
/// tangent for the structural-zero convention of [`shared_ops::rules`] (after each operation,
/// a NaN in the tangent sends its products through one by one, a zero factor contributing
/// zero). `Dual<T, Unchecked>` skips the test: the same arithmetic, so the same bits wherever
/// no tangent of the evaluation is NaN, but a `0·∞` product leaves a NaN instead of a zero. It
/// is for drivers that test the outputs instead, and evaluate again with `Dual<T>` when an
/// output's tangent is NaN (a NaN reaches every output that depends on it, since every tangent
/// is a sum of products with its operands' tangents); `jacobian::jvp` does so. Only a function
/// that reads tangents itself (through [`Op::has_nan`] or [`Op::is_structural_zero`]) can tell
/// the two apart.
///
/// ```
/// use forward::prelude::*;
///
/// // √x at 0 has an infinite slope; times a constant 0 it contributes nothing.
/// let x = Dual::new(0.0_f64, 1.0);
/// let y = x.sqrt() * Dual::constant(0.0) + x;
/// assert_eq!(y.tangent, 1.0);
/// let x = Dual::unchecked(0.0_f64, 1.0);
/// let y = x.sqrt() * Dual::constant(0.0) + x;
/// assert!(y.tangent.is_nan()); // the signal to evaluate again with the test
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Dual<T, C: Convention = Checked> {
    /// The value.
    pub primal: T,
    /// The directional derivative carried along.
    pub tangent: T,
    convention: PhantomData<C>,
}

impl<T: Op> Dual<T> {
    /// A dual with the given primal and tangent.
    ///
    /// ```
    /// let d = forward::Dual::new(1.0_f64, 2.0);
    /// assert_eq!(d.tangent, 2.0);
    /// ```
    #[inline(always)]
    pub fn new(primal: T, tangent: T) -> Self {
        Dual::with(primal, tangent)
    }

    /// A dual of the [`Unchecked`] convention with the given primal and tangent.
    ///
    /// ```
    /// let d = forward::Dual::unchecked(1.0_f64, 2.0);
    /// assert_eq!((d.primal, d.tangent), (1.0, 2.0));
    /// ```
    #[inline(always)]
    pub fn unchecked(primal: T, tangent: T) -> Dual<T, Unchecked> {
        Dual::with(primal, tangent)
    }

    /// An independent variable: tangent seeded with 1.
    ///
    /// ```
    /// assert_eq!(forward::Dual::variable(5.0_f64).tangent, 1.0);
    /// ```
    #[inline(always)]
    pub fn variable(primal: T) -> Self {
        Dual {
            primal,
            tangent: T::one(),
            convention: PhantomData,
        }
    }
}

impl<T, C: Convention> Dual<T, C> {
    /// A dual of either convention.
    #[inline(always)]
    fn with(primal: T, tangent: T) -> Self {
        Dual {
            primal,
            tangent,
            convention: PhantomData,
        }
    }
}

/// Lifts a value one nesting level as a constant (zero tangent).
impl<T: Op, C: Convention> From<T> for Dual<T, C> {
    #[inline(always)]
    fn from(primal: T) -> Self {
        Dual {
            primal,
            tangent: T::zero(),
            convention: PhantomData,
        }
    }
}

impl<T: Op, C: Convention> Op for Dual<T, C> {
    #[inline(always)]
    fn has_nan(&self) -> bool {
        self.primal.has_nan() || self.tangent.has_nan()
    }
    /// Sparse exactly when the numbers one level down are: a dual of floats is cheap
    /// arithmetic, a dual of tape variables records every operation.
    const SPARSE_TANGENTS: bool = T::SPARSE_TANGENTS;
    #[inline(always)]
    fn constant(c: f64) -> Self {
        Dual::from(T::constant(c))
    }
    #[inline(always)]
    fn value(&self) -> f64 {
        self.primal.value()
    }
    /// Zero in primal *and* tangent.
    #[inline(always)]
    fn is_structural_zero(&self) -> bool {
        self.primal.is_structural_zero() && self.tangent.is_structural_zero()
    }
    #[inline(always)]
    fn apply1<R: Unary>(self, rule: R) -> Self {
        let (v, d) = rule.eval(self.primal);
        Dual {
            primal: v,
            tangent: chain(R::UNIT_PARTIALS || !C::CHECK, [d], [self.tangent]),
            convention: PhantomData,
        }
    }
    #[inline(always)]
    fn apply2<R: Binary>(self, other: Self, rule: R) -> Self {
        let (v, da, db) = rule.eval(self.primal, other.primal);
        Dual {
            primal: v,
            tangent: chain(
                R::UNIT_PARTIALS || !C::CHECK,
                [da, db],
                [self.tangent, other.tangent],
            ),
            convention: PhantomData,
        }
    }
}

impl<T: Op, C: Convention> Dual<T, C> {
    /// The fused multiply-add rule (`Float::mul_add` calls it).
    #[inline(always)]
    fn fused_mul_add(self, a: Self, b: Self) -> Self {
        let (v, [da, db, dc]) = rules::mul_add(self.primal, a.primal, b.primal);
        let tangent = chain(
            !C::CHECK,
            [da, db, dc],
            [self.tangent, a.tangent, b.tangent],
        );
        Dual {
            primal: v,
            tangent,
            convention: PhantomData,
        }
    }
}

shared_ops::impl_float_via_rules!(
    impl [T: Op, C: Convention] for Dual<T, C>, inner T, primal |s| s.primal
);
#[cfg(any(feature = "nalgebra", feature = "nalgebra_v0_34"))]
shared_ops::impl_real_field!(impl [T: Op, C: Convention] for Dual<T, C>);

impl<T: Op, C: Convention> Zero for Dual<T, C> {
    #[inline(always)]
    fn zero() -> Self {
        Dual::from(T::zero())
    }
    /// The primal is zero, as for the `f64` it replaces (structural zero is
    /// [`Op::is_structural_zero`]).
    #[inline(always)]
    fn is_zero(&self) -> bool {
        self.primal.is_zero()
    }
}

impl<T: Op, C: Convention> One for Dual<T, C> {
    #[inline(always)]
    fn one() -> Self {
        Dual::from(T::one())
    }
}

impl<T: Op, C: Convention> fmt::Display for Dual<T, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} + {}ε", self.primal, self.tangent)
    }
}

impl<T: Op, C: Convention> Dual<T, C> {
    /// The tangent times a constant `k`: by a zero or non-finite `k`, the convention's product
    /// (a checked dual's `0·∞` is 0).
    #[inline(always)]
    fn tangent_times(self, k: f64) -> T {
        if !C::CHECK || (k != 0.0 && k.is_finite()) {
            self.tangent * k
        } else {
            chain(false, [T::constant(k)], [self.tangent])
        }
    }
}

/// `self · c`: each component scaled, no tangent formed for the constant.
impl<T: Op, C: Convention> Mul<f64> for Dual<T, C> {
    type Output = Self;
    #[inline(always)]
    fn mul(self, c: f64) -> Self {
        Dual::with(self.primal * c, self.tangent_times(c))
    }
}

/// `self / c`: the value divided, the tangent times the partial `1/c`, as the division rule's.
impl<T: Op, C: Convention> Div<f64> for Dual<T, C> {
    type Output = Self;
    #[inline(always)]
    fn div(self, c: f64) -> Self {
        Dual::with(self.primal / c, self.tangent_times(c.recip()))
    }
}

/// `self + c`: the tangent unchanged.
impl<T: Op, C: Convention> Add<f64> for Dual<T, C> {
    type Output = Self;
    #[inline(always)]
    fn add(self, c: f64) -> Self {
        Dual::with(self.primal + c, self.tangent)
    }
}

/// `self − c`: the tangent unchanged.
impl<T: Op, C: Convention> Sub<f64> for Dual<T, C> {
    type Output = Self;
    #[inline(always)]
    fn sub(self, c: f64) -> Self {
        Dual::with(self.primal - c, self.tangent)
    }
}

shared_ops::impl_constant_ops!(impl [T: Op, C: Convention] for Dual<T, C>);
