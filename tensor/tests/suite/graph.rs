//! Graph semantics: accumulation, zero_grad, detach, no_grad, retain_grad.

use super::*;

#[test]
fn gradients_accumulate_across_backward_calls() {
    let x = Tensor::new(array![1.0, 2.0], true);
    let w = Tensor::new(array![[0.5, -1.0], [2.0, 0.25]], true);
    let loss = w.matmul(&x).unwrap().tanh().sum();
    loss.backward().unwrap();
    let (gx, gw) = (grad_of(&x), grad_of(&w));
    loss.backward().unwrap();
    assert_close(&grad_of(&x), &(&gx * 2.0), 1e-15);
    assert_close(&grad_of(&w), &(&gw * 2.0), 1e-15);

    x.zero_grad();
    w.zero_grad();
    assert!(x.grad().is_none() && w.grad().is_none());
    loss.backward().unwrap();
    assert_close(&grad_of(&x), &gx, 1e-15);
    assert_close(&grad_of(&w), &gw, 1e-15);
}

#[test]
fn intermediate_gradients_are_not_kept_unless_retained() {
    let x = Tensor::scalar(2.0).with_grad();
    let y = &x * 3.0;
    let z = &y * &y;
    y.retain_grad();
    z.backward().unwrap();
    z.backward().unwrap();
    // Retained grads accumulate like leaves: 2 * (2y) = 24.
    assert_eq!(y.grad().unwrap()[[]], 24.0);
    assert_eq!(x.grad().unwrap()[[]], 72.0); // 2 * 18 x
    assert!(z.grad().is_none());
}

#[test]
fn detach_stops_the_gradient() {
    let x = Tensor::new(array![1.0, 2.0], true);
    let d = x.detach();
    assert!(!d.requires_grad() && d.is_leaf() && d.parents().is_empty());
    let y = (&d * &x).sum(); // only the second factor is differentiated
    y.backward().unwrap();
    assert_eq!(grad_of(&x), array![1.0, 2.0].into_dyn());
    assert!(d.grad().is_none());
    // The detached copy does not follow later updates of x.
    x.set_data(array![5.0, 5.0]).unwrap();
    assert_eq!(d.data(), array![1.0, 2.0].into_dyn());
    // A graph made only of detached tensors cannot be differentiated.
    assert!(matches!(
        d.exp().sum().backward(),
        Err(TensorError::NoGraph { .. })
    ));
}

#[test]
fn no_grad_records_nothing() {
    let w = Tensor::new(array![1.0, 2.0], true);
    let y = no_grad(|| {
        assert!(!is_grad_enabled());
        let inner = no_grad(|| w.exp());
        assert!(!is_grad_enabled(), "nested scope restores the outer mode");
        (&w * 2.0 + inner).sum()
    });
    assert!(is_grad_enabled());
    assert!(!y.requires_grad());
    assert!(y.parents().is_empty());
    assert_eq!(y.op_name(), "sum");
    assert!(matches!(y.backward(), Err(TensorError::NoGraph { .. })));
    assert!(w.grad().is_none());
    // Outside the scope recording works again.
    assert!((&w * 2.0).requires_grad());
}

#[test]
fn no_grad_is_restored_after_a_panic() {
    let result = std::panic::catch_unwind(|| no_grad(|| panic!("boom")));
    assert!(result.is_err());
    assert!(is_grad_enabled());
}

#[test]
fn only_tensors_depending_on_a_parameter_record_parents() {
    let a = Tensor::ones(&[2]);
    let b = Tensor::ones(&[2]);
    let c = &a + &b;
    assert!(!c.requires_grad() && c.parents().is_empty());
    let p = Tensor::ones(&[2]).with_grad();
    let d = &c * &p;
    assert!(d.requires_grad());
    assert_eq!(d.parents().len(), 2);
    assert_eq!(d.op_name(), "mul");
    d.sum().backward().unwrap();
    assert!(c.grad().is_none());
    assert_eq!(grad_of(&p), array![2.0, 2.0].into_dyn());
}

#[test]
fn long_chain_backward_and_drop_do_not_overflow_the_stack() {
    let x = Tensor::scalar(0.0).with_grad();
    let step = Tensor::scalar(1e-3);
    let mut y = x.clone();
    for _ in 0..100_000 {
        y = &y + &step;
    }
    y.backward().unwrap();
    assert_eq!(x.grad().unwrap()[[]], 1.0);
    assert_abs_diff_eq!(y.item().unwrap(), 100.0, epsilon = 1e-9);
    drop(y); // iterative Drop of 100k nodes
}

#[test]
fn optimiser_updates() {
    let w = Tensor::new(array![1.0, -1.0], true);
    w.sgd_step(0.1); // no gradient yet: no-op
    assert_eq!(w.data(), array![1.0, -1.0].into_dyn());
    w.powi(2).sum().backward().unwrap(); // grad = 2w
    w.sgd_step(0.25);
    assert_eq!(w.data(), array![0.5, -0.5].into_dyn());
    w.update(|mut d, g| {
        assert!(g.is_some());
        d.fill(7.0);
    });
    assert_eq!(w.data(), array![7.0, 7.0].into_dyn());
}

#[test]
fn display_and_debug_show_op_and_shape() {
    let x = Tensor::new(array![1.0, 2.0], true);
    let y = x.tanh();
    let shown = y.to_string();
    assert!(
        shown.contains("op=tanh") && shown.contains("shape=[2]"),
        "{shown}"
    );
    assert!(format!("{x:?}").contains("leaf"));
}
