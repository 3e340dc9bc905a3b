//! A reverse sweep over a tape of `Dual<f64>` (forward over reverse): with inputs
//! `Dual::new(xᵢ, vᵢ)`, one sweep gives the gradient in the primal parts (the same numbers as a
//! tape of `f64`) and the Hessian-vector product H·v in the tangent parts (the same, to
//! rounding, as nested duals `Dual<Dual<f64>>`, one column per input).

use forward::Dual;
use proptest::prelude::*;
use reverse::{Float, Op, Tape, Var};
use test_support::{Binary, Outputs, Program, Shape, Unary, programs};

/// Programs of 1–4 inputs and 1–11 instructions (sums and dot products among them, the first
/// operand of each among the last three values, so most of the program is live) returning
/// their last value, at points in [−2, 2]ⁿ, with a direction v.
fn program() -> impl Strategy<Value = (Program, Vec<f64>, Vec<f64>)> {
    let shape = Shape {
        inputs: 1..=4,
        instrs: 1..12,
        unary: Unary::TAPE,
        binary: Binary::TAPE,
        nary: true,
        recent: true,
        outputs: Outputs::Last,
    };
    programs(shape).prop_flat_map(|p| {
        let n = p.n;
        let point = prop::collection::vec(
            prop_oneof![6 => -2.0..2.0_f64, 1 => Just(0.0), 1 => Just(1.0)],
            n,
        );
        let dir = prop::collection::vec(prop_oneof![4 => -1.0..1.0_f64, 1 => Just(0.0)], n);
        (Just(p), point, dir)
    })
}

/// The largest |(H·v)ᵢ| of any of the program's values (by nested duals), and 1: the scale of
/// the rounding in H·v, which later operations may cancel (in `y − (z + y)` the result's
/// second derivatives are z's, rounded at the size of y's).
fn second_order_scale(p: &Program, x: &[f64], v: &[f64]) -> f64 {
    (1..=p.instrs.len())
        .flat_map(|k| {
            let prefix = p.prefix(k);
            hv_nested(|w| prefix.last(w), x, v)
        })
        .map(f64::abs)
        .fold(1.0, f64::max)
}

/// `a` and `b` are the same number: equal (0 and −0 included) or both NaN.
fn same_number(a: f64, b: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan())
}

/// Equal to `tol` relative (scaled by max(|a|, |b|, 1)), or both NaN.
fn close(a: f64, b: f64, tol: f64) -> bool {
    same_number(a, b) || (a - b).abs() <= tol * a.abs().max(b.abs()).max(1.0)
}

/// The gradient on a tape of f64.
fn gradient_f64(f: impl Fn(&[Var]) -> Var, x: &[f64]) -> (f64, Vec<f64>) {
    let tape = Tape::new();
    let xs = tape.vars(x);
    let y = f(&xs);
    (y.value(), tape.gradient(y).wrt_all(&xs))
}

/// One sweep on a tape of duals seeded with v: (f, ∇f·v) and the adjoints (∇f, H·v).
fn sweep_dual(
    f: impl Fn(&[Var<Dual<f64>>]) -> Var<Dual<f64>>,
    x: &[f64],
    v: &[f64],
) -> (Dual<f64>, Vec<Dual<f64>>) {
    let tape: Tape<Dual<f64>> = Tape::new();
    let seeds: Vec<Dual<f64>> = x.iter().zip(v).map(|(&a, &b)| Dual::new(a, b)).collect();
    let xs = tape.vars(&seeds);
    let y = f(&xs);
    (y.value(), tape.gradient(y).wrt_all(&xs))
}

/// H·v by nested duals, one forward sweep per input: the outer tangent seeded with eᵢ, the
/// inner one with v.
fn hv_nested(f: impl Fn(&[Dual<Dual<f64>>]) -> Dual<Dual<f64>>, x: &[f64], v: &[f64]) -> Vec<f64> {
    (0..x.len())
        .map(|i| {
            let xs: Vec<Dual<Dual<f64>>> = x
                .iter()
                .zip(v)
                .enumerate()
                .map(|(j, (&a, &b))| {
                    Dual::new(Dual::new(a, b), Dual::new(f64::from(u8::from(i == j)), 0.0))
                })
                .collect();
            f(&xs).tangent.tangent
        })
        .collect()
}

/// The checks shared by the generated and the fixed functions.
fn check(
    plain: impl Fn(&[Var]) -> Var,
    dual: impl Fn(&[Var<Dual<f64>>]) -> Var<Dual<f64>>,
    nested: impl Fn(&[Dual<Dual<f64>>]) -> Dual<Dual<f64>>,
    x: &[f64],
    v: &[f64],
    what: &dyn std::fmt::Debug,
    second_order_scale: f64,
) -> Result<(), TestCaseError> {
    let (y64, g64) = gradient_f64(plain, x);
    let (y, g) = sweep_dual(dual, x, v);
    prop_assert!(same_number(y.primal, y64), "value {} vs {y64}", y.primal);
    for i in 0..x.len() {
        prop_assert!(
            same_number(g[i].primal, g64[i]),
            "∂f/∂x{i}: tape of duals {} vs tape of f64 {}\n{what:?} at {x:?}",
            g[i].primal,
            g64[i]
        );
    }
    // ∇f·v is carried in the value's tangent: the forward-mode tangent itself (the tape's values
    // are duals computed by the same rules), bit for bit.
    let seeded: Vec<Dual<Dual<f64>>> = x
        .iter()
        .zip(v)
        .map(|(&a, &b)| Dual::new(Dual::new(a, b), Dual::new(0.0, 0.0)))
        .collect();
    let jv = nested(&seeded).primal.tangent;
    prop_assert!(
        same_number(y.tangent, jv),
        "∇f·v: tape of duals {} vs forward mode {jv}",
        y.tangent
    );
    // And it is the reverse gradient's product with v, up to rounding. The two round along
    // different paths of the program, and where paths cancel the difference grows with the
    // cancelled terms, which neither side knows: measured up to 4e-11 of the largest |gⱼvⱼ|
    // (and 1) in 20 000 generated programs, so 1e-9 of it (the exact check is the one above).
    let gv: f64 = g64.iter().zip(v).map(|(g, v)| g * v).sum();
    let gv_scale = g64
        .iter()
        .zip(v)
        .map(|(g, v)| (g * v).abs())
        .fold(1.0, f64::max);
    prop_assert!(
        same_number(y.tangent, gv) || (y.tangent - gv).abs() <= 1e-9 * gv_scale,
        "∇f·v: {} vs {gv}",
        y.tangent
    );
    // H·v is a sum of terms H_ij·v_j that may cancel: the tolerance is relative to the
    // largest of |H·v|, Σⱼ |H_ij·v_j| (from the full Hessian, by nested duals), and
    // `second_order_scale` (at least 1), for what cancels inside the function.
    let hv = hv_nested(&nested, x, v);
    let n = x.len();
    let mut terms = vec![0.0; n];
    for j in 0..n {
        let mut e = vec![0.0; n];
        e[j] = 1.0;
        for (t, h) in terms.iter_mut().zip(hv_nested(&nested, x, &e)) {
            *t += (h * v[j]).abs();
        }
    }
    for i in 0..n {
        let (a, b) = (g[i].tangent, hv[i]);
        let scale = a.abs().max(b.abs()).max(terms[i]).max(second_order_scale);
        prop_assert!(
            same_number(a, b) || (a - b).abs() <= 1e-12 * scale,
            "(H·v)[{i}]: tape of duals {a} vs nested duals {b} (terms up to {}, the values' \
             H·v up to {second_order_scale})\nv = {v:?}\n{what:?} at {x:?}",
            terms[i]
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: test_support::cases(2048), ..ProptestConfig::default() })]

    #[test]
    fn tape_of_duals_gives_gradient_and_hessian_vector_product((p, x, v) in program()) {
        prop_assume!(p.last(&x).is_finite());
        let scale = second_order_scale(&p, &x, &v);
        check(|w| p.last(w), |w| p.last(w), |w| p.last(w), &x, &v, &p, scale)?;
    }

    /// A fixed function over many operations, n-ary ones included.
    #[test]
    fn fixed_function_over_several_ops(
        x in prop::collection::vec(-2.0..2.0_f64, 4),
        v in prop::collection::vec(-1.0..1.0_f64, 4),
    ) {
        check(fixed, fixed, fixed, &x, &v, &"fixed", 1.0)?;
    }

    /// `from_partials` on a tape of duals: the partials are duals too (their tangents are the
    /// partials' derivatives along v), so the sweep gives H·v for a hand-written node.
    #[test]
    fn from_partials_on_a_tape_of_duals(
        x in prop::collection::vec(-2.0..2.0_f64, 4),
        v in prop::collection::vec(-1.0..1.0_f64, 4),
    ) {
        let by_partials = |w: &[Var<Dual<f64>>]| {
            let [a, b, c, d] = [w[0].value(), w[1].value(), w[2].value(), w[3].value()];
            let node = Var::from_partials(
                a * b * c + d.sin(),
                &[(w[0], b * c), (w[1], a * c), (w[2], a * b), (w[3], d.cos())],
            );
            node * w[0] + node.exp()
        };
        let binary = |w: &[Var<Dual<f64>>]| {
            let node = w[0] * w[1] * w[2] + w[3].sin();
            node * w[0] + node.exp()
        };
        let (y1, g1) = sweep_dual(by_partials, &x, &v);
        let (y2, g2) = sweep_dual(binary, &x, &v);
        prop_assert!(close(y1.primal, y2.primal, 1e-15) && close(y1.tangent, y2.tangent, 1e-13));
        for i in 0..4 {
            prop_assert!(close(g1[i].primal, g2[i].primal, 1e-14), "{g1:?} vs {g2:?}");
            prop_assert!(close(g1[i].tangent, g2[i].tangent, 1e-12), "{g1:?} vs {g2:?}");
        }
    }
}

/// Sums, a dot product, mul_add, powi, exp, ln, atan2, hypot, powf and division, over 4 inputs.
fn fixed<T: Op>(x: &[T]) -> T {
    let c = |v: f64| T::constant(v);
    let s: T = x.iter().map(|&xi| xi * xi).sum();
    let d = T::dot(&[x[0], x[1], c(2.0), x[3]], &[x[2], x[1], x[3], x[0].sin()]);
    let e = x[0].mul_add(x[1], x[2]).powi(3) + (c(1.0) + s).ln();
    let h = x[2].atan2(c(2.5) + x[3].cos()) * x[1].hypot(c(0.5) + x[0]);
    let p = (c(1.5) + x[1].sin()).powf(x[2].cos()) / (c(3.0) + d.sin());
    [e, h, p, (c(0.25) * x[3] * d).exp()].into_iter().sum::<T>() * (c(0.1) * s).tanh()
}

/// The known case: f(x, y) = x²y + y³, H = [[2y, 2x], [2x, 6y]], on a tape of duals built by
/// hand, with the gradient checked exactly.
#[test]
fn known_hessian_vector_product() {
    fn f<T: Op>(w: &[T]) -> T {
        w[0] * w[0] * w[1] + w[1].powi(3)
    }
    let (x, y) = (0.75, -1.5);
    let v = [2.0, -0.5];
    let (_, g) = sweep_dual(f, &[x, y], &v);
    assert_eq!(g[0].primal, 2.0 * x * y);
    assert_eq!(g[1].primal, x * x + 3.0 * y * y);
    assert_eq!(g[0].tangent, 2.0 * y * v[0] + 2.0 * x * v[1]);
    assert_eq!(g[1].tangent, 2.0 * x * v[0] + 6.0 * y * v[1]);
    assert_eq!(hv_nested(f, &[x, y], &v), vec![g[0].tangent, g[1].tangent]);
}
