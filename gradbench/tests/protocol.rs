//! The protocol: every message gets one response with its `id`; malformed messages get an error
//! naming the problem, never a panic; `min_runs` and `min_seconds` decide the timed runs.

use serde_json::{Value, json};
use wengert_gradbench::{EVALS, Tool};

fn respond(line: &str) -> Value {
    Tool.respond(line)
}

#[test]
fn start_define_and_analysis_are_answered_with_their_id() {
    let mut tool = Tool;
    assert_eq!(
        tool.respond(r#"{"id": 0, "kind": "start", "eval": "llsq"}"#),
        json!({"id": 0, "tool": "wengert"})
    );
    for (module, _) in EVALS {
        let r = tool.respond(&json!({"id": 7, "kind": "define", "module": module}).to_string());
        assert_eq!(r, json!({"id": 7, "success": true}), "{module}");
    }
    assert_eq!(
        tool.respond(r#"{"id": 9, "kind": "analysis", "of": 8, "valid": true}"#),
        json!({"id": 9})
    );
}

#[test]
fn an_unknown_module_is_undefined_with_a_reason() {
    let r = respond(r#"{"id": 3, "kind": "define", "module": "hessian_of_everything"}"#);
    assert_eq!((r["id"].as_i64(), &r["success"]), (Some(3), &json!(false)));
    assert!(
        r["error"]
            .as_str()
            .unwrap()
            .contains("hessian_of_everything"),
        "{r}"
    );
}

#[test]
fn malformed_messages_get_errors_that_name_the_problem() {
    let cases = [
        ("{not json", "not JSON"),
        (r#"{"kind": "start"}"#, "`id`"),
        (r#"{"id": 1}"#, "`kind`"),
        (r#"{"id": 1, "kind": "dance"}"#, "dance"),
        (
            r#"{"id": 1, "kind": "evaluate", "module": "llsq", "input": {}}"#,
            "`function`",
        ),
        (
            r#"{"id": 1, "kind": "evaluate", "module": "llsq", "function": "primal"}"#,
            "`input`",
        ),
        (
            r#"{"id": 1, "kind": "evaluate", "module": "llsq", "function": "hessian", "input": {"x": [1.0], "n": 3}}"#,
            "no function `hessian`",
        ),
        (
            r#"{"id": 1, "kind": "evaluate", "module": "llsq", "function": "primal", "input": {"x": [1.0]}}"#,
            "no field `n`",
        ),
        (
            r#"{"id": 1, "kind": "evaluate", "module": "llsq", "function": "primal", "input": {"x": [1.0, "a"], "n": 3}}"#,
            "`x`[1] must be a number",
        ),
        (
            r#"{"id": 1, "kind": "evaluate", "module": "det", "function": "primal", "input": {"A": [1.0, 2.0, 3.0], "ell": 2}}"#,
            "`A` has 3 entries, expected 4",
        ),
        (
            r#"{"id": 1, "kind": "evaluate", "module": "kmeans", "function": "cost", "input": {"points": [[1.0, 2.0], [3.0]], "centroids": [[0.0, 0.0]]}}"#,
            "ragged",
        ),
        (
            r#"{"id": 1, "kind": "evaluate", "module": "lse", "function": "primal", "input": {"x": [1.0], "min_runs": -1}}"#,
            "`min_runs`",
        ),
        (
            r#"{"id": 1, "kind": "evaluate", "module": "saddle", "function": "fx", "input": {"start": [1.0, 1.0]}}"#,
            "ff, fr, rf, rr",
        ),
    ];
    for (line, needle) in cases {
        let r = respond(line);
        assert_eq!(r["success"], false, "{line}: {r}");
        let error = r["error"].as_str().unwrap_or_default();
        assert!(
            error.contains(needle),
            "{line}: {error:?} should name {needle:?}"
        );
    }
}

#[test]
fn an_answer_that_json_cannot_carry_is_an_error() {
    // 1e308² − 1e308² = ∞ − ∞: NaN.
    let r = respond(
        r#"{"id": 1, "kind": "evaluate", "module": "det", "function": "primal", "input": {"A": [1e308, 1e308, 1e308, 1e308], "ell": 2}}"#,
    );
    assert_eq!(r["success"], false, "{r}");
    assert!(r["error"].as_str().unwrap().contains("NaN"), "{r}");
}

#[test]
fn runs_follow_min_runs_and_min_seconds_with_one_prepare() {
    let timings = |input: Value| -> Vec<(String, u64)> {
        let message = json!({"id": 4, "kind": "evaluate", "module": "llsq",
                             "function": "gradient", "input": input});
        let r = respond(&message.to_string());
        assert_eq!(r["success"], true, "{r}");
        r["timings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["name"].as_str().unwrap().to_string(),
                    t["nanoseconds"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let t = timings(json!({"x": [0.5, 0.25], "n": 16, "min_runs": 3, "min_seconds": 0}));
    let names: Vec<&str> = t.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["prepare", "evaluate", "evaluate", "evaluate"]);
    // min_seconds as a float: runs until the evaluate timings add up to it.
    let t = timings(json!({"x": [0.5, 0.25], "n": 16, "min_runs": 1, "min_seconds": 0.02}));
    let total: u64 = t
        .iter()
        .filter(|(n, _)| n == "evaluate")
        .map(|(_, ns)| ns)
        .sum();
    assert!(total >= 20_000_000, "{total} ns");
    assert_eq!(t.iter().filter(|(n, _)| n == "prepare").count(), 1);
}
