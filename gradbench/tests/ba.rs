//! The `ba` eval through the protocol, checked against an independent `f64` projection
//! (ADBench's, with its branch at rotation zero), its central finite differences, the weight
//! error's derivative −2w, and the suite's layout of the deduplicated sparse Jacobian.

use serde_json::{Value, json};
use wengert_gradbench::Tool;

/// A camera near the identity looking down +z: rotation, centre, focal length, principal
/// point, radial distortion.
const CAM: [f64; 11] = [
    0.02, -0.03, 0.01, 0.1, -0.2, 0.05, 520.0, 1.5, -2.0, -0.04, 0.008,
];
const POINT: [f64; 3] = [0.4, -0.3, 5.0];
const W: f64 = 0.9;
const FEAT: [f64; 2] = [31.0, -11.5];

fn input(n: usize, m: usize, p: usize, cam: &[f64]) -> Value {
    json!({"n": n, "m": m, "p": p, "cam": cam, "x": POINT, "w": W, "feat": FEAT,
           "min_runs": 1, "min_seconds": 0})
}

/// The two weighted reprojection errors of one observation from its 15 parameters (camera,
/// point, weight), as ADBench writes them.
fn residuals(v: &[f64]) -> [f64; 2] {
    let (cam, x, w) = (&v[..11], &v[11..14], v[14]);
    let xo = [x[0] - cam[3], x[1] - cam[4], x[2] - cam[5]];
    let r = &cam[..3];
    let cross = |a: &[f64], b: &[f64]| {
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    };
    let sqtheta: f64 = r.iter().map(|v| v * v).sum();
    let xcam: Vec<f64> = if sqtheta != 0.0 {
        let theta = sqtheta.sqrt();
        let axis: Vec<f64> = r.iter().map(|v| v / theta).collect();
        let c = cross(&axis, &xo);
        let dot: f64 = (0..3).map(|i| axis[i] * xo[i]).sum();
        (0..3)
            .map(|i| xo[i] * theta.cos() + c[i] * theta.sin() + axis[i] * dot * (1.0 - theta.cos()))
            .collect()
    } else {
        let c = cross(r, &xo);
        (0..3).map(|i| xo[i] + c[i]).collect()
    };
    let proj = [xcam[0] / xcam[2], xcam[1] / xcam[2]];
    let rsq = proj[0] * proj[0] + proj[1] * proj[1];
    let l = 1.0 + cam[9] * rsq + cam[10] * rsq * rsq;
    [
        w * (proj[0] * l * cam[6] + cam[7] - FEAT[0]),
        w * (proj[1] * l * cam[6] + cam[8] - FEAT[1]),
    ]
}

/// The 2×15 Jacobian of [`residuals`] by central differences, row by row.
fn finite_differences(v: &[f64]) -> Vec<f64> {
    let mut rows = vec![0.0; 30];
    for j in 0..15 {
        let h = 1e-6 * v[j].abs().max(1.0);
        let (mut up, mut down) = (v.to_vec(), v.to_vec());
        up[j] += h;
        down[j] -= h;
        let (a, b) = (residuals(&up), residuals(&down));
        for r in 0..2 {
            rows[15 * r + j] = (a[r] - b[r]) / (2.0 * h);
        }
    }
    rows
}

fn evaluate(function: &str, input: Value) -> Value {
    let line = json!({"id": 3, "kind": "evaluate", "module": "ba", "function": function,
                      "input": input});
    let mut tool: Tool = Default::default();
    let response = tool.respond(&line.to_string());
    assert_eq!(response["id"], 3, "{response}");
    response
}

fn success(function: &str, input: Value) -> Value {
    let response = evaluate(function, input);
    assert_eq!(response["success"], true, "{response}");
    assert!(response.get("error").is_none(), "{response}");
    let timings = response["timings"].as_array().expect("timings");
    assert!(
        timings.iter().any(|t| t["name"] == "evaluate"),
        "{response}"
    );
    response["output"].clone()
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * a.abs().max(b.abs()).max(1.0)
}

/// The keys of an object, sorted.
fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().expect("an object").keys().cloned().collect();
    k.sort();
    k
}

/// An array of JSON integers (not floats).
fn integers(v: &Value) -> Vec<u64> {
    v.as_array()
        .expect("an array")
        .iter()
        .map(|x| {
            x.as_u64()
                .unwrap_or_else(|| panic!("{x} is not an integer"))
        })
        .collect()
}

/// The 15 parameters of observation 0: the camera, the point, the weight.
fn observation(cam: &[f64]) -> Vec<f64> {
    [cam, &POINT[..], &[W]].concat()
}

/// Checks a Jacobian answer of n cameras, m points and p observations of camera `cam`.
fn check_jacobian(out: &Value, n: usize, m: usize, p: usize, cam: &[f64]) {
    assert_eq!(keys(out), ["cols", "rows", "vals"]);
    let (points, weights) = (11 * n as u64, 11 * n as u64 + 3 * m as u64);
    let mut row: Vec<u64> = (0..11).collect();
    row.extend([points, points + 1, points + 2, weights]);
    let mut cols = [row.clone(), row].concat();
    cols.push(weights + p as u64 - 1);
    assert_eq!(integers(&out["cols"]), cols);

    let vals: Vec<f64> = out["vals"]
        .as_array()
        .expect("vals")
        .iter()
        .map(|v| v.as_f64().expect("a number"))
        .collect();
    assert_eq!(vals.len(), 31);
    let fd = finite_differences(&observation(cam));
    for (i, (&got, &want)) in vals.iter().zip(&fd).enumerate() {
        assert!(close(got, want, 1e-6), "vals[{i}]: {got} vs {want}");
    }
    // The other coordinate of the principal point: a zero the layout stores.
    assert_eq!((vals[8], vals[15 + 7]), (0.0, 0.0));
    assert_eq!(vals[30], -2.0 * W);
}

#[test]
fn objective_matches_an_independent_projection() {
    let out = success("objective", input(2, 3, 5, &CAM));
    assert_eq!(keys(&out), ["reproj_error", "w_err"]);
    assert_eq!(keys(&out["reproj_error"]), ["elements", "repeated"]);
    assert_eq!(keys(&out["w_err"]), ["element", "repeated"]);
    let want = residuals(&observation(&CAM));
    let elements = out["reproj_error"]["elements"]
        .as_array()
        .expect("elements");
    assert_eq!(elements.len(), 2);
    for (got, want) in elements.iter().zip(want) {
        let got = got.as_f64().expect("a number");
        assert!(close(got, want, 1e-12), "{got} vs {want}");
    }
    assert_eq!(out["reproj_error"]["repeated"].as_u64(), Some(5));
    assert_eq!(out["w_err"]["element"].as_f64(), Some(1.0 - W * W));
    assert_eq!(out["w_err"]["repeated"].as_u64(), Some(5));
}

#[test]
fn jacobian_has_the_suites_layout_and_values() {
    let (n, m, p) = (2, 3, 16);
    let out = success("jacobian", input(n, m, p, &CAM));
    let mut rows: Vec<u64> = (0..30).map(|i| 15 * i).collect();
    rows.push(31 * p as u64);
    assert_eq!(integers(&out["rows"]), rows);
    check_jacobian(&out, n, m, p, &CAM);
}

#[test]
fn jacobian_of_few_observations_reaches_the_weight_rows() {
    // p = 5: the row pointer has 3p + 1 = 16 entries, the last five past the weight rows'
    // starts, and all of them are reported, then the last again.
    let (n, m, p) = (2, 3, 5);
    let out = success("jacobian", input(n, m, p, &CAM));
    let mut rows: Vec<u64> = (0..=10).map(|i| 15 * i).collect();
    rows.extend(151..=155);
    rows.push(155);
    assert_eq!(integers(&out["rows"]), rows);
    check_jacobian(&out, n, m, p, &CAM);
}

#[test]
fn jacobian_at_rotation_zero() {
    let mut cam = CAM;
    cam[..3].fill(0.0);
    let (n, m, p) = (3, 2, 20);
    let out = success("jacobian", input(n, m, p, &cam));
    check_jacobian(&out, n, m, p, &cam);
    let objective = success("objective", input(n, m, p, &cam));
    let want = residuals(&observation(&cam));
    for (r, want) in want.iter().enumerate() {
        let got = objective["reproj_error"]["elements"][r]
            .as_f64()
            .expect("a number");
        assert!(close(got, *want, 1e-12), "{got} vs {want}");
    }
}

#[test]
fn several_runs_give_one_timing_each_and_the_same_answer() {
    let mut repeated = input(2, 3, 16, &CAM);
    repeated["min_runs"] = json!(3);
    let response = evaluate("jacobian", repeated);
    let evaluations = response["timings"]
        .as_array()
        .expect("timings")
        .iter()
        .filter(|t| t["name"] == "evaluate")
        .count();
    assert_eq!(evaluations, 3);
    assert_eq!(
        response["output"],
        success("jacobian", input(2, 3, 16, &CAM))
    );
}

#[test]
fn malformed_input_is_an_error_naming_the_field() {
    let mut short = input(2, 3, 5, &CAM);
    short["cam"] = json!(&CAM[..10]);
    let mut missing = input(2, 3, 5, &CAM);
    missing.as_object_mut().unwrap().remove("feat");
    let mut text = input(2, 3, 5, &CAM);
    text["w"] = json!("heavy");
    let no_cameras = input(0, 3, 5, &CAM);
    for (input, names) in [
        (short, ["`cam`", "10 entries, expected 11"]),
        (missing, ["`feat`", "no field"]),
        (text, ["`w`", "number"]),
        (no_cameras, ["`n`", "n = 0"]),
    ] {
        for function in ["objective", "jacobian"] {
            let response = evaluate(function, input.clone());
            assert_eq!(response["success"], false, "{response}");
            let error = response["error"].as_str().expect("an error");
            for name in names {
                assert!(error.contains(name), "{error:?} should name {name}");
            }
        }
    }
    let response = evaluate("gradient", input(2, 3, 5, &CAM));
    assert_eq!(response["success"], false);
    let error = response["error"].as_str().expect("an error");
    assert!(
        error.contains("gradient") && error.contains("objective, jacobian"),
        "{error}"
    );
}

#[test]
fn the_pattern_is_detected_without_values() {
    use wengert::sparse::{Detection, PreparedSparseJacobian};
    use wengert_gradbench::evals::ba::BundleAdjustment;
    // The rotation has no branch on a value, so the pattern holds at every point, rotation
    // zero included: 14 structural nonzeros in each reprojection row (the row's own coordinate
    // of the principal point only), the weight alone in each weight row.
    let (n, m, p) = (2, 3, 7);
    let f = BundleAdjustment {
        n,
        m,
        p,
        feat: FEAT,
    };
    let mut x: Vec<f64> = (0..n).flat_map(|_| CAM).collect();
    x.extend((0..m).flat_map(|_| POINT));
    x.extend([W; 7]);
    let mut j = PreparedSparseJacobian::new(f, &x).expect("prepared");
    assert_eq!(j.plan().detection, Detection::Global);
    let pattern = j.pattern();
    for row in 0..2 * p {
        assert_eq!(pattern.row(row).len(), 14, "row {row}");
    }
    for i in 0..p {
        assert_eq!(pattern.row(2 * p + i), [11 * n + 3 * m + i]);
    }
    x[..3].fill(0.0);
    let at_zero = j.jacobian(&x).expect("the Jacobian at rotation zero");
    assert_eq!(at_zero.plan.redetected, None);
}
