//! Known series to order 10 (11 coefficients), at 0 and at a point where the closed form is
//! known.

use forward::{Float, Taylor};

/// Coefficient k of the known series against the computed one, 1e-12 relative to `scale[k]`
/// (the size of that coefficient; it differs from |exact| only where that is 0).
#[track_caller]
fn series_is(
    what: &str,
    got: [f64; 11],
    exact: impl Fn(usize) -> f64,
    scale: impl Fn(usize) -> f64,
) {
    for (k, &g) in got.iter().enumerate() {
        let (e, s) = (exact(k), scale(k).max(exact(k).abs()));
        assert!(
            (g - e).abs() <= 1e-12 * s,
            "{what}: coefficient {k} is {g}, the series has {e}"
        );
    }
}

type T11 = Taylor<f64, 11>;

/// k! as a float.
pub fn fact(k: usize) -> f64 {
    (1..=k).map(|i| i as f64).product()
}

/// binom(½, k), the coefficients of √(1 + t).
fn binom_half(k: usize) -> f64 {
    (0..k).map(|i| (0.5 - i as f64) / (i + 1) as f64).product()
}

#[test]
fn known_series_at_zero_to_order_10() {
    let t = T11::variable(0.0, 1.0);
    let zero = |_| 0.0;
    series_is("exp", t.exp().c, |k| 1.0 / fact(k), zero);
    let sin = |k: usize| {
        if k % 2 == 1 {
            (-1.0_f64).powi((k / 2) as i32) / fact(k)
        } else {
            0.0
        }
    };
    let cos = |k: usize| {
        if k.is_multiple_of(2) {
            (-1.0_f64).powi((k / 2) as i32) / fact(k)
        } else {
            0.0
        }
    };
    series_is("sin", t.sin().c, sin, zero);
    series_is("cos", t.cos().c, cos, zero);
    series_is("1/(1−t)", (T11::from(1.0) - t).recip().c, |_| 1.0, zero);
    series_is(
        "1/(1−t) by division",
        (T11::from(1.0) / (T11::from(1.0) - t)).c,
        |_| 1.0,
        zero,
    );
    let atan = |k: usize| {
        if k % 2 == 1 {
            (-1.0_f64).powi((k / 2) as i32) / k as f64
        } else {
            0.0
        }
    };
    series_is("atan", t.atan().c, atan, zero);
    let ln1p = |k: usize| {
        if k == 0 {
            0.0
        } else {
            -(-1.0_f64).powi(k as i32) / k as f64
        }
    };
    series_is("ln(1 + t)", t.ln_1p().c, ln1p, zero);
    series_is("ln(1 + t) by ln", (T11::from(1.0) + t).ln().c, ln1p, zero);
    series_is("√(1 + t)", (T11::from(1.0) + t).sqrt().c, binom_half, zero);
    series_is(
        "(1 + t)^½",
        (T11::from(1.0) + t).powf(T11::from(0.5)).c,
        binom_half,
        zero,
    );
    let tan = [
        0.0,
        1.0,
        0.0,
        1.0 / 3.0,
        0.0,
        2.0 / 15.0,
        0.0,
        17.0 / 315.0,
        0.0,
        62.0 / 2835.0,
        0.0,
    ];
    series_is("tan", t.tan().c, |k| tan[k], zero);
}

/// The polynomial P_k with tan⁽ᵏ⁾ = P_k(tan): P₀ = y, P_{k+1} = (1 + y²)·P_k'.
fn tan_derivative_polynomial(k: usize) -> Vec<f64> {
    let mut p = vec![0.0, 1.0];
    for _ in 0..k {
        let dp: Vec<f64> = (1..p.len()).map(|i| i as f64 * p[i]).collect();
        let mut next = vec![0.0; dp.len() + 2];
        for (i, &c) in dp.iter().enumerate() {
            next[i] += c;
            next[i + 2] += c;
        }
        p = next;
    }
    p
}

#[test]
fn known_series_away_from_zero_to_order_10() {
    let e = 1.0_f64.exp();
    series_is(
        "exp at 1",
        T11::variable(1.0, 1.0).exp().c,
        |k| e / fact(k),
        |_| 0.0,
    );
    let x0 = 0.8_f64;
    let shifted =
        |k: usize, f: fn(f64) -> f64| f(x0 + k as f64 * core::f64::consts::FRAC_PI_2) / fact(k);
    let t = T11::variable(x0, 1.0);
    series_is("sin at 0.8", t.sin().c, |k| shifted(k, f64::sin), |_| 0.0);
    series_is("cos at 0.8", t.cos().c, |k| shifted(k, f64::cos), |_| 0.0);
    // 1/(1 − x) at ½: 1/(½ − t) = Σ 2^{k+1} tᵏ.
    let h = T11::variable(0.5, 1.0);
    series_is(
        "1/(1 − x) at ½",
        (T11::from(1.0) - h).recip().c,
        |k| 2.0_f64.powi(k as i32 + 1),
        |_| 0.0,
    );
    // ln(1 + x) at 1: ln(2 + t) = ln 2 + Σ (−1)^{k+1} tᵏ/(k·2ᵏ).
    let ln = |k: usize| match k {
        0 => 2.0_f64.ln(),
        _ => -(-0.5_f64).powi(k as i32) / k as f64,
    };
    series_is(
        "ln(1 + x) at 1",
        T11::variable(1.0, 1.0).ln_1p().c,
        ln,
        |_| 0.0,
    );
    // √(1 + x) at 3: √(4 + t) = 2·Σ binom(½, k)(t/4)ᵏ.
    let sqrt = |k: usize| 2.0 * binom_half(k) / 4.0_f64.powi(k as i32);
    series_is(
        "√(1 + x) at 3",
        (T11::from(1.0) + T11::variable(3.0, 1.0)).sqrt().c,
        sqrt,
        |_| 0.0,
    );
    // atan at 1: π/4 + Σ_{m≥1} (−1)^{m−1} 2^{−m/2} sin(mπ/4) tᵐ/m (zero at m = 4, 8).
    let atan = |m: usize| match m {
        0 => core::f64::consts::FRAC_PI_4,
        _ => {
            let m = m as f64;
            -(-1.0_f64).powf(m) * 2.0_f64.powf(-m / 2.0) * (m * core::f64::consts::FRAC_PI_4).sin()
                / m
        }
    };
    let atan_size = |m: usize| 2.0_f64.powf(-(m as f64) / 2.0) / m.max(1) as f64;
    series_is(
        "atan at 1",
        T11::variable(1.0, 1.0).atan().c,
        atan,
        atan_size,
    );
    // tan at 0.5: tan⁽ᵏ⁾ = P_k(tan 0.5).
    let y = 0.5_f64.tan();
    let tan = |k: usize| {
        let p = tan_derivative_polynomial(k);
        p.iter().rev().fold(0.0, |s, c| s * y + c) / fact(k)
    };
    series_is("tan at 0.5", T11::variable(0.5, 1.0).tan().c, tan, |_| 0.0);
}

/// Two ways to the same series agree to 1e-12 relative to its largest coefficient.
#[track_caller]
fn same(what: &str, a: T11, b: T11) {
    let scale = b.c.iter().fold(1.0_f64, |m, c| m.max(c.abs()));
    for k in 0..11 {
        assert!(
            (a.c[k] - b.c[k]).abs() <= 1e-12 * scale,
            "{what}, coefficient {k}: {} vs {}\n{:?}\n{:?}",
            a.c[k],
            b.c[k],
            a.c,
            b.c
        );
    }
}

/// The rows not covered by a closed form above, to order 10 along a curved path (every
/// coefficient non-zero), through identities with rows that are.
#[test]
fn identities_to_order_10() {
    let x = T11::new([
        0.3, 0.7, -0.4, 0.2, 0.1, -0.05, 0.03, 0.02, -0.01, 0.005, 0.002,
    ]);
    let y = T11::new([
        1.6, -0.3, 0.5, 0.1, -0.2, 0.04, 0.01, -0.03, 0.02, 0.001, -0.004,
    ]);
    let one = T11::from(1.0);
    let two = T11::from(2.0);
    same("sinh", x.sinh(), (x.exp() - (-x).exp()) / two);
    same("cosh", x.cosh(), (x.exp() + (-x).exp()) / two);
    same("tanh", x.tanh(), x.sinh() / x.cosh());
    same(
        "sigmoid",
        shared_ops::Op::apply1(x, shared_ops::rules::Sigmoid),
        one / (one + (-x).exp()),
    );
    same("exp2", x.exp2(), (x * T11::from(2.0_f64.ln())).exp());
    same("exp_m1", x.exp_m1(), x.exp() - one);
    same("log2", y.log2(), y.ln() / T11::from(2.0_f64.ln()));
    same("log10", y.log10(), y.ln() / T11::from(10.0_f64.ln()));
    same("asin", x.sin().asin(), x);
    same(
        "acos",
        x.acos(),
        T11::from(core::f64::consts::FRAC_PI_2) - x.asin(),
    );
    same("atanh", x.tanh().atanh(), x);
    same("asinh", x.sinh().asinh(), x);
    same("acosh", y.cosh().acosh(), y);
    same("cbrt", x.cbrt().powi(3), x);
    same("cbrt of a negative", (-y).cbrt(), -(y.cbrt()));
    same("powi", y.powi(5), y * y * y * y * y);
    same("powi negative", y.powi(-3), one / (y * y * y));
    same("powf", y.powf(x), (x * y.ln()).exp());
    same("log", y.log(x + two), y.ln() / (x + two).ln());
    same("atan2", x.atan2(y), (x / y).atan());
    same("hypot", x.hypot(y), (x * x + y * y).sqrt());
    same("mul_add", x.mul_add(y, x), x * y + x);
    same("recip", y.recip(), one / y);
    same("cos² + sin²", x.cos() * x.cos() + x.sin() * x.sin(), one);
    same("tan", x.tan(), x.sin() / x.cos());
}
