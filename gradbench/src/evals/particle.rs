//! `particle`: the charge parameter w that lands a particle, driven by the gradient of a
//! potential, at x = 0; found by gradient descent from `w`, in the pair of modes the function
//! names (`ff`, `fr`, `rf`, `rr`; see [`nested`](super::nested)).

use super::nested::{Pair, particle};
use crate::{Run, json};
use serde_json::Value;

/// Prepares `ff`, `fr`, `rf` or `rr` of `{w}`.
pub fn prepare(function: &str, input: &Value) -> Result<Box<dyn Run>, String> {
    let pair = Pair::named(function)
        .ok_or_else(|| crate::run::unknown("particle", function, &super::saddle::PAIRS))?;
    let w0 = json::number(input, "w")?;
    Ok(Box::new(Particle { pair, w0, w: 0.0 }))
}

struct Particle {
    pair: Pair,
    w0: f64,
    w: f64,
}

impl Run for Particle {
    fn run(&mut self) -> Result<(), String> {
        self.w = particle(self.pair, self.w0);
        Ok(())
    }
    fn output(&self) -> Value {
        Value::from(self.w)
    }
}
