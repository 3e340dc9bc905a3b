//! nalgebra's scalar traits for AD numbers, so that linear algebra differentiates: norms,
//! inverses, determinants, LU, QR, Cholesky, eigenvalues and singular values.
//!
//! nalgebra asks its scalars for `RealField` (and so `ComplexField`) before it offers
//! `v.norm()`, `m.try_inverse()`, `m.lu()`, `m.cholesky()` or a `Rotation3`. There are two ways
//! in, sharing one implementation:
//!
//! * **The number types themselves.** `forward::Dual`, `forward::DualVec`, `forward::Taylor`
//!   and `reverse::Var` implement `RealField`, so a `DMatrix<Dual<f64>>` or a `DMatrix<Var>` has
//!   every decomposition. Use them in code written for one number type.
//! * **[`Real<T>`]**, a transparent wrapper that makes any `T: Op` a `RealField`. It is how code
//!   generic over `T: Op` (every [`Function`](crate::Function)) reaches nalgebra: wrap the
//!   inputs, compute, unwrap the results.
//!
//! `Op` does not extend `RealField` on purpose: both traits name `sin`, `abs`, `max`, `powi`
//! and thirty other methods, so in a function bounded by both every `x.sin()` would be
//! ambiguous and need a path (`Float::sin(x)`). `Real` keeps the two apart: on a `T` the
//! methods are `Op`'s, on a `Real<T>` they are nalgebra's.
//!
//! ```
//! use nalgebra::DMatrix;
//! use shared_ops::{Function, Op, Real};
//!
//! /// f(x) = det X and ‖X‖ for the 3×3 matrix X whose entries (column by column) are x.
//! struct DetNorm;
//! impl Function for DetNorm {
//!     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
//!         let m = DMatrix::from_iterator(3, 3, x.iter().map(|&v| Real(v)));
//!         vec![m.determinant().0, m.norm().0]
//!     }
//! }
//!
//! let x = [2.0, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 4.0];
//! assert_eq!(DetNorm.eval(&x), vec![24.0, 29.0_f64.sqrt()]);
//! ```
//!
//! # Conventions
//!
//! Every method is the [`Float`](num_traits::Float) method of `T` (or a composition of them), so each derivative
//! is the rule table's, with its kinks: `abs` at 0, `sqrt` at 0 (an infinite partial; a
//! singular Cholesky pivot gives infinite derivatives, not a wrong finite one), `max` at ties.
//!
//! * **Decisions are the primal's.** Pivoting, convergence tests and `argument` compare primal
//!   values, through `T`'s comparisons, so a replayable tape keeps each of them as a branch
//!   guard: re-evaluating an LU at a point where another pivot wins is refused, not silently
//!   wrong.
//! * **Approximate equality** (`approx`'s `abs_diff_eq`, `relative_eq`) is computed with `T`'s
//!   arithmetic and comparisons, so it is guarded too (and records a node or two on a tape);
//!   `ulps_eq` beyond the absolute test counts the units in the last place of the primals,
//!   which no tape sees.
//! * **Conversion to `f64`** (`SubsetOf`, as in `try_cast::<f64>()`) gives the primal and drops
//!   the derivatives, like [`Op::value`]; conversion from `f64` is [`Op::constant`].
//! * `sinc` and `sinhc` use their Taylor series for |x| < 1/16, so that their derivatives at
//!   and near 0 are right (nalgebra's default divides, and at a recorded 0 gives 0/0).
//! * Iterative decompositions (`symmetric_eigen`, `svd`) are differentiated as the programs
//!   they are: their derivatives agree with the analytic ones (dλ = vᵀ dA v, dσ = uᵀ dA v) to
//!   about the accuracy of the iteration, and do not exist where eigen- or singular values
//!   cross.
//!
//! # nalgebra versions
//!
//! nalgebra's scalar traits come from simba, and each nalgebra version has its own simba:
//! these numbers implement the traits of nalgebra **0.35** (feature `nalgebra`, on by default)
//! and, with the feature `nalgebra_v0_34`, those of nalgebra **0.33 and 0.34** as well. A
//! matrix of another nalgebra version than these has no decompositions on them, and the
//! compiler says only that a trait is missing:
//!
//! ```text
//! error[E0277]: the trait bound `Real<T>: ComplexField` is not satisfied
//! error[E0599]: the method `lu` exists for struct `Matrix<Dual<f64>, …>`, but its trait bounds were not satisfied
//! ```
//!
//! The fix is to use the nalgebra the numbers speak: the one the facade re-exports
//! (`wengert::nalgebra`), or `nalgebra = "0.35"` in `Cargo.toml`; for code on nalgebra 0.34,
//! turn on the feature `nalgebra_v0_34`. `cargo tree -i nalgebra` lists the versions a build
//! holds.
mod forward_to;
mod simba_traits;

/// The crates the exported macro names (the orphan rule puts its expansion in other crates).
#[doc(hidden)]
pub mod private {
    pub use approx;
    #[cfg(feature = "nalgebra")]
    pub use simba;
    #[cfg(feature = "nalgebra_v0_34")]
    pub use simba09;
}

use crate::Op;
use approx::{AbsDiffEq, RelativeEq, UlpsEq};
use core::fmt;
use core::iter::{Product, Sum};
use core::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Rem, RemAssign};
use core::ops::{Sub, SubAssign};
use num_traits::{FromPrimitive, Num, One, Signed, Zero};

/// An [`Op`] number seen as a nalgebra `RealField`: `Real(x)` for any `x: T`, no cost.
///
/// The way to nalgebra's decompositions from code generic over `T: Op` (see the
/// [module](crate::real) for why `Op` does not extend `RealField` itself). Every method is `T`'s
/// [`Float`](num_traits::Float) method, so derivatives follow the rule table in every mode.
///
/// ```
/// use nalgebra::{Matrix2, Vector2};
/// use shared_ops::{Op, Real};
///
/// /// Solves A·y = b by LU, for any number type.
/// fn solve<T: Op>(a: [T; 4], b: [T; 2]) -> [T; 2] {
///     let a = Matrix2::from_column_slice(&a.map(Real));
///     let y = a.lu().solve(&Vector2::from(b.map(Real))).expect("A is invertible");
///     [y[0].0, y[1].0]
/// }
/// assert_eq!(solve([2.0, 0.0, 0.0, 4.0], [1.0, 1.0]), [0.5, 0.25]);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd)]
#[repr(transparent)]
pub struct Real<T>(pub T);

impl<T: Op> From<T> for Real<T> {
    #[inline(always)]
    fn from(x: T) -> Self {
        Real(x)
    }
}

impl<T: fmt::Display> fmt::Display for Real<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

macro_rules! arithmetic {
    ($($tr:ident $m:ident $atr:ident $am:ident),*) => {$(
        impl<T: Op> $tr for Real<T> {
            type Output = Self;
            #[inline(always)]
            fn $m(self, rhs: Self) -> Self {
                Real(self.0.$m(rhs.0))
            }
        }
        impl<T: Op> $atr for Real<T> {
            #[inline(always)]
            fn $am(&mut self, rhs: Self) {
                self.0.$am(rhs.0)
            }
        }
    )*};
}
arithmetic!(
    Add add AddAssign add_assign,
    Sub sub SubAssign sub_assign,
    Mul mul MulAssign mul_assign,
    Div div DivAssign div_assign,
    Rem rem RemAssign rem_assign
);

impl<T: Op> Sum for Real<T> {
    /// `T`'s sum (on a tape, one node).
    fn sum<I: Iterator<Item = Self>>(iter: I) -> Self {
        Real(iter.map(|r| r.0).sum())
    }
}

impl<T: Op> Product for Real<T> {
    fn product<I: Iterator<Item = Self>>(iter: I) -> Self {
        Real(iter.map(|r| r.0).product())
    }
}

impl<T: Op> Neg for Real<T> {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        Real(-self.0)
    }
}

impl<T: Op> Zero for Real<T> {
    #[inline(always)]
    fn zero() -> Self {
        Real(T::zero())
    }
    /// The value is zero, as `T`'s (and `f64`'s) `is_zero` says: what nalgebra's tests for a
    /// zero pivot or column ask (not the structural zero of [`Op::is_structural_zero`]).
    #[inline(always)]
    fn is_zero(&self) -> bool {
        self.0.is_zero()
    }
}

impl<T: Op> One for Real<T> {
    #[inline(always)]
    fn one() -> Self {
        Real(T::one())
    }
}

impl<T: Op> Num for Real<T> {
    type FromStrRadixErr = T::FromStrRadixErr;
    fn from_str_radix(s: &str, radix: u32) -> Result<Self, Self::FromStrRadixErr> {
        T::from_str_radix(s, radix).map(Real)
    }
}

impl<T: Op> Signed for Real<T> {
    #[inline]
    fn abs(&self) -> Self {
        Real(self.0.abs())
    }
    #[allow(deprecated)]
    fn abs_sub(&self, other: &Self) -> Self {
        Real(self.0.abs_sub(other.0))
    }
    #[inline]
    fn signum(&self) -> Self {
        Real(self.0.signum())
    }
    /// As for floats: +0 is positive.
    #[inline]
    fn is_positive(&self) -> bool {
        self.0.is_sign_positive()
    }
    #[inline]
    fn is_negative(&self) -> bool {
        self.0.is_sign_negative()
    }
}

impl<T: Op> FromPrimitive for Real<T> {
    fn from_i64(n: i64) -> Option<Self> {
        Some(Real(T::constant(n as f64)))
    }
    fn from_u64(n: u64) -> Option<Self> {
        Some(Real(T::constant(n as f64)))
    }
    fn from_f32(n: f32) -> Option<Self> {
        Some(Real(T::constant(n.into())))
    }
    fn from_f64(n: f64) -> Option<Self> {
        Some(Real(T::constant(n)))
    }
}

impl<T: Op> AbsDiffEq for Real<T> {
    type Epsilon = Self;
    fn default_epsilon() -> Self {
        Real(T::epsilon())
    }
    fn abs_diff_eq(&self, other: &Self, epsilon: Self) -> bool {
        (self.0 - other.0).abs() <= epsilon.0
    }
}

impl<T: Op> RelativeEq for Real<T> {
    fn default_max_relative() -> Self {
        Real(T::epsilon())
    }
    /// `approx`'s test for floats, in `T`'s arithmetic.
    fn relative_eq(&self, other: &Self, epsilon: Self, max_relative: Self) -> bool {
        let (a, b) = (self.0, other.0);
        if a == b {
            return true;
        }
        if a.is_infinite() || b.is_infinite() {
            return false;
        }
        let diff = (a - b).abs();
        diff <= epsilon.0 || diff <= a.abs().max(b.abs()) * max_relative.0
    }
}

impl<T: Op> UlpsEq for Real<T> {
    fn default_max_ulps() -> u32 {
        4
    }
    /// `approx`'s test for floats: the absolute test in `T`'s arithmetic, then the distance in
    /// units in the last place of the primals.
    fn ulps_eq(&self, other: &Self, epsilon: Self, max_ulps: u32) -> bool {
        if self.abs_diff_eq(other, epsilon) {
            return true;
        }
        if self.0.is_sign_positive() != other.0.is_sign_positive() {
            return false;
        }
        let (a, b) = (self.0.value().to_bits(), other.0.value().to_bits());
        a.abs_diff(b) <= u64::from(max_ulps)
    }
}

/// Below this |x|, `sinc` and `sinhc` take four terms of their series: the next term is below
/// 2⁻⁴⁰ of the first, so the value is correctly rounded and its derivatives are smooth.
const SERIES_BELOW: f64 = 1.0 / 16.0;

impl<T: Op> Real<T> {
    /// 1 + s·x²/6 + x⁴/120 + s·x⁶/5040 + x⁸/362880, for `sinc` (s = −1) and `sinhc` (s = 1).
    fn cardinal_series(self, s: f64) -> Self {
        let x2 = self.0 * self.0;
        let c = |k: f64| T::constant(k);
        let p = c(s / 5040.0) + x2 * c(1.0 / 362880.0);
        let p = c(1.0 / 120.0) + x2 * p;
        let p = c(s / 6.0) + x2 * p;
        Real(T::one() + x2 * p)
    }
}
