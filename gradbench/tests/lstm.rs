//! The `lstm` eval through the protocol: the loss against a direct transcription of ADBench's
//! C++ (flat arrays, its loops), the gradient against central differences of that
//! transcription, the shapes of both answers, and malformed inputs.

mod common;

use common::{Rng, central_difference, failure, floats, near, output, respond, rows, runs};
use serde_json::{Value, json};

/// Sizes: `l` layers, `b` bits, `c` characters.
const L: usize = 2;
const B: usize = 3;
const C: usize = 4;

/// An input of ADBench's shape: parameters and state in [0, 1), characters of 0/1 bits.
fn input() -> Value {
    let mut r = Rng(0x5eed);
    let sequence: Vec<Vec<f64>> = r
        .rows(C, B, Rng::uniform)
        .into_iter()
        .map(|row| row.into_iter().map(|v| (v < 0.5) as u8 as f64).collect())
        .collect();
    json!({
        "main_params": r.rows(2 * L, 4 * B, Rng::uniform),
        "extra_params": r.rows(3, B, Rng::uniform),
        "state": r.rows(2 * L, B, Rng::uniform),
        "sequence": sequence,
        "min_runs": 2,
        "min_seconds": 0,
    })
}

/// ADBench's loss as its C++ writes it: `main` (8lb) and `extra` (3b) flat, the state copied.
fn reference(main: &[f64], extra: &[f64], state: &[f64], sequence: &[f64]) -> f64 {
    let sigmoid = |x: f64| 1.0 / (1.0 + (-x).exp());
    let (l, b, c) = (L, B, C);
    let mut state = state.to_vec();
    let mut total = 0.0;
    let mut count = 0;
    for t in 0..c - 1 {
        let input = &sequence[t * b..(t + 1) * b];
        let mut output: Vec<f64> = (0..b).map(|i| input[i] * extra[i]).collect();
        for layer in 0..l {
            let p = &main[8 * b * layer..];
            let (w, bias) = (&p[..4 * b], &p[4 * b..8 * b]);
            let s = 2 * b * layer;
            for i in 0..b {
                let hidden = state[s + i];
                let forget = sigmoid(output[i] * w[i] + bias[i]);
                let ingate = sigmoid(hidden * w[b + i] + bias[b + i]);
                let outgate = sigmoid(output[i] * w[2 * b + i] + bias[2 * b + i]);
                let change = (hidden * w[3 * b + i] + bias[3 * b + i]).tanh();
                state[s + b + i] = state[s + b + i] * forget + ingate * change;
                state[s + i] = outgate * state[s + b + i].tanh();
            }
            output.copy_from_slice(&state[s..s + b]);
        }
        let ypred: Vec<f64> = (0..b)
            .map(|i| output[i] * extra[b + i] + extra[2 * b + i])
            .collect();
        let mut sum = 0.0;
        for y in &ypred {
            sum += y.exp();
        }
        sum += 2.0;
        let lse = sum.ln();
        let gold = &sequence[(t + 1) * b..(t + 2) * b];
        for i in 0..b {
            total += gold[i] * (ypred[i] - lse);
        }
        count += b;
    }
    -total / count as f64
}

/// The reference loss at an input, as a function of the parameters (main, then extra).
fn loss_of(input: &Value) -> impl Fn(&[f64]) -> f64 {
    let state = rows(&input["state"]).concat();
    let sequence = rows(&input["sequence"]).concat();
    move |params: &[f64]| {
        let (main, extra) = params.split_at(8 * L * B);
        reference(main, extra, &state, &sequence)
    }
}

fn parameters(input: &Value) -> Vec<f64> {
    let mut p = rows(&input["main_params"]).concat();
    p.extend(rows(&input["extra_params"]).concat());
    p
}

#[test]
fn objective_matches_a_transcription_of_the_reference() {
    let input = input();
    let response = respond("lstm", "objective", &input);
    let loss = output(&response).as_f64().expect("a number");
    assert_eq!(runs(&response), 2, "{response}");
    let expected = loss_of(&input)(&parameters(&input));
    assert!(
        near(loss, expected, 1e-12, 0.0),
        "{loss} against {expected}"
    );
}

#[test]
fn jacobian_matches_central_differences() {
    let input = input();
    let response = respond("lstm", "jacobian", &input);
    let gradient = floats(output(&response));
    assert_eq!(runs(&response), 2, "{response}");
    assert_eq!(gradient.len(), 8 * L * B + 3 * B);
    let f = loss_of(&input);
    let x = parameters(&input);
    assert_eq!(x.len(), gradient.len());
    for (k, &g) in gradient.iter().enumerate() {
        let fd = central_difference(|x| [f(x)], &x, k, 1e-5)[0];
        assert!(near(g, fd, 1e-6, 1e-2), "∂/∂x[{k}]: {g} against {fd}");
    }
    // Every parameter reaches the loss here: no entry is zero.
    assert!(gradient.iter().all(|&g| g != 0.0));
}

#[test]
fn a_missing_field_is_named() {
    let mut input = input();
    input.as_object_mut().unwrap().remove("state");
    let error = failure("lstm", "jacobian", &input);
    assert!(error.contains("`state`"), "{error}");
}

#[test]
fn wrong_sizes_are_named() {
    let mut input = input();
    input["state"] = json!(vec![vec![0.5; B]; 3]);
    let error = failure("lstm", "objective", &input);
    assert!(error.contains("`state` is 3×3, expected 4×3"), "{error}");

    let mut input = self::input();
    input["sequence"] = json!([[1.0, 0.0]]);
    let error = failure("lstm", "objective", &input);
    assert!(error.contains("`sequence` has 1 characters"), "{error}");

    let mut input = self::input();
    input["main_params"] = json!(vec![vec![0.5; 12]; 3]);
    let error = failure("lstm", "objective", &input);
    assert!(error.contains("`main_params` has 3 rows"), "{error}");
}

#[test]
fn an_unknown_function_is_refused() {
    let error = failure("lstm", "hessian", &input());
    assert!(
        error.contains("hessian") && error.contains("objective, jacobian"),
        "{error}"
    );
}
