//! `ode`: y₀' = x₀, yᵢ' = xᵢ·yᵢ₋₁ from y(0) = 0 to t = 2 by s classic Runge–Kutta steps;
//! `primal` is y(2), `gradient` the gradient of its last component by a prepared reverse-mode
//! gradient.

use super::{Gradient, Primal};
use crate::{Run, json};
use serde_json::Value;
use wengert::{Function, Op};

/// The integration: `last` keeps only yₙ₋₁(2), the output the gradient is of.
struct Ode {
    s: usize,
    last: bool,
}

/// The right-hand side at `y`: z₀ = x₀, zᵢ = xᵢ·yᵢ₋₁.
fn rhs<T: Op>(x: &[T], y: &[T], z: &mut [T]) {
    z[0] = x[0];
    for i in 1..x.len() {
        z[i] = x[i] * y[i - 1];
    }
}

impl Function for Ode {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let n = x.len();
        let h = 2.0 / self.s as f64;
        let mut y = vec![T::zero(); n];
        let (mut k1, mut k2, mut k3, mut k4, mut tmp) =
            (y.clone(), y.clone(), y.clone(), y.clone(), y.clone());
        for _ in 0..self.s {
            rhs(x, &y, &mut k1);
            for i in 0..n {
                tmp[i] = y[i] + k1[i] * (h / 2.0);
            }
            rhs(x, &tmp, &mut k2);
            for i in 0..n {
                tmp[i] = y[i] + k2[i] * (h / 2.0);
            }
            rhs(x, &tmp, &mut k3);
            for i in 0..n {
                tmp[i] = y[i] + k3[i] * h;
            }
            rhs(x, &tmp, &mut k4);
            for i in 0..n {
                y[i] += (k1[i] + k2[i] * 2.0 + k3[i] * 2.0 + k4[i]) * (h / 6.0);
            }
        }
        if self.last { vec![y[n - 1]] } else { y }
    }
}

/// Prepares `primal` or `gradient` of `{x, s}`.
pub fn prepare(function: &str, input: &Value) -> Result<Box<dyn Run>, String> {
    let x = json::vector(input, "x")?;
    let s = json::count(input, "s")?;
    if x.is_empty() || s == 0 {
        return Err(format!(
            "`ode` needs n ≥ 1 and s ≥ 1, got n = {}, s = {s}",
            x.len()
        ));
    }
    match function {
        "primal" => Ok(Primal::boxed(Ode { s, last: false }, x, json::array)),
        "gradient" => Gradient::boxed(Ode { s, last: true }, x, json::array),
        _ => Err(crate::run::unknown(
            "ode",
            function,
            &["primal", "gradient"],
        )),
    }
}
