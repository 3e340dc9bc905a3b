//! `lse`: log-sum-exp, max x + ln Σᵢ exp(xᵢ − max x), from its primitives (max, exp, sum, ln);
//! `gradient` (the softmax) by a prepared reverse-mode gradient.

use super::{Gradient, Primal, scalar};
use crate::{Run, json};
use serde_json::Value;
use wengert::{Function, Op};

struct Lse;

impl Function for Lse {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let a = x.iter().copied().fold(T::neg_infinity(), T::max);
        let s: T = x.iter().map(|&v| (v - a).exp()).sum();
        vec![a + s.ln()]
    }
}

/// Prepares `primal` or `gradient` of `{x}`.
pub fn prepare(function: &str, input: &Value) -> Result<Box<dyn Run>, String> {
    let x = json::vector(input, "x")?;
    if x.is_empty() {
        return Err("`x` is empty: log-sum-exp needs at least one value".into());
    }
    match function {
        "primal" => Ok(Primal::boxed(Lse, x, scalar)),
        "gradient" => Gradient::boxed(Lse, x, json::array),
        _ => Err(crate::run::unknown(
            "lse",
            function,
            &["primal", "gradient"],
        )),
    }
}
