//! The structural-zero convention and the kink conventions give the same Jacobian in both modes.

use jacobian::{Function, Mode, Op, jacobian_with};

/// Jacobians from both modes, compared exactly (NaN equals NaN here, and the sign of a zero is
/// not compared: forward mode may give −0 where reverse mode gives +0).
fn both<F: Function + Sync>(f: &F, x: &[f64]) -> Vec<f64> {
    let fwd = jacobian_with(f, x, Mode::Forward).unwrap();
    let rev = jacobian_with(f, x, Mode::Reverse).unwrap();
    for (a, b) in fwd.matrix.iter().zip(rev.matrix.iter()) {
        assert!(
            a == b || (a.is_nan() && b.is_nan()),
            "forward {a} vs reverse {b}"
        );
    }
    fwd.matrix.transpose().as_slice().to_vec() // row-major
}

macro_rules! function {
    ($name:ident, |$x:ident| $body:expr) => {
        struct $name;
        impl Function for $name {
            fn eval<T: Op>(&self, $x: &[T]) -> Vec<T> {
                $body
            }
        }
    };
}

function!(SqrtAtZero, |x| vec![
    x[0].sqrt(),
    x[1],
    T::constant(0.0).sqrt() * x[1]
]);
function!(PowfNegBase, |x| vec![
    x[0].powf(T::constant(2.0)),
    T::constant(0.0).powf(x[1])
]);
function!(Atan2Origin, |x| vec![
    x[0].atan2(T::zero()) + x[1],
    T::zero().atan2(T::zero()) * x[1]
]);
function!(Kinks, |x| vec![
    x[0].abs(),
    x[0].max(x[1]),
    x[0].min(x[1]),
    x[0].max(x[0]),
    x[0].hypot(x[1])
]);
function!(ZeroTimesInf, |x| vec![
    x[0].abs().sqrt(),
    (x[0] * x[0]).sqrt()
]);

#[test]
fn sqrt_at_zero() {
    // Column 1 never sees the ∞ of sqrt'(0): x₁ has a zero tangent there (forward) and the
    // output x₁ gives the sqrt node a zero adjoint (reverse).
    assert_eq!(
        both(&SqrtAtZero, &[0.0, 2.0]),
        vec![f64::INFINITY, 0.0, 0.0, 1.0, 0.0, 0.0]
    );
}

#[test]
fn powf_with_a_non_positive_constant_part() {
    // x^2 at x = −3: ∂/∂b = y·ln(−3) is NaN, but b is a constant. 0^x at x = 2: y = 0 so ∂/∂b = 0.
    assert_eq!(both(&PowfNegBase, &[-3.0, 2.0]), vec![-6.0, 0.0, 0.0, 0.0]);
    assert_eq!(both(&PowfNegBase, &[0.0, 2.0]), vec![0.0, 0.0, 0.0, 0.0]);
}

#[test]
fn atan2_at_the_origin() {
    // The variable's own partial at the origin is NaN (atan2 jumps there), but it does not leak
    // into x₁'s column; atan2 of two constants is a constant.
    let j = both(&Atan2Origin, &[0.0, 1.0]);
    assert!(j[0].is_nan());
    assert_eq!(&j[1..], &[1.0, 0.0, 0.0]);
}

#[test]
fn kinks_and_ties() {
    // abs'(0) = 0; max and min split a tie ½/½; max(x, x) = x has derivative 1; hypot'(0, 0) = 0.
    let j = both(&Kinks, &[0.0, 0.0]);
    assert_eq!(j, vec![0.0, 0.0, 0.5, 0.5, 0.5, 0.5, 1.0, 0.0, 0.0, 0.0]);
    let j = both(&Kinks, &[-1.0, 2.0]);
    assert_eq!(&j[..6], &[-1.0, 0.0, 0.0, 1.0, 1.0, 0.0]);
}

#[test]
fn zero_partial_stops_an_infinite_factor() {
    // √|x| at 0: abs'(0) = 0 times sqrt'(0) = ∞ gives 0 in both modes (the convention), and
    // √(x·x) at 0: mul' = 0 gives 0 as well.
    assert_eq!(both(&ZeroTimesInf, &[0.0]), vec![0.0, 0.0]);
}

/// `jacobian::jvp` sweeps without the per-operation NaN test and sweeps again with it when a
/// tangent comes out NaN: its J·v must be the checked `forward::Dual` sweep's, bit for bit
/// (NaN equal to NaN). Also returns whether the unchecked sweep alone left a NaN, so that a
/// case can show that it needs the second sweep.
fn jvp_as_checked<F: Function + Sync>(f: &F, x: &[f64], v: &[f64]) -> (Vec<f64>, bool) {
    let (y, jv) = jacobian::jvp(f, x, v).unwrap();
    let (y_checked, jv_checked) = forward::jvp(|xs| f.eval(xs), x, v).unwrap();
    let same = |a: &f64, b: &f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
    assert!(y.iter().zip(&y_checked).all(|(a, b)| same(a, b)));
    for (a, b) in jv.iter().zip(&jv_checked) {
        assert!(same(a, b), "J·v {a} against the checked sweep's {b}");
    }
    let unchecked: Vec<forward::Dual<f64, forward::Unchecked>> = (x.iter().zip(v))
        .map(|(&primal, &tangent)| forward::Dual::unchecked(primal, tangent))
        .collect();
    let nan = f.eval(&unchecked).iter().any(|y| y.tangent.is_nan());
    (jv, nan)
}

#[test]
fn jvp_without_the_per_operation_test_keeps_the_convention() {
    // Each case leaves a 0·∞ NaN in the unchecked sweep, which the checked sweep replaces.
    assert_eq!(
        jvp_as_checked(&SqrtAtZero, &[0.0, 2.0], &[0.0, 1.0]),
        (vec![0.0, 1.0, 0.0], true)
    );
    assert_eq!(
        jvp_as_checked(&ZeroTimesInf, &[0.0], &[1.0]),
        (vec![0.0, 0.0], true)
    );
    assert_eq!(
        jvp_as_checked(&PowfNegBase, &[-3.0, 2.0], &[1.0, 0.0]),
        (vec![-6.0, 0.0], true)
    );
    // A NaN the convention keeps (atan2's jump at the origin) stays NaN.
    let (jv, _) = jvp_as_checked(&Atan2Origin, &[0.0, 1.0], &[1.0, 0.0]);
    assert!(jv[0].is_nan() && jv[1] == 0.0);
    // No NaN anywhere: one sweep, the same bits as the checked one.
    let (jv, nan) = jvp_as_checked(&Kinks, &[-1.0, 2.0], &[1.0, 1.0]);
    assert!(!nan);
    assert_eq!(&jv[..4], &[-1.0, 1.0, 1.0, 1.0]);
    assert!((jv[4] - 1.0 / 5.0_f64.sqrt()).abs() < 1e-15); // (−1 + 2)/√5
}

/// Σ xᵢ², noting how far past a cache line its inputs start (the largest seen).
struct SumOfSquares(std::cell::Cell<usize>);

impl Function for SumOfSquares {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        self.0.set(self.0.get().max(x.as_ptr() as usize % 64));
        vec![x.iter().fold(T::constant(0.0), |s, &xi| s + xi * xi)]
    }
}

#[test]
fn jvp_duals_start_on_a_cache_line() {
    // Sizes below and above glibc's `mmap` threshold (128 KiB: 8 192 duals), growing and
    // shrinking the kept buffer; the values are the plain loop's, bit for bit.
    for n in [1, 3, 100, 10_000, 2, 9_000, 100_000, 7] {
        let x: Vec<f64> = (0..n).map(|i| 1.0 + 0.25 * (i % 7) as f64).collect();
        let v: Vec<f64> = (0..n).map(|i| 0.5 - 0.125 * (i % 5) as f64).collect();
        let f = SumOfSquares(std::cell::Cell::new(0));
        let (y, jv) = jacobian::jvp(&f, &x, &v).unwrap();
        assert_eq!(
            f.0.get(),
            0,
            "n = {n}: the duals start {} bytes past a line",
            f.0.get()
        );
        let pairs = x.iter().zip(&v);
        let want_y = x.iter().fold(0.0, |s, &xi| s + xi * xi);
        let want_jv = pairs.fold(0.0, |s, (&xi, &vi)| s + (vi * xi + xi * vi));
        assert_eq!(
            (y[0].to_bits(), jv[0].to_bits()),
            (want_y.to_bits(), want_jv.to_bits())
        );
    }
}
