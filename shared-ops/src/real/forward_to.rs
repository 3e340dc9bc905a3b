//! The nalgebra traits of the AD number types, each method forwarded to [`Real`](super::Real),
//! where the one implementation lives.

/// `fn m(self) -> Self` by `T`'s `Float` method of the same name.
macro_rules! float_methods {
    ($($m:ident)*) => {$(
        #[inline]
        fn $m(self) -> Self {
            Real(::num_traits::Float::$m(self.0))
        }
    )*};
}
pub(super) use float_methods;

/// `fn m(self, other: Self) -> Self` by `T`'s `Float` method of the same name.
macro_rules! float_binary_methods {
    ($($m:ident)*) => {$(
        #[inline]
        fn $m(self, other: Self) -> Self {
            Real(::num_traits::Float::$m(self.0, other.0))
        }
    )*};
}
pub(super) use float_binary_methods;

/// Mathematical constants, lifted from `f64`'s.
macro_rules! constants {
    ($($m:ident $c:ident),*) => {$(
        #[inline]
        fn $m() -> Self {
            Real(T::constant(::core::f64::consts::$c))
        }
    )*};
}
pub(super) use constants;

/// Implements nalgebra's scalar traits (`RealField`, `ComplexField`, `Field`, `SimdValue`,
/// `SubsetOf`, `Signed`, `FromPrimitive`, approx's comparisons) for an AD number type that is
/// an [`Op`](crate::Op), every method by [`Real<Self>`](crate::Real)'s.
///
/// It exists because the orphan rule lets only the crate of a type implement simba's traits for
/// it: `forward` calls it for its duals and Taylor numbers, `reverse` for `Var`, and a user for
/// a number type of their own. Arguments: the impl generics and the type, which must be an
/// `Op` (for example through [`impl_float_via_rules!`](crate::impl_float_via_rules)).
///
/// ```
/// # use core::fmt;
/// # use shared_ops::num_traits::{Float, One, Zero};
/// # use shared_ops::{Binary, Op, Unary};
/// #
/// # /// A minimal dual number: a value and its slope. (A real one also applies the
/// # /// structural-zero convention of the rules, as `forward::Dual` does.)
/// # #[derive(Clone, Copy, Debug, Default)]
/// # struct D {
/// #     v: f64,
/// #     d: f64,
/// # }
/// #
/// # impl Op for D {
/// #     fn constant(c: f64) -> D {
/// #         D::from(c)
/// #     }
/// #     fn value(&self) -> f64 {
/// #         self.v
/// #     }
/// #     fn is_structural_zero(&self) -> bool {
/// #         self.v == 0.0 && self.d == 0.0
/// #     }
/// #     fn has_nan(&self) -> bool {
/// #         self.v.is_nan() || self.d.is_nan()
/// #     }
/// #     fn apply1<R: Unary>(self, rule: R) -> D {
/// #         let (v, dv) = rule.eval(self.v);
/// #         D { v, d: dv * self.d }
/// #     }
/// #     fn apply2<R: Binary>(self, other: D, rule: R) -> D {
/// #         let (v, da, db) = rule.eval(self.v, other.v);
/// #         D { v, d: da * self.d + db * other.d }
/// #     }
/// # }
/// #
/// # impl D {
/// #     /// `mul_add`, here unfused.
/// #     fn fused_mul_add(self, a: D, b: D) -> D {
/// #         self * a + b
/// #     }
/// # }
/// # impl From<f64> for D {
/// #     fn from(v: f64) -> D {
/// #         D { v, d: 0.0 }
/// #     }
/// # }
/// # impl Zero for D {
/// #     fn zero() -> D {
/// #         D::from(0.0)
/// #     }
/// #     fn is_zero(&self) -> bool {
/// #         self.v == 0.0
/// #     }
/// # }
/// # impl One for D {
/// #     fn one() -> D {
/// #         D::from(1.0)
/// #     }
/// # }
/// # impl fmt::Display for D {
/// #     fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
/// #         write!(f, "{} + {}ε", self.v, self.d)
/// #     }
/// # }
/// #
/// # shared_ops::impl_float_via_rules!(impl [] for D, inner f64, primal |s| s.v);
/// # shared_ops::impl_constant_ops!(impl [] for D, by constant);
/// // The minimal dual `D` of `impl_float_via_rules!`'s example, made a nalgebra scalar:
/// shared_ops::impl_real_field!(impl [] for D);
///
/// let v = nalgebra::Vector2::new(D { v: 3.0, d: 1.0 }, D::constant(4.0));
/// let r = v.norm(); // d‖(x, 4)‖/dx = x/‖(x, 4)‖
/// assert_eq!(r.v, 5.0);
/// assert!((r.d - 0.6).abs() < 1e-15);
/// ```
#[macro_export]
macro_rules! impl_real_field {
    (impl [$($gen:tt)*] for $ty:ty) => {
        const _: () = {
            use $crate::Real as R;
            use $crate::real::private::approx::{AbsDiffEq, RelativeEq, UlpsEq};
            use $crate::num_traits::{FromPrimitive, Signed};

            impl<$($gen)*> Signed for $ty {
                #[inline]
                fn abs(&self) -> Self {
                    Signed::abs(&R(*self)).0
                }
                #[allow(deprecated)]
                fn abs_sub(&self, other: &Self) -> Self {
                    Signed::abs_sub(&R(*self), &R(*other)).0
                }
                #[inline]
                fn signum(&self) -> Self {
                    Signed::signum(&R(*self)).0
                }
                #[inline]
                fn is_positive(&self) -> bool {
                    Signed::is_positive(&R(*self))
                }
                #[inline]
                fn is_negative(&self) -> bool {
                    Signed::is_negative(&R(*self))
                }
            }

            impl<$($gen)*> FromPrimitive for $ty {
                fn from_i64(n: i64) -> Option<Self> {
                    R::<Self>::from_i64(n).map(|r| r.0)
                }
                fn from_u64(n: u64) -> Option<Self> {
                    R::<Self>::from_u64(n).map(|r| r.0)
                }
                fn from_f32(n: f32) -> Option<Self> {
                    R::<Self>::from_f32(n).map(|r| r.0)
                }
                fn from_f64(n: f64) -> Option<Self> {
                    R::<Self>::from_f64(n).map(|r| r.0)
                }
            }


            impl<$($gen)*> AbsDiffEq for $ty {
                type Epsilon = Self;
                fn default_epsilon() -> Self {
                    R::<Self>::default_epsilon().0
                }
                fn abs_diff_eq(&self, other: &Self, epsilon: Self) -> bool {
                    R(*self).abs_diff_eq(&R(*other), R(epsilon))
                }
            }
            impl<$($gen)*> RelativeEq for $ty {
                fn default_max_relative() -> Self {
                    R::<Self>::default_max_relative().0
                }
                fn relative_eq(&self, other: &Self, epsilon: Self, max_relative: Self) -> bool {
                    R(*self).relative_eq(&R(*other), R(epsilon), R(max_relative))
                }
            }
            impl<$($gen)*> UlpsEq for $ty {
                fn default_max_ulps() -> u32 {
                    R::<Self>::default_max_ulps()
                }
                fn ulps_eq(&self, other: &Self, epsilon: Self, max_ulps: u32) -> bool {
                    R(*self).ulps_eq(&R(*other), R(epsilon), max_ulps)
                }
            }

            // simba's traits, once per nalgebra version enabled in this crate's features.
            $crate::__simba_v0_10!([$($gen)*] $ty);
            $crate::__simba_v0_9!([$($gen)*] $ty);
        };
    };

    // simba's traits (`$simba` names one simba in `real::private`): a scalar, a subset of
    // itself and of the floats, `ComplexField` and `RealField`, by `Real<Self>`'s.
    (@simba $simba:ident [$($gen:tt)*] $ty:ty) => {
        const _: () = {
            use $crate::Real as R;
            use $crate::real::private::$simba::scalar::{ComplexField, RealField, SubsetOf};

            $crate::impl_real_field!(@scalar $simba [$($gen)*] $ty);
            $crate::impl_real_field!(@float_subset [$($gen)*] $ty, f32);
            $crate::impl_real_field!(@float_subset [$($gen)*] $ty, f64);

            impl<$($gen)*> ComplexField for $ty {
                type RealField = Self;
                #[inline(always)]
                fn from_real(re: Self) -> Self {
                    re
                }
                $crate::impl_real_field!(@unary ComplexField: real imaginary modulus
                    modulus_squared argument norm1 signum floor ceil round trunc fract abs
                    recip conjugate sin cos tan asin acos atan sinh cosh tanh asinh acosh
                    atanh sinc sinhc cosc coshc log2 log10 ln ln_1p sqrt exp exp2 exp_m1
                    cbrt);
                $crate::impl_real_field!(@binary ComplexField: scale unscale hypot log powf
                    powc);
                $crate::impl_real_field!(@pair to_polar to_exp sin_cos sinh_cosh);
                #[inline]
                fn mul_add(self, a: Self, b: Self) -> Self {
                    ComplexField::mul_add(R(self), R(a), R(b)).0
                }
                #[inline]
                fn powi(self, n: i32) -> Self {
                    ComplexField::powi(R(self), n).0
                }
                #[inline]
                fn is_finite(&self) -> bool {
                    ComplexField::is_finite(&R(*self))
                }
                fn try_sqrt(self) -> Option<Self> {
                    ComplexField::try_sqrt(R(self)).map(|r| r.0)
                }
            }

            impl<$($gen)*> RealField for $ty {
                #[inline]
                fn is_sign_positive(&self) -> bool {
                    RealField::is_sign_positive(&R(*self))
                }
                #[inline]
                fn is_sign_negative(&self) -> bool {
                    RealField::is_sign_negative(&R(*self))
                }
                $crate::impl_real_field!(@binary RealField: copysign max min atan2);
                #[inline]
                fn clamp(self, min: Self, max: Self) -> Self {
                    RealField::clamp(R(self), R(min), R(max)).0
                }
                fn min_value() -> Option<Self> {
                    <R<Self> as RealField>::min_value().map(|r| r.0)
                }
                fn max_value() -> Option<Self> {
                    <R<Self> as RealField>::max_value().map(|r| r.0)
                }
                $crate::impl_real_field!(@constant pi two_pi frac_pi_2 frac_pi_3 frac_pi_4
                    frac_pi_6 frac_pi_8 frac_1_pi frac_2_pi frac_2_sqrt_pi e log2_e log10_e
                    ln_2 ln_10);
            }
        };
    };

    // What every scalar type implements alike (`Real<T>` too): one SIMD lane, a field, a subset
    // of itself. `SimdValue` declares two methods `unsafe`; their bodies do nothing unsafe.
    (@scalar $simba:ident [$($gen:tt)*] $ty:ty) => {
        impl<$($gen)*> $crate::real::private::$simba::simd::SimdValue for $ty {
            const LANES: usize = 1;
            type Element = Self;
            type SimdBool = bool;
            #[inline(always)]
            fn splat(val: Self) -> Self {
                val
            }
            #[inline(always)]
            fn extract(&self, _: usize) -> Self {
                *self
            }
            #[inline(always)]
            unsafe fn extract_unchecked(&self, _: usize) -> Self {
                *self
            }
            #[inline(always)]
            fn replace(&mut self, _: usize, val: Self) {
                *self = val
            }
            #[inline(always)]
            unsafe fn replace_unchecked(&mut self, _: usize, val: Self) {
                *self = val
            }
            #[inline(always)]
            fn select(self, cond: bool, other: Self) -> Self {
                if cond { self } else { other }
            }
        }

        impl<$($gen)*> $crate::real::private::$simba::scalar::Field for $ty {}

        impl<$($gen)*> $crate::real::private::$simba::scalar::SubsetOf<$ty> for $ty {
            #[inline(always)]
            fn to_superset(&self) -> Self {
                *self
            }
            #[inline(always)]
            fn from_superset_unchecked(element: &Self) -> Self {
                *element
            }
            #[inline(always)]
            fn is_in_subset(_: &Self) -> bool {
                true
            }
        }
    };
    (@float_subset [$($gen:tt)*] $ty:ty, $f:ty) => {
        /// A float lifts as a constant; an AD number converts to its primal.
        impl<$($gen)*> SubsetOf<$ty> for $f {
            #[inline(always)]
            fn to_superset(&self) -> $ty {
                <$f as SubsetOf<R<$ty>>>::to_superset(self).0
            }
            #[inline(always)]
            fn from_superset_unchecked(element: &$ty) -> $f {
                <$f as SubsetOf<R<$ty>>>::from_superset_unchecked(&R(*element))
            }
            #[inline(always)]
            fn is_in_subset(element: &$ty) -> bool {
                <$f as SubsetOf<R<$ty>>>::is_in_subset(&R(*element))
            }
        }
    };
    (@unary $tr:ident: $($m:ident)*) => {$(
        #[inline]
        fn $m(self) -> Self {
            $tr::$m(R(self)).0
        }
    )*};
    (@binary $tr:ident: $($m:ident)*) => {$(
        #[inline]
        fn $m(self, other: Self) -> Self {
            $tr::$m(R(self), R(other)).0
        }
    )*};
    (@pair $($m:ident)*) => {$(
        #[inline]
        fn $m(self) -> (Self, Self) {
            let (a, b) = ComplexField::$m(R(self));
            (a.0, b.0)
        }
    )*};
    (@constant $($m:ident)*) => {$(
        #[inline]
        fn $m() -> Self {
            <R<Self> as RealField>::$m().0
        }
    )*};
}

/// simba 0.10's traits (nalgebra 0.35, feature `nalgebra`) in [`impl_real_field!`]'s expansion,
/// or nothing: the features of this crate decide, not those of the crate that expands it.
#[cfg(feature = "nalgebra")]
#[doc(hidden)]
#[macro_export]
macro_rules! __simba_v0_10 {
    ([$($gen:tt)*] $ty:ty) => {
        $crate::impl_real_field!(@simba simba [$($gen)*] $ty);
    };
}
#[cfg(not(feature = "nalgebra"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __simba_v0_10 {
    ([$($gen:tt)*] $ty:ty) => {};
}

/// simba 0.9's traits (nalgebra 0.33 and 0.34, feature `nalgebra_v0_34`), or nothing.
#[cfg(feature = "nalgebra_v0_34")]
#[doc(hidden)]
#[macro_export]
macro_rules! __simba_v0_9 {
    ([$($gen:tt)*] $ty:ty) => {
        $crate::impl_real_field!(@simba simba09 [$($gen)*] $ty);
    };
}
#[cfg(not(feature = "nalgebra_v0_34"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __simba_v0_9 {
    ([$($gen:tt)*] $ty:ty) => {};
}
