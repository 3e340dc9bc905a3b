//! Arithmetic with `f64` constants: `x * c`, `x + c`, `x - c` and `x / c` give the values and
//! derivatives of the same with `T::constant(c)` in every forward number type, special values
//! included (only the sign of a zero may differ), and a lane of `DualVec` gives what a
//! single-tangent `Dual` gives.

use forward::{Dual, DualVec, Float, Taylor};
use proptest::prelude::*;
use shared_ops::Op;

fn special() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.0),
        Just(-0.0),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(f64::NAN),
        Just(1.0),
        Just(-2.5),
        -1e3..1e3_f64,
    ]
}

fn finite() -> impl Strategy<Value = f64> {
    prop_oneof![Just(0.0), Just(-0.0), Just(1.0), -1e3..1e3_f64]
}

/// Equal as numbers (a zero of either sign), or both NaN.
fn agree(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x == y || (x.is_nan() && y.is_nan()))
}

fn dual(d: Dual<f64>) -> [f64; 2] {
    [d.primal, d.tangent]
}

fn lanes(d: DualVec<f64, 3>) -> [f64; 4] {
    [d.primal, d.tangent[0], d.tangent[1], d.tangent[2]]
}

fn nested(d: Dual<Dual<f64>>) -> [f64; 4] {
    [
        d.primal.primal,
        d.primal.tangent,
        d.tangent.primal,
        d.tangent.tangent,
    ]
}

/// The four forms with an `f64` constant against their `Op::constant` forms.
fn forms<T: Op>(x: T, c: f64) -> [(T, T); 4] {
    [
        (x * c, x * T::constant(c)),
        (x + c, x + T::constant(c)),
        (x - c, x - T::constant(c)),
        (x / c, x / T::constant(c)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// The checked dual and its lanes, at every special value of the primal, the tangents and
    /// the constant: the structural-zero convention holds (`0·∞` is 0).
    #[test]
    fn duals_and_lanes_equal_the_constant_forms(
        p in special(),
        t in prop::array::uniform3(special()),
        c in special(),
    ) {
        let v = DualVec::new(p, t);
        for (passive, constant) in forms(v, c) {
            prop_assert!(agree(&lanes(passive), &lanes(constant)), "{passive:?} vs {constant:?} (c = {c})");
        }
        for (l, &tl) in t.iter().enumerate() {
            let d = Dual::new(p, tl);
            let by_lane = forms(v, c).map(|(passive, _)| lanes(passive));
            for ((passive, constant), lane) in forms(d, c).into_iter().zip(by_lane) {
                prop_assert!(agree(&dual(passive), &dual(constant)), "{passive:?} vs {constant:?} (c = {c})");
                prop_assert!(agree(&dual(passive), &[lane[0], lane[l + 1]]), "lane {l}: {lane:?} vs {passive:?}");
            }
        }
    }

    /// The unchecked dual computes the same tangent, or a NaN where the checked one has the
    /// convention's zero (the NaN that makes `jacobian::jvp` evaluate again with the check).
    #[test]
    fn unchecked_duals_agree_or_signal(p in special(), t in special(), c in special()) {
        let checked = Dual::new(p, t);
        let unchecked = Dual::unchecked(p, t);
        for (k, ((mine, _), (want, _))) in forms(unchecked, c).into_iter().zip(forms(checked, c)).enumerate() {
            prop_assert!(agree(&[mine.primal], &[want.primal]), "form {k}");
            prop_assert!(mine.tangent.is_nan() || agree(&[mine.tangent], &[want.tangent]), "form {k}: {mine:?} vs {want:?}");
        }
    }

    /// Second order: a dual of duals scales both levels, as the product with a constant does.
    #[test]
    fn nested_duals_equal_the_constant_forms(
        x in prop::array::uniform4(finite()),
        c in finite(),
    ) {
        let d = Dual::new(Dual::new(x[0], x[1]), Dual::new(x[2], x[3]));
        for (passive, constant) in forms(d, c) {
            prop_assert!(agree(&nested(passive), &nested(constant)), "{passive:?} vs {constant:?} (c = {c})");
        }
    }

    /// Taylor coefficients scale, shift and divide as the series recurrences give them, for
    /// finite coefficients (the recurrence of a product meets `∞·0` where scaling does not).
    #[test]
    fn taylor_series_equal_the_constant_forms(
        x in prop::array::uniform4(finite()),
        c in special(),
    ) {
        let s = Taylor::new(x);
        for (passive, constant) in forms(s, c) {
            prop_assert!(agree(&passive.c, &constant.c), "{passive:?} vs {constant:?} (c = {c})");
        }
    }
}

/// The kink the convention exists for: √x at 0 has an infinite slope, and a constant 0 times
/// it contributes nothing in a checked dual; an unchecked one leaves the NaN that asks for
/// the check.
#[test]
fn a_zero_constant_stops_an_infinite_slope() {
    let x = Dual::new(0.0_f64, 1.0).sqrt();
    assert_eq!(x.tangent, f64::INFINITY);
    assert_eq!(dual(x * 0.0), [0.0, 0.0]);
    let u = Dual::unchecked(0.0_f64, 1.0);
    assert!((u.sqrt() * 0.0).tangent.is_nan());
    let v = DualVec::new(0.0_f64, [1.0, 0.0, 2.0]).sqrt();
    assert_eq!(lanes(v * 0.0), [0.0; 4]);
    // A finite nonzero constant keeps the infinite slope, scaled.
    assert_eq!(dual(x * -2.0), [-0.0, f64::NEG_INFINITY]);
}

/// Exact values: d/dx of 3x² + 1 − x at x = 2 is 6x − 1 = 11; the second derivative is 6.
#[test]
fn exact_derivatives_through_constants() {
    let f = |x: Dual<Dual<f64>>| x * x * 3.0 + 1.0 - x;
    let g = |x: Dual<Dual<f64>>| 3.0 * (x * x) + (1.0 - x);
    let x = Dual::new(Dual::new(2.0, 1.0), Dual::new(1.0, 0.0));
    for y in [f(x), g(x)] {
        assert_eq!(nested(y), [11.0, 11.0, 11.0, 6.0]);
    }
}
