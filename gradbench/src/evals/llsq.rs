//! `llsq`: the linear least-squares objective y(x) = ½ Σᵢ (sᵢ − Σⱼ xⱼ tᵢʲ)², tᵢ = −1 + 2i/(n − 1),
//! sᵢ = sign tᵢ, over the m coefficients x; `gradient` by a prepared reverse-mode gradient.

use super::{Gradient, Primal, scalar};
use crate::{Run, json};
use serde_json::Value;
use wengert::{Function, Op};

/// The objective with its n sample points: the powers tᵢʲ, row by row, and the signs.
struct Llsq {
    m: usize,
    powers: Vec<f64>,
    signs: Vec<f64>,
}

impl Llsq {
    fn new(m: usize, n: usize) -> Llsq {
        let mut powers = Vec::with_capacity(n * m);
        let mut signs = Vec::with_capacity(n);
        for i in 0..n {
            // n = 1 has the one point t = −1 (GradBench divides by n − 1 = 0 there: −1 + 0/0).
            let t = if n > 1 {
                -1.0 + i as f64 * 2.0 / (n as f64 - 1.0)
            } else {
                -1.0
            };
            signs.push(f64::from(u8::from(t > 0.0)) - f64::from(u8::from(t < 0.0)));
            let mut p = 1.0;
            for _ in 0..m {
                powers.push(p);
                p *= t;
            }
        }
        Llsq { m, powers, signs }
    }
}

impl Function for Llsq {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let mut t = vec![T::zero(); self.m];
        let sum: T = self
            .powers
            .chunks(self.m)
            .zip(&self.signs)
            .map(|(powers, &s)| {
                for (t, &p) in t.iter_mut().zip(powers) {
                    *t = T::constant(p);
                }
                let r = T::constant(s) - T::dot(x, &t);
                r * r
            })
            .sum();
        vec![sum * 0.5]
    }
}

/// Prepares `primal` or `gradient` of `{x, n}`.
pub fn prepare(function: &str, input: &Value) -> Result<Box<dyn Run>, String> {
    let x = json::vector(input, "x")?;
    let n = json::count(input, "n")?;
    let f = Llsq::new(x.len(), n);
    match function {
        "primal" => Ok(Primal::boxed(f, x, scalar)),
        "gradient" => Gradient::boxed(f, x, json::array),
        _ => Err(crate::run::unknown(
            "llsq",
            function,
            &["primal", "gradient"],
        )),
    }
}
