//! Generated programs: orders 0..=4 of t ↦ f(x + t·v) by one Taylor sweep and by four nested
//! duals.

use super::{D4, orders4, seed4};
use forward::taylor;
use proptest::prelude::*;
use shared_ops::Op;
use shared_ops::rules::{Relu, Sigmoid};

/// One instruction of a generated program; operands index earlier values.
#[derive(Clone, Debug)]
enum Instr {
    Unary(usize, usize),
    Binary(usize, usize, usize),
    MulAdd(usize, usize, usize),
}

const UNARY: usize = 37;
const BINARY: usize = 11;

/// A random Wengert list over `n` inputs. Arguments that would leave a function's domain, or
/// come near a singularity of it (where both modes lose digits, differently, the more the higher
/// the order), are squashed into it through `sin` first; so are those of `tanh` and the sigmoid, whose rules'
/// derivatives 1 − y² and y(1 − y) cancel where they saturate (both modes then lose digits,
/// differently). The kinks (`abs`, `max`, `relu`, `floor`, …) are not squashed.
#[derive(Clone, Debug)]
struct Program {
    n: usize,
    instrs: Vec<Instr>,
}

fn k<T: Op>(c: f64) -> T {
    T::constant(c)
}

impl Program {
    /// The last two values computed.
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let v = self.values(x);
        v[v.len() - 2..].to_vec()
    }

    /// Which values the last two depend on (those two included).
    fn live(&self) -> Vec<bool> {
        let len = self.n + self.instrs.len();
        let mut live = vec![false; len];
        live[len - 2..].fill(true);
        for (i, ins) in self.instrs.iter().enumerate().rev() {
            if live[self.n + i] {
                let operands = match *ins {
                    Instr::Unary(_, a) => [a, a, a],
                    Instr::Binary(_, a, b) => [a, b, b],
                    Instr::MulAdd(a, b, c) => [a, b, c],
                };
                for k in operands {
                    live[k] = true;
                }
            }
        }
        live
    }

    /// Every value: the inputs, then each instruction's result.
    fn values<T: Op>(&self, x: &[T]) -> Vec<T> {
        let mut v: Vec<T> = x.to_vec();
        for ins in &self.instrs {
            let y = match *ins {
                Instr::Unary(op, a) => {
                    let u = v[a];
                    let s = u.sin();
                    match op {
                        0 => -u,
                        1 => (k::<T>(1.5) + s).recip(),
                        2 => (k::<T>(1.2) + s).sqrt(),
                        3 => (s - k::<T>(2.0)).cbrt(),
                        4 => s.exp(),
                        5 => s.exp2(),
                        6 => s.exp_m1(),
                        7 => (k::<T>(1.5) + s).ln(),
                        8 => (k::<T>(1.5) + s).log2(),
                        9 => (k::<T>(1.5) + s).log10(),
                        10 => (k::<T>(0.5) * s).ln_1p(),
                        11 => u.sin(),
                        12 => u.cos(),
                        13 => s.tan(),
                        14 => (k::<T>(0.9) * s).asin(),
                        15 => (k::<T>(0.9) * s).acos(),
                        16 => u.atan(),
                        17 => s.sinh(),
                        18 => s.cosh(),
                        19 => (s + s).tanh(),
                        20 => u.asinh(),
                        21 => (k::<T>(2.5) + s).acosh(),
                        22 => (k::<T>(0.9) * s).atanh(),
                        23 => u.abs(),
                        24 => u.floor(),
                        25 => u.ceil(),
                        26 => u.round(),
                        27 => u.trunc(),
                        28 => u.signum(),
                        29 => u.fract(),
                        30 => (s + s).apply1(Sigmoid),
                        31 => u.apply1(Relu),
                        32 => u.powi(2),
                        33 => u.powi(3),
                        34 => (k::<T>(1.5) + s).powi(-2),
                        35 => u.powi(0),
                        _ => u.powi(1),
                    }
                }
                Instr::Binary(op, a, b) => {
                    let (p, q) = (v[a], v[b]);
                    let (sp, sq) = (p.sin(), q.sin());
                    match op {
                        0 => p + q,
                        1 => p - q,
                        2 => p * q,
                        3 => p / (k::<T>(1.5) + sq),
                        4 => (k::<T>(1.5) + sp).powf(sq),
                        5 => (k::<T>(1.5) + sp).log(k::<T>(2.5) + sq),
                        6 => p.atan2(k::<T>(1.5) + sq),
                        7 => p.hypot(k::<T>(1.0) + q * q), // away from the origin's kink
                        8 => p.max(q),
                        9 => p.min(q),
                        _ => (k::<T>(2.0) + sp) % (k::<T>(0.5) + sq * sq),
                    }
                }
                Instr::MulAdd(a, b, c) => v[a].mul_add(v[b], v[c]),
            };
            v.push(y);
        }
        v
    }
}

/// An input or direction entry: mostly random, sometimes exactly 0 or ±1 (kinks and ties).
fn entry() -> impl Strategy<Value = f64> {
    prop_oneof![6 => -2.0..2.0_f64, 1 => Just(0.0), 1 => Just(1.0), 1 => Just(-1.0)]
}

/// Programs of 2–3 inputs and 1–12 instructions, a point and a direction.
fn program() -> impl Strategy<Value = (Program, Vec<f64>, Vec<f64>)> {
    let instr = (0..3usize, 0..UNARY, 0..BINARY, any::<[u32; 3]>());
    (2..=3usize, prop::collection::vec(instr, 1..12)).prop_flat_map(|(n, raw)| {
        let instrs = raw
            .iter()
            .enumerate()
            .map(|(i, &(kind, u, b, r))| {
                let len = (n + i) as u32;
                let [a, bb, c] = r.map(|r| (r % len) as usize);
                match kind {
                    0 => Instr::Unary(u, a),
                    1 => Instr::Binary(b, a, bb),
                    _ => Instr::MulAdd(a, bb, c),
                }
            })
            .collect();
        let p = Program { n, instrs };
        (
            Just(p),
            prop::collection::vec(entry(), n),
            prop::collection::vec(entry(), n),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4096, ..ProptestConfig::default() })]

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
