//! What a new user writes first, through `wengert` alone: nalgebra 0.35 decompositions on
//! forward and reverse numbers, a Hessian, a sparse Jacobian, and one step of a tensor MLP.
//! Each result is checked against a value known in closed form.

use wengert::nalgebra::{DMatrix, Matrix2, Vector2};
use wengert::ndarray::{Array1, Array2};
use wengert::sparse::sparse_jacobian;
use wengert::{Dual, Function, Op, Real, Tensor, hessian, reverse};

/// det of the 2×2 matrix [[x₀, x₁], [x₂, x₃]] by nalgebra's LU.
fn det<T: Op>(x: &[T]) -> T {
    DMatrix::from_row_slice(2, 2, &x.iter().map(|&v| Real(v)).collect::<Vec<_>>())
        .lu()
        .determinant()
        .0
}

/// y = A⁻¹b by Cholesky, A = [[2 + x², 1], [1, 3]].
fn solve<T: Op>(x: T) -> T {
    let (one, three) = (Real(T::one()), Real(T::constant(3.0)));
    let a = Matrix2::new(Real(x * x + 2.0), one, one, three);
    let chol = a.cholesky().expect("positive definite");
    chol.solve(&Vector2::new(one, one))[0].0
}

/// A tridiagonal system: F(x)ᵢ = xᵢ₋₁ − 2xᵢ + xᵢ₊₁ + xᵢ³.
struct Tridiagonal;
impl Function for Tridiagonal {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let n = x.len();
        (0..n)
            .map(|i| {
                let left = if i > 0 { x[i - 1] } else { T::zero() };
                let right = if i + 1 < n { x[i + 1] } else { T::zero() };
                left - x[i] * 2.0 + right + x[i] * x[i] * x[i]
            })
            .collect()
    }
}

/// x₀²x₁ + sin x₁.
struct Scalar;
impl Function for Scalar {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        vec![x[0] * x[0] * x[1] + x[1].sin()]
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Forward: ∂det/∂x₀ = x₃ with a dual number.
    let x = [1.0, 2.0, 3.0, 4.0];
    let xs: Vec<Dual<f64>> = (0..4)
        .map(|i| Dual::new(x[i], if i == 0 { 1.0 } else { 0.0 }))
        .collect();
    assert!(close(det(&xs).tangent, 4.0));
    // Reverse: ∇det = cofactors (x₃, −x₂, −x₁, x₀).
    let (value, g) = reverse::gradient(det, &x);
    assert!(close(value, -2.0));
    for (got, want) in g.iter().zip([4.0, -3.0, -2.0, 1.0]) {
        assert!(close(*got, want), "{g:?}");
    }
    // Cholesky in both modes: y = 2/(5 + 3x²) at x = 1, dy/dx = −12x/(5 + 3x²)².
    let dy = solve(Dual::new(1.0, 1.0)).tangent;
    let (_, gr) = reverse::gradient(|v| solve(v[0]), &[1.0]);
    assert!(close(dy, -12.0 / 64.0) && close(gr[0], dy), "{dy} {gr:?}");

    // A Hessian: [[2x₁, 2x₀], [2x₀, −sin x₁]].
    let h = hessian(&Scalar, &[1.5, 0.5])?;
    assert!(close(h.matrix[(0, 0)], 1.0) && close(h.matrix[(0, 1)], 3.0));
    assert!(close(h.matrix[(1, 1)], -(0.5_f64).sin()));

    // A sparse Jacobian: three colours, 3n − 2 entries.
    let n = 100;
    let x: Vec<f64> = (0..n).map(|i| 0.01 * i as f64).collect();
    let j = sparse_jacobian(&Tridiagonal, &x)?;
    assert_eq!(j.matrix.nnz(), 3 * n - 2);
    for (r, c, v) in j.triplets() {
        let want = if r == c { 3.0 * x[r] * x[r] - 2.0 } else { 1.0 };
        assert!(close(v, want));
    }

    // One step of a 2 → 4 → 1 tanh MLP lowers the loss.
    let inputs = Tensor::new(
        Array2::from_shape_fn((8, 2), |(i, k)| (i + k) as f64 / 8.0),
        false,
    );
    let targets = Tensor::new(
        Array2::from_shape_fn((8, 1), |(i, _)| i as f64 / 8.0),
        false,
    );
    let w1 = Tensor::new(
        Array2::from_shape_fn((2, 4), |(a, b)| 0.3 - 0.2 * (a + b) as f64),
        true,
    );
    let w2 = Tensor::new(
        Array2::from_shape_fn((4, 1), |(a, _)| 0.1 * a as f64 - 0.2),
        true,
    );
    let b2 = Tensor::new(Array1::zeros(1), true);
    let loss =
        |w1: &Tensor, w2: &Tensor, b2: &Tensor| -> Result<Tensor, wengert::tensor::TensorError> {
            let pred = inputs.matmul(w1)?.tanh().matmul(w2)? + b2;
            Ok((pred - &targets).powi(2).mean())
        };
    let before = loss(&w1, &w2, &b2)?;
    before.backward()?;
    for p in [&w1, &w2, &b2] {
        p.sgd_step(0.5);
    }
    let after = loss(&w1, &w2, &b2)?;
    assert!(after.item()? < before.item()?);
    println!("scratch crate: all checks passed");
    Ok(())
}
