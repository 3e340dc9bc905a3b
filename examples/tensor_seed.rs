//! The seed example: L = sum(tanh(W x)) with x = [2, 3], W = [[1, 2], [3, 4]].
//!
//! Prints the gradients found by backpropagation next to the analytic ones,
//! x.grad = Wᵀ g and W.grad = g xᵀ with g = 1 - tanh(W x)².
//!
//! Run with `cargo run --example tensor_seed`.

use ndarray::array;
use reverse::Tape;
use reverse::tensor::{Tensor, TensorError};
use shared_ops::num_traits::Float;

fn main() -> Result<(), TensorError> {
    let x = Tensor::new(array![2.0, 3.0], true);
    let w = Tensor::new(array![[1.0, 2.0], [3.0, 4.0]], true);

    let z = w.matmul(&x)?;
    let loss = z.tanh().sum();
    loss.backward()?;

    println!("z = W x  = {}", *z.data());
    println!("L        = {}", loss.item()?);
    println!("x.grad   = {}", x.grad().expect("x requires grad"));
    println!("W.grad   =\n{}", w.grad().expect("W requires grad"));

    // The same gradients by hand.
    let g = z.data().mapv(|v| 1.0 - v.tanh().powi(2));
    let w_data = w
        .data()
        .clone()
        .into_dimensionality::<ndarray::Ix2>()
        .expect("2-D");
    let g1 = g.into_dimensionality::<ndarray::Ix1>().expect("1-D");
    let x1 = array![2.0, 3.0];
    println!("analytic x.grad = {}", w_data.t().dot(&g1));
    let outer = g1
        .view()
        .insert_axis(ndarray::Axis(1))
        .dot(&x1.view().insert_axis(ndarray::Axis(0)));
    println!("analytic W.grad =\n{outer}");

    // The same function on the scalar tape: one Var per number.
    let tape = Tape::new();
    let xs = tape.vars(&[2.0, 3.0]);
    let ws = tape.vars(&[1.0, 2.0, 3.0, 4.0]);
    let l = (ws[0] * xs[0] + ws[1] * xs[1]).tanh() + (ws[2] * xs[0] + ws[3] * xs[1]).tanh();
    let adj = tape.gradient(l);
    println!("scalar tape x.grad = {:?}", adj.wrt_all(&xs));
    println!("scalar tape W.grad = {:?}", adj.wrt_all(&ws));
    Ok(())
}
