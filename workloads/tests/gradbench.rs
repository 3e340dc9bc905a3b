//! The GradBench objectives: values against independent formulas, gradients against hand-written
//! ones, forward mode and central differences.

use jacobian::Mode;
use nalgebra::DMatrix;
use workloads::gradbench::{Det, Gmm, Kmeans, Llsq, Lse, Lstm, Ode};
use workloads::{Function, assert_close};

/// Reverse gradient, forward gradient (n forward sweeps) and the value.
fn both_modes<F: Function + Sync>(f: &F, x: &[f64]) -> (f64, Vec<f64>, Vec<f64>) {
    let (y, g) = jacobian::gradient(f, x).unwrap();
    let fwd = jacobian::jacobian_with(f, x, Mode::Forward).unwrap();
    assert_eq!(fwd.value, vec![y]);
    (y, g, fwd.matrix.as_slice().to_vec())
}

/// Central differences along coordinate j with step h (error O(h²)).
fn central<F: Function>(f: &F, x: &[f64], j: usize, h: f64) -> f64 {
    let (mut a, mut b) = (x.to_vec(), x.to_vec());
    a[j] += h;
    b[j] -= h;
    (f.eval(&a)[0] - f.eval(&b)[0]) / (2.0 * h)
}

#[test]
fn llsq_value_and_gradient() {
    let f = Llsq::new(128, 1024);
    let x = f.input();
    // The value by a plain double loop with powf, as the suite's manual tool does.
    let n = 1024;
    let want: f64 = 0.5
        * (0..n)
            .map(|i| {
                let t = -1.0 + i as f64 * 2.0 / (n as f64 - 1.0);
                let s = if t > 0.0 {
                    1.0
                } else if t < 0.0 {
                    -1.0
                } else {
                    0.0
                };
                let p: f64 = x
                    .iter()
                    .enumerate()
                    .map(|(j, xj)| xj * t.powi(j as i32))
                    .sum();
                (s - p) * (s - p)
            })
            .sum::<f64>();
    let (y, g, fwd) = both_modes(&f, &x);
    assert!((y - want).abs() <= 1e-10 * want, "{y} vs {want}");
    assert_close(&g, &f.gradient(&x), 1e-10, "llsq: reverse vs by hand");
    assert_close(&g, &fwd, 1e-12, "llsq: reverse vs forward");
}

#[test]
fn lse_gradient_is_softmax_even_at_ties() {
    let f = Lse::new(10_000);
    let x = f.input();
    let (_, g, fwd) = both_modes(&Lse::new(300), &x[..300]);
    assert_close(&g, &Lse::gradient(&x[..300]), 1e-12, "lse: softmax");
    assert_close(&g, &fwd, 1e-12, "lse: reverse vs forward");
    // At n = 10⁴ the argmax element's entry also carries 1 − Σ softmax, the rounding error of
    // a sum of 10⁴ terms (exactly what the program computes): compare absolutely.
    let (_, g) = jacobian::gradient(&f, &x).unwrap();
    let worst = g
        .iter()
        .zip(Lse::gradient(&x))
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(worst <= 1e-13, "lse n = 10⁴: {worst:e}");
    // A tie at the maximum: max splits its adjoint ½/½, and the shift cancels exactly, so the
    // gradient is still the softmax.
    let tied = [0.3, 0.9, 0.9, -0.2];
    let (_, g) = jacobian::gradient(&Lse::new(4), &tied).unwrap();
    assert_close(&g, &Lse::gradient(&tied), 1e-15, "lse with a tie");
}

#[test]
fn lstm_gradient_three_ways_and_its_value_by_hand() {
    let f = Lstm::new(2, 3, 6);
    let x = f.input();
    let (_, g, fwd) = both_modes(&f, &x);
    assert_close(&g, &fwd, 1e-12, "lstm: reverse vs forward");
    for (j, gj) in g.iter().enumerate() {
        let d = central(&f, &x, j, 1e-5);
        assert!(
            (gj - d).abs() <= 1e-7 * (1.0 + d.abs()),
            "∂/∂x{j}: {gj} vs {d}"
        );
    }
    // One layer of one unit over two characters, by hand: the loss is
    // −bit₁·(y − ln(eʸ + 2)) with y the prediction from the first character.
    let sig = |v: f64| 1.0 / (1.0 + (-v).exp());
    let (h0, c0, b0, b1) = (0.3, 0.7, 1.0, 1.0);
    let f = Lstm::with_data(1, 1, vec![h0, c0], vec![b0, b1]).unwrap();
    let p = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.1, 1.2];
    let input = p[8] * b0;
    let cell = c0 * sig(input * p[0] + p[4]) + sig(h0 * p[1] + p[5]) * (h0 * p[3] + p[7]).tanh();
    let hidden = sig(input * p[2] + p[6]) * cell.tanh();
    let pred = hidden * p[9] + p[10];
    let want = -(pred - (pred.exp() + 2.0).ln()) * b1;
    let got = f.eval(&p)[0];
    assert!((got - want).abs() <= 1e-15 * want.abs(), "{got} vs {want}");
    // Data of the wrong size is an error that names the sizes.
    let e = Lstm::with_data(2, 3, vec![0.0; 12], vec![1.0; 5]).unwrap_err();
    assert!(e.contains("5") && e.contains("3 bits"), "{e}");
}

#[test]
fn ode_gradient_against_the_exact_solution_and_forward_mode() {
    // With n ≤ 4 the solution is a polynomial of degree ≤ 4 in t, which RK4 integrates exactly.
    let f = Ode::new(4, 7);
    let x = f.input();
    let (y, g, fwd) = both_modes(&f, &x);
    assert!((y - Ode::solution(&x)).abs() <= 1e-14 * y, "{y}");
    assert_close(
        &g,
        &Ode::solution_gradient(&x),
        1e-13,
        "ode: reverse vs exact",
    );
    assert_close(&g, &fwd, 1e-14, "ode: reverse vs forward");
    // The `Function` and the `Recurrence` are one computation.
    let r = reverse::checkpoint::run(&f, &x, &f.initial_state(), f.s);
    assert_eq!(r, y);
}

#[test]
fn det_value_and_cofactors() {
    // A triangular matrix: the product of its diagonal.
    let f = Det::new(4);
    let mut a = vec![0.0; 16];
    for i in 0..4 {
        for j in i..4 {
            a[i * 4 + j] = (i + 2 * j + 1) as f64;
        }
    }
    assert_eq!(f.eval(&a)[0], 1.0 * 4.0 * 7.0 * 10.0);
    for ell in [2, 3, 5, 6] {
        let f = Det::new(ell);
        let x = f.input();
        let want = DMatrix::from_row_slice(ell, ell, &x).determinant();
        let (y, g, fwd) = both_modes(&f, &x);
        assert!(
            (y - want).abs() <= 1e-12 * want.abs().max(1.0),
            "ℓ = {ell}: {y} vs {want}"
        );
        assert_close(
            &g,
            &f.cofactors(&x),
            1e-11,
            &format!("ℓ = {ell}: cofactors"),
        );
        assert_close(&g, &fwd, 1e-13, &format!("ℓ = {ell}: reverse vs forward"));
    }
}

/// The GMM objective by its textbook definition: the log-likelihood of the mixture with
/// covariance matrices (QᵀQ)⁻¹, and the log density of a Wishart distribution, from nalgebra's
/// inverse and determinant.
fn gmm_by_definition(f: &Gmm, p: &[f64]) -> f64 {
    let (d, k) = (f.d, f.k);
    let tri = d * (d - 1) / 2;
    let (alpha, rest) = p.split_at(k);
    let (mu, rest) = rest.split_at(k * d);
    let (q, l) = rest.split_at(k * d);
    let weights: Vec<f64> = {
        let s: f64 = alpha.iter().map(|a| a.exp()).sum();
        alpha.iter().map(|a| a.exp() / s).collect()
    };
    let qmat = |c: usize| {
        let mut m = DMatrix::zeros(d, d);
        let mut idx = 0;
        for col in 0..d {
            m[(col, col)] = q[c * d + col].exp();
            for row in col + 1..d {
                m[(row, col)] = l[c * tri + idx];
                idx += 1;
            }
        }
        m
    };
    let two_pi = 2.0 * core::f64::consts::PI;
    let mut loglik = 0.0;
    for xi in f.x.chunks_exact(d) {
        let mut density = 0.0;
        for c in 0..k {
            let qc = qmat(c);
            let cov = (qc.transpose() * &qc).try_inverse().unwrap();
            let r = nalgebra::DVector::from_fn(d, |j, _| xi[j] - mu[c * d + j]);
            let quad = (r.transpose() * cov.clone().try_inverse().unwrap() * &r)[(0, 0)];
            let norm = (two_pi.powi(d as i32) * cov.determinant()).sqrt();
            density += weights[c] * (-0.5 * quad).exp() / norm;
        }
        loglik += density.ln();
    }
    // Wishart(Λ; V = γ⁻² I, N) with N = d + m + 1 degrees of freedom.
    let big_n = (d + f.m + 1) as f64;
    let df = d as f64;
    let ln_gamma_d = {
        // ln Γ_d(N/2) for integer and half-integer arguments, exactly: Γ(1/2) = √π.
        let ln_gamma = |a: f64| {
            let (mut s, mut a) = (0.0, a);
            while a > 1.0 {
                a -= 1.0;
                s += a.ln();
            }
            if a == 0.5 {
                s + 0.5 * core::f64::consts::PI.ln()
            } else {
                s
            }
        };
        0.25 * df * (df - 1.0) * core::f64::consts::PI.ln()
            + (1..=d)
                .map(|j| ln_gamma(0.5 * big_n + 0.5 * (1.0 - j as f64)))
                .sum::<f64>()
    };
    let g2 = f.gamma * f.gamma;
    let prior: f64 = (0..k)
        .map(|c| {
            let qc = qmat(c);
            let lambda = qc.transpose() * &qc;
            0.5 * (big_n - df - 1.0) * lambda.determinant().ln()
                - 0.5 * g2 * lambda.trace()
                - 0.5 * big_n * df * 2f64.ln()
                + big_n * df * f.gamma.ln()
                - ln_gamma_d
        })
        .sum();
    loglik + prior
}

#[test]
fn gmm_value_matches_the_textbook_definition() {
    for (d, k, n) in [(2, 3, 7), (3, 4, 11), (5, 2, 6)] {
        let f = Gmm::new(d, k, n);
        let p = f.input();
        let want = gmm_by_definition(&f, &p);
        let got = f.eval(&p)[0];
        assert!(
            (got - want).abs() <= 1e-10 * want.abs(),
            "({d}, {k}, {n}): {got} vs {want}"
        );
    }
}

#[test]
fn gmm_gradient_three_ways() {
    let f = Gmm::new(4, 3, 20);
    let p = f.input();
    let (_, g, fwd) = both_modes(&f, &p);
    assert_close(&g, &fwd, 1e-12, "gmm: reverse vs forward");
    for (j, &gj) in g.iter().enumerate() {
        let fd = central(&f, &p, j, 1e-5);
        assert!(
            (fd - gj).abs() <= 1e-6 * gj.abs().max(1.0),
            "gmm ∂/∂p{j}: {gj} vs central difference {fd}"
        );
    }
}

#[test]
fn gmm_at_the_benchmark_size_runs() {
    // d = 10, k = 10, n = 1000 (the smaller of the two benchmark sizes): the gradient is
    // finite and agrees with a central difference on a few parameters of each kind.
    let f = Gmm::new(10, 10, 1000);
    let p = f.input();
    let (_, g) = jacobian::gradient(&f, &p).unwrap();
    assert!(g.iter().all(|v| v.is_finite()));
    for j in [0, 5, 10, 77, 110, 150, 210, 400, p.len() - 1] {
        let fd = central(&f, &p, j, 1e-5);
        assert!(
            (fd - g[j]).abs() <= 1e-5 * g[j].abs().max(1.0),
            "∂/∂p{j}: {} vs {fd}",
            g[j]
        );
    }
}

/// The reductions by folds (how echidna's numbers run the objectives) give the same values as
/// the n-ary ones, and, recorded on our tape as chains of binary operations, the same gradients.
#[test]
fn folds_and_nary_reductions_agree() {
    use reverse::Var;
    use workloads::gradbench::Folds;
    /// `folded` is the objective with folds, on f64 and on our tape; `nary` is the Function.
    fn agree<F: Function>(
        name: &str,
        nary: &F,
        x: &[f64],
        folded_f64: impl Fn(&[f64]) -> f64,
        folded_tape: impl Fn(&[Var]) -> Var,
    ) {
        let (y, g) = jacobian::gradient(nary, x).unwrap();
        let folded = folded_f64(x);
        assert!(
            (folded - y).abs() <= 1e-13 * y.abs().max(1.0),
            "{name}: {folded} vs {y}"
        );
        let (_, gf) = reverse::gradient(|v: &[Var]| folded_tape(v), x);
        assert_close(
            &gf,
            &g,
            1e-12,
            &format!("{name}: folds against n-ary nodes"),
        );
    }
    let llsq = Llsq::new(16, 40);
    let x = llsq.input();
    agree(
        "llsq",
        &llsq,
        &x,
        |x| llsq.objective(x, &Folds),
        |x| llsq.objective(x, &Folds),
    );
    let lse = Lse::new(50);
    let x = lse.input();
    agree(
        "lse",
        &lse,
        &x,
        |x| Lse::objective(x, &Folds),
        |x| Lse::objective(x, &Folds),
    );
    let gmm = Gmm::new(3, 4, 9);
    let x = gmm.input();
    agree(
        "gmm",
        &gmm,
        &x,
        |x| gmm.objective(x, &Folds),
        |x| gmm.objective(x, &Folds),
    );
    let det = Det::new(4);
    let x = det.input();
    agree("det", &det, &x, |x| det.objective(x), |x| det.objective(x));
}

#[test]
fn kmeans_hessian_is_diagonal_and_the_newton_step_matches_the_hand_written_one() {
    let f = Kmeans::new(4, 40, 3);
    let c = f.input();
    // The full Hessian: diagonal, 2·(points nearest to centroid j) on centroid j's coordinates.
    let h = jacobian::hessian(&f, &c).unwrap();
    let mut count = vec![0.0; f.k];
    for p in f.points.chunks(f.d) {
        let dist = |j: usize| -> f64 { (0..f.d).map(|l| (c[j * f.d + l] - p[l]).powi(2)).sum() };
        let j = (0..f.k)
            .min_by(|&a, &b| dist(a).total_cmp(&dist(b)))
            .unwrap();
        count[j] += 1.0;
    }
    for i in 0..c.len() {
        for j in 0..c.len() {
            let want = if i == j { 2.0 * count[i / f.d] } else { 0.0 };
            assert_eq!(h.matrix[(i, j)], want, "H[{i}][{j}]");
        }
    }
    // So H·1 is the diagonal, and one hvp gives the Newton step.
    let p = jacobian::hvp(&f, &c, &vec![1.0; c.len()]).unwrap();
    let dir: Vec<f64> = p
        .gradient
        .iter()
        .zip(&p.product)
        .map(|(g, h)| g / h)
        .collect();
    assert_close(&dir, &f.dir(&c), 1e-13, "k-means Newton step");
    assert_close(&p.gradient, &h.gradient, 1e-14, "gradient");
}
