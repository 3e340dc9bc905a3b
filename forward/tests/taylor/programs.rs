//! Generated programs: orders 0..=4 of t ↦ f(x + t·v) by one Taylor sweep and by four nested
//! duals.

use super::{D4, orders4, seed4};
use forward::taylor;
use proptest::prelude::*;
use shared_ops::Function;
use test_support::{Binary, Outputs, Program, Shape, Unary, input, programs};

/// Programs of 2–3 inputs and 1–11 instructions over every rule (kinks and jumps included),
/// returning their last two values, with a point and a direction.
fn program() -> impl Strategy<Value = (Program, Vec<f64>, Vec<f64>)> {
    let shape = Shape {
        inputs: 2..=3,
        instrs: 1..12,
        unary: Unary::TAYLOR,
        binary: Binary::ALL,
        nary: false,
        recent: false,
        outputs: Outputs::LastTwo,
    };
    programs(shape).prop_flat_map(|p| {
        let n = p.n;
        (
            Just(p),
            prop::collection::vec(input(), n),
            prop::collection::vec(input(), n),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: test_support::cases(4096), ..ProptestConfig::default() })]

    /// Orders 0..=4 of t ↦ f(x + t·v) by one Taylor sweep and by four nested duals.
    #[test]
    fn generated_programs_against_nested_duals((p, x, v) in program()) {
        prop_assert_eq!(x.len(), p.n);
        let t = taylor::<5, f64>(|w| p.eval(w), &x, &v).unwrap();
        let w: Vec<D4> = x.iter().zip(&v).map(|(&a, &b)| seed4(a, b)).collect();
        let d: Vec<[f64; 5]> = p.eval(&w).into_iter().map(orders4).collect();
        prop_assert_eq!(t.len(), d.len());
        // Neither side is exact, and an order's rounding errors scale with the terms it sums,
        // which can dwarf it: an order is compared relative to the coefficients of that order
        // and below of the values the outputs depend on, and to rʲ/j! for each of them, with
        // r = maxᵢ |cᵢ|^(1/i) (the size of the term c₁ʲ·g⁽ʲ⁾/j! of g(u) for an operation g).
        // Found by repeated runs: a generated (a + b) − b cancelled fourth-order coefficients
        // of 2.5·10⁵ to −16.3, where the two sides differed by 2.9e-11; and ln_1p(0.5·sin u)
        // with c₁(u) = −211 (so r⁴/4! = 8.2·10⁷) gave 20948.2093163 against 20948.2093160.
        let all: Vec<[f64; 5]> = p.values(&w).into_iter().map(orders4).collect();
        let live = p.live();
        let mut scales = [1.0_f64; 5];
        for j in 0..5_usize {
            let below = scales[j.saturating_sub(1)];
            let factorial = (1..=j).product::<usize>() as f64;
            scales[j] = all
                .iter()
                .zip(&live)
                .filter(|(_, l)| **l)
                .map(|(c, _)| {
                    let r = (1..5).map(|i| c[i].abs().powf(1.0 / i as f64)).fold(0.0, f64::max);
                    c[..=j].iter().map(|c| c.abs()).fold(r.powi(j as i32) / factorial, f64::max)
                })
                .filter(|s| *s < 1e100)
                .fold(below, f64::max);
        }
        for (t, d) in t.iter().zip(&d) {
            for j in 0..5 {
                let scale = scales[j];
                if d[j].is_finite() && d[j].abs() < 1e100 {
                    prop_assert!(
                        (t[j] - d[j]).abs() <= 1e-12 * scale.max(t[j].abs()),
                        "order {}: Taylor {:?}, nested duals {:?}\n{:?} at {:?} along {:?}",
                        j, t, d, p, x, v
                    );
                }
            }
        }
    }
}
