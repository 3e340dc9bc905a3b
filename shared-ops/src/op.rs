//! The contract between numbers and rules: [`Op`], the number interface user functions are
//! written against, and [`Unary`] and [`Binary`], the interface of a derivative rule. Each names
//! the other (a number applies a rule; a rule is evaluated on any number), so they live
//! together; the table of rules built on them is [`rules`](crate::rules).

use core::fmt::{Debug, Display};
use core::iter::{Product, Sum};
use core::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Sub, SubAssign};
use num_traits::{Float, NumAssign};

/// The number interface that user functions are written against.
///
/// Write `fn f<T: Op>(x: &[T]) -> Vec<T>` once; call it with `f64` for the value, with
/// `forward::Dual<f64>` for a tangent, with `reverse::Var` to record a tape.
///
/// Arithmetic with an `f64` constant on the right (`x * 2.0`, `x + 1.0`, `x - 1.0`, `x / 2.0`,
/// and `x *= 2.0`, …) is part of the interface: every number implements it knowing that the
/// constant carries no derivative, so forward mode forms no zero tangent for it and a tape
/// records no constant (`x + 1.0` shares `x`'s node). It gives what the same operation with
/// [`Op::constant`] gives. A constant on the left is written `T::constant(c) - x` (or
/// `T::one() - x`).
///
/// Zero has two meanings here, kept apart. [`num_traits::Zero::is_zero`] answers as it does for
/// `f64`: is the primal value zero? That is what user code and nalgebra branch on (a decision,
/// kept as a branch guard on a replayable tape). [`Op::is_structural_zero`] is the AD notion:
/// zero in every component and independent of every input, so that a product with it can be
/// skipped (see [`rules`](crate::rules)). Every number is `Send + Sync`, as a nalgebra scalar must be.
///
/// ```
/// use shared_ops::Op;
///
/// fn f<T: Op>(x: T) -> T {
///     x.sin() * 2.0 + x.powi(2) - 1.0
/// }
/// assert_eq!(f(0.0_f64), -1.0);
/// assert_eq!(f(1.5_f64).value(), 1.5_f64.sin() * 2.0 + 1.25);
/// ```
pub trait Op:
    Float
    + NumAssign
    + Sum
    + Product
    + Debug
    + Display
    + Default
    + Send
    + Sync
    + 'static
    + Add<f64, Output = Self>
    + Sub<f64, Output = Self>
    + Mul<f64, Output = Self>
    + Div<f64, Output = Self>
    + AddAssign<f64>
    + SubAssign<f64>
    + MulAssign<f64>
    + DivAssign<f64>
{
    /// Lifts an `f64` constant (its derivative is zero in every mode).
    fn constant(c: f64) -> Self;

    /// The innermost `f64` value (the primal), whatever the nesting.
    fn value(&self) -> f64;

    /// True only for a number that is exactly zero in every component (value and every
    /// derivative it carries) and does not depend on any input: a constant zero, an unseeded
    /// tangent, an adjoint that nothing has reached. The structural-zero convention of
    /// [`rules`](crate::rules) skips products with it, so `0 · ∞` contributes nothing, and a tape never
    /// records such a product. For `f64` it is `== 0`; a tape variable of value 0 is
    /// not one (its derivatives live on the tape), nor a dual whose tangent is not zero.
    ///
    /// ```
    /// use shared_ops::Op;
    /// assert!(0.0_f64.is_structural_zero() && (-0.0_f64).is_structural_zero());
    /// assert!(!1e-300_f64.is_structural_zero());
    /// ```
    fn is_structural_zero(&self) -> bool;

    /// Applies a one-argument derivative rule: the value of `rule` at `self`, carrying the
    /// derivative in whatever way this number type carries it.
    fn apply1<R: Unary>(self, rule: R) -> Self;

    /// Applies a two-argument derivative rule to `(self, other)`.
    fn apply2<R: Binary>(self, other: Self, rule: R) -> Self;

    /// Whether forward-mode numbers built on this type skip tangents that are structural zeros
    /// ([`Op::is_structural_zero`]) instead of multiplying and adding them. That changes no
    /// value (a zero tangent contributes exactly zero by the convention of [`rules`](crate::rules)), only the
    /// sign of a zero tangent and the work: `true` (the default) for numbers whose arithmetic
    /// is recorded or costly, such as tape variables, which would otherwise record every zero
    /// tangent of a reverse-over-forward sweep; `false` for `f64`, where a vectorised
    /// multiply is cheaper than a test. Duals and Taylor numbers inherit it from the type one
    /// level down: the lanes of `DualVec<DualVec<f64, 8>, 8>` (forward-over-forward Hessians)
    /// are multiplied, since testing them for zeros costs more than the products it skips.
    ///
    /// ```
    /// use shared_ops::Op;
    /// assert!(!f64::SPARSE_TANGENTS);
    /// ```
    const SPARSE_TANGENTS: bool = true;

    /// Whether any component is NaN: the value and, for a number that carries derivatives,
    /// every derivative it carries (for `f64`, [`Float::is_nan`]).
    ///
    /// Forward mode computes each operation's tangents as plain multiply-adds and tests this
    /// once on the result: only a NaN can hide a product that the structural-zero convention
    /// of [`rules`](crate::rules) changes (`0·∞`, `0·NaN`), so only then are the products taken one by one.
    /// A number type that carries derivatives must override it to look at them too.
    ///
    /// ```
    /// use shared_ops::Op;
    /// assert!(f64::NAN.has_nan());
    /// assert!(!f64::INFINITY.has_nan());
    /// ```
    #[inline(always)]
    fn has_nan(&self) -> bool {
        self.is_nan()
    }

    /// The dot product `Σ aᵢ·bᵢ`, summed in the order of [`dot_order`] (eight running sums),
    /// which every number type and every mode follows, so that all give the same bits.
    ///
    /// One elementary operation with `2k` operands: on a reverse tape it is one node (∂/∂aᵢ = bᵢ,
    /// ∂/∂bᵢ = aᵢ) instead of `2k − 1`, which is where most of the time of linear algebra goes.
    /// Every other number type computes the sum of products.
    ///
    /// # Panics
    ///
    /// If `a` and `b` differ in length.
    ///
    /// ```
    /// use shared_ops::Op;
    /// assert_eq!(f64::dot(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]), 32.0);
    /// assert_eq!(f64::dot(&[], &[]), 0.0);
    /// ```
    #[inline]
    fn dot(a: &[Self], b: &[Self]) -> Self {
        check_dot(a.len(), b.len());
        if a.len() < 8 {
            return dot_order(a.len(), |i| a[i] * b[i]);
        }
        // `dot_order` spelled out over whole blocks of eight, which the compiler packs into
        // vector registers (indexed terms keep a bounds check per term).
        let (blocks_a, blocks_b) = (a.chunks_exact(8), b.chunks_exact(8));
        let (rest_a, rest_b) = (blocks_a.remainder(), blocks_b.remainder());
        let mut blocks = blocks_a.zip(blocks_b);
        let (a0, b0) = blocks.next().expect("at least one block of eight");
        let mut s: [Self; 8] = core::array::from_fn(|k| a0[k] * b0[k]);
        for (x, y) in blocks {
            for k in 0..8 {
                s[k] += x[k] * y[k];
            }
        }
        let mut total = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
        for (&x, &y) in rest_a.iter().zip(rest_b) {
            total += x * y;
        }
        total
    }
}

/// `Σ term(i)` for `i < n` in the order of [`Op::dot`]: below 8 terms, one running sum from the
/// first term; from 8 on, eight running sums, sum k starting at term k and taking the terms
/// `i ≡ k (mod 8)` of the whole blocks of eight, added as `((s₀+s₁)+(s₂+s₃))+((s₄+s₅)+(s₆+s₇))`,
/// then the terms after the last whole block, one by one. The empty sum is 0.
///
/// One running sum waits for each add in turn; eight independent ones overlap, and the
/// compiler packs them into vector registers, so a long `f64` dot runs several times faster.
/// Each mode calls this with its own terms (the tape for a dot node's value, the replay when it
/// evaluates one again), so every mode adds in the same order.
///
/// ```
/// let t: Vec<f64> = (1..=18).map(f64::from).collect();
/// let s = shared_ops::dot_order(t.len(), |i| t[i]);
/// let sums: Vec<f64> = (0..8).map(|k| t[k] + t[k + 8]).collect();
/// let blocks = ((sums[0] + sums[1]) + (sums[2] + sums[3])) + ((sums[4] + sums[5]) + (sums[6] + sums[7]));
/// assert_eq!(s.to_bits(), (blocks + t[16] + t[17]).to_bits());
/// ```
#[inline(always)]
pub fn dot_order<T: Op>(n: usize, mut term: impl FnMut(usize) -> T) -> T {
    if n < 8 {
        let mut s = if n == 0 { T::zero() } else { term(0) };
        for i in 1..n {
            s += term(i);
        }
        return s;
    }
    let mut s: [T; 8] = core::array::from_fn(&mut term);
    let whole = n / 8 * 8;
    let mut i = 8;
    while i < whole {
        for (k, s) in s.iter_mut().enumerate() {
            *s += term(i + k);
        }
        i += 8;
    }
    let mut total = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
    for i in whole..n {
        total += term(i);
    }
    total
}

/// The length check of [`Op::dot`], shared by its implementations.
#[doc(hidden)]
#[track_caller]
#[inline]
pub fn check_dot(a: usize, b: usize) {
    if a != b {
        dot_lengths(a, b)
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn dot_lengths(a: usize, b: usize) -> ! {
    panic!("Op::dot of slices of lengths {a} and {b}: they must have the same length")
}

macro_rules! plain_float {
    ($($t:ty),*) => {$(
        /// The plain float: the rule's value, nothing else (its partials are dead code).
        impl Op for $t {
            const SPARSE_TANGENTS: bool = false;
            #[inline(always)]
            fn constant(c: f64) -> Self {
                c as $t
            }
            #[inline(always)]
            fn value(&self) -> f64 {
                *self as f64
            }
            #[inline(always)]
            fn is_structural_zero(&self) -> bool {
                *self == 0.0
            }
            #[inline(always)]
            fn apply1<R: Unary>(self, rule: R) -> Self {
                rule.eval(self).0
            }
            #[inline(always)]
            fn apply2<R: Binary>(self, other: Self, rule: R) -> Self {
                rule.eval(self, other).0
            }
        }
    )*};
}
plain_float!(f64);

/// A one-argument rule: value and derivative at `x`, and optionally its Taylor recurrence.
///
/// `Copy` so that rules with parameters (such as [`Powi`](crate::rules::Powi)) travel by value; `Send + Sync +
/// 'static` (plain data) so that a replayable tape can keep the rule and evaluate it again.
///
/// A derivative whose formula depends on the argument (a form that is accurate only beyond
/// some bound) picks it by comparing `x` itself (`x < T::constant(0.5)`), not its
/// [`value`](Op::value): where the rule runs on tape variables (reverse over forward) a
/// comparison is kept as a branch guard, so a recording re-evaluated on the other side of the
/// bound records afresh instead of keeping a formula that is wrong there.
///
/// ```
/// use shared_ops::{rules::Tanh, Unary};
/// let (y, dy) = Tanh.eval(0.5_f64);
/// assert!((dy - (1.0 - y * y)).abs() < 1e-16);
/// ```
///
/// # Taylor mode
///
/// A Taylor number (`forward::Taylor<T, N>`) carries N coefficients of a curve `x(t)` and asks
/// [`taylor`](Unary::taylor) for the coefficients of `f(x(t))`. Every built-in rule answers with
/// a recurrence of [`series`](crate::series), O(N²). A user's rule may leave the provided `None`: the Taylor
/// number then evaluates [`eval`](Unary::eval) *on the series itself*, which gives the series
/// `d(t)` of `f'(x(t))`, and integrates it: `y₀ = f(x₀)`, `y_k = (1/k) Σ_{j=1..k} j·x_j·d_{k−j}`
/// ([`series::integrate`](crate::series::integrate)). That needs what nested duals need: the derivative written with `Op`
/// operations. Only the order-0 coefficient of the value is used, so the value may be computed
/// any way (even from `x.value()`), but `eval` must not apply the rule itself to its argument
/// (that would recurse). Each operation inside the derivative costs O(N²) in turn.
///
/// ```
/// use shared_ops::{Op, Unary};
///
/// /// softplus, without a recurrence of its own: Taylor numbers integrate its derivative.
/// #[derive(Clone, Copy)]
/// struct Softplus;
/// impl Unary for Softplus {
///     const NAME: &'static str = "softplus";
///     fn eval<T: Op>(self, x: T) -> (T, T) {
///         (x.exp().ln_1p(), (T::one() + (-x).exp()).recip())
///     }
/// }
/// assert!(Softplus.taylor(&[0.0_f64, 1.0]).is_none());
/// ```
pub trait Unary: Copy + Send + Sync + 'static {
    /// Name shown in traces and graph exports.
    const NAME: &'static str;
    /// Whether the derivative is +1 or −1 whatever the argument (`neg`, `fract`). A tangent
    /// then passes through unchanged or negated, and forward mode skips the test of the
    /// structural-zero convention (see [`Op::has_nan`]). Leave it `false` unless that holds.
    const UNIT_PARTIALS: bool = false;
    /// Whether the rule is piecewise constant (`floor`, `ceil`, `round`, `trunc`, `signum`):
    /// its derivative is 0 wherever it exists, so its result depends on no input to first
    /// order. Sparsity detection then gives the result an empty set, and a plain tape records
    /// it as a constant (a replayable or traced tape keeps the node, to re-evaluate or show it).
    /// Leave it `false` unless that holds.
    ///
    /// ```
    /// use shared_ops::{rules::{Floor, Sin}, Unary};
    /// assert!(Floor::FLAT && !Sin::FLAT);
    /// ```
    const FLAT: bool = false;
    /// Returns `(f(x), f'(x))`.
    fn eval<T: Op>(self, x: T) -> (T, T);

    /// The Taylor coefficients of `f(x(t))` from those of `x(t)`, or `None` to let the Taylor
    /// number integrate the derivative series (see [Taylor mode](Unary#taylor-mode)).
    ///
    /// ```
    /// use shared_ops::{rules::Exp, Unary};
    /// // e^t = 1 + t + t²/2.
    /// assert_eq!(Exp.taylor(&[0.0_f64, 1.0, 0.0]), Some([1.0, 1.0, 0.5]));
    /// ```
    fn taylor<T: Op, const N: usize>(self, x: &[T; N]) -> Option<[T; N]> {
        let _ = x;
        None
    }

    /// The rule at many points: `y[i] = f(x[i])` and, when `d` is given, `d[i] = f'(x[i])`.
    /// Array code calls this (the `tensor` crate applies every rule through it).
    ///
    /// The provided method calls [`eval`](Unary::eval) point by point. A row of the table may
    /// name a kernel that the compiler vectorises for `f64` slices (`tanh` does, in
    /// `rules/slices.rs`): its values and partials then meet the table's accuracy,
    /// within 2 and 4 ulps of the exact ones, but need not equal `eval`'s bit for bit, whose
    /// values come from the platform's `libm`.
    ///
    /// ```
    /// use shared_ops::{rules::Tanh, Unary};
    ///
    /// let x = [-30.0_f64, -0.5, 0.0, 0.25, 3.0];
    /// let (mut y, mut d) = ([0.0; 5], [0.0; 5]);
    /// Tanh.eval_slice(&x, &mut y, Some(&mut d));
    /// for i in 0..5 {
    ///     let (v, p) = Tanh.eval(x[i]);
    ///     assert!((y[i] - v).abs() <= 2.0 * f64::EPSILON * v.abs());
    ///     assert!((d[i] - p).abs() <= 4.0 * f64::EPSILON * p);
    /// }
    /// ```
    ///
    /// # Panics
    ///
    /// If `y` or `d` is not as long as `x`.
    fn eval_slice<T: Op>(self, x: &[T], y: &mut [T], d: Option<&mut [T]>) {
        each(self, x, y, d);
    }

    /// [`eval_slice`](Unary::eval_slice) for `f32` slices (`f32` is no [`Op`]: it carries no
    /// `f64` constant exactly): each point by the rule in `f64`, rounded, or by a row's kernel
    /// for `f32` (`tanh`'s), within an `f32` ulp.
    ///
    /// ```
    /// use shared_ops::{rules::Exp, Unary};
    /// let (mut y, mut d) = ([0.0_f32; 2], [0.0_f32; 2]);
    /// Exp.eval_slice_f32(&[0.0, 1.0], &mut y, Some(&mut d));
    /// assert_eq!((y, d), ([1.0, 1.0_f64.exp() as f32], [1.0, 1.0_f64.exp() as f32]));
    /// ```
    ///
    /// # Panics
    ///
    /// If `y` or `d` is not as long as `x`.
    fn eval_slice_f32(self, x: &[f32], y: &mut [f32], d: Option<&mut [f32]>) {
        check_lengths(x.len(), y.len(), d.as_deref().map(<[f32]>::len));
        match d {
            Some(d) => {
                for ((x, y), d) in x.iter().zip(y.iter_mut()).zip(d.iter_mut()) {
                    let (v, p) = self.eval(f64::from(*x));
                    (*y, *d) = (v as f32, p as f32);
                }
            }
            None => {
                for (x, y) in x.iter().zip(y.iter_mut()) {
                    *y = self.eval(f64::from(*x)).0 as f32;
                }
            }
        }
    }
}

/// [`Unary::eval_slice`] point by point, the lengths checked first.
pub(crate) fn each<R: Unary, T: Op>(rule: R, x: &[T], y: &mut [T], d: Option<&mut [T]>) {
    check_lengths(x.len(), y.len(), d.as_deref().map(<[T]>::len));
    match d {
        Some(d) => {
            for ((x, y), d) in x.iter().zip(y.iter_mut()).zip(d.iter_mut()) {
                (*y, *d) = rule.eval(*x);
            }
        }
        None => {
            for (x, y) in x.iter().zip(y.iter_mut()) {
                *y = rule.eval(*x).0;
            }
        }
    }
}

#[track_caller]
pub(crate) fn check_lengths(x: usize, y: usize, d: Option<usize>) {
    assert!(
        y == x && d.is_none_or(|d| d == x),
        "eval_slice: {x} points, but {y} values and {} partials",
        d.map_or("no".to_string(), |d| d.to_string())
    );
}

/// A two-argument rule: value and both partial derivatives at `(a, b)`.
///
/// ```
/// use shared_ops::{rules::Mul, Binary};
/// assert_eq!(Mul.eval(2.0_f64, 3.0), (6.0, 3.0, 2.0));
/// ```
pub trait Binary: Copy + Send + Sync + 'static {
    /// Name shown in traces and graph exports.
    const NAME: &'static str;
    /// Whether both partials are +1 or −1 whatever the arguments (`+`, `−`), as
    /// [`Unary::UNIT_PARTIALS`].
    const UNIT_PARTIALS: bool = false;
    /// Whether the rule is piecewise constant in both arguments, as [`Unary::FLAT`] (no
    /// built-in binary rule is).
    const FLAT: bool = false;
    /// Returns `(f(a, b), ∂f/∂a, ∂f/∂b)`.
    fn eval<T: Op>(self, a: T, b: T) -> (T, T, T);

    /// The Taylor coefficients of `f(a(t), b(t))`, or `None` to let the Taylor number evaluate
    /// [`eval`](Binary::eval) on the series and integrate `y' = ∂f/∂a·a' + ∂f/∂b·b'`
    /// ([`series::integrate2`](crate::series::integrate2)), as for [`Unary`].
    ///
    /// ```
    /// use shared_ops::{rules::Mul, Binary};
    /// // (1 + t)(2 + t) = 2 + 3t + t².
    /// assert_eq!(Mul.taylor(&[1.0_f64, 1.0, 0.0], &[2.0, 1.0, 0.0]), Some([2.0, 3.0, 1.0]));
    /// ```
    fn taylor<T: Op, const N: usize>(self, a: &[T; N], b: &[T; N]) -> Option<[T; N]> {
        let _ = (a, b);
        None
    }
}
