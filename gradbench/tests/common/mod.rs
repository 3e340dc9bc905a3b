//! Sending messages to the tool as GradBench would.

#![allow(dead_code)]

use serde_json::{Value, json};
use wengert_gradbench::Tool;

/// The response to one `evaluate` of `module.function` on `input`, asserted successful.
pub fn evaluate(module: &str, function: &str, input: Value) -> Value {
    let r = respond(module, function, input);
    assert_eq!(r["success"], true, "{r}");
    assert!(r.get("error").is_none(), "{r}");
    r["output"].clone()
}

/// The response to one `evaluate`, whatever it is.
pub fn respond(module: &str, function: &str, input: Value) -> Value {
    let mut tool = Tool;
    let define = tool.respond(&json!({"id": 1, "kind": "define", "module": module}).to_string());
    assert_eq!(define, json!({"id": 1, "success": true}));
    let message = json!({"id": 2, "kind": "evaluate", "module": module, "function": function, "input": input});
    let r = tool.respond(&message.to_string());
    assert_eq!(r["id"], 2);
    r
}

/// The numbers of a JSON array.
pub fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap_or_else(|| panic!("an array, got {v}"))
        .iter()
        .map(|x| x.as_f64().expect("a number"))
        .collect()
}

/// |a − b| ≤ tol · max(1, |b|) for each pair.
pub fn assert_close(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (a, b)) in got.iter().zip(want).enumerate() {
        assert!(
            (a - b).abs() <= tol * b.abs().max(1.0),
            "{what}[{i}]: {a} against {b}"
        );
    }
}

/// A deterministic sequence of numbers in [0, 1).
pub fn uniforms(seed: u64, n: usize) -> Vec<f64> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64
        })
        .collect()
}
