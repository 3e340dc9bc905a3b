//! What an eval gives the protocol for one `evaluate`: a computation prepared once and run
//! again and again.

use serde_json::Value;

/// What an eval prepares for one `evaluate` message: a computation to run again and again.
pub trait Run {
    /// Computes the answer afresh (timed as one `evaluate`).
    fn run(&mut self) -> Result<(), String>;
    /// The answer of the last run, in the shape the eval checks.
    fn output(&self) -> Value;
}

/// Prepares `function` of an eval on `input`: an error names the problem.
pub type Prepare = fn(function: &str, input: &Value) -> Result<Box<dyn Run>, String>;

/// The error for a function an eval does not have.
pub(crate) fn unknown(module: &str, function: &str, known: &[&str]) -> String {
    format!(
        "the module `{module}` has no function `{function}` (it has {})",
        known.join(", ")
    )
}
