//! The `lstm` eval through the protocol: the loss against a direct transcription of ADBench's
//! C++ (flat arrays, its loops), the gradient against central differences of that
//! transcription, the shapes of both answers, and malformed inputs.

use serde_json::{Value, json};
use wengert_gradbench::Tool;

/// A deterministic generator of numbers in [0, 1) (a 64-bit linear congruential one).
struct Numbers(u64);

impl Numbers {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }

    fn rows(&mut self, rows: usize, cols: usize) -> Vec<Vec<f64>> {
        (0..rows)
            .map(|_| (0..cols).map(|_| self.next()).collect())
            .collect()
    }
}

/// Sizes: `l` layers, `b` bits, `c` characters.
const L: usize = 2;
const B: usize = 3;
const C: usize = 4;

/// An input of ADBench's shape: parameters and state in [0, 1), characters of 0/1 bits.
fn input() -> Value {
    let mut r = Numbers(0x5eed);
    let sequence: Vec<Vec<f64>> = r
        .rows(C, B)
        .into_iter()
        .map(|row| row.into_iter().map(|v| (v < 0.5) as u8 as f64).collect())
        .collect();
    json!({
        "main_params": r.rows(2 * L, 4 * B),
        "extra_params": r.rows(3, B),
        "state": r.rows(2 * L, B),
        "sequence": sequence,
        "min_runs": 2,
        "min_seconds": 0,
    })
}

fn flat(v: &Value) -> Vec<f64> {
    let rows = v.as_array().unwrap();
    rows.iter()
        .flat_map(|r| r.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()))
        .collect()
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
    let state = flat(&input["state"]);
    let sequence = flat(&input["sequence"]);
    move |params: &[f64]| {
        let (main, extra) = params.split_at(8 * L * B);
        reference(main, extra, &state, &sequence)
    }
}

fn parameters(input: &Value) -> Vec<f64> {
    let mut p = flat(&input["main_params"]);
    p.extend(flat(&input["extra_params"]));
    p
}

/// Starts a session, defines `lstm`, evaluates `function` on `input`, answers the analysis;
/// returns the evaluate response after checking the protocol's fields.
fn evaluate(function: &str, input: &Value) -> Value {
    let mut tool = Tool;
    let start = tool.respond(r#"{"id": 0, "kind": "start", "eval": "lstm"}"#);
    assert_eq!(start, json!({"id": 0, "tool": "wengert"}));
    let define = tool.respond(r#"{"id": 1, "kind": "define", "module": "lstm"}"#);
    assert_eq!(define, json!({"id": 1, "success": true}));
    let message = json!({
        "id": 2, "kind": "evaluate", "module": "lstm", "function": function, "input": input,
        "description": "lstm_l2_c4",
    });
    let response = tool.respond(&message.to_string());
    assert_eq!(response["id"], 2);
    let analysis = tool.respond(r#"{"id": 3, "kind": "analysis", "of": 2, "valid": true}"#);
    assert_eq!(analysis, json!({"id": 3}));
    response
}

/// A successful response's output, after checking its timings (one `evaluate` per run).
fn output(response: &Value, runs: usize) -> &Value {
    assert_eq!(response["success"], true, "{response}");
    assert!(response.get("error").is_none());
    let timings = response["timings"].as_array().unwrap();
    let evaluates = timings.iter().filter(|t| t["name"] == "evaluate").count();
    assert_eq!(evaluates, runs, "{response}");
    assert!(timings.iter().all(|t| t["nanoseconds"].is_u64()));
    &response["output"]
}

#[test]
fn objective_matches_a_transcription_of_the_reference() {
    let input = input();
    let response = evaluate("objective", &input);
    let loss = output(&response, 2).as_f64().expect("a number");
    let expected = loss_of(&input)(&parameters(&input));
    assert!(
        (loss - expected).abs() <= 1e-12 * expected.abs(),
        "{loss} against {expected}"
    );
}

#[test]
fn jacobian_matches_central_differences() {
    let input = input();
    let response = evaluate("jacobian", &input);
    let gradient: Vec<f64> = output(&response, 2)
        .as_array()
        .expect("an array")
        .iter()
        .map(|g| g.as_f64().expect("a number"))
        .collect();
    assert_eq!(gradient.len(), 8 * L * B + 3 * B);
    let f = loss_of(&input);
    let x = parameters(&input);
    for k in 0..x.len() {
        let h = 1e-5 * x[k].abs().max(1.0);
        let (mut up, mut down) = (x.clone(), x.clone());
        up[k] += h;
        down[k] -= h;
        let fd = (f(&up) - f(&down)) / (2.0 * h);
        assert!(
            (gradient[k] - fd).abs() <= 1e-6 * fd.abs().max(1e-2),
            "∂/∂x[{k}]: {} against {fd}",
            gradient[k]
        );
    }
    // Every parameter reaches the loss here: no entry is zero.
    assert!(gradient.iter().all(|&g| g != 0.0));
}

#[test]
fn a_missing_field_is_named() {
    let mut input = input();
    input.as_object_mut().unwrap().remove("state");
    let response = evaluate("jacobian", &input);
    assert_eq!(response["success"], false);
    let error = response["error"].as_str().unwrap();
    assert!(error.contains("`state`"), "{error}");
    assert!(response.get("output").is_none());
}

#[test]
fn wrong_sizes_are_named() {
    let mut input = input();
    input["state"] = json!(vec![vec![0.5; B]; 3]);
    let response = evaluate("objective", &input);
    assert_eq!(response["success"], false);
    let error = response["error"].as_str().unwrap();
    assert!(error.contains("`state` is 3×3, expected 4×3"), "{error}");

    let mut input = self::input();
    input["sequence"] = json!([[1.0, 0.0]]);
    let error = evaluate("objective", &input)["error"].to_string();
    assert!(error.contains("`sequence` has 1 characters"), "{error}");

    let mut input = self::input();
    input["main_params"] = json!(vec![vec![0.5; 12]; 3]);
    let error = evaluate("objective", &input)["error"].to_string();
    assert!(error.contains("`main_params` has 3 rows"), "{error}");
}

#[test]
fn an_unknown_function_is_refused() {
    let response = evaluate("hessian", &input());
    assert_eq!(response["success"], false);
    let error = response["error"].as_str().unwrap();
    assert!(
        error.contains("hessian") && error.contains("objective, jacobian"),
        "{error}"
    );
}
