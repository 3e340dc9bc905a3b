//! The answers of `hello`, `llsq`, `lse`, `det`, `ode`, `kmeans`, `saddle` and `particle`
//! against independent computations: derivatives written by hand (the `workloads` crate),
//! closed forms, and GradBench's expected constants.

mod common;

use common::{assert_close, evaluate, floats, uniforms};
use serde_json::json;
use wengert::Function;
use workloads::gradbench::{Det, Kmeans, Llsq, Ode};

#[test]
fn hello_squares_and_doubles() {
    assert_eq!(evaluate("hello", "square", &json!(3.0)), 9.0);
    assert_eq!(evaluate("hello", "double", &json!(9.0)), 18.0);
}

#[test]
fn llsq_matches_the_gradient_by_hand() {
    let (m, n) = (6, 40);
    let f = Llsq::new(m, n);
    let x = uniforms(1, m);
    let input = json!({"x": x, "n": n, "min_runs": 1, "min_seconds": 0});
    let y = evaluate("llsq", "primal", &input).as_f64().unwrap();
    assert_close(&[y], &f.eval(&x), 1e-13, "llsq primal");
    let g = floats(&evaluate("llsq", "gradient", &input));
    assert_close(&g, &f.gradient(&x), 1e-12, "llsq gradient");
}

#[test]
fn lse_gradient_is_the_softmax() {
    let x: Vec<f64> = uniforms(2, 9).iter().map(|u| 20.0 * u - 10.0).collect();
    let input = json!({"x": x, "min_runs": 1, "min_seconds": 0});
    let a = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let s: f64 = x.iter().map(|v| (v - a).exp()).sum();
    let y = evaluate("lse", "primal", &input).as_f64().unwrap();
    assert_close(&[y], &[a + s.ln()], 1e-14, "lse primal");
    let g = floats(&evaluate("lse", "gradient", &input));
    let softmax: Vec<f64> = x.iter().map(|v| (v - a).exp() / s).collect();
    assert_close(&g, &softmax, 1e-14, "lse gradient");
}

#[test]
fn det_gradient_is_the_cofactor_matrix() {
    for ell in [1, 2, 3, 5] {
        let f = Det::new(ell);
        let a = uniforms(3 + ell as u64, ell * ell);
        let input = json!({"A": a, "ell": ell, "min_runs": 1, "min_seconds": 0});
        let y = evaluate("det", "primal", &input).as_f64().unwrap();
        assert_close(&[y], &f.eval(&a), 1e-13, "det primal");
        let g = floats(&evaluate("det", "gradient", &input));
        assert_close(&g, &f.cofactors(&a), 1e-13, "det gradient");
    }
}

#[test]
fn ode_matches_the_exact_solution() {
    // y₃(2) = x₀x₁x₂x₃·2⁴/4!: RK4 is exact to O(h⁴), and 1000 steps make that 1e-12.
    let x = vec![0.9, 0.7, 0.4, 0.8];
    let input = json!({"x": x, "s": 1000, "min_runs": 1, "min_seconds": 0});
    let y = floats(&evaluate("ode", "primal", &input));
    assert_eq!(y.len(), 4);
    assert_close(&y[3..], &[Ode::solution(&x)], 1e-10, "ode primal");
    let g = floats(&evaluate("ode", "gradient", &input));
    assert_close(&g, &Ode::solution_gradient(&x), 1e-10, "ode gradient");
}

#[test]
fn kmeans_dir_matches_the_newton_step_by_hand() {
    let (k, n, d) = (3, 30, 2);
    let points = uniforms(5, n * d);
    let f = Kmeans {
        points: points.clone(),
        k,
        n,
        d,
    };
    // The last k points as centroids (GradBench's choice): each has a point of its own.
    let c = points[(n - k) * d..].to_vec();
    let rows = |v: &[f64]| v.chunks(d).map(<[f64]>::to_vec).collect::<Vec<_>>();
    let input =
        json!({"points": rows(&points), "centroids": rows(&c), "min_runs": 1, "min_seconds": 0});
    let cost = evaluate("kmeans", "cost", &input).as_f64().unwrap();
    assert_close(&[cost], &f.eval(&c), 1e-13, "kmeans cost");
    let dir = evaluate("kmeans", "dir", &input);
    assert_close(
        &common::rows(&dir).concat(),
        &f.dir(&c),
        1e-13,
        "kmeans dir",
    );
}

#[test]
fn saddle_gives_gradbench_s_answer_in_all_four_pairs() {
    for pair in ["ff", "fr", "rf", "rr"] {
        let out = floats(&evaluate(
            "saddle",
            pair,
            &json!({"start": [1.0, 1.0], "min_runs": 1, "min_seconds": 0}),
        ));
        assert_close(&out, &[8.246324826140356e-06; 4], 1e-12, pair);
    }
}

#[test]
fn particle_gives_gradbench_s_answer_in_all_four_pairs() {
    for pair in ["ff", "fr", "rf", "rr"] {
        let w = evaluate(
            "particle",
            pair,
            &json!({"w": 0.0, "min_runs": 1, "min_seconds": 0}),
        );
        assert_close(&[w.as_f64().unwrap()], &[0.2071918746486116], 1e-12, pair);
    }
}
