//! The same workloads written for the peer crates' number types (feature `peers`).
//!
//! Each peer has its own number trait, so the workloads are written again, operation for
//! operation as above: `num_dual::DualNum` (whose dual numbers are `Clone`, not `Copy`, hence the
//! references) and `ad_trait::AD` (behind its `DifferentiableFunctionTrait`). echidna's numbers
//! are `num_traits::Float`, for which the GradBench objectives are written already: they run
//! with [`Folds`] (echidna has no `Sum` and no n-ary dot product).

use crate::DenseTanh;
use crate::gradbench::{Det, Folds, Gmm, Llsq, Lse, Reduce};
use ad_trait::AD;
use ad_trait::differentiable_function::DifferentiableFunctionTrait;
use num_dual::DualNum;
use num_traits::Float;

/// [`rosenbrock`](crate::rosenbrock) for `num_dual` numbers.
pub fn rosenbrock_num_dual<D: DualNum<Primitive = f64>>(x: &[D]) -> D {
    let one = D::from(1.0);
    x.windows(2)
        .map(|w| {
            let a = one.clone() - &w[0];
            let b = w[1].clone() - w[0].clone() * &w[0];
            a.clone() * a + b.clone() * 100.0 * b
        })
        .sum()
}

/// [`DenseTanh`]'s evaluation for `num_dual` numbers.
pub fn dense_num_dual<D: DualNum<Primitive = f64>>(f: &DenseTanh, x: &[D]) -> Vec<D> {
    let s: Vec<D> = x.iter().map(|v| v.sin()).collect();
    f.a.chunks_exact(f.n)
        .map(|row| {
            row.iter()
                .zip(&s)
                .map(|(&a, s)| s.clone() * a)
                .sum::<D>()
                .tanh()
        })
        .collect()
}

/// [`rosenbrock`](crate::rosenbrock) for `ad_trait` numbers.
pub fn rosenbrock_ad<T: AD>(x: &[T]) -> T {
    let (one, hundred) = (T::constant(1.0), T::constant(100.0));
    let mut sum = T::constant(0.0);
    for w in x.windows(2) {
        let a = one - w[0];
        let b = w[1] - w[0] * w[0];
        sum += a * a + hundred * b * b;
    }
    sum
}

/// Rosenbrock as an `ad_trait` function of `n` inputs and one output.
#[derive(Clone, Copy, Debug)]
pub struct AdRosenbrock {
    /// Number of inputs.
    pub n: usize,
}

impl<T: AD> DifferentiableFunctionTrait<T> for AdRosenbrock {
    const NAME: &'static str = "Rosenbrock";
    fn call(&self, x: &[T], _freeze: bool) -> Vec<T> {
        vec![rosenbrock_ad(x)]
    }
    fn num_inputs(&self) -> usize {
        self.n
    }
    fn num_outputs(&self) -> usize {
        1
    }
}

/// [`DenseTanh`] as an `ad_trait` function (the matrix stays `f64`, lifted per use).
#[derive(Clone, Debug)]
pub struct AdDense(pub DenseTanh);

impl<T: AD> DifferentiableFunctionTrait<T> for AdDense {
    const NAME: &'static str = "DenseTanh";
    fn call(&self, x: &[T], _freeze: bool) -> Vec<T> {
        let f = &self.0;
        let s: Vec<T> = x.iter().map(|v| v.sin()).collect();
        f.a.chunks_exact(f.n)
            .map(|row| {
                row.iter()
                    .zip(&s)
                    .fold(T::constant(0.0), |acc, (&a, &s)| acc + T::constant(a) * s)
                    .tanh()
            })
            .collect()
    }
    fn num_inputs(&self) -> usize {
        self.0.n
    }
    fn num_outputs(&self) -> usize {
        self.0.m
    }
}

/// A scalar objective written for any `num_traits::Float` (closures cannot be generic): how
/// the GradBench workloads run on echidna's numbers, by the same code as ours with
/// [`Folds`] for the reductions.
pub trait FloatObjective {
    /// The value at `x`.
    fn eval_float<T: Float>(&self, x: &[T]) -> T;
}

impl FloatObjective for Llsq {
    fn eval_float<T: Float>(&self, x: &[T]) -> T {
        self.objective(x, &Folds)
    }
}

impl FloatObjective for Lse {
    fn eval_float<T: Float>(&self, x: &[T]) -> T {
        Lse::objective(x, &Folds)
    }
}

impl FloatObjective for Det {
    fn eval_float<T: Float>(&self, x: &[T]) -> T {
        self.objective(x)
    }
}

impl FloatObjective for Gmm {
    fn eval_float<T: Float>(&self, x: &[T]) -> T {
        self.objective(x, &Folds)
    }
}

impl FloatObjective for crate::gradbench::Kmeans {
    fn eval_float<T: Float>(&self, x: &[T]) -> T {
        self.objective(x, &Folds)
    }
}

impl FloatObjective for crate::SinQuad {
    fn eval_float<T: Float>(&self, x: &[T]) -> T {
        self.objective(x, &Folds)
    }
}

/// [`rosenbrock`](crate::rosenbrock) for any `Float` (echidna), a fold for its sum.
pub fn rosenbrock_float<T: Float>(x: &[T]) -> T {
    let hundred = T::from(100.0).expect("a constant");
    let terms = x.windows(2).map(|w| {
        let a = T::one() - w[0];
        let b = w[1] - w[0] * w[0];
        a * a + hundred * b * b
    });
    Folds.sum(terms)
}
