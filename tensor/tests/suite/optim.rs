//! The optimisers against their update rules written out by hand.

use super::*;
use tensor::optim::{Adam, Sgd};

/// The loss Σ cᵢ·wᵢ² + wᵢ, whose gradient 2cᵢwᵢ + 1 differs per element.
fn loss(w: &Tensor) -> Tensor {
    let c = Tensor::new(array![1.0, 3.0, 0.5], false);
    (&(&c * &(w * w)) + w).sum()
}

fn grad(w: &[f64]) -> Vec<f64> {
    let c = [1.0, 3.0, 0.5];
    w.iter().zip(c).map(|(w, c)| 2.0 * c * w + 1.0).collect()
}

#[test]
fn sgd_with_momentum_follows_its_rule() {
    let w = Tensor::new(array![1.0, -2.0, 0.5], true);
    let mut opt = Sgd::new([w.clone()], 0.05).momentum(0.9);
    let (mut x, mut v) = (vec![1.0, -2.0, 0.5], vec![0.0; 3]);
    for step in 0..20 {
        opt.zero_grad();
        loss(&w).backward().unwrap();
        opt.step();
        let g = grad(&x);
        for ((x, v), g) in x.iter_mut().zip(&mut v).zip(g) {
            *v = if step == 0 { g } else { 0.9 * *v + g };
            *x -= 0.05 * *v;
        }
        let got: Vec<f64> = w.data().iter().copied().collect();
        for (a, b) in got.iter().zip(&x) {
            assert!((a - b).abs() <= 1e-14, "step {step}: {got:?} vs {x:?}");
        }
    }
    assert_eq!(w.version(), 20);
}

#[test]
fn adam_follows_its_rule_and_converges() {
    let w = Tensor::new(array![1.0, -2.0, 0.5], true);
    let mut opt = Adam::new([w.clone()], 0.1).betas(0.8, 0.99);
    let (mut x, mut m, mut v) = (vec![1.0, -2.0, 0.5], vec![0.0; 3], vec![0.0; 3]);
    for t in 1..=200 {
        opt.zero_grad();
        loss(&w).backward().unwrap();
        opt.step();
        let g = grad(&x);
        for i in 0..3 {
            m[i] = 0.8 * m[i] + 0.2 * g[i];
            v[i] = 0.99 * v[i] + 0.01 * g[i] * g[i];
            let (mh, vh) = (
                m[i] / (1.0 - 0.8_f64.powi(t)),
                v[i] / (1.0 - 0.99_f64.powi(t)),
            );
            x[i] -= 0.1 * mh / (vh.sqrt() + 1e-8);
        }
        for (a, b) in w.data().iter().zip(&x) {
            assert!((a - b).abs() <= 1e-12, "step {t}: {a} vs {b}");
        }
    }
    // The minimum: wᵢ = −1/(2cᵢ).
    let expected = [-0.5, -1.0 / 6.0, -1.0];
    for (a, b) in w.data().iter().zip(expected) {
        assert!((a - b).abs() < 1e-3, "{a} vs {b}");
    }
}

#[test]
fn a_parameter_without_a_gradient_is_left_alone() {
    let used: Tensor = Tensor::scalar(1.0).with_grad();
    let unused: Tensor = Tensor::scalar(5.0).with_grad();
    let mut sgd = Sgd::new([used.clone(), unused.clone()], 0.1).momentum(0.9);
    let mut adam = Adam::new([used.clone(), unused.clone()], 0.1);
    (&used * 2.0).backward().unwrap();
    sgd.step();
    adam.step();
    assert_eq!(unused.item().unwrap(), 5.0);
    assert_eq!(
        unused.version(),
        0,
        "a parameter the steps did not change keeps its version"
    );
    assert_eq!(used.version(), 2);
    assert!(used.item().unwrap() < 1.0);
}

#[test]
fn f32_parameters_train_too() {
    let w = Tensor::<f32>::from_vec(&[2], vec![2.0, -3.0])
        .unwrap()
        .with_grad();
    let mut opt = Adam::new([w.clone()], 0.05);
    for _ in 0..400 {
        opt.zero_grad();
        (&w * &w).sum().backward().unwrap();
        opt.step();
    }
    assert!(w.data().iter().all(|v| v.abs() < 1e-2), "{:?}", w.data());
}
