//! Our gradients and Jacobians, in every mode, against the hand-written ones.

use jacobian::Mode;
use workloads::{
    DenseTanh, Function, Rosenbrock, assert_close, dense_input, rosenbrock, rosenbrock_gradient,
    rosenbrock_input, rosenbrock_jvp, row_major,
};

const REL: f64 = 1e-12;

fn analytic_gradient(x: &[f64]) -> Vec<f64> {
    let mut g = vec![0.0; x.len()];
    rosenbrock_gradient(x, &mut g);
    g
}

#[test]
fn rosenbrock_jvp_by_hand_is_the_forward_sweeps() {
    for n in [2, 3, 10, 100, 1000] {
        let x = rosenbrock_input(n);
        // A direction with every sign and a zero.
        let v: Vec<f64> = (0..n).map(|i| (i % 5) as f64 - 2.0).collect();
        let (y, jv) = rosenbrock_jvp(&x, &v);
        assert_eq!(y, rosenbrock(&x), "n = {n}: value");
        let (_, want) = jacobian::jvp(&Rosenbrock::new(n), &x, &v).unwrap();
        let g = analytic_gradient(&x);
        let dot: f64 = g.iter().zip(&v).map(|(g, v)| g * v).sum();
        let scale: f64 = g.iter().zip(&v).map(|(g, v)| (g * v).abs()).sum();
        assert!(
            (jv - want[0]).abs() <= 1e-13 * scale,
            "n = {n}: {jv} against jvp {}",
            want[0]
        );
        assert!(
            (jv - dot).abs() <= 1e-13 * scale,
            "n = {n}: {jv} against ∇f·v {dot}"
        );
    }
}

#[test]
fn rosenbrock_gradient_matches_analytic_in_every_mode() {
    for n in [2, 3, 10, 100, 1000] {
        let f = Rosenbrock::new(n);
        let x = rosenbrock_input(n);
        let want = analytic_gradient(&x);
        let y = rosenbrock(&x);

        let (value, g) = jacobian::gradient(&f, &x).unwrap();
        assert_eq!(value, y, "n = {n}: value");
        assert_close(&g, &want, REL, &format!("n = {n}: jacobian::gradient"));

        let (value, g) = reverse::gradient(rosenbrock, &x);
        assert_eq!(value, y, "n = {n}: value");
        assert_close(&g, &want, REL, &format!("n = {n}: reverse::gradient"));

        for mode in [Mode::Forward, Mode::Reverse, Mode::Auto] {
            let j = jacobian::jacobian_with(&f, &x, mode).unwrap();
            assert_eq!(j.value, vec![y], "n = {n}, {mode:?}: value");
            assert_eq!(j.matrix.shape(), (1, n));
            assert_close(&row_major(&j), &want, REL, &format!("n = {n}, {mode:?}"));
        }

        // A jvp along eⱼ is ∂f/∂xⱼ; along all-ones it is Σ gⱼ.
        let ones = vec![1.0; n];
        let (value, jv) = jacobian::jvp(&f, &x, &ones).unwrap();
        assert_eq!(value, vec![y]);
        let sum: f64 = want.iter().sum();
        let scale: f64 = want.iter().map(|g| g.abs()).sum();
        assert!((jv[0] - sum).abs() <= REL * scale, "n = {n}: jvp");
        let (_, wj) = jacobian::vjp(&f, &x, &[2.0]).unwrap();
        let twice: Vec<f64> = want.iter().map(|g| 2.0 * g).collect();
        assert_close(&wj, &twice, REL, &format!("n = {n}: vjp"));
    }
}

#[test]
fn rosenbrock_minimum_is_flat() {
    let x = vec![1.0; 7];
    let (y, g) = jacobian::gradient(&Rosenbrock::new(7), &x).unwrap();
    assert_eq!((y, g), (0.0, vec![0.0; 7]));
    assert_eq!(analytic_gradient(&x), vec![0.0; 7]);
}

#[test]
fn dense_jacobian_matches_analytic_in_every_mode() {
    for (n, m) in [(1, 1), (4, 256), (256, 4), (64, 64), (9, 3), (3, 9)] {
        let f = DenseTanh::new(n, m);
        let x = dense_input(n);
        let want = f.jacobian(&x);
        let y = f.eval(&x);
        for mode in [Mode::Forward, Mode::Reverse, Mode::Auto] {
            let j = jacobian::jacobian_with(&f, &x, mode).unwrap();
            assert_eq!(j.value, y, "({n}, {m}), {mode:?}: value");
            assert_eq!(j.matrix.shape(), (m, n));
            assert_close(&row_major(&j), &want, REL, &format!("({n}, {m}), {mode:?}"));
        }
        // The benchmark's clear-cut shapes: Auto picks forward for the tall one (4 inputs,
        // 256 outputs), reverse for the wide one (closer shapes are the plan's cost model to decide).
        let auto = jacobian::jacobian(&f, &x).unwrap();
        match (n, m) {
            (4, 256) => assert_eq!(auto.plan.mode, Mode::Forward),
            (256, 4) => assert_eq!(auto.plan.mode, Mode::Reverse),
            _ => {}
        }

        // One jvp along e₀ is column 0, one vjp along e₀ is row 0.
        let mut e = vec![0.0; n];
        e[0] = 1.0;
        let (_, col) = jacobian::jvp(&f, &x, &e).unwrap();
        let want_col: Vec<f64> = (0..m).map(|i| want[i * n]).collect();
        assert_close(&col, &want_col, REL, &format!("({n}, {m}): jvp"));
        let mut w = vec![0.0; m];
        w[0] = 1.0;
        let (_, row) = jacobian::vjp(&f, &x, &w).unwrap();
        assert_close(&row, &want[..n], REL, &format!("({n}, {m}): vjp"));
    }
}

#[test]
fn dense_matrix_and_input_are_as_documented() {
    let f = DenseTanh::new(3, 2);
    for i in 0..2 {
        for j in 0..3 {
            assert_eq!(f.a[i * 3 + j], ((i + 2 * j) as f64).sin() / 3.0);
        }
    }
    let x = dense_input(20);
    assert!((x[16] - 1.3).abs() < 1e-15);
    assert_eq!(x[17], -0.3);
}

#[test]
fn declared_sizes_are_enforced() {
    assert!(jacobian::gradient(&Rosenbrock::new(3), &[1.0, 2.0]).is_err());
    assert!(jacobian::jacobian(&DenseTanh::new(3, 2), &[1.0, 2.0]).is_err());
}

#[test]
fn max_rel_diff_sees_nan_and_scale() {
    assert_eq!(workloads::max_rel_diff(&[f64::NAN], &[1.0]), f64::INFINITY);
    assert_eq!(workloads::max_rel_diff(&[1e-300], &[0.0]), 1.0);
    assert!(workloads::max_rel_diff(&[1.0 + 1e-15], &[1.0]) < 1e-14);
}

/// The tape's memory target: Rosenbrock with n = 10⁴ takes at most 16 bytes per elementary
/// operation of f (8n − 9 of them: per term 1 − x, x², a subtraction, a², 100·b, ·b and +, and
/// the n − 2 additions of the sum), inputs included. The first-generation tape took 40.
#[test]
fn rosenbrock_tape_takes_at_most_16_bytes_per_operation() {
    let n = 10_000;
    let tape = reverse::Tape::new();
    let x = tape.vars(&rosenbrock_input(n));
    let _ = rosenbrock(&x);
    let s = tape.stats();
    let per_op = s.bytes as f64 / (8 * n - 9) as f64;
    eprintln!("Rosenbrock n = {n}: {s:?}, {per_op:.2} bytes per operation");
    // Layout as contract: `TapeStats::bytes` documents these sizes.
    assert_eq!(s.bytes, 4 * s.nodes + 12 * s.edges + 4 * s.unit_edges);
    assert!(per_op <= 16.0, "{per_op} bytes per operation");
}
