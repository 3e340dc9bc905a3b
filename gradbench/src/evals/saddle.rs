//! `saddle`: min over p₁ of max over p₂ of (p₁₀² + p₁₁²) − (p₂₀² + p₂₁²) from `start`, by
//! gradient descent through gradient ascent, in the pair of modes the function names (`ff`,
//! `fr`, `rf`, `rr`; see [`nested`](super::nested)).

use super::nested::{Pair, saddle};
use crate::{Run, json};
use serde_json::Value;

/// Prepares `ff`, `fr`, `rf` or `rr` of `{start}`.
pub fn prepare(function: &str, input: &Value) -> Result<Box<dyn Run>, String> {
    let pair =
        Pair::named(function).ok_or_else(|| crate::run::unknown("saddle", function, &PAIRS))?;
    let start = json::vector(input, "start")?;
    json::expect_len("start", start.len(), 2)?;
    Ok(Box::new(Saddle {
        pair,
        start: [start[0], start[1]],
        out: [0.0; 4],
    }))
}

/// The four pairs' names.
pub(crate) const PAIRS: [&str; 4] = ["ff", "fr", "rf", "rr"];

struct Saddle {
    pair: Pair,
    start: [f64; 2],
    out: [f64; 4],
}

impl Run for Saddle {
    fn run(&mut self) -> Result<(), String> {
        self.out = saddle(self.pair, self.start);
        Ok(())
    }
    fn output(&self) -> Value {
        json::array(&self.out)
    }
}
