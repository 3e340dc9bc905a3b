//! `ode`: y₀' = x₀, yᵢ' = xᵢ·yᵢ₋₁ from y(0) = 0 to t = 2 by s classic Runge–Kutta steps
//! ([`workloads::gradbench::Ode`]); `primal` is y(2), `gradient` the gradient of its last
//! component by a prepared reverse-mode gradient.

use super::{Gradient, Primal};
use crate::{Run, json};
use serde_json::Value;
use wengert::{Function, Op};
use workloads::gradbench::Ode;

/// The whole state y(2), GradBench's `primal` (the `Function` of [`Ode`] is its last
/// component only).
struct State(Ode);

impl Function for State {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        self.0.state(x)
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
    let ode = Ode::new(x.len(), s);
    match function {
        "primal" => Ok(Primal::boxed(State(ode), x, json::array)),
        "gradient" => Gradient::boxed(ode, x, json::array),
        _ => Err(crate::run::unknown(
            "ode",
            function,
            &["primal", "gradient"],
        )),
    }
}
