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
//! The loss is written once, over any [`Op`]. Its gradient, a flat array of `8lb + 3b` numbers
//! (the main parameters row by row, then the extra ones row by row), comes from a
//! [`PreparedGradient`](wengert::PreparedGradient) made in preparation: each run either
//! re-evaluates its compiled recording at the point or records afresh into its own buffers, as
//! its plan decides, then sweeps back once.

use super::{Gradient, Primal, scalar};
use crate::{Run, json};
use serde_json::Value;
use wengert::{Function, Op};

/// The functions of `lstm`.
const FUNCTIONS: [&str; 2] = ["objective", "jacobian"];

/// Prepares a function of `lstm`: the loss on `f64`, or its gradient by a prepared recording.
pub fn prepare(function: &str, input: &Value) -> Result<Box<dyn Run>, String> {
    if !FUNCTIONS.contains(&function) {
        return Err(crate::run::unknown("lstm", function, &FUNCTIONS));
    }
    let (loss, params) = Lstm::read(input)?;
    match function {
        "objective" => Ok(Primal::boxed(loss, params, scalar)),
        _ => Gradient::boxed(loss, params, json::array),
    }
}

/// The loss as a function of the parameters (`main_params` row by row, then `extra_params`
/// row by row), holding the constant data: the initial state and the sequence.
#[derive(Clone, Debug)]
pub struct Lstm {
    /// `l`, the number of layers.
    layers: usize,
    /// `b`, the hidden units of a layer (the bits of a character).
    bits: usize,
    /// The initial state, `2l` rows of `b`: per layer the hidden row, then the cell row.
    state: Vec<f64>,
    /// The characters, `c` rows of `b` bits.
    sequence: Vec<f64>,
}

impl Lstm {
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
        let loss = Lstm {
            layers,
            bits,
            state,
            sequence,
        };
        Ok((loss, params))
    }

    /// The number of parameters, `8lb + 3b`.
    pub fn parameters(&self) -> usize {
        (8 * self.layers + 3) * self.bits
    }
}

impl Function for Lstm {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let (l, b) = (self.layers, self.bits);
        let (main, extra) = x.split_at(8 * l * b);
        let (in_weight, extra) = extra.split_at(b);
        let (out_weight, out_bias) = extra.split_at(b);
        let mut state: Vec<T> = self.state.iter().map(|&s| T::constant(s)).collect();
        let chars: Vec<&[f64]> = self.sequence.chunks(b).collect();
        let mut input = vec![T::zero(); b];
        let mut prediction = vec![T::zero(); b];
        let mut total = T::zero();
        for t in 0..chars.len() - 1 {
            for ((v, &w), &bit) in input.iter_mut().zip(in_weight).zip(chars[t]) {
                *v = w * bit;
            }
            for (layer, state) in state.chunks_mut(2 * b).enumerate() {
                let (weight, bias) = main[8 * b * layer..8 * b * (layer + 1)].split_at(4 * b);
                let (hidden, cell) = state.split_at_mut(b);
                for i in 0..b {
                    let gate = |g: usize, v: T| v * weight[g * b + i] + bias[g * b + i];
                    let forget = sigmoid(gate(0, input[i]));
                    let ingate = sigmoid(gate(1, hidden[i]));
                    let outgate = sigmoid(gate(2, input[i]));
                    let change = gate(3, hidden[i]).tanh();
                    cell[i] = cell[i] * forget + ingate * change;
                    hidden[i] = outgate * cell[i].tanh();
                }
                // The next layer reads this one's new hidden state.
                input.copy_from_slice(hidden);
            }
            for (i, y) in prediction.iter_mut().enumerate() {
                *y = input[i] * out_weight[i] + out_bias[i];
            }
            // ADBench's normaliser: log(Σ exp yᵢ + 2), not a plain logsumexp.
            let lse = (prediction.iter().map(|y| y.exp()).sum::<T>() + 2.0).ln();
            for (&y, &bit) in prediction.iter().zip(chars[t + 1]) {
                total += (y - lse) * bit;
            }
        }
        let count = ((chars.len() - 1) * b) as f64;
        vec![-total / count]
    }

    fn sizes(&self) -> Option<(usize, usize)> {
        Some((self.parameters(), 1))
    }
}

/// `1 / (1 + e⁻ˣ)`.
fn sigmoid<T: Op>(x: T) -> T {
    (T::one() + (-x).exp()).recip()
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
