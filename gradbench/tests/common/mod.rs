//! What the integration tests share: exchanges with the tool as GradBench runs them, readers of
//! JSON arrays, closeness, central differences and a deterministic generator.

#![allow(dead_code)]

use serde_json::{Value, json};
use std::f64::consts::PI;
use wengert_gradbench::Tool;

/// The response to one `evaluate` of `module.function` on `input`, whatever it is, in a
/// exchange as GradBench runs it: start, define, evaluate, analysis.
pub fn respond(module: &str, function: &str, input: &Value) -> Value {
    let mut tool = Tool;
    let start = tool.respond(&json!({"id": 0, "kind": "start", "eval": module}).to_string());
    assert_eq!(start, json!({"id": 0, "tool": "wengert"}));
    let define = tool.respond(&json!({"id": 1, "kind": "define", "module": module}).to_string());
    assert_eq!(define, json!({"id": 1, "success": true}));
    let message = json!({
        "id": 2, "kind": "evaluate", "module": module, "function": function, "input": input,
        "description": "test",
    });
    let response = tool.respond(&message.to_string());
    assert_eq!(response["id"], 2, "{response}");
    let analysis = tool.respond(r#"{"id": 3, "kind": "analysis", "of": 2, "valid": true}"#);
    assert_eq!(analysis, json!({"id": 3}));
    response
}

/// The output of a successful response, its timings checked: at least one `evaluate`, each
/// timing in whole nanoseconds.
pub fn output(response: &Value) -> &Value {
    assert_eq!(response["success"], true, "{response}");
    assert!(response.get("error").is_none(), "{response}");
    assert!(runs(response) >= 1, "{response}");
    let timings = response["timings"].as_array().expect("timings");
    assert!(
        timings.iter().all(|t| t["nanoseconds"].is_u64()),
        "{response}"
    );
    &response["output"]
}

/// The output of one successful `evaluate` (see [`output`]).
pub fn evaluate(module: &str, function: &str, input: &Value) -> Value {
    output(&respond(module, function, input)).clone()
}

/// The number of `evaluate` timings of a response: its runs.
pub fn runs(response: &Value) -> usize {
    let timings = response["timings"]
        .as_array()
        .unwrap_or_else(|| panic!("timings in {response}"));
    timings.iter().filter(|t| t["name"] == "evaluate").count()
}

/// The error of one `evaluate` that fails, checked to come with no output.
pub fn failure(module: &str, function: &str, input: &Value) -> String {
    let response = respond(module, function, input);
    assert_eq!(response["success"], false, "{response}");
    assert!(response.get("output").is_none(), "{response}");
    let error = response["error"].as_str();
    error
        .unwrap_or_else(|| panic!("an error in {response}"))
        .to_string()
}

/// The numbers of a JSON array.
pub fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap_or_else(|| panic!("an array, got {v}"))
        .iter()
        .map(|x| x.as_f64().unwrap_or_else(|| panic!("{x} is not a number")))
        .collect()
}

/// The rows of a JSON array of arrays of numbers.
pub fn rows(v: &Value) -> Vec<Vec<f64>> {
    let rows = v.as_array().unwrap_or_else(|| panic!("rows, got {v}"));
    rows.iter().map(floats).collect()
}

/// The integers of a JSON array; a float (`1.0` too) is refused.
pub fn integers(v: &Value) -> Vec<i64> {
    v.as_array()
        .unwrap_or_else(|| panic!("an array, got {v}"))
        .iter()
        .map(|x| {
            x.as_i64()
                .unwrap_or_else(|| panic!("{x} is not an integer"))
        })
        .collect()
}

/// The keys of a JSON object, sorted.
pub fn keys(v: &Value) -> Vec<String> {
    let object = v
        .as_object()
        .unwrap_or_else(|| panic!("an object, got {v}"));
    let mut keys: Vec<String> = object.keys().cloned().collect();
    keys.sort();
    keys
}

/// Whether |got − want| ≤ tol · max(|want|, floor): relative to the wanted value, absolute
/// (tol · floor) where |want| < floor.
pub fn near(got: f64, want: f64, tol: f64, floor: f64) -> bool {
    (got - want).abs() <= tol * want.abs().max(floor)
}

/// Whether |a − b| ≤ tol · max(|a|, |b|, 1): relative to the larger of the two, absolute below 1.
pub fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * a.abs().max(b.abs()).max(1.0)
}

/// Asserts equal lengths and [`near`]`(got, want, tol, 1)` for each pair.
pub fn assert_close(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (&a, &b)) in got.iter().zip(want).enumerate() {
        assert!(near(a, b, tol, 1.0), "{what}[{i}]: {a} against {b}");
    }
}

/// The central difference of `f` at `x` along coordinate `k`, with the step
/// `rel · max(|x[k]|, 1)`.
pub fn central_difference<R: AsRef<[f64]>>(
    f: impl Fn(&[f64]) -> R,
    x: &[f64],
    k: usize,
    rel: f64,
) -> Vec<f64> {
    let h = rel * x[k].abs().max(1.0);
    let (mut up, mut down) = (x.to_vec(), x.to_vec());
    up[k] += h;
    down[k] -= h;
    let (a, b) = (f(&up), f(&down));
    let pairs = a.as_ref().iter().zip(b.as_ref());
    pairs.map(|(a, b)| (a - b) / (2.0 * h)).collect()
}

/// A deterministic generator: a 64-bit linear congruential step, its top 53 bits as a uniform.
pub struct Rng(pub u64);

impl Rng {
    /// A number in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A number in [a, b).
    pub fn within(&mut self, a: f64, b: f64) -> f64 {
        a + (b - a) * self.uniform()
    }

    /// A standard normal, by Box and Muller.
    pub fn normal(&mut self) -> f64 {
        let (u, v) = (1.0 - self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * PI * v).cos()
    }

    /// `n` numbers drawn by `draw`.
    pub fn vector(&mut self, n: usize, draw: fn(&mut Rng) -> f64) -> Vec<f64> {
        (0..n).map(|_| draw(self)).collect()
    }

    /// `rows` rows of `cols` numbers drawn by `draw`.
    pub fn rows(&mut self, rows: usize, cols: usize, draw: fn(&mut Rng) -> f64) -> Vec<Vec<f64>> {
        (0..rows).map(|_| self.vector(cols, draw)).collect()
    }
}

/// `n` uniforms of `Rng(seed)`, its first step skipped.
pub fn uniforms(seed: u64, n: usize) -> Vec<f64> {
    let mut rng = Rng(seed);
    rng.uniform();
    rng.vector(n, Rng::uniform)
}
