//! The tensor autograd and the scalar tape agree on the seed example and on a small MLP loss.

use ndarray::{Array1, Array2, array};
use reverse::{Float, Tape, Var};
use tensor::Tensor;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1e-300)
}

#[test]
fn seed_tanh_layer_matches_scalar_reverse() {
    let x = Tensor::new(array![2.0, 3.0], true);
    let w = Tensor::new(array![[1.0, 2.0], [3.0, 4.0]], true);
    w.matmul(&x).unwrap().tanh().sum().backward().unwrap();

    let tape = Tape::new();
    let xs = tape.vars(&[2.0, 3.0]);
    let ws = tape.vars(&[1.0, 2.0, 3.0, 4.0]);
    let l = (ws[0] * xs[0] + ws[1] * xs[1]).tanh() + (ws[2] * xs[0] + ws[3] * xs[1]).tanh();
    let adj = tape.gradient(l);

    let xg = x.grad().unwrap();
    let wg = w.grad().unwrap();
    for (a, b) in xg.iter().zip(adj.wrt_all(&xs)) {
        assert!(close(*a, b), "x.grad {a} vs tape {b}");
    }
    for (a, b) in wg.iter().zip(adj.wrt_all(&ws)) {
        assert!(close(*a, b), "W.grad {a} vs tape {b}");
    }
}

#[test]
fn mlp_loss_gradient_matches_scalar_reverse() {
    // mean((tanh(X W1 + b1) W2 + b2 − y)²) with X 3×2, W1 2×3, W2 3×1.
    let xd = Array2::from_shape_fn((3, 2), |(i, j)| (i as f64 - j as f64 * 0.7).sin());
    let yd = Array2::from_shape_fn((3, 1), |(i, _)| 0.3 * i as f64);
    let w1d = Array2::from_shape_fn((2, 3), |(i, j)| 0.5 - 0.3 * (i + 2 * j) as f64 / 5.0);
    let b1d = Array1::from_shape_fn(3, |j| 0.1 * j as f64);
    let w2d = Array2::from_shape_fn((3, 1), |(i, _)| 0.2 * i as f64 - 0.25);

    let (w1, b1, w2) = (
        Tensor::new(w1d.clone(), true),
        Tensor::new(b1d.clone(), true),
        Tensor::new(w2d.clone(), true),
    );
    let (x, y) = (
        Tensor::new(xd.clone(), false),
        Tensor::new(yd.clone(), false),
    );
    let h = (x.matmul(&w1).unwrap() + &b1).tanh();
    let loss = (h.matmul(&w2).unwrap() - &y).powi(2).mean();
    loss.backward().unwrap();

    let tape = Tape::new();
    let tw1: Vec<Var> = tape.vars(w1d.as_slice().unwrap());
    let tb1: Vec<Var> = tape.vars(b1d.as_slice().unwrap());
    let tw2: Vec<Var> = tape.vars(w2d.as_slice().unwrap());
    let mut terms = Vec::new();
    for i in 0..3 {
        let mut pred = Var::constant(0.0);
        for k in 0..3 {
            let z = (0..2).map(|j| tw1[j * 3 + k] * xd[(i, j)]).sum::<Var>() + tb1[k];
            pred += z.tanh() * tw2[k];
        }
        let r = pred - yd[(i, 0)];
        terms.push(r * r);
    }
    let l = terms.into_iter().sum::<Var>() / 3.0;
    assert!(close(l.value(), loss.item().unwrap()));
    let adj = tape.gradient(l);
    for (t, v) in [(&w1, &tw1), (&b1, &tb1), (&w2, &tw2)] {
        for (a, b) in t.grad().unwrap().iter().zip(adj.wrt_all(v)) {
            assert!(close(*a, b), "tensor {a} vs tape {b}");
        }
    }
}
