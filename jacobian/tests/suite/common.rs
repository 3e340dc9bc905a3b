//! Shared test helpers: a generator of random programs and finite differences.
#![allow(dead_code)]

use jacobian::{Function, Op};
use proptest::prelude::*;
use shared_ops::Unary;

/// A user-defined operation with its own derivative, used inside generated programs too.
#[derive(Clone, Copy)]
pub struct Sigmoid;
impl Unary for Sigmoid {
    const NAME: &'static str = "sigmoid";
    fn eval<T: Op>(self, x: T) -> (T, T) {
        let s = T::one() / (T::one() + (-x).exp());
        (s, s * (T::one() - s))
    }
}

pub const UNARY: usize = 28;
pub const BINARY: usize = 11;

/// One instruction of a generated Wengert list; operands index earlier values.
#[derive(Clone, Debug)]
pub enum Instr {
    Unary(usize, usize),
    Binary(usize, usize, usize),
    MulAdd(usize, usize, usize),
}

/// A random expression DAG: `n` inputs, instructions, and the values returned as outputs.
/// Arguments that leave a function's domain are first squashed into it through `sin`, so every
/// operation of the rule table runs on points where it is defined and smooth.
#[derive(Clone, Debug)]
pub struct Program {
    pub n: usize,
    pub instrs: Vec<Instr>,
    pub outputs: Vec<usize>,
}

fn k<T: Op>(c: f64) -> T {
    T::constant(c)
}

impl Function for Program {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let v = self.values(x);
        self.outputs.iter().map(|&i| v[i]).collect()
    }
}

impl Program {
    /// Every value the program computes: the inputs, then one per instruction.
    pub fn values<T: Op>(&self, x: &[T]) -> Vec<T> {
        let mut v: Vec<T> = x.to_vec();
        for ins in &self.instrs {
            let y = match *ins {
                Instr::Unary(op, a) => {
                    let u = v[a];
                    let s = u.sin(); // in [-1, 1]
                    match op {
                        0 => -u,
                        1 => (k::<T>(1.5) + s).recip(),
                        2 => u.powi(3),
                        3 => (k::<T>(1.5) + s).powi(-2),
                        4 => (k::<T>(1.2) + s).sqrt(),
                        5 => u.cbrt() * k(0.0) + (k::<T>(2.0) + s).cbrt(),
                        6 => (s + s).exp(),
                        7 => (s + s).exp2(),
                        8 => (s + s).exp_m1(),
                        9 => (k::<T>(1.5) + s).ln(),
                        10 => (k::<T>(1.5) + s).log2(),
                        11 => (k::<T>(1.5) + s).log10(),
                        12 => (k::<T>(0.5) * s).ln_1p(),
                        13 => u.sin(),
                        14 => u.cos(),
                        15 => s.tan(),
                        16 => (k::<T>(0.9) * s).asin(),
                        17 => (k::<T>(0.9) * s).acos(),
                        18 => u.atan(),
                        19 => (s + s).sinh(),
                        20 => (s + s).cosh(),
                        21 => u.tanh(),
                        22 => u.asinh(),
                        23 => (k::<T>(2.0) + s).acosh(),
                        24 => (k::<T>(0.9) * s).atanh(),
                        25 => u.abs(),
                        26 => u.apply1(Sigmoid),
                        _ => u * u - u.fract() * k(0.0),
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
                        7 => p.hypot(k::<T>(1.0) + q * q),
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

    /// The first instruction that runs on or near a kink or a jump at `x`, if any: `abs` at 0
    /// (to rounding), `max`/`min` at a tie (to rounding), `%` where the quotient is near a whole
    /// number. There the derivative is a convention and finite differences see something else
    /// (a one-sided or averaged slope), so the finite-difference check skips such points;
    /// other nearby kinks are caught by [`fd_column`]'s step sizes disagreeing.
    pub fn kink_at(&self, x: &[f64]) -> Option<usize> {
        let v = self.values(x);
        self.instrs.iter().position(|ins| match *ins {
            // Zero to rounding too: `|cos(acos(0))|` is |6.1e-17|, whose slope is ±0.9 while
            // central differences straddling the kink agree at every step on 0. Nearer than
            // about 4·10⁻⁸ of the step, the three steps agree to the tolerance.
            Instr::Unary(25, a) => v[a].abs() <= 1e-9,
            // A tie within rounding too: `x₁ − (x₁x₂ + x₁)` against `x₂` at x₁ = −1 differ by an
            // ulp, and central differences straddling the kink agree at both steps on the
            // average of the two slopes.
            Instr::Binary(8 | 9, a, b) => {
                (v[a] - v[b]).abs() <= 1e-12 * v[a].abs().max(v[b].abs()).max(1.0)
            }
            // A jump of `%` near x too: times a factor that is 0 at x (`x₁·(p % q)` at x₁ = 0),
            // the jump moves f by O(h) across a step that straddles it, and central differences
            // agree on a wrong slope at every step size. A margin of 0.05 in the quotient: a
            // step of 10⁻³ moves it far less here.
            Instr::Binary(10, a, b) => {
                let (p, q) = (2.0 + v[a].sin(), 0.5 + v[b].sin() * v[b].sin());
                (p / q - (p / q).round()).abs() < 0.05 || p % q == 0.0
            }
            _ => false,
        })
    }
}

/// The number of generated programs: `PROPTEST_CASES` if set, else `default`. The deep check is
/// `PROPTEST_CASES=20000 cargo test --release -p jacobian --test suite cross_mode -- --nocapture`.
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// An input value: mostly random, sometimes exactly at a kink or a tie (0, ±1), so that the
/// conventions of `abs`, `max`, `min` and `hypot` are exercised too.
pub fn input() -> impl Strategy<Value = f64> {
    prop_oneof![6 => -2.0..2.0_f64, 1 => Just(0.0), 1 => Just(1.0), 1 => Just(-1.0)]
}

/// Programs of 1–4 inputs, 1–14 instructions and 1–3 outputs.
pub fn program() -> impl Strategy<Value = (Program, Vec<f64>)> {
    let instr = (
        0..3usize,
        0..UNARY,
        0..BINARY,
        any::<u32>(),
        any::<u32>(),
        any::<u32>(),
    );
    (
        1..=4usize,
        prop::collection::vec(instr, 1..14),
        prop::collection::vec(any::<u32>(), 1..=3),
    )
        .prop_flat_map(|(n, raw, outs)| {
            let mut instrs = Vec::new();
            for (i, &(kind, u, b, r0, r1, r2)) in raw.iter().enumerate() {
                let len = (n + i) as u32;
                let (a, bb, c) = (
                    (r0 % len) as usize,
                    (r1 % len) as usize,
                    (r2 % len) as usize,
                );
                instrs.push(match kind {
                    0 => Instr::Unary(u, a),
                    1 => Instr::Binary(b, a, bb),
                    _ => Instr::MulAdd(a, bb, c),
                });
            }
            let total = (n + instrs.len()) as u32;
            // Outputs favour the last values, so most of the program is live.
            let outputs = outs
                .iter()
                .map(|&r| (total - 1 - r % total.min(4)) as usize)
                .collect();
            let p = Program { n, instrs, outputs };
            (Just(p), prop::collection::vec(input(), n))
        })
}

/// Central differences of every output with respect to input `j`, with step `h`.
pub fn central(f: &impl Function, x: &[f64], j: usize, h: f64) -> Vec<f64> {
    let mut xp = x.to_vec();
    let mut xm = x.to_vec();
    xp[j] += h;
    xm[j] -= h;
    let (fp, fm) = (f.eval(&xp), f.eval(&xm));
    fp.iter()
        .zip(&fm)
        .map(|(a, b)| (a - b) / (2.0 * h))
        .collect()
}

/// The Jacobian column `j` by Richardson-extrapolated central differences (error O(h⁴)), or
/// `None` when two step sizes disagree: then a kink or a jump lies within the step and finite
/// differences cannot be trusted there.
pub fn fd_column(f: &impl Function, x: &[f64], j: usize) -> Option<Vec<f64>> {
    let h = 1e-3 * x[j].abs().max(1.0);
    let d1 = central(f, x, j, h);
    let d2 = central(f, x, j, h / 2.0);
    let rich: Vec<f64> = d1
        .iter()
        .zip(&d2)
        .map(|(a, b)| (4.0 * b - a) / 3.0)
        .collect();
    let d3 = central(f, x, j, h / 4.0);
    let rich2: Vec<f64> = d2
        .iter()
        .zip(&d3)
        .map(|(a, b)| (4.0 * b - a) / 3.0)
        .collect();
    let agree = rich
        .iter()
        .zip(&rich2)
        .all(|(a, b)| (a - b).abs() <= 1e-7 * (1.0 + a.abs()));
    agree.then_some(rich2)
}

pub fn rel_close(a: f64, b: f64, tol: f64) -> bool {
    a == b || (a - b).abs() <= tol * a.abs().max(b.abs()).max(1.0)
}
