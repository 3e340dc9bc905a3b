//! A [GradBench](https://github.com/gradbench/gradbench) tool written against `wengert`'s
//! public API, as a user with these workloads would write it.
//!
//! GradBench's evals send JSON lines (`start`, `define`, `evaluate`, `analysis`); [`Tool`]
//! answers each with one line carrying the same `id`. An `evaluate` is prepared once (the input
//! read, recordings made, patterns detected and coloured: reported as the `prepare` timing),
//! then run at least `min_runs` times and for at least `min_seconds`, one `evaluate` timing per
//! run, each run computing its answer afresh.
//!
//! Each eval is a module of [`evals`]: its objective written once over [`Op`](wengert::Op), and
//! its derivative taken with the driver its shape calls for.
//!
//! ```
//! let mut tool = wengert_gradbench::Tool;
//! assert_eq!(tool.respond(r#"{"id": 0, "kind": "start"}"#).to_string(),
//!            r#"{"id":0,"tool":"wengert"}"#);
//! let square = tool.respond(
//!     r#"{"id": 1, "kind": "evaluate", "module": "hello", "function": "square", "input": 3.0}"#,
//! );
//! assert_eq!(square["output"], 9.0);
//! ```

pub mod evals;
pub mod json;
pub mod run;

pub use run::{Prepare, Run};

use serde_json::{Value, json};
use std::time::Instant;

/// The evals this tool defines, with their preparers.
pub const EVALS: [(&str, Prepare); 12] = [
    ("ba", evals::ba::prepare),
    ("det", evals::det::prepare),
    ("gmm", evals::gmm::prepare),
    ("hello", evals::hello::prepare),
    ("ht", evals::ht::prepare),
    ("kmeans", evals::kmeans::prepare),
    ("llsq", evals::llsq::prepare),
    ("lse", evals::lse::prepare),
    ("lstm", evals::lstm::prepare),
    ("ode", evals::ode::prepare),
    ("particle", evals::particle::prepare),
    ("saddle", evals::saddle::prepare),
];

/// The protocol's state: none beyond the messages themselves, so every `evaluate` stands alone.
#[derive(Debug, Default)]
pub struct Tool;

impl Tool {
    /// The response to one message (one JSON line), never a panic: a message that cannot be
    /// read gets `success: false` and an error naming the problem.
    pub fn respond(&mut self, line: &str) -> Value {
        let message: Value = match serde_json::from_str(line) {
            Ok(m) => m,
            Err(e) => return failure(Value::Null, format!("the message is not JSON: {e}")),
        };
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        if !(id.is_i64() || id.is_u64()) {
            return failure(id, "the message has no integer `id`".into());
        }
        match message.get("kind").and_then(Value::as_str) {
            Some("start") => json!({"id": id, "tool": "wengert"}),
            Some("define") => match module(&message) {
                Ok(_) => json!({"id": id, "success": true}),
                Err(e) => failure(id, e),
            },
            Some("evaluate") => match evaluate(&message) {
                Ok((output, timings)) => {
                    json!({"id": id, "success": true, "output": output, "timings": timings})
                }
                Err(e) => failure(id, e),
            },
            Some("analysis") => json!({"id": id}),
            Some(kind) => failure(id, format!("unknown message kind `{kind}`")),
            None => failure(id, "the message has no `kind`".into()),
        }
    }
}

fn failure(id: Value, error: String) -> Value {
    json!({"id": id, "success": false, "error": error})
}

/// The preparer of the message's module.
fn module(message: &Value) -> Result<Prepare, String> {
    let name = message
        .get("module")
        .and_then(Value::as_str)
        .ok_or("the message has no `module`")?;
    EVALS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, p)| p)
        .ok_or_else(|| format!("this tool does not define the module `{name}`"))
}

/// Prepares, then runs as the input's `min_runs` and `min_seconds` ask; the output of the last
/// run and the timings.
fn evaluate(message: &Value) -> Result<(Value, Vec<Value>), String> {
    let prepare = module(message)?;
    let function = message
        .get("function")
        .and_then(Value::as_str)
        .ok_or("the message has no `function`")?;
    let input = message.get("input").ok_or("the message has no `input`")?;
    let (min_runs, min_seconds) = runs(input)?;
    let start = Instant::now();
    let mut run = prepare(function, input)?;
    let mut timings = vec![timing("prepare", start.elapsed().as_nanos())];
    let (mut runs, mut seconds) = (0, 0.0);
    while runs < min_runs || seconds < min_seconds {
        let start = Instant::now();
        run.run()?;
        let elapsed = start.elapsed();
        timings.push(timing("evaluate", elapsed.as_nanos()));
        runs += 1;
        seconds += elapsed.as_secs_f64();
    }
    let output = run.output();
    if has_null(&output) {
        return Err("the answer holds a NaN or an infinity, which JSON cannot carry".into());
    }
    Ok((output, timings))
}

/// Whether `v` holds a null: what serde_json makes of a NaN or an infinity.
fn has_null(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Array(items) => items.iter().any(has_null),
        Value::Object(fields) => fields.values().any(has_null),
        _ => false,
    }
}

/// `min_runs` (default 1) and `min_seconds` (default 0) of an input object.
fn runs(input: &Value) -> Result<(u64, f64), String> {
    let field = |name: &str| input.as_object().and_then(|o| o.get(name));
    let min_runs = match field("min_runs") {
        None => 1,
        Some(v) => v
            .as_u64()
            .ok_or_else(|| format!("`min_runs` must be a count, got {v}"))?,
    };
    let min_seconds = match field("min_seconds") {
        None => 0.0,
        Some(v) => v
            .as_f64()
            .filter(|s| s.is_finite() && *s >= 0.0)
            .ok_or_else(|| format!("`min_seconds` must be a number of seconds, got {v}"))?,
    };
    Ok((min_runs.max(1), min_seconds))
}

fn timing(name: &str, nanoseconds: u128) -> Value {
    json!({"name": name, "nanoseconds": nanoseconds as u64})
}
