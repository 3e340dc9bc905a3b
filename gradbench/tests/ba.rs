//! The `ba` eval through the protocol, checked against an independent `f64` projection
//! (ADBench's, with its branch at rotation zero), its central finite differences, the weight
//! error's derivative −2w, and the suite's layout of the deduplicated sparse Jacobian.

mod common;

use common::{central_difference, close, evaluate, failure, floats, integers, keys, respond, runs};
use serde_json::{Value, json};

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
    let columns: Vec<Vec<f64>> = (0..15)
        .map(|j| central_difference(residuals, v, j, 1e-6))
        .collect();
    (0..2)
        .flat_map(|r| columns.iter().map(move |c| c[r]))
        .collect()
}

/// The 15 parameters of observation 0: the camera, the point, the weight.
fn observation(cam: &[f64]) -> Vec<f64> {
    [cam, &POINT[..], &[W]].concat()
}

/// Checks a Jacobian answer of n cameras, m points and p observations of camera `cam`.
fn check_jacobian(out: &Value, n: usize, m: usize, p: usize, cam: &[f64]) {
    assert_eq!(keys(out), ["cols", "rows", "vals"]);
    let (points, weights) = (11 * n as i64, 11 * n as i64 + 3 * m as i64);
    let mut row: Vec<i64> = (0..11).collect();
    row.extend([points, points + 1, points + 2, weights]);
    let mut cols = [row.clone(), row].concat();
    cols.push(weights + p as i64 - 1);
    assert_eq!(integers(&out["cols"]), cols);

    let vals = floats(&out["vals"]);
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
    let out = evaluate("ba", "objective", &input(2, 3, 5, &CAM));
    assert_eq!(keys(&out), ["reproj_error", "w_err"]);
    assert_eq!(keys(&out["reproj_error"]), ["elements", "repeated"]);
    assert_eq!(keys(&out["w_err"]), ["element", "repeated"]);
    let want = residuals(&observation(&CAM));
    let elements = floats(&out["reproj_error"]["elements"]);
    assert_eq!(elements.len(), 2);
    for (got, want) in elements.into_iter().zip(want) {
        assert!(close(got, want, 1e-12), "{got} vs {want}");
    }
    assert_eq!(out["reproj_error"]["repeated"].as_u64(), Some(5));
    assert_eq!(out["w_err"]["element"].as_f64(), Some(1.0 - W * W));
    assert_eq!(out["w_err"]["repeated"].as_u64(), Some(5));
}

#[test]
fn jacobian_has_the_suites_layout_and_values() {
    let (n, m, p) = (2, 3, 16);
    let out = evaluate("ba", "jacobian", &input(n, m, p, &CAM));
    let mut rows: Vec<i64> = (0..30).map(|i| 15 * i).collect();
    rows.push(31 * p as i64);
    assert_eq!(integers(&out["rows"]), rows);
    check_jacobian(&out, n, m, p, &CAM);
}

#[test]
fn jacobian_of_few_observations_reaches_the_weight_rows() {
    // p = 5: the row pointer has 3p + 1 = 16 entries, the last five past the weight rows'
    // starts, and all of them are reported, then the last again.
    let (n, m, p) = (2, 3, 5);
    let out = evaluate("ba", "jacobian", &input(n, m, p, &CAM));
    let mut rows: Vec<i64> = (0..=10).map(|i| 15 * i).collect();
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
    let out = evaluate("ba", "jacobian", &input(n, m, p, &cam));
    check_jacobian(&out, n, m, p, &cam);
    let objective = evaluate("ba", "objective", &input(n, m, p, &cam));
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
    let response = respond("ba", "jacobian", &repeated);
    assert_eq!(runs(&response), 3, "{response}");
    let once = evaluate("ba", "jacobian", &input(2, 3, 16, &CAM));
    assert_eq!(response["output"], once);
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
            let error = failure("ba", function, &input);
            for name in names {
                assert!(error.contains(name), "{error:?} should name {name}");
            }
        }
    }
    let error = failure("ba", "gradient", &input(2, 3, 5, &CAM));
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
