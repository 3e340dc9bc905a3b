//! The seed example: L = sum(tanh(W x)), with W = [[1, 2], [3, 4]].
//!
//! Prints the gradients found by backpropagation on tensors, by the scalar tape (one `Var` per
//! number) and by hand (x.grad = Wᵀ g and W.grad = g xᵀ with g = 1 − tanh(W x)²), in one format,
//! at two points: the seed point x = [2, 3], where W x = [8, 18] and tanh has saturated (the
//! gradients are tiny, and exact only because tanh' is computed without cancellation), and
//! x = [0.2, −0.1], where they are of order one.
//!
//! Run with `cargo run --example tensor_seed`.

use ndarray::{Array1, Array2, array};
use reverse::prelude::*; // Tape, Var and the Float methods (tanh)
use tensor::{Tensor, TensorError};

/// Numbers in one format, so that the three rows can be compared digit by digit.
fn row(values: impl IntoIterator<Item = f64>) -> String {
    let cells: Vec<String> = values.into_iter().map(|v| format!("{v:+.12e}")).collect();
    format!("[{}]", cells.join(", "))
}

fn report(w: &Array2<f64>, x: &Array1<f64>) -> Result<(), TensorError> {
    println!("x = {}", row(x.iter().copied()));

    // Tensors, as in PyTorch.
    let xt = Tensor::new(x.clone(), true);
    let wt = Tensor::new(w.clone(), true);
    let z = wt.matmul(&xt)?;
    let loss = z.tanh().sum();
    loss.backward()?;
    let (xg, wg) = (
        xt.grad().expect("x requires grad"),
        wt.grad().expect("W requires grad"),
    );
    println!(
        "  W x = {}, L = {:+.12e}",
        row(z.data().iter().copied()),
        loss.item()?
    );
    println!(
        "  tensor       x.grad = {}  W.grad = {}",
        row(xg.iter().copied()),
        row(wg.iter().copied())
    );

    // The scalar tape: one Var per number.
    let tape = Tape::new();
    let xs = tape.vars(x.as_slice().expect("contiguous"));
    let ws = tape.vars(w.as_slice().expect("contiguous"));
    let l = (ws[0] * xs[0] + ws[1] * xs[1]).tanh() + (ws[2] * xs[0] + ws[3] * xs[1]).tanh();
    let adj = tape.gradient(l);
    println!(
        "  scalar tape  x.grad = {}  W.grad = {}",
        row(adj.wrt_all(&xs)),
        row(adj.wrt_all(&ws))
    );

    // By hand: g = tanh'(W x) = 1 / cosh²(W x), exact where 1 − tanh² would cancel.
    let g = w.dot(x).mapv(|v| 1.0 / v.cosh().powi(2));
    let outer = g
        .view()
        .insert_axis(ndarray::Axis(1))
        .dot(&x.view().insert_axis(ndarray::Axis(0)));
    println!(
        "  analytic     x.grad = {}  W.grad = {}",
        row(w.t().dot(&g)),
        row(outer.iter().copied())
    );
    Ok(())
}

fn main() -> Result<(), TensorError> {
    let w = array![[1.0, 2.0], [3.0, 4.0]];
    report(&w, &array![2.0, 3.0])?;
    report(&w, &array![0.2, -0.1])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn runs() {
        super::main().unwrap();
    }
}
