//! Workloads for second derivatives, with their Hessians written by hand.

use crate::gradbench::{Nary, Reduce};
use crate::{Function, Op};
use shared_ops::num_traits::Float;

/// The exact Hessian of [`rosenbrock`](crate::rosenbrock), row-major n×n (tridiagonal).
///
/// ```
/// let h = workloads::rosenbrock_hessian(&[1.0, 1.0]);
/// assert_eq!(h, vec![802.0, -400.0, -400.0, 200.0]);
/// ```
pub fn rosenbrock_hessian(x: &[f64]) -> Vec<f64> {
    let n = x.len();
    let mut h = vec![0.0; n * n];
    for i in 0..n.saturating_sub(1) {
        // The term (1 − xᵢ)² + 100 (xᵢ₊₁ − xᵢ²)².
        h[i * n + i] += 2.0 + 1200.0 * x[i] * x[i] - 400.0 * x[i + 1];
        h[(i + 1) * n + i + 1] += 200.0;
        h[i * n + i + 1] -= 400.0 * x[i];
        h[(i + 1) * n + i] -= 400.0 * x[i];
    }
    h
}

/// A dense quadratic-plus-transcendental function, `f(x) = Σᵢⱼ Aᵢⱼ sin(xᵢ) xⱼ`: every entry of
/// its Hessian is non-zero, so no sparsity helps, and each input meets a transcendental call.
///
/// ```
/// use workloads::{Function, SinQuad};
/// let f = SinQuad::new(3);
/// let x = workloads::dense_input(3);
/// let h = f.hessian(&x);
/// assert_eq!(h.len(), 9);
/// assert_eq!(h[1], h[3]); // symmetric
/// # let _ = f.eval(&x);
/// ```
#[derive(Clone, Debug)]
pub struct SinQuad {
    /// Row-major n×n.
    pub a: Vec<f64>,
    /// Inputs.
    pub n: usize,
}

impl SinQuad {
    /// A fixed, non-symmetric matrix `Aᵢⱼ = sin(i + 2j + 1) / n`.
    pub fn new(n: usize) -> SinQuad {
        let a = (0..n * n)
            .map(|k| ((k / n + 2 * (k % n) + 1) as f64).sin() / n as f64)
            .collect();
        SinQuad { a, n }
    }

    /// The value for any `Float` and reductions: `Σᵢ sin(xᵢ) · (Aᵢ·x)`.
    pub fn objective<T: Float>(&self, x: &[T], r: &impl Reduce<T>) -> T {
        let n = self.n;
        let lift = |a: f64| T::from(a).expect("an f64 constant");
        let mut row = Vec::with_capacity(n);
        r.sum((0..n).map(|i| {
            row.clear();
            row.extend(self.a[i * n..(i + 1) * n].iter().map(|&a| lift(a)));
            x[i].sin() * r.dot(&row, x)
        }))
    }

    /// The exact Hessian, row-major: `Hₖₗ = δₖₗ(−sin xₖ · (Aₖ·x)) + cos xₖ Aₖₗ + cos xₗ Aₗₖ`.
    pub fn hessian(&self, x: &[f64]) -> Vec<f64> {
        let n = self.n;
        let a = |i: usize, j: usize| self.a[i * n + j];
        let mut h = vec![0.0; n * n];
        for k in 0..n {
            let ax: f64 = (0..n).map(|j| a(k, j) * x[j]).sum();
            for l in 0..n {
                h[k * n + l] = x[k].cos() * a(k, l) + x[l].cos() * a(l, k);
            }
            h[k * n + k] -= x[k].sin() * ax;
        }
        h
    }
}

impl Function for SinQuad {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        vec![self.objective(x, &Nary)]
    }
    fn sizes(&self) -> Option<(usize, usize)> {
        Some((self.n, 1))
    }
}
