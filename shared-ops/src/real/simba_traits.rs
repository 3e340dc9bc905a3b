//! simba's traits for [`Real<T>`](super::Real) (`ComplexField`, `RealField`, one SIMD lane, the
//! subsets), once per simba version: 0.10 for nalgebra 0.35 (feature `nalgebra`), 0.9 for
//! nalgebra 0.33 and 0.34 (feature `nalgebra_v0_34`).

/// `SubsetOf<Real<T>>` for floats, by the `SubsetOf` in scope where it is called (one per
/// simba version).
macro_rules! float_subset {
    ($($f:ty),*) => {$(
        /// A float lifts as a constant; an AD number converts to its primal, dropping its
        /// derivatives (as [`Op::value`] does).
        impl<T: Op> SubsetOf<Real<T>> for $f {
            #[inline(always)]
            fn to_superset(&self) -> Real<T> {
                Real(T::constant(f64::from(*self)))
            }
            #[inline(always)]
            fn from_superset_unchecked(element: &Real<T>) -> $f {
                element.0.value() as $f
            }
            #[inline(always)]
            fn is_in_subset(_: &Real<T>) -> bool {
                true
            }
        }
    )*};
}

/// simba's traits for `Real<T>`, for the simba of one nalgebra version (`$simba`, a name in
/// `private`): one SIMD lane, a field, a subset of itself and of the floats, `ComplexField` and
/// `RealField`. Every supported nalgebra version gets the same implementation.
macro_rules! simba_traits {
    ($module:ident, $simba:ident) => {
        mod $module {
            use crate::real::{Real, SERIES_BELOW, forward_to};
            use crate::Op;
            use crate::real::private::$simba::scalar::{ComplexField, RealField, SubsetOf};
            use num_traits::{One, Zero};

            // `SimdValue` declares two methods `unsafe`; their bodies do nothing unsafe.
            #[allow(unsafe_code)]
            const _: () = {
                crate::impl_real_field!(@scalar $simba [T: Op] Real<T>);
            };


            float_subset!(f32, f64);

            /// Every method by `T`'s `Float` method of the same name, or by its definition for a real
            /// number (the modulus of a real is its absolute value, its argument 0 or π, …).
            impl<T: Op> ComplexField for Real<T> {
                type RealField = Self;

                #[inline(always)]
                fn from_real(re: Self) -> Self {
                    re
                }
                #[inline(always)]
                fn real(self) -> Self {
                    self
                }
                #[inline(always)]
                fn imaginary(self) -> Self {
                    Self::zero()
                }
                #[inline]
                fn modulus(self) -> Self {
                    Real(self.0.abs())
                }
                #[inline]
                fn modulus_squared(self) -> Self {
                    self * self
                }
                fn argument(self) -> Self {
                    if self.0 >= T::zero() {
                        Self::zero()
                    } else {
                        Self::pi()
                    }
                }
                #[inline]
                fn norm1(self) -> Self {
                    Real(self.0.abs())
                }
                #[inline]
                fn scale(self, factor: Self) -> Self {
                    self * factor
                }
                #[inline]
                fn unscale(self, factor: Self) -> Self {
                    self / factor
                }
                /// `(|x|, ±1)`, by the sign (the default divides by |x|, which fails at a recorded 0).
                fn to_exp(self) -> (Self, Self) {
                    if self.0 >= T::zero() {
                        (self, Self::one())
                    } else {
                        (-self, -Self::one())
                    }
                }
                #[inline]
                fn signum(self) -> Self {
                    Real(self.0.signum())
                }
                #[inline]
                fn mul_add(self, a: Self, b: Self) -> Self {
                    Real(self.0.mul_add(a.0, b.0))
                }
                #[inline]
                fn abs(self) -> Self {
                    Real(self.0.abs())
                }
                #[inline(always)]
                fn conjugate(self) -> Self {
                    self
                }
                #[inline]
                fn sin_cos(self) -> (Self, Self) {
                    let (s, c) = self.0.sin_cos();
                    (Real(s), Real(c))
                }
                fn sinc(self) -> Self {
                    if self.0.abs() < T::constant(SERIES_BELOW) {
                        self.cardinal_series(-1.0)
                    } else {
                        Real(self.0.sin() / self.0)
                    }
                }
                fn sinhc(self) -> Self {
                    if self.0.abs() < T::constant(SERIES_BELOW) {
                        self.cardinal_series(1.0)
                    } else {
                        Real(self.0.sinh() / self.0)
                    }
                }
                /// cos x / x, and 1 at 0 (nalgebra's convention for `f64`).
                fn cosc(self) -> Self {
                    if self.0 == T::zero() {
                        Self::one()
                    } else {
                        Real(self.0.cos() / self.0)
                    }
                }
                /// cosh x / x, and 1 at 0 (nalgebra's convention for `f64`).
                fn coshc(self) -> Self {
                    if self.0 == T::zero() {
                        Self::one()
                    } else {
                        Real(self.0.cosh() / self.0)
                    }
                }
                #[inline]
                fn powi(self, n: i32) -> Self {
                    Real(self.0.powi(n))
                }
                #[inline]
                fn powc(self, n: Self) -> Self {
                    Real(self.0.powf(n.0))
                }
                #[inline]
                fn is_finite(&self) -> bool {
                    self.0.is_finite()
                }
                /// `None` below 0; at 0 the root exists, with an infinite derivative.
                fn try_sqrt(self) -> Option<Self> {
                    (self.0 >= T::zero()).then(|| Real(self.0.sqrt()))
                }

                forward_to::float_methods!(
                    floor ceil round trunc fract recip sin cos tan asin acos atan sinh cosh tanh asinh
                    acosh atanh log2 log10 ln ln_1p sqrt exp exp2 exp_m1 cbrt
                );
                forward_to::float_binary_methods!(hypot log powf);
            }

            impl<T: Op> RealField for Real<T> {
                #[inline]
                fn is_sign_positive(&self) -> bool {
                    self.0.is_sign_positive()
                }
                #[inline]
                fn is_sign_negative(&self) -> bool {
                    self.0.is_sign_negative()
                }
                #[inline]
                fn clamp(self, min: Self, max: Self) -> Self {
                    Real(self.0.max(min.0).min(max.0))
                }
                forward_to::float_binary_methods!(copysign max min atan2);
                fn min_value() -> Option<Self> {
                    Some(Real(T::min_value()))
                }
                fn max_value() -> Option<Self> {
                    Some(Real(T::max_value()))
                }

                forward_to::constants!(
                    pi PI, two_pi TAU, frac_pi_2 FRAC_PI_2, frac_pi_3 FRAC_PI_3, frac_pi_4 FRAC_PI_4,
                    frac_pi_6 FRAC_PI_6, frac_pi_8 FRAC_PI_8, frac_1_pi FRAC_1_PI, frac_2_pi FRAC_2_PI,
                    frac_2_sqrt_pi FRAC_2_SQRT_PI, e E, log2_e LOG2_E, log10_e LOG10_E, ln_2 LN_2,
                    ln_10 LN_10
                );
            }
        }
    };
}

#[cfg(feature = "nalgebra")]
simba_traits!(simba_v0_10, simba);
#[cfg(feature = "nalgebra_v0_34")]
simba_traits!(simba_v0_9, simba09);
