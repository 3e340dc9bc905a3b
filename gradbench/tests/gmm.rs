//! The `gmm` eval through the protocol, checked against an independent `f64` objective (the
//! precision factor built as a full matrix, ln Γ of half-integers summed exactly), its central
//! finite differences, and the prior's gradient in closed form.

mod common;

use common::{
    Rng, central_difference, close, evaluate, failure, floats, keys, respond, rows, runs,
};
use serde_json::{Value, json};
use std::f64::consts::PI;

/// A problem: sizes, the prior, the data and the parameters, as the eval sends them.
#[derive(Clone)]
struct Problem {
    d: usize,
    k: usize,
    m: usize,
    gamma: f64,
    x: Vec<Vec<f64>>,
    alpha: Vec<f64>,
    mu: Vec<Vec<f64>>,
    q: Vec<Vec<f64>>,
    l: Vec<Vec<f64>>,
}

impl Problem {
    /// Normal data and parameters but μ (uniform), as the suite draws them.
    fn new(d: usize, k: usize, n: usize, m: usize, gamma: f64, seed: u64) -> Problem {
        let mut rng = Rng(seed);
        let tri = d * (d - 1) / 2;
        Problem {
            d,
            k,
            m,
            gamma,
            x: rng.rows(n, d, Rng::normal),
            alpha: rng.vector(k, Rng::normal),
            mu: rng.rows(k, d, Rng::uniform),
            q: rng.rows(k, d, Rng::normal),
            l: rng.rows(k, tri, Rng::normal),
        }
    }

    fn input(&self) -> Value {
        json!({
            "d": self.d, "k": self.k, "n": self.x.len(), "x": self.x, "m": self.m,
            "gamma": self.gamma, "alpha": self.alpha, "mu": self.mu, "q": self.q, "l": self.l,
            "min_runs": 1, "min_seconds": 0,
        })
    }

    /// The parameters flattened: α, μ, q, l, each row by row.
    fn flat(&self) -> Vec<f64> {
        let mut v = self.alpha.clone();
        for block in [&self.mu, &self.q, &self.l] {
            v.extend(block.iter().flatten());
        }
        v
    }

    /// The problem with the flattened parameters `v`.
    fn with(&self, v: &[f64]) -> Problem {
        let (d, k, tri) = (self.d, self.k, self.d * (self.d - 1) / 2);
        let rows = |start: usize, cols: usize| -> Vec<Vec<f64>> {
            (0..k)
                .map(|c| v[start + c * cols..start + (c + 1) * cols].to_vec())
                .collect()
        };
        Problem {
            alpha: v[..k].to_vec(),
            mu: rows(k, d),
            q: rows(k + k * d, d),
            l: rows(k + 2 * k * d, tri),
            ..self.clone()
        }
    }

    /// The log posterior, written independently of the tool: Qₖ as a full d×d matrix.
    fn objective(&self) -> f64 {
        let (d, k, n) = (self.d, self.k, self.x.len());
        let lse = |v: &[f64]| {
            let a = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            a + v.iter().map(|b| (b - a).exp()).sum::<f64>().ln()
        };
        let qmat: Vec<Vec<Vec<f64>>> = (0..k)
            .map(|c| {
                let mut m = vec![vec![0.0; d]; d];
                let mut strict = self.l[c].iter();
                for (col, &qj) in self.q[c].iter().enumerate() {
                    m[col][col] = qj.exp();
                    for row in m.iter_mut().skip(col + 1) {
                        row[col] = *strict.next().expect("d(d − 1)/2 entries");
                    }
                }
                m
            })
            .collect();
        let mut total = -(n as f64) * d as f64 * 0.5 * (2.0 * PI).ln();
        for xi in &self.x {
            let beta: Vec<f64> = (0..k)
                .map(|c| {
                    let diff: Vec<f64> = (0..d).map(|j| xi[j] - self.mu[c][j]).collect();
                    let sq: f64 = (0..d)
                        .map(|r| (0..d).map(|j| qmat[c][r][j] * diff[j]).sum::<f64>().powi(2))
                        .sum();
                    self.alpha[c] + self.q[c].iter().sum::<f64>() - 0.5 * sq
                })
                .collect();
            total += lse(&beta);
        }
        total -= n as f64 * lse(&self.alpha);
        total + self.prior()
    }

    /// The prior's part, constant included.
    fn prior(&self) -> f64 {
        let (d, m) = (self.d as f64, self.m as f64);
        let big_n = d + m + 1.0;
        let log_gamma_d = 0.25 * d * (d - 1.0) * PI.ln()
            + (1..=self.d)
                .map(|j| ln_gamma_half_integer((self.d + self.m + 2 - j) as u64))
                .sum::<f64>();
        let c = big_n * d * (self.gamma.ln() - 0.5 * 2f64.ln()) - log_gamma_d;
        let g2 = self.gamma * self.gamma;
        (0..self.k)
            .map(|comp| {
                let frob: f64 = self.q[comp].iter().map(|v| (2.0 * v).exp()).sum::<f64>()
                    + self.l[comp].iter().map(|v| v * v).sum::<f64>();
                -0.5 * g2 * frob + m * self.q[comp].iter().sum::<f64>() + c
            })
            .sum()
    }
}

/// ln Γ(t/2) for an integer t ≥ 1, from Γ(a + 1) = a Γ(a), Γ(1) = 1 and Γ(½) = √π.
fn ln_gamma_half_integer(t: u64) -> f64 {
    let mut a = t as f64 / 2.0;
    let (mut sum, base) = if t.is_multiple_of(2) {
        (0.0, 1.0)
    } else {
        (0.5 * PI.ln(), 0.5)
    };
    while a > base {
        a -= 1.0;
        sum += a.ln();
    }
    sum
}

/// The gradient object flattened (α, μ, q, l), its keys and shapes checked.
fn flat_gradient(g: &Value, p: &Problem) -> Vec<f64> {
    assert_eq!(keys(g), ["alpha", "l", "mu", "q"]);
    let tri = p.d * (p.d - 1) / 2;
    let mut flat = floats(&g["alpha"]);
    assert_eq!(flat.len(), p.k);
    for (name, cols) in [("mu", p.d), ("q", p.d), ("l", tri)] {
        let rows = rows(&g[name]);
        assert_eq!(rows.len(), p.k, "{name}");
        for row in rows {
            assert_eq!(row.len(), cols, "{name}");
            flat.extend(row);
        }
    }
    flat
}

/// Checks a flattened gradient against central differences of [`Problem::objective`].
fn check_gradient(g: &[f64], p: &Problem) {
    let v = p.flat();
    assert_eq!(g.len(), v.len());
    for (i, &gi) in g.iter().enumerate() {
        let fd = central_difference(|v| [p.with(v).objective()], &v, i, 1e-6)[0];
        assert!(close(gi, fd, 1e-6), "entry {i}: {gi} vs {fd}");
    }
}

#[test]
fn objective_matches_an_independent_computation() {
    let p = Problem::new(3, 2, 5, 1, 1.0, 1);
    let out = evaluate("gmm", "objective", &p.input());
    let value = out.as_f64().expect("a number");
    let expected = p.objective();
    assert!(close(value, expected, 1e-12), "{value} vs {expected}");
}

#[test]
fn jacobian_matches_central_differences() {
    let p = Problem::new(3, 2, 5, 1, 1.0, 2);
    let out = evaluate("gmm", "jacobian", &p.input());
    let g = flat_gradient(&out, &p);
    assert_eq!(g.len(), 2 + 6 + 6 + 6);
    check_gradient(&g, &p);
}

#[test]
fn the_prior_alone_has_its_closed_form() {
    // No data: the objective is the prior, constant included, and its gradient is
    // ∂/∂q = m − γ² exp(2q), ∂/∂l = −γ² l, nothing for α and μ.
    let mut p = Problem::new(3, 2, 0, 2, 1.5, 3);
    p.x.clear();
    let value = evaluate("gmm", "objective", &p.input())
        .as_f64()
        .expect("a number");
    assert!(close(value, p.prior(), 1e-13), "{value} vs {}", p.prior());
    let g = evaluate("gmm", "jacobian", &p.input());
    let g2 = p.gamma * p.gamma;
    assert_eq!(floats(&g["alpha"]), [0.0, 0.0]);
    for c in 0..p.k {
        assert!(floats(&g["mu"][c]).iter().all(|&v| v == 0.0));
        for (j, &gq) in floats(&g["q"][c]).iter().enumerate() {
            let want = p.m as f64 - g2 * (2.0 * p.q[c][j]).exp();
            assert!(close(gq, want, 1e-13), "q[{c}][{j}]: {gq} vs {want}");
        }
        for (j, &gl) in floats(&g["l"][c]).iter().enumerate() {
            let want = -g2 * p.l[c][j];
            assert!(close(gl, want, 1e-13), "l[{c}][{j}]: {gl} vs {want}");
        }
    }
}

#[test]
fn the_triangle_is_read_column_by_column() {
    // From d = 4 on, the column-by-column order of the strict lower triangle differs from the
    // row-by-row one ((2, 1) comes after (3, 0)).
    let p = Problem::new(5, 3, 7, 2, 0.8, 7);
    let value = evaluate("gmm", "objective", &p.input())
        .as_f64()
        .expect("a number");
    assert!(
        close(value, p.objective(), 1e-12),
        "{value} vs {}",
        p.objective()
    );
    let g = flat_gradient(&evaluate("gmm", "jacobian", &p.input()), &p);
    check_gradient(&g, &p);
}

#[test]
fn one_dimension_has_empty_triangles() {
    let p = Problem::new(1, 3, 4, 0, 1.0, 4);
    assert_eq!(p.input()["l"], json!([[], [], []]));
    let out = evaluate("gmm", "jacobian", &p.input());
    assert_eq!(out["l"], json!([[], [], []]));
    let g = flat_gradient(&out, &p);
    check_gradient(&g, &p);
    let value = evaluate("gmm", "objective", &p.input())
        .as_f64()
        .expect("a number");
    assert!(close(value, p.objective(), 1e-12));
}

#[test]
fn several_runs_give_one_timing_each_and_the_same_answer() {
    let p = Problem::new(3, 2, 5, 1, 1.0, 5);
    let mut input = p.input();
    input["min_runs"] = json!(3);
    let response = respond("gmm", "jacobian", &input);
    assert_eq!(runs(&response), 3, "{response}");
    assert_eq!(response["output"], evaluate("gmm", "jacobian", &p.input()));
}

#[test]
fn malformed_input_is_an_error_naming_the_field() {
    let p = Problem::new(3, 2, 5, 1, 1.0, 6);
    let mut ragged = p.input();
    ragged["x"][2] = json!([1.0, 2.0]);
    let mut missing = p.input();
    missing.as_object_mut().unwrap().remove("q");
    let mut short = p.input();
    short["alpha"] = json!([1.0]);
    let mut wrong_rows = p.input();
    wrong_rows["n"] = json!(6);
    for (input, names) in [
        (ragged, ["`x`", "row 2"]),
        (missing, ["`q`", "no field"]),
        (short, ["`alpha`", "1 entries, expected 2"]),
        (wrong_rows, ["`x`", "6×3"]),
    ] {
        for function in ["objective", "jacobian"] {
            let error = failure("gmm", function, &input);
            for name in names {
                assert!(error.contains(name), "{error:?} should name {name}");
            }
        }
    }
    let error = failure("gmm", "hessian", &p.input());
    assert!(
        error.contains("hessian") && error.contains("objective, jacobian"),
        "{error}"
    );
}

#[test]
fn ln_gamma_matches_factorials_and_half_integers() {
    use wengert_gradbench::evals::gmm::ln_gamma;
    for t in 1..=200u32 {
        let (got, want) = (ln_gamma(t as f64 / 2.0), ln_gamma_half_integer(t.into()));
        assert!(close(got, want, 1e-14), "ln Γ({t}/2): {got} vs {want}");
    }
    // Between the half-integers: Γ(1/3) and Γ(7.3).
    assert!(close(
        ln_gamma(1.0 / 3.0),
        2.678_938_534_707_747_6_f64.ln(),
        1e-14
    ));
    assert!(close(
        ln_gamma(7.3),
        1_271.423_633_663_908_5_f64.ln(),
        1e-14
    ));
    assert!(ln_gamma(0.0).is_nan() && ln_gamma(-1.5).is_nan());
}
