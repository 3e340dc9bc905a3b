//! The same workloads written for the peer crates' number types (feature `peers`).
//!
//! Each peer has its own number trait, so the workloads are written again, operation for
//! operation as above: `num_dual::DualNum` (whose dual numbers are `Clone`, not `Copy`, hence the
//! references), `ad_trait::AD` (behind its `DifferentiableFunctionTrait`), and
//! `num_traits::Float` for echidna (whose numbers have no `Sum`, hence the folds, and no n-ary
//! dot product, hence the loops).

use crate::DenseTanh;
use crate::gradbench::{Det, Gmm, Llsq};
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
/// the GradBench workloads run on echidna's numbers.
pub trait FloatObjective {
    /// The value at `x`.
    fn eval_float<T: Float>(&self, x: &[T]) -> T;
}

impl FloatObjective for Llsq {
    fn eval_float<T: Float>(&self, x: &[T]) -> T {
        llsq_float(self, x)
    }
}

impl FloatObjective for crate::gradbench::Lse {
    fn eval_float<T: Float>(&self, x: &[T]) -> T {
        lse_float(x)
    }
}

impl FloatObjective for Det {
    fn eval_float<T: Float>(&self, x: &[T]) -> T {
        det_float(self, x)
    }
}

impl FloatObjective for Gmm {
    fn eval_float<T: Float>(&self, x: &[T]) -> T {
        gmm_float(self, x)
    }
}

/// A constant of any `Float` type.
fn c<T: Float>(v: f64) -> T {
    T::from(v).expect("an f64 constant")
}

/// Σ aᵢbᵢ by a loop (echidna has no n-ary node).
fn dot<T: Float>(a: &[T], b: &[T]) -> T {
    a.iter()
        .zip(b)
        .skip(1)
        .fold(a[0] * b[0], |s, (&x, &y)| s + x * y)
}

/// [`rosenbrock`](crate::rosenbrock) for any `Float` (echidna).
pub fn rosenbrock_float<T: Float>(x: &[T]) -> T {
    let hundred = c::<T>(100.0);
    let mut terms = x.windows(2).map(|w| {
        let a = T::one() - w[0];
        let b = w[1] - w[0] * w[0];
        a * a + hundred * b * b
    });
    let first = terms.next().unwrap_or_else(T::zero);
    terms.fold(first, |s, t| s + t)
}

/// [`Llsq`] for any `Float` (echidna).
pub fn llsq_float<T: Float>(f: &Llsq, x: &[T]) -> T {
    let mut powers = vec![T::zero(); f.m];
    let mut residuals = f.rows().map(|(row, s)| {
        for (p, &v) in powers.iter_mut().zip(row) {
            *p = c(v);
        }
        let r = c::<T>(s) - dot(x, &powers);
        r * r
    });
    let first = residuals.next().expect("n > 0");
    residuals.fold(first, |s, r| s + r) * c(0.5)
}

/// [`Lse`](crate::gradbench::Lse) for any `Float` (echidna).
pub fn lse_float<T: Float>(x: &[T]) -> T {
    let a = x[1..].iter().fold(x[0], |a, &b| a.max(b));
    let s = x[1..]
        .iter()
        .fold((x[0] - a).exp(), |s, &xi| s + (xi - a).exp());
    s.ln() + a
}

/// [`Det`] for any `Float` (echidna).
pub fn det_float<T: Float>(f: &Det, a: &[T]) -> T {
    fn minor<T: Float>(a: &[T], ell: usize, m: usize, r: &mut [usize], c: &mut [usize]) -> T {
        let r0 = r[ell];
        let mut cj = c[ell];
        if m == 1 {
            return a[r0 * ell + cj];
        }
        let mut det = T::zero();
        let mut positive = true;
        r[ell] = r[r0];
        let mut cj1 = ell;
        for _ in 0..m {
            let m0j = a[r0 * ell + cj];
            c[cj1] = c[cj];
            let sub = minor(a, ell, m - 1, r, c);
            c[cj1] = cj;
            det = if positive {
                det + m0j * sub
            } else {
                det - m0j * sub
            };
            cj1 = cj;
            cj = c[cj];
            positive = !positive;
        }
        r[ell] = r0;
        det
    }
    let l = f.ell;
    let mut r: Vec<usize> = (1..=l).collect();
    r.push(0);
    let mut cols = r.clone();
    minor(a, l, l, &mut r, &mut cols)
}

/// [`Gmm`] for any `Float` (echidna), operation for operation as ours but with loops for the
/// dot products.
pub fn gmm_float<T: Float>(f: &Gmm, p: &[T]) -> T {
    let (d, k) = (f.d, f.k);
    let tri = d * (d - 1) / 2;
    let (alpha, rest) = p.split_at(k);
    let (mu, rest) = rest.split_at(k * d);
    let (q, l) = rest.split_at(k * d);
    let qdiag: Vec<T> = q.iter().map(|v| v.exp()).collect();
    let sum_q: Vec<T> = q
        .chunks_exact(d)
        .map(|qk| qk[1..].iter().fold(qk[0], |s, &v| s + v))
        .collect();
    let rows: Vec<Vec<Vec<T>>> = (0..k)
        .map(|cc| {
            let lc = &l[cc * tri..(cc + 1) * tri];
            (0..d)
                .map(|r| {
                    (0..r)
                        .map(|col| lc[col * d - col * (col + 1) / 2 + (r - col - 1)])
                        .collect()
                })
                .collect()
        })
        .collect();
    let lse = |v: &[T]| {
        let a = v[1..].iter().fold(v[0], |a, &b| a.max(b));
        let s = v[1..]
            .iter()
            .fold((v[0] - a).exp(), |s, &vi| s + (vi - a).exp());
        s.ln() + a
    };
    let half = c::<T>(0.5);
    let mut xc = vec![T::zero(); d];
    let mut qx = vec![T::zero(); d];
    let mut beta = vec![T::zero(); k];
    let mut slse: Option<T> = None;
    for xi in f.x.chunks_exact(d) {
        for cc in 0..k {
            for j in 0..d {
                xc[j] = c::<T>(xi[j]) - mu[cc * d + j];
            }
            for r in 0..d {
                let diag = qdiag[cc * d + r] * xc[r];
                qx[r] = if r == 0 {
                    diag
                } else {
                    diag + dot(&rows[cc][r], &xc[..r])
                };
            }
            beta[cc] = alpha[cc] + sum_q[cc] - dot(&qx, &qx) * half;
        }
        let term = lse(&beta);
        slse = Some(slse.map_or(term, |s| s + term));
    }
    let (n, df) = (f.n as f64, d as f64);
    let loglik = c::<T>(-0.5 * n * df * (2.0 * core::f64::consts::PI).ln()) + slse.expect("n > 0")
        - lse(alpha) * c(n);
    let g2 = c::<T>(0.5 * f.gamma * f.gamma);
    let m = c::<T>(f.m as f64);
    let mut prior: Option<T> = None;
    for cc in 0..k {
        let qd = &qdiag[cc * d..(cc + 1) * d];
        let lc = &l[cc * tri..(cc + 1) * tri];
        let frobenius = if tri == 0 {
            dot(qd, qd)
        } else {
            dot(qd, qd) + dot(lc, lc)
        };
        let term = m * sum_q[cc] - g2 * frobenius;
        prior = Some(prior.map_or(term, |s| s + term));
    }
    loglik + prior.expect("k > 0") + c(k as f64 * f.prior_constant())
}
