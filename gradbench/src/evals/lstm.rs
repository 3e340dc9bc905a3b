//! `lstm`: the loss of ADBench's LSTM with diagonal weights over a character sequence
//! (`objective`), and its gradient with respect to every parameter (`jacobian`).
//!
//! The model has `l` layers of `b` hidden units. At each of the first `c − 1` characters the
//! network predicts the next one; the loss is minus the mean over the sequence's bits of the
//! bit times the log-softmax of the prediction, where the softmax's normaliser keeps ADBench's
//! quirk, `log(Σ exp yᵢ + 2)`. The parameters are `main_params` (per layer a row of weights and
//! a row of biases, each `[forget, ingate, outgate, change]`) and `extra_params` (the input
//! weights, output weights and output biases); `state` (per layer a hidden row and a cell row)
//! and `sequence` are constant data. The state evolves over the sequence from a fresh copy at
//! each evaluation.
//!
//! The loss is [`workloads::gradbench::Lstm`], written once over any `Op`. Its gradient, a
//! flat array of `8lb + 3b` numbers (the main parameters row by row, then the extra ones row by
//! row), comes from a
//! [`PreparedGradient`](wengert::PreparedGradient) made in preparation: each run either
//! re-evaluates its compiled recording at the point or records afresh into its own buffers, as
//! its plan decides, then sweeps back once.

use super::{Gradient, Primal, scalar};
use crate::{Run, json};
use serde_json::Value;
use workloads::gradbench::Lstm;

/// The functions of `lstm`.
const FUNCTIONS: [&str; 2] = ["objective", "jacobian"];

/// Prepares a function of `lstm`: the loss on `f64`, or its gradient by a prepared recording.
pub fn prepare(function: &str, input: &Value) -> Result<Box<dyn Run>, String> {
    if !FUNCTIONS.contains(&function) {
        return Err(crate::run::unknown("lstm", function, &FUNCTIONS));
    }
    let (loss, params) = read(input)?;
    match function {
        "objective" => Ok(Primal::boxed(loss, params, scalar)),
        _ => Gradient::boxed(loss, params, json::array),
    }
}

/// The loss and the parameters of an input, its sizes checked against each other.
pub fn read(input: &Value) -> Result<(Lstm, Vec<f64>), String> {
    let (rows, cols, mut params) = json::matrix(input, "main_params")?;
    if rows == 0 || rows % 2 != 0 {
        return Err(format!(
            "`main_params` has {rows} rows, expected a positive even number (a row of \
             weights and a row of biases per layer)"
        ));
    }
    if cols == 0 || cols % 4 != 0 {
        return Err(format!(
            "`main_params` has rows of {cols} entries, expected a positive multiple of 4 \
             (four gates per hidden unit)"
        ));
    }
    let (layers, bits) = (rows / 2, cols / 4);
    let layout = format!("{layers} layers of {bits} hidden units, as `main_params` says");
    params.extend(sized(input, "extra_params", 3, bits, &layout)?);
    let state = sized(input, "state", 2 * layers, bits, &layout)?;
    let (chars, width, sequence) = json::matrix(input, "sequence")?;
    if chars < 2 {
        return Err(format!(
            "`sequence` has {chars} characters, expected at least 2 (the loss predicts \
             each character from the one before it)"
        ));
    }
    if width != bits {
        return Err(format!(
            "`sequence` has rows of {width} bits, expected {bits} (the hidden size of \
             `main_params`, a quarter of its row length)"
        ));
    }
    Ok((Lstm::with_data(layers, bits, state, sequence)?, params))
}

/// A matrix of `rows` rows of `cols` entries, row by row; an error names the sizes found and
/// what the expected ones follow from.
fn sized(
    input: &Value,
    name: &str,
    rows: usize,
    cols: usize,
    layout: &str,
) -> Result<Vec<f64>, String> {
    let (r, c, data) = json::matrix(input, name)?;
    if r == rows && c == cols {
        Ok(data)
    } else {
        Err(format!(
            "`{name}` is {r}×{c}, expected {rows}×{cols} (for {layout})"
        ))
    }
}
