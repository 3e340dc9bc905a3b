//! The `ht` eval through the protocol, on small synthetic hands (a chain of 3 bones, and a
//! hand of 22 bones laid out as ADBench's, so that every angle of theta moves a bone): the
//! residuals against a direct transcription of ADBench's C++ (its pose-parameter matrix,
//! `Rz·Ry·Rx` as three matrices, skinning over all bones), the Jacobian against central
//! differences of that transcription, the shapes of both answers, the sparsity that the
//! complicated case's plan relies on, and malformed inputs.

mod common;

use common::{
    Rng, assert_close, central_difference, failure, floats, integers, near, output, respond, rows,
    runs,
};
use serde_json::{Value, json};
use wengert_gradbench::evals::ht::Hand;

type M = Vec<Vec<f64>>;

fn mul(a: &M, b: &M) -> M {
    let (n, k, m) = (a.len(), b.len(), b[0].len());
    (0..n)
        .map(|i| {
            (0..m)
                .map(|j| (0..k).map(|l| a[i][l] * b[l][j]).sum())
                .collect()
        })
        .collect()
}

fn identity(n: usize) -> M {
    (0..n)
        .map(|i| (0..n).map(|j| (i == j) as u8 as f64).collect())
        .collect()
}

/// Rodrigues' rotation, as ADBench's `angle_axis_to_rotation_matrix`.
fn angle_axis(w: &[f64]) -> M {
    let norm = (w[0] * w[0] + w[1] * w[1] + w[2] * w[2]).sqrt();
    if norm < 1e-4 {
        return identity(3);
    }
    let (x, y, z) = (w[0] / norm, w[1] / norm, w[2] / norm);
    let (s, c) = (norm.sin(), norm.cos());
    vec![
        vec![
            x * x + (1.0 - x * x) * c,
            x * y * (1.0 - c) - z * s,
            x * z * (1.0 - c) + y * s,
        ],
        vec![
            x * y * (1.0 - c) + z * s,
            y * y + (1.0 - y * y) * c,
            y * z * (1.0 - c) - x * s,
        ],
        vec![
            x * z * (1.0 - c) - y * s,
            z * y * (1.0 - c) + x * s,
            z * z + (1.0 - z * z) * c,
        ],
    ]
}

/// ADBench's `euler_angles_to_rotation_matrix` of a pose column `xzy`.
fn euler(xzy: [f64; 3]) -> M {
    let (tx, ty, tz) = (xzy[0], xzy[2], xzy[1]);
    let mut rx = identity(3);
    rx[1][1] = tx.cos();
    rx[2][1] = tx.sin();
    rx[1][2] = -rx[2][1];
    rx[2][2] = rx[1][1];
    let mut ry = identity(3);
    ry[0][0] = ty.cos();
    ry[0][2] = ty.sin();
    ry[2][0] = -ry[0][2];
    ry[2][2] = ry[0][0];
    let mut rz = identity(3);
    rz[0][0] = tz.cos();
    rz[1][0] = tz.sin();
    rz[0][1] = -rz[1][0];
    rz[1][1] = rz[0][0];
    mul(&mul(&rz, &ry), &rx)
}

/// ADBench's residuals, transcribed from its C++ (`objective` of `ht.hpp`) with the model
/// read from `input`; `us` empty in the simple case.
fn reference(input: &Value, theta: &[f64], us: &[f64]) -> Vec<f64> {
    let model = &input["data"]["model"];
    let parents = integers(&model["parents"]);
    let bones = parents.len();
    // to_pose_params: 3 × (bones + 3), columns global rotation, scale, translation, bones.
    let mut pose = vec![[0.0; 3]; bones + 3];
    pose[0] = [theta[0], theta[1], theta[2]];
    pose[1] = [1.0; 3];
    pose[2] = [theta[3], theta[4], theta[5]];
    let (mut i_theta, mut i_pose) = (6, 5);
    for _finger in 0..5 {
        for i in 2..=4 {
            if i_pose < bones + 3 {
                pose[i_pose][0] = theta[i_theta];
            }
            i_theta += 1;
            if i == 2 {
                if i_pose < bones + 3 {
                    pose[i_pose][1] = theta[i_theta];
                }
                i_theta += 1;
            }
            i_pose += 1;
        }
        i_pose += 1;
    }
    // get_posed_relatives, relatives_to_absolutes, transforms.
    let mut absolutes: Vec<M> = Vec::new();
    let mut transforms: Vec<M> = Vec::new();
    for b in 0..bones {
        let mut tr = identity(4);
        let r = euler(pose[b + 3]);
        for i in 0..3 {
            tr[i][..3].copy_from_slice(&r[i]);
        }
        let relative = mul(&rows(&model["base_relatives"][b]), &tr);
        let absolute = match parents[b] {
            -1 => relative,
            p => mul(&absolutes[p as usize], &relative),
        };
        transforms.push(mul(&absolute, &rows(&model["inverse_base_absolutes"][b])));
        absolutes.push(absolute);
    }
    // get_skinned_vertex_positions: every vertex, every bone.
    let base = rows(&model["base_positions"]);
    let weights = rows(&model["weights"]);
    let mut positions = vec![[0.0; 3]; base.len()];
    for (b, t) in transforms.iter().enumerate() {
        for (v, p) in positions.iter_mut().enumerate() {
            for (i, p) in p.iter_mut().enumerate() {
                let moved: f64 = (0..4).map(|k| t[i][k] * base[v][k]).sum();
                *p += moved * weights[v][b];
            }
        }
    }
    if model["is_mirrored"] == true {
        for p in &mut positions {
            p[0] = -p[0];
        }
    }
    let r = angle_axis(&theta[..3]);
    for p in &mut positions {
        let q = *p;
        for i in 0..3 {
            p[i] = (0..3).map(|k| r[i][k] * pose[1][k] * q[k]).sum::<f64>() + pose[2][i];
        }
    }
    let points = rows(&input["data"]["points"]);
    let correspondences = integers(&input["data"]["correspondences"]);
    let triangles = rows(&model["triangles"]);
    let mut err = Vec::new();
    for (i, point) in points.iter().enumerate() {
        let c = correspondences[i] as usize;
        for j in 0..3 {
            let on_hand = if us.is_empty() {
                positions[c][j]
            } else {
                let v = triangles[c].iter().map(|&v| v as usize).collect::<Vec<_>>();
                let (u0, u1) = (us[2 * i], us[2 * i + 1]);
                u0 * positions[v[0]][j]
                    + u1 * positions[v[1]][j]
                    + (1.0 - u0 - u1) * positions[v[2]][j]
            };
            err.push(point[j] - on_hand);
        }
    }
    err
}

/// A rigid transform (rotation by a random small axis-angle, a random translation) as 4×4.
fn rigid(r: &mut Rng) -> M {
    let w: Vec<f64> = (0..3).map(|_| r.within(-0.6, 0.6)).collect();
    let rot = angle_axis(&w);
    let mut m = identity(4);
    for i in 0..3 {
        m[i][..3].copy_from_slice(&rot[i]);
        m[i][3] = r.within(-0.5, 0.5);
    }
    m
}

/// The inverse of a rigid transform.
fn inverse(m: &M) -> M {
    let mut inv = identity(4);
    for i in 0..3 {
        for j in 0..3 {
            inv[i][j] = m[j][i];
        }
        inv[i][3] = -(0..3).map(|k| m[k][i] * m[k][3]).sum::<f64>();
    }
    inv
}

/// The parents of a hand laid out as ADBench's: bones 0 and 1 (a root and the wrist), then
/// five fingers of four bones in a chain from the wrist.
fn hand_parents() -> Vec<i64> {
    let mut parents = vec![-1, 0];
    for finger in 0..5 {
        for joint in 0..4 {
            parents.push(if joint == 0 {
                1
            } else {
                2 + 4 * finger + joint - 1
            });
        }
    }
    parents
}

/// An input: a model with these parents, 10 vertices, 6 triangles and 6 points; `us` in
/// the complicated case.
fn input(parents: &[i64], complicated: bool, mirrored: bool) -> Value {
    let mut r = Rng(0xbada55 + parents.len() as u64);
    let bones = parents.len();
    let (vertices, points) = (10, 6);
    let mut relatives: Vec<M> = Vec::new();
    let mut absolutes: Vec<M> = Vec::new();
    for &p in parents {
        let relative = rigid(&mut r);
        absolutes.push(match p {
            -1 => relative.clone(),
            p => mul(&absolutes[p as usize], &relative),
        });
        relatives.push(relative);
    }
    let inverses: Vec<M> = absolutes.iter().map(inverse).collect();
    let positions: Vec<Vec<f64>> = (0..vertices)
        .map(|_| {
            vec![
                r.within(-1.0, 1.0),
                r.within(-1.0, 1.0),
                r.within(-1.0, 1.0),
                1.0,
            ]
        })
        .collect();
    // Vertex v < 5 hangs mostly on the tip of finger v (the last bone of a chain), so that
    // every joint moves some vertex; each vertex also on two random bones.
    let weights: Vec<Vec<f64>> = (0..vertices)
        .map(|v| {
            let mut w = vec![0.0; bones];
            let main = if v < 5 {
                (5 + 4 * v).min(bones - 1)
            } else {
                v % bones
            };
            w[main] = 0.6;
            for _ in 0..2 {
                w[(r.uniform() * bones as f64) as usize] += 0.2;
            }
            w
        })
        .collect();
    let triangles: Vec<[usize; 3]> = (0..6).map(|t| [t, (t + 3) % 10, (t + 7) % 10]).collect();
    let correspondences: Vec<usize> = (0..points).map(|i| (i + 1) % 6).collect();
    let observed: Vec<Vec<f64>> = (0..points)
        .map(|_| (0..3).map(|_| r.within(-1.0, 1.0)).collect())
        .collect();
    let us: Vec<[f64; 2]> = if complicated {
        (0..points)
            .map(|_| [r.within(0.0, 0.5), r.within(0.0, 0.5)])
            .collect()
    } else {
        Vec::new()
    };
    let theta: Vec<f64> = (0..26).map(|_| r.within(-0.5, 0.5)).collect();
    json!({
        "theta": theta,
        "data": {
            "model": {
                "bone_count": bones,
                "bone_names": (0..bones).map(|b| format!("bone{b}")).collect::<Vec<_>>(),
                "parents": parents,
                "base_relatives": relatives,
                "inverse_base_absolutes": inverses,
                "base_positions": positions,
                "weights": weights,
                "triangles": triangles,
                "is_mirrored": mirrored,
            },
            "correspondences": correspondences,
            "points": observed,
        },
        "us": us,
        "min_runs": 2,
        "min_seconds": 0,
    })
}

/// theta and the flat `us` of an input.
fn parameters(input: &Value) -> (Vec<f64>, Vec<f64>) {
    let us = rows(&input["us"]).concat();
    (floats(&input["theta"]), us)
}

fn check_objective(parents: &[i64], complicated: bool, mirrored: bool) {
    let input = input(parents, complicated, mirrored);
    let response = respond("ht", "objective", &input);
    let residuals = floats(output(&response));
    assert_eq!(runs(&response), 2, "{response}");
    let (theta, us) = parameters(&input);
    let expected = reference(&input, &theta, &us);
    assert_eq!(expected.len(), 18);
    assert_close(&residuals, &expected, 1e-12, "residual");
}

#[test]
fn simple_objective_matches_a_transcription_of_the_reference() {
    check_objective(&[-1, 0, 1], false, false);
    check_objective(&hand_parents(), false, false);
    check_objective(&hand_parents(), false, true);
}

#[test]
fn complicated_objective_matches_a_transcription_of_the_reference() {
    check_objective(&[-1, 0, 1], true, false);
    check_objective(&hand_parents(), true, false);
    check_objective(&hand_parents(), true, true);
}

/// The central difference of the reference residuals along one parameter: `theta[k]`, or
/// `us[k]` when `along` is `(true, k)`.
fn difference(input: &Value, theta: &[f64], us: &[f64], along: (bool, usize)) -> Vec<f64> {
    let (is_u, k) = along;
    let x = [theta, us].concat();
    let f = |x: &[f64]| reference(input, &x[..theta.len()], &x[theta.len()..]);
    central_difference(f, &x, if is_u { theta.len() + k } else { k }, 1e-5)
}

/// Checks the Jacobian of `input` against central differences; returns it, row by row.
fn check_jacobian(input: &Value, complicated: bool) -> Vec<Vec<f64>> {
    let response = respond("ht", "jacobian", input);
    let rows = rows(output(&response));
    assert_eq!(runs(&response), 2, "{response}");
    let columns = if complicated { 28 } else { 26 };
    assert_eq!(rows.len(), 18);
    assert!(rows.iter().all(|r| r.len() == columns));
    let (theta, us) = parameters(input);
    let close = |a: f64, e: f64| near(a, e, 1e-6, 1e-2);
    let first_theta = columns - 26;
    for c in 0..26 {
        let fd = difference(input, &theta, &us, (false, c));
        for (r, row) in rows.iter().enumerate() {
            let a = row[first_theta + c];
            assert!(
                close(a, fd[r]),
                "∂err[{r}]/∂theta[{c}]: {a} against {}",
                fd[r]
            );
        }
    }
    if complicated {
        for point in 0..6 {
            for k in [0, 1] {
                let fd = difference(input, &theta, &us, (true, 2 * point + k));
                for (r, fd) in fd.iter().enumerate() {
                    if r / 3 == point {
                        let a = rows[r][k];
                        assert!(
                            close(a, *fd),
                            "∂err[{r}]/∂u[{point}][{k}]: {a} against {fd}"
                        );
                    } else {
                        // Another point's coordinates do not reach this row.
                        assert_eq!(*fd, 0.0);
                    }
                }
            }
        }
    }
    rows
}

#[test]
fn simple_jacobian_matches_central_differences() {
    check_jacobian(&input(&[-1, 0, 1], false, false), false);
    let rows = check_jacobian(&input(&hand_parents(), false, true), false);
    // In the 22-bone hand every parameter moves some point.
    for c in 0..26 {
        assert!(rows.iter().any(|r| r[c] != 0.0), "column {c} is zero");
    }
}

#[test]
fn complicated_jacobian_matches_central_differences() {
    check_jacobian(&input(&[-1, 0, 1], true, false), true);
    let rows = check_jacobian(&input(&hand_parents(), true, false), true);
    for c in 0..28 {
        assert!(rows.iter().any(|r| r[c] != 0.0), "column {c} is zero");
    }
}

/// The plan of the complicated case's Jacobian with `points` points (cycling over the
/// synthetic hand's triangles), checked: each residual reaches exactly its own point's two
/// coordinates among the `us`; returns the number of column colours.
fn complicated_colours(points: usize) -> usize {
    use wengert::sparse::{PreparedSparseJacobian, SparseOptions, Strategy};
    let mut input = input(&hand_parents(), true, false);
    let observed: Vec<Value> = (0..points)
        .map(|i| json!([0.1 * i as f64, 0.2, -0.3]))
        .collect();
    let us: Vec<Value> = (0..points).map(|i| json!([0.01 * i as f64, 0.3])).collect();
    let correspondences: Vec<usize> = (0..points).map(|i| i % 6).collect();
    input["data"]["points"] = json!(observed);
    input["data"]["correspondences"] = json!(correspondences);
    input["us"] = json!(us);
    let (hand, x) = Hand::read(&input).unwrap();
    assert!(hand.is_complicated());
    assert_eq!(x.len(), 2 * points + 26);
    let options = SparseOptions {
        threads: false,
        ..SparseOptions::default()
    };
    let mut prepared = PreparedSparseJacobian::with_options(hand, &x, options).unwrap();
    let plan = prepared.plan().clone();
    assert_eq!(plan.strategy, Strategy::Columns, "{plan}");
    for r in 0..3 * points {
        let us: Vec<usize> = (prepared.pattern().row(r).iter())
            .copied()
            .filter(|&c| c < 2 * points)
            .collect();
        let own = 2 * (r / 3);
        assert_eq!(us, [own, own + 1], "row {r}");
    }
    assert_eq!(prepared.jacobian(&x).unwrap().plan.threads, 1);
    plan.column_colours.unwrap()
}

/// What the module's Jacobian relies on: in the complicated case the `us` columns take two
/// colours, so the compressed sweeps carry at most 28 lanes whatever the number of points.
#[test]
fn complicated_colours_do_not_grow_with_the_points() {
    let colours = complicated_colours(60);
    assert!((3..=28).contains(&colours), "{colours} colours");
    assert_eq!(complicated_colours(240), colours);
}

#[test]
fn a_missing_field_is_named() {
    let mut input = input(&[-1, 0, 1], true, false);
    let model = input["data"]["model"].as_object_mut().unwrap();
    model.remove("weights");
    let error = failure("ht", "jacobian", &input);
    assert!(
        error.contains("`data.model` has no field `weights`"),
        "{error}"
    );

    let mut input = self::input(&[-1, 0, 1], false, false);
    input.as_object_mut().unwrap().remove("theta");
    let error = failure("ht", "objective", &input);
    assert!(error.contains("no field `theta`"), "{error}");
}

/// A change that makes an input wrong.
type Spoil = fn(&mut Value);

#[test]
fn wrong_sizes_and_indices_are_named() {
    let cases: [(Spoil, &str); 6] = [
        (
            |i| i["theta"] = json!(vec![0.0; 25]),
            "`theta` has 25 entries, expected 26",
        ),
        (
            |i| i["us"] = json!([[0.1, 0.2]]),
            "`us` has 1 rows, expected 6",
        ),
        (
            |i| i["data"]["correspondences"][2] = json!(6),
            "`data.correspondences[2]` is 6, expected the index of a triangle (below 6)",
        ),
        (
            |i| i["data"]["model"]["weights"][1] = json!([0.5, 0.5]),
            "`data.model.weights[1]` has 2 entries, expected 3",
        ),
        (
            |i| i["data"]["model"]["parents"] = json!([-1, 2, 1]),
            "`data.model.parents[1]` is 2",
        ),
        (
            |i| i["data"]["model"]["base_relatives"][0] = json!(vec![vec![1.0; 4]; 3]),
            "`data.model.base_relatives[0]` has 3 rows, expected 4",
        ),
    ];
    for (spoil, expected) in cases {
        let mut input = input(&[-1, 0, 1], true, false);
        spoil(&mut input);
        let error = failure("ht", "jacobian", &input);
        assert!(error.contains(expected), "{error}");
    }
}
