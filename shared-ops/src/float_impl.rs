//! The `num_traits::Float` surface of an AD number, generated from its two primitives
//! `apply1`/`apply2`, so `Dual`, `DualVec` and `Var` cannot disagree on which rule a method uses.

/// Implements the arithmetic operators, comparisons, `Sum`, `Product`, `Num`, `NumCast`,
/// `ToPrimitive` and `Float` for an AD number type, every differentiable method through
/// [`Op::apply1`](crate::Op::apply1) / [`Op::apply2`](crate::Op::apply2) and a rule of
/// [`rules`](crate::rules).
///
/// Arguments: the impl generics and the type, the type one level down (`inner`), how to read
/// the primal at that level, and optionally how to `sum` an iterator (default: a fold of `+`
/// from the first item; a tape makes it one n-ary node) and how to `compare` two numbers
/// (`compare |a, b, how|`, which returns the ordering of the primals; `how` is the
/// [`Compare`](crate::Compare) the code asked for: a tape keeps its answer as a branch guard),
/// and what a `test` (`is_nan`, `is_sign_negative`, …: the method's name and its result) does
/// besides returning its result (default: nothing; a tape keeps it as a guard too).
/// The type must itself implement `Op`, `Zero`, `One`, `Copy`, `Default`, `Debug`, `Display`,
/// `From<inner>`, the arithmetic with `f64` constants (by [`impl_constant_ops!`](crate::impl_constant_ops!)) and an
/// inherent `fn fused_mul_add(self, a: Self, b: Self) -> Self` (the one three-argument rule). Comparisons look at the primal only, as a user of `f64` expects;
/// `==` is `partial_cmp` giving `Equal`.
///
/// It is a macro because of the orphan rule: only the crate that defines a number type may
/// implement `num_traits::Float` and the operators for it. `forward` calls it for its duals and
/// Taylor numbers, `reverse` for `Var`, `jacobian` for its sparsity tracer, and a user for a
/// number type of their own:
///
/// ```
/// use core::fmt;
/// use shared_ops::num_traits::{Float, One, Zero};
/// use shared_ops::{Binary, Op, Unary};
///
/// /// A minimal dual number: a value and its slope. (A real one also applies the
/// /// structural-zero convention of the rules, as `forward::Dual` does.)
/// #[derive(Clone, Copy, Debug, Default)]
/// struct D {
///     v: f64,
///     d: f64,
/// }
///
/// impl Op for D {
///     fn constant(c: f64) -> D {
///         D::from(c)
///     }
///     fn value(&self) -> f64 {
///         self.v
///     }
///     fn is_structural_zero(&self) -> bool {
///         self.v == 0.0 && self.d == 0.0
///     }
///     fn has_nan(&self) -> bool {
///         self.v.is_nan() || self.d.is_nan()
///     }
///     fn apply1<R: Unary>(self, rule: R) -> D {
///         let (v, dv) = rule.eval(self.v);
///         D { v, d: dv * self.d }
///     }
///     fn apply2<R: Binary>(self, other: D, rule: R) -> D {
///         let (v, da, db) = rule.eval(self.v, other.v);
///         D { v, d: da * self.d + db * other.d }
///     }
/// }
///
/// impl D {
///     /// `mul_add`, here unfused.
///     fn fused_mul_add(self, a: D, b: D) -> D {
///         self * a + b
///     }
/// }
/// impl From<f64> for D {
///     fn from(v: f64) -> D {
///         D { v, d: 0.0 }
///     }
/// }
/// impl Zero for D {
///     fn zero() -> D {
///         D::from(0.0)
///     }
///     fn is_zero(&self) -> bool {
///         self.v == 0.0
///     }
/// }
/// impl One for D {
///     fn one() -> D {
///         D::from(1.0)
///     }
/// }
/// impl fmt::Display for D {
///     fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
///         write!(f, "{} + {}ε", self.v, self.d)
///     }
/// }
///
/// shared_ops::impl_float_via_rules!(impl [] for D, inner f64, primal |s| s.v);
/// shared_ops::impl_constant_ops!(impl [] for D, by constant);
///
/// // Every operator and `Float` method now differentiates through the rule table.
/// let x = D { v: 2.0, d: 1.0 };
/// let y = x.sin() * x + x.powi(3) / 3.0;
/// assert_eq!(y.d, 2.0_f64.cos() * 2.0 + 2.0_f64.sin() + 4.0);
/// assert!(x > D::constant(1.0));
/// ```
#[macro_export]
macro_rules! impl_float_via_rules {
    (impl [$($gen:tt)*] for $ty:ty, inner $inner:ty, primal |$s:ident| $primal:expr) => {
        // A fold from the first item, not from zero: n − 1 additions, not n.
        $crate::impl_float_via_rules!(
            impl [$($gen)*] for $ty, inner $inner, primal |$s| $primal,
            sum |iter| {
                let mut iter = iter;
                match iter.next() {
                    Some(first) => iter.fold(first, |a, b| a + b),
                    None => <Self as $crate::num_traits::Zero>::zero(),
                }
            }
        );
    };
    (
        impl [$($gen:tt)*] for $ty:ty, inner $inner:ty, primal |$s:ident| $primal:expr,
        sum |$it:ident| $sum:expr
    ) => {
        $crate::impl_float_via_rules!(
            impl [$($gen)*] for $ty, inner $inner, primal |$s| $primal,
            sum |$it| $sum,
            compare |a, b, _how| {
                let p = |$s: &Self| $primal;
                p(a).partial_cmp(&p(b))
            },
            test |_x, _name, result| result
        );
    };
    (
        impl [$($gen:tt)*] for $ty:ty, inner $inner:ty, primal |$s:ident| $primal:expr,
        sum |$it:ident| $sum:expr,
        compare |$ca:ident, $cb:ident, $ch:ident| $cmp:expr,
        test |$tx:ident, $tn:ident, $tr:ident| $test:expr
    ) => {
        impl<$($gen)*> ::core::ops::Neg for $ty {
            type Output = Self;
            #[inline(always)]
            fn neg(self) -> Self {
                $crate::Op::apply1(self, $crate::rules::Neg)
            }
        }

        $crate::impl_float_via_rules!(@bin [$($gen)*] $ty, Add add AddAssign add_assign);
        $crate::impl_float_via_rules!(@bin [$($gen)*] $ty, Sub sub SubAssign sub_assign);
        $crate::impl_float_via_rules!(@bin [$($gen)*] $ty, Mul mul MulAssign mul_assign);
        $crate::impl_float_via_rules!(@bin [$($gen)*] $ty, Div div DivAssign div_assign);
        $crate::impl_float_via_rules!(@bin [$($gen)*] $ty, Rem rem RemAssign rem_assign);

        impl<$($gen)*> ::core::iter::Sum for $ty {
            fn sum<I: Iterator<Item = Self>>($it: I) -> Self {
                $sum
            }
        }
        impl<'a, $($gen)*> ::core::iter::Sum<&'a $ty> for $ty {
            fn sum<I: Iterator<Item = &'a Self>>(iter: I) -> Self {
                iter.copied().sum()
            }
        }
        impl<$($gen)*> ::core::iter::Product for $ty {
            fn product<I: Iterator<Item = Self>>(mut iter: I) -> Self {
                match iter.next() {
                    Some(first) => iter.fold(first, |a, b| a * b),
                    None => <Self as $crate::num_traits::One>::one(),
                }
            }
        }
        impl<'a, $($gen)*> ::core::iter::Product<&'a $ty> for $ty {
            fn product<I: Iterator<Item = &'a Self>>(iter: I) -> Self {
                iter.copied().product()
            }
        }

        impl<$($gen)*> $ty {
            /// The comparison the code asked for (`how`), with the ordering of the primals.
            #[inline]
            fn compared(&self, other: &Self, how: $crate::Compare) -> Option<::core::cmp::Ordering> {
                let ($ca, $cb, $ch) = (self, other, how);
                $cmp
            }
        }
        impl<$($gen)*> ::core::cmp::PartialEq for $ty {
            #[inline]
            fn eq(&self, other: &Self) -> bool {
                $crate::Compare::Eq.holds(self.compared(other, $crate::Compare::Eq))
            }
            #[inline]
            #[allow(clippy::partialeq_ne_impl)] // a guard keeps `!=` as asked
            fn ne(&self, other: &Self) -> bool {
                $crate::Compare::Ne.holds(self.compared(other, $crate::Compare::Ne))
            }
        }
        impl<$($gen)*> ::core::cmp::PartialOrd for $ty {
            #[inline]
            fn partial_cmp(&self, other: &Self) -> Option<::core::cmp::Ordering> {
                self.compared(other, $crate::Compare::Order)
            }
            #[inline]
            fn lt(&self, other: &Self) -> bool {
                $crate::Compare::Lt.holds(self.compared(other, $crate::Compare::Lt))
            }
            #[inline]
            fn le(&self, other: &Self) -> bool {
                $crate::Compare::Le.holds(self.compared(other, $crate::Compare::Le))
            }
            #[inline]
            fn gt(&self, other: &Self) -> bool {
                $crate::Compare::Gt.holds(self.compared(other, $crate::Compare::Gt))
            }
            #[inline]
            fn ge(&self, other: &Self) -> bool {
                $crate::Compare::Ge.holds(self.compared(other, $crate::Compare::Ge))
            }
        }

        impl<$($gen)*> $crate::num_traits::Num for $ty {
            type FromStrRadixErr = <$inner as $crate::num_traits::Num>::FromStrRadixErr;
            fn from_str_radix(s: &str, radix: u32) -> Result<Self, Self::FromStrRadixErr> {
                <$inner as $crate::num_traits::Num>::from_str_radix(s, radix).map(Self::from)
            }
        }

        // Reads of the value go through `Op::value`, which a number may refuse (a tracer of
        // global sparsity detection carries none).
        impl<$($gen)*> $crate::num_traits::ToPrimitive for $ty {
            fn to_i64(&self) -> Option<i64> {
                $crate::Op::value(self).to_i64()
            }
            fn to_u64(&self) -> Option<u64> {
                $crate::Op::value(self).to_u64()
            }
            fn to_f64(&self) -> Option<f64> {
                $crate::Op::value(self).to_f64()
            }
        }

        impl<$($gen)*> $crate::num_traits::NumCast for $ty {
            fn from<Prim: $crate::num_traits::ToPrimitive>(n: Prim) -> Option<Self> {
                <$inner as $crate::num_traits::NumCast>::from(n).map(<Self as From<$inner>>::from)
            }
        }

        impl<$($gen)*> $crate::num_traits::Float for $ty {
            $crate::impl_float_via_rules!(@consts $inner: nan infinity neg_infinity neg_zero
                min_value min_positive_value max_value epsilon);
            $crate::impl_float_via_rules!(@tests |$s| $primal, |$tx, $tn, $tr| $test;
                is_nan is_infinite is_finite is_normal is_subnormal is_sign_positive
                is_sign_negative);
            fn classify(self) -> ::core::num::FpCategory {
                $crate::Op::value(&self).classify()
            }
            fn integer_decode(self) -> (u64, i16, i8) {
                $crate::Op::value(&self).integer_decode()
            }
            $crate::impl_float_via_rules!(@unary Floor floor, Ceil ceil, Round round,
                Trunc trunc, Fract fract, Abs abs, Signum signum, Recip recip, Sqrt sqrt,
                Cbrt cbrt, Exp exp, Exp2 exp2, ExpM1 exp_m1, Ln ln, Log2 log2, Log10 log10,
                Ln1p ln_1p, Sin sin, Cos cos, Tan tan, Asin asin, Acos acos, Atan atan,
                Sinh sinh, Cosh cosh, Tanh tanh, Asinh asinh, Acosh acosh, Atanh atanh);
            $crate::impl_float_via_rules!(@binary Powf powf, Log log, Max max, Min min,
                Hypot hypot, Atan2 atan2);
            #[inline]
            fn powi(self, n: i32) -> Self {
                $crate::Op::apply1(self, $crate::rules::Powi(n))
            }
            #[inline]
            fn mul_add(self, a: Self, b: Self) -> Self {
                self.fused_mul_add(a, b)
            }
            #[inline]
            fn sin_cos(self) -> (Self, Self) {
                (self.sin(), self.cos())
            }
            #[allow(deprecated)]
            fn abs_sub(self, other: Self) -> Self {
                (self - other).max(<Self as $crate::num_traits::Zero>::zero())
            }
        }
    };

    (@bin [$($gen:tt)*] $ty:ty, $tr:ident $m:ident $atr:ident $am:ident) => {
        impl<$($gen)*> ::core::ops::$tr for $ty {
            type Output = Self;
            #[inline(always)]
            fn $m(self, rhs: Self) -> Self {
                $crate::Op::apply2(self, rhs, $crate::rules::$tr)
            }
        }
        impl<$($gen)*> ::core::ops::$atr for $ty {
            #[inline(always)]
            fn $am(&mut self, rhs: Self) {
                *self = ::core::ops::$tr::$m(*self, rhs);
            }
        }
    };

    (@consts $inner:ty: $($c:ident)*) => {$(
        #[inline]
        fn $c() -> Self {
            Self::from(<$inner as $crate::num_traits::Float>::$c())
        }
    )*};

    (@tests |$s:ident| $primal:expr, |$tx:ident, $tn:ident, $tr:ident| $test:expr;
        $($t:ident)*) => {$(
        #[inline]
        fn $t(self) -> bool {
            let p = |$s: &Self| $primal;
            let ($tx, $tn, $tr) = (self, stringify!($t), p(&self).$t());
            $test
        }
    )*};

    (@unary $($rule:ident $m:ident),*) => {$(
        #[inline]
        fn $m(self) -> Self {
            $crate::Op::apply1(self, $crate::rules::$rule)
        }
    )*};

    (@binary $($rule:ident $m:ident),*) => {$(
        #[inline]
        fn $m(self, other: Self) -> Self {
            $crate::Op::apply2(self, other, $crate::rules::$rule)
        }
    )*};
}

/// The arithmetic of an AD number with `f64` constants that [`Op`](crate::Op) asks for: `x ∘ c`
/// and `x ∘= c` for `∘` in `+ − · /`, and `c ∘ x` for concrete code. A number type writes
/// `x ∘ c` itself where it can skip the constant's zero derivative (a dual scales its tangent),
/// and this macro the rest: the assignments and `c ∘ x` from it (`c + x` and `c·x` as `x + c`
/// and `x·c`, which IEEE arithmetic makes the same bits; `c − x` and `c / x` by
/// [`Op::constant`](crate::Op::constant)). With `by constant`, `x ∘ c` too, as `x ∘
/// Self::constant(c)`.
///
/// `forward::Dual` writes `x · c` itself (scaling its tangent) and calls the macro for the rest;
/// the minimal dual `D` of [`impl_float_via_rules!`]'s example (compiled and run there) takes
/// them all by constant: `shared_ops::impl_constant_ops!(impl [] for D, by constant);`.
#[macro_export]
macro_rules! impl_constant_ops {
    (impl [$($gen:tt)*] for $ty:ty, by constant) => {
        impl<$($gen)*> core::ops::Add<f64> for $ty {
            type Output = $ty;
            #[inline(always)]
            fn add(self, c: f64) -> $ty {
                self + <$ty as $crate::Op>::constant(c)
            }
        }
        impl<$($gen)*> core::ops::Sub<f64> for $ty {
            type Output = $ty;
            #[inline(always)]
            fn sub(self, c: f64) -> $ty {
                self - <$ty as $crate::Op>::constant(c)
            }
        }
        impl<$($gen)*> core::ops::Mul<f64> for $ty {
            type Output = $ty;
            #[inline(always)]
            fn mul(self, c: f64) -> $ty {
                self * <$ty as $crate::Op>::constant(c)
            }
        }
        impl<$($gen)*> core::ops::Div<f64> for $ty {
            type Output = $ty;
            #[inline(always)]
            fn div(self, c: f64) -> $ty {
                self / <$ty as $crate::Op>::constant(c)
            }
        }
        $crate::impl_constant_ops!(impl [$($gen)*] for $ty);
    };
    (impl [$($gen:tt)*] for $ty:ty) => {
        impl<$($gen)*> core::ops::AddAssign<f64> for $ty {
            #[inline(always)]
            fn add_assign(&mut self, c: f64) {
                *self = *self + c;
            }
        }
        impl<$($gen)*> core::ops::SubAssign<f64> for $ty {
            #[inline(always)]
            fn sub_assign(&mut self, c: f64) {
                *self = *self - c;
            }
        }
        impl<$($gen)*> core::ops::MulAssign<f64> for $ty {
            #[inline(always)]
            fn mul_assign(&mut self, c: f64) {
                *self = *self * c;
            }
        }
        impl<$($gen)*> core::ops::DivAssign<f64> for $ty {
            #[inline(always)]
            fn div_assign(&mut self, c: f64) {
                *self = *self / c;
            }
        }
        impl<$($gen)*> core::ops::Add<$ty> for f64 {
            type Output = $ty;
            #[inline(always)]
            fn add(self, x: $ty) -> $ty {
                x + self
            }
        }
        impl<$($gen)*> core::ops::Mul<$ty> for f64 {
            type Output = $ty;
            #[inline(always)]
            fn mul(self, x: $ty) -> $ty {
                x * self
            }
        }
        impl<$($gen)*> core::ops::Sub<$ty> for f64 {
            type Output = $ty;
            #[inline(always)]
            fn sub(self, x: $ty) -> $ty {
                <$ty as $crate::Op>::constant(self) - x
            }
        }
        impl<$($gen)*> core::ops::Div<$ty> for f64 {
            type Output = $ty;
            #[inline(always)]
            fn div(self, x: $ty) -> $ty {
                <$ty as $crate::Op>::constant(self) / x
            }
        }
    };
}

/// Which comparison code asked for: the whole ordering (`partial_cmp`) or one of the
/// operators. A replayable tape keeps the answer the code branched on as a guard, so that a
/// re-evaluation is refused exactly where that answer changes (`a == b` false at two points
/// whose ordering differs is the same branch).
///
/// ```
/// use core::cmp::Ordering::{Equal, Less};
/// use shared_ops::Compare;
/// assert!(Compare::Le.holds(Some(Less)) && Compare::Le.holds(Some(Equal)));
/// assert!(!Compare::Eq.holds(None) && Compare::Ne.holds(None)); // NaN
/// assert_eq!(Compare::Gt.answer(Some(Less)), Compare::Gt.answer(Some(Equal)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Compare {
    /// `partial_cmp`: the ordering itself.
    Order,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl Compare {
    /// Whether the operator holds for the ordering `o` (`None`: an operand is NaN). For
    /// [`Compare::Order`], whether the operands are ordered.
    #[inline]
    pub fn holds(self, o: Option<core::cmp::Ordering>) -> bool {
        use core::cmp::Ordering::*;
        match self {
            Compare::Order => o.is_some(),
            Compare::Eq => o == Some(Equal),
            Compare::Ne => o != Some(Equal),
            Compare::Lt => o == Some(Less),
            Compare::Le => matches!(o, Some(Less | Equal)),
            Compare::Gt => o == Some(Greater),
            Compare::Ge => matches!(o, Some(Greater | Equal)),
        }
    }

    /// The answer the code branched on, as a number: the ordering for [`Compare::Order`]
    /// (0 `<`, 1 `=`, 2 `>`, 3 unordered), else 1 if the operator holds and 0 if not.
    #[inline]
    pub fn answer(self, o: Option<core::cmp::Ordering>) -> u64 {
        use core::cmp::Ordering::*;
        match self {
            Compare::Order => match o {
                Some(Less) => 0,
                Some(Equal) => 1,
                Some(Greater) => 2,
                None => 3,
            },
            how => u64::from(how.holds(o)),
        }
    }

    /// The operator as written: `partial_cmp`, `==`, `<`, ….
    pub fn symbol(self) -> &'static str {
        match self {
            Compare::Order => "partial_cmp",
            Compare::Eq => "==",
            Compare::Ne => "!=",
            Compare::Lt => "<",
            Compare::Le => "<=",
            Compare::Gt => ">",
            Compare::Ge => ">=",
        }
    }
}
