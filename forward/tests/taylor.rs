//! Taylor mode against nested duals (every rule row here, generated programs in
//! [`programs`]) and against known series to order 10 ([`known_series`]); the fallback for user
//! rules; the driver; the number type.

#[path = "taylor/known_series.rs"]
mod known_series;
#[path = "taylor/programs.rs"]
mod programs;

use known_series::fact;

use forward::{Dual, Float, Taylor, taylor};
use shared_ops::num_traits::Zero;
use shared_ops::rules;
use shared_ops::{Binary, Op, Unary};

/// Four nested duals: the tangent of each level seeded with the same direction gives the
/// derivatives of t ↦ f(x + t·v) up to order 4.
type D4 = Dual<Dual<Dual<Dual<f64>>>>;

/// `x + v·(ε₁ + ε₂ + ε₃ + ε₄)`.
fn seed4(x: f64, v: f64) -> D4 {
    let d1 = Dual::new(x, v);
    let d2 = Dual::new(d1, Dual::constant(v));
    let d3 = Dual::new(d2, Dual::constant(v));
    Dual::new(d3, Dual::constant(v))
}

/// The derivatives of order 0..=4: the coefficients of 1, ε₄, ε₄ε₃, ε₄ε₃ε₂, ε₄ε₃ε₂ε₁.
fn orders4(y: D4) -> [f64; 5] {
    [
        y.primal.primal.primal.primal,
        y.tangent.primal.primal.primal,
        y.tangent.tangent.primal.primal,
        y.tangent.tangent.tangent.primal,
        y.tangent.tangent.tangent.tangent,
    ]
}

/// Close to 1e-12 relative (scaled by max(|a|, |b|, 1)), or the same non-finite value.
fn close(a: f64, b: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan()) || (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0)
}

/// Taylor (5 coefficients) and nested duals of the same function, order by order. Where the
/// duals are finite the series must agree; where they are not, the series must not be either.
#[track_caller]
fn agree(what: &str, t: [f64; 5], d: [f64; 5]) {
    for k in 0..5 {
        let ok = if d[k].is_finite() {
            close(t[k], d[k])
        } else {
            !t[k].is_finite()
        };
        assert!(ok, "{what}, order {k}: Taylor {t:?}, nested duals {d:?}");
    }
}

fn check1<R: Unary>(rule: R, x: f64, v: f64) {
    let t = Taylor::<f64, 5>::variable(x, v).apply1(rule).derivatives();
    let d = orders4(seed4(x, v).apply1(rule));
    agree(&format!("{} at {x} along {v}", R::NAME), t, d);
}

fn check2<R: Binary>(rule: R, (a, b): (f64, f64), (va, vb): (f64, f64)) {
    let ta = Taylor::<f64, 5>::variable(a, va);
    let tb = Taylor::<f64, 5>::variable(b, vb);
    let t = ta.apply2(tb, rule).derivatives();
    let d = orders4(seed4(a, va).apply2(seed4(b, vb), rule));
    agree(&format!("{} at ({a}, {b})", R::NAME), t, d);
}

#[test]
fn every_unary_row_against_nested_duals() {
    use rules::*;
    for (x, v) in [(0.37, 1.0), (0.61, -0.8)] {
        check1(Neg, x, v);
        check1(Recip, x, v);
        check1(Recip, -3.0 * x, v);
        check1(Sqrt, x, v);
        check1(Cbrt, x, v);
        check1(Cbrt, -x, v);
        check1(Exp, x, v);
        check1(Exp2, x, v);
        check1(ExpM1, x, v);
        check1(ExpM1, 1e-3 * x, v);
        check1(Ln, 4.0 * x, v);
        check1(Log2, x, v);
        check1(Log10, x, v);
        check1(Ln1p, -x, v);
        check1(Sin, 3.0 * x, v);
        check1(Cos, 3.0 * x, v);
        check1(Tan, 2.0 * x, v);
        check1(Asin, x, v);
        check1(Acos, -x, v);
        check1(Atan, 3.0 * x, v);
        check1(Sinh, x, v);
        check1(Cosh, -x, v);
        check1(Tanh, x, v);
        check1(Tanh, 30.0, v); // saturated: tanh′(30) = 1/cosh² 30 = 3.5e-26 (1 − y² gave 0)
        check1(Asinh, -x, v);
        check1(Acosh, 1.0 + x, v);
        check1(Atanh, x, v);
        check1(Sigmoid, 5.0 * x, v);
        check1(Sigmoid, -50.0 * x, v);
        for rule_x in [x, -x, 2.5, -0.5] {
            check1(Abs, rule_x, v);
            check1(Floor, rule_x, v);
            check1(Ceil, rule_x, v);
            check1(Round, rule_x, v);
            check1(Trunc, rule_x, v);
            check1(Signum, rule_x, v);
            check1(Fract, rule_x, v);
            check1(Relu, rule_x, v);
        }
        for n in -3..=5 {
            check1(Powi(n), 1.0 + x, v);
            check1(Powi(n), -x, v);
        }
    }
}

#[test]
fn kinks_and_edges_as_nested_duals_give() {
    use rules::*;
    // abs and relu at 0 (and −0): the rule's slope 0 at every order, a constant 0.
    for x in [0.0, -0.0] {
        check1(Abs, x, 1.0);
        check1(Relu, x, 1.0);
        assert_eq!(
            Taylor::<f64, 4>::variable(x, 1.0).abs().c,
            [0.0; 4],
            "abs at {x}"
        );
    }
    // Integer powers at 0: repeated multiplication, exact (tⁿ), and ∞/NaN for n < 0.
    for n in -3..=5 {
        check1(Powi(n), 0.0, 1.0);
        check1(Powi(n), 0.0, -0.7);
    }
    assert_eq!(
        Taylor::<f64, 5>::variable(0.0, 1.0).powi(3).c,
        [0.0, 0.0, 0.0, 1.0, 0.0]
    );
    // relu at 0 inside a product: the mixed terms of nested duals read relu's inner levels,
    // which take the same 0 (relu's value is a branch, not max's tie of ½).
    let x = [0.0, 0.0];
    let v = [1.4, -0.16];
    let t = taylor::<5, f64>(|w| vec![w[1] * w[0].apply1(Relu)], &x, &v).unwrap();
    let d = orders4(seed4(x[1], v[1]) * seed4(x[0], v[0]).apply1(Relu));
    agree("x₁·relu(x₀) at 0", t[0], d);
    assert_eq!(t[0], [0.0; 5]);
    // √, ∛, ln at 0: infinite derivatives, non-finite coefficients in both.
    check1(Sqrt, 0.0, 1.0);
    check1(Cbrt, 0.0, 1.0);
    check1(Ln, 0.0, 1.0);
    check1(Asin, 1.0, 1.0);
    check1(Acosh, 1.0, 1.0);
    // A constant stays constant even where the derivative is infinite.
    assert_eq!(Taylor::<f64, 4>::constant(0.0).sqrt().c, [0.0; 4]);
    // max/min at a tie: the average of both series; hypot at the origin: the constant 0.
    for (va, vb) in [(1.0, -0.5), (0.3, 0.3)] {
        check2(Max, (0.5, 0.5), (va, vb));
        check2(Min, (0.5, 0.5), (va, vb));
        check2(Hypot, (0.0, 0.0), (va, vb));
    }
    let (a, b) = (Taylor::new([1.0, 2.0, 3.0]), Taylor::new([1.0, 0.0, -1.0]));
    assert_eq!(a.max(b).c, [1.0, 1.0, 1.0]);
    // powf at 0 with a constant exponent: the rule nested once per order, as nested duals.
    for e in [0.0, 1.0, 2.0, 3.0, 2.5, 3.5, -1.0] {
        check2(Powf, (0.0, e), (1.0, 0.0));
        check2(Powf, (0.0, e), (-0.6, 0.0));
    }
    assert_eq!(
        Taylor::<f64, 5>::variable(0.0, 1.0)
            .powf(Taylor::from(3.0))
            .c,
        [0.0, 0.0, 0.0, 1.0, 0.0]
    );
    // ... and with a varying exponent where aᵇ = 0 (the rule's ∂/∂b = 0 there), or 0⁰ = 1
    // (∂/∂b = ln 0: infinite in both).
    check2(Powf, (0.0, 4.5), (1.0, 0.4));
    check2(Powf, (0.0, 0.0), (1.0, 0.4));
    // atan2 at the origin (NaN partials) and log to base 1 (division by ln 1 = 0).
    check2(Atan2, (0.0, 0.0), (1.0, 0.4));
    check2(Log, (2.0, 1.0), (1.0, 0.4));
}

#[test]
fn every_binary_row_against_nested_duals() {
    use rules::*;
    let (p, v) = ((0.83, 1.7), (0.6, -1.1));
    check2(Add, p, v);
    check2(Sub, p, v);
    check2(Mul, p, v);
    check2(Div, p, v);
    check2(Rem, (5.3, 1.7), v);
    check2(Rem, (-5.3, 1.7), v);
    check2(Powf, p, v);
    check2(Powf, p, (0.6, 0.0)); // a constant exponent: the recurrence of a real power
    check2(Powf, (-0.83, 3.0), (0.6, 0.0)); // a < 0, a constant integral exponent
    check2(Powf, (-0.83, 1.7), v); // a < 0, a varying exponent: NaN beyond order 0 in both
    check2(Log, p, v);
    check2(Atan2, p, v);
    check2(Atan2, (-0.3, -1.2), v);
    check2(Hypot, p, v);
    check2(Hypot, (1e200, 3e200), v);
    check2(Max, p, v);
    check2(Max, (1.7, 0.83), v);
    check2(Min, p, v);
    check2(Min, (1.7, 0.83), v);
    check2(Max, (f64::NAN, 0.3), v);

    // mul_add, the one three-argument rule.
    let (x, y, z) = (0.4, -1.3, 2.2);
    let t = Taylor::<f64, 5>::variable(x, 0.5)
        .mul_add(Taylor::variable(y, -0.9), Taylor::variable(z, 0.3))
        .derivatives();
    let d = orders4(seed4(x, 0.5).mul_add(seed4(y, -0.9), seed4(z, 0.3)));
    agree("mul_add", t, d);
}

/// softplus ln(1 + eˣ) with the derivative written by hand and no recurrence: Taylor numbers
/// evaluate the derivative on the series and integrate it.
#[derive(Clone, Copy)]
struct Softplus;
impl Unary for Softplus {
    const NAME: &'static str = "softplus";
    fn eval<T: Op>(self, x: T) -> (T, T) {
        (x.exp().ln_1p(), (T::one() + (-x).exp()).recip())
    }
}

/// eˣ whose value is computed from the plain primal (no derivative in it at all): the series
/// can only come from the derivative.
#[derive(Clone, Copy)]
struct ExpFromPrimal;
impl Unary for ExpFromPrimal {
    const NAME: &'static str = "exp from the primal";
    fn eval<T: Op>(self, x: T) -> (T, T) {
        (T::constant(x.value().exp()), x.exp())
    }
}

/// ln(eᵃ + eᵇ), partials the two softmax weights; no recurrence.
#[derive(Clone, Copy)]
struct LogAddExp;
impl Binary for LogAddExp {
    const NAME: &'static str = "logaddexp";
    fn eval<T: Op>(self, a: T, b: T) -> (T, T, T) {
        let m = a.max(b);
        let (ea, eb) = ((a - m).exp(), (b - m).exp());
        let s = ea + eb;
        (m + s.ln(), ea / s, eb / s)
    }
}

#[test]
fn user_rules_without_recurrence_integrate_their_derivative() {
    assert!(Softplus.taylor(&[0.3_f64, 1.0]).is_none());
    for (x, v) in [(0.3, 1.0), (-1.7, 0.6), (2.5, -1.3)] {
        let t = Taylor::<f64, 11>::variable(x, v);
        let user = t.apply1(Softplus).c;
        let built_in = t.exp().ln_1p().c;
        for k in 0..11 {
            assert!(
                close(user[k], built_in[k]),
                "softplus at {x}, coefficient {k}: rule {} vs composition {}",
                user[k],
                built_in[k]
            );
        }
        check1(Softplus, x, v);
        // The value's own series is not used: only its order 0 and the derivative.
        let e = t.apply1(ExpFromPrimal).c;
        let exp = t.exp().c;
        for k in 0..11 {
            assert!(
                close(e[k], exp[k]),
                "exp from its derivative, coefficient {k}"
            );
        }
    }
    // A user's two-argument rule against its composition and against nested duals.
    let (a, b) = (
        Taylor::<f64, 8>::variable(0.4, 1.0),
        Taylor::variable(-0.9, -0.5),
    );
    let user = a.apply2(b, LogAddExp).c;
    let built_in = (a.exp() + b.exp()).ln().c;
    for k in 0..8 {
        assert!(close(user[k], built_in[k]), "logaddexp, coefficient {k}");
    }
    check2(LogAddExp, (0.4, -0.9), (1.0, -0.5));
    check2(LogAddExp, (0.4, 0.4), (1.0, -0.5)); // the tie of its max: only the value branches
}

#[test]
fn the_driver_seeds_a_direction_and_checks_lengths() {
    // f(x, y) = (x·y, sin(x + y)) along (1, 2) from (1, 0): g₁(t) = (1 + t)·2t, g₂(t) = sin(1 + 3t).
    let d = taylor::<4, f64>(
        |x| vec![x[0] * x[1], (x[0] + x[1]).sin()],
        &[1.0, 0.0],
        &[1.0, 2.0],
    )
    .unwrap();
    assert_eq!(d[0], [0.0, 2.0, 4.0, 0.0]);
    let (s, c) = 1.0_f64.sin_cos();
    let sin = [s, 3.0 * c, -9.0 * s, -27.0 * c];
    for k in 0..4 {
        assert!(close(d[1][k], sin[k]), "sin(1 + 3t), order {k}");
    }
    let err = taylor::<4, f64>(|x| x.to_vec(), &[1.0, 2.0, 3.0], &[1.0, 0.0]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tangent seed has length 2, but must have length 3"
    );
    // No inputs, no outputs: an empty answer, not an error.
    assert_eq!(
        taylor::<3, f64>(|x| x.to_vec(), &[], &[]).unwrap(),
        Vec::<[f64; 3]>::new()
    );
}

#[test]
fn taylor_numbers_nest() {
    // Taylor<Dual>: the dual tangent of each coefficient is its derivative in a parameter p.
    // exp(p·t) has cₖ = pᵏ/k!, so ∂cₖ/∂p = k·pᵏ⁻¹/k!.
    let p = Dual::variable(1.5_f64);
    let y = taylor::<6, Dual<f64>>(
        |x| vec![(x[0] * Taylor::from(p)).exp()],
        &[Dual::from(0.0)],
        &[Dual::from(1.0)],
    )
    .unwrap();
    for (k, d) in y[0].iter().enumerate() {
        // The driver returns derivatives: k!·cₖ = pᵏ, and ∂/∂p = k·pᵏ⁻¹.
        assert!(close(d.primal, 1.5_f64.powi(k as i32)), "order {k}");
        assert!(
            close(d.tangent, k as f64 * 1.5_f64.powi(k as i32 - 1)),
            "order {k}"
        );
    }
    // Taylor<Taylor>: a series of series. sin(s + t) in both: coefficient (j, k) is
    // sin⁽ʲ⁺ᵏ⁾(x)/(j!·k!).
    type Inner = Taylor<f64, 4>;
    let x = Taylor::<Inner, 4>::variable(Inner::variable(0.3, 1.0), Inner::constant(1.0));
    let y = x.sin();
    for j in 0..4 {
        for k in 0..4 {
            let d = (0.3 + (j + k) as f64 * core::f64::consts::FRAC_PI_2).sin();
            let exact = d / (fact(j) * fact(k));
            assert!(close(y.c[k].c[j], exact), "({j}, {k})");
        }
    }
}

#[test]
fn the_number_type_itself() {
    let x = Taylor::new([1.0_f64, 2.0, 0.5]);
    assert_eq!(x.to_string(), "1 + 2·t + 0.5·t^2");
    assert_eq!(x.derivatives(), [1.0, 2.0, 1.0]);
    assert_eq!(x.derivative(2), 1.0);
    assert_eq!(Taylor::<f64, 3>::default().c, [0.0; 3]);
    assert_eq!(Taylor::<f64, 3>::from(2.0).c, [2.0, 0.0, 0.0]);
    assert_eq!(<Taylor<f64, 3> as Op>::constant(2.0).c, [2.0, 0.0, 0.0]);
    assert_eq!(Taylor::<f64, 1>::variable(2.0, 1.0).c, [2.0]);
    // Comparisons and `is_zero` read c[0]; a structural zero is zero in every coefficient.
    let y = Taylor::new([1.0_f64, -7.0, 0.0]);
    assert!(x == y && x <= y && y <= x);
    assert!(!Taylor::new([0.0_f64, 1.0, 0.0]).is_structural_zero());
    assert!(Taylor::new([0.0_f64, 0.0, 0.0]).is_structural_zero());
    assert!(Taylor::new([0.0_f64, 1.0, 0.0]).is_zero());
    assert!(!Taylor::new([1e-300_f64, 0.0, 0.0]).is_zero());
    assert_eq!(x.value(), 1.0);
    // A sum of series is the series of the sum.
    let s: Taylor<f64, 3> = [x, y, x].iter().sum();
    assert_eq!(s.c, [3.0, -3.0, 1.0]);
}

#[test]
#[should_panic(expected = "derivative of order 3 asked of a Taylor series of 3 coefficients")]
fn derivative_beyond_the_order_carried_panics() {
    let _ = Taylor::new([1.0_f64, 2.0, 3.0]).derivative(3);
}
