use super::{Nary, Reduce, c};
use crate::{Function, Op};
use shared_ops::num_traits::Float;

/// GradBench `llsq`: the linear least-squares objective
/// `y(x) = ½ Σᵢ (sᵢ − Σⱼ xⱼ tᵢʲ)²` with `tᵢ = −1 + 2i/(n − 1)` and `sᵢ = sign tᵢ`, over the
/// m coefficients x (GradBench: m = 128, n from 16 to 16 392).
///
/// Each residual is one [`Op::dot`] of the coefficients with the powers of tᵢ, as the suite's
/// C++ reference accumulates them (a running power, no `pow`).
///
/// ```
/// use workloads::{Function, gradbench::Llsq};
/// let f = Llsq::new(4, 3);
/// let x = f.input();
/// let (_, g) = jacobian::gradient(&f, &x)?;
/// workloads::assert_close(&g, &f.gradient(&x), 1e-12, "llsq");
/// # Ok::<(), jacobian::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Llsq {
    /// Coefficients (inputs).
    pub m: usize,
    /// Sample points.
    pub n: usize,
    /// `t[i * m + j] = tᵢʲ`.
    powers: Vec<f64>,
    /// `sᵢ`.
    signs: Vec<f64>,
}

impl Llsq {
    /// The objective with m coefficients and n sample points.
    pub fn new(m: usize, n: usize) -> Llsq {
        let t = |i: usize| -1.0 + i as f64 * 2.0 / (n as f64 - 1.0);
        let mut powers = Vec::with_capacity(n * m);
        for i in 0..n {
            let mut p = 1.0;
            for _ in 0..m {
                powers.push(p);
                p *= t(i);
            }
        }
        let signs = (0..n)
            .map(|i| {
                let ti = t(i);
                ((0.0 < ti) as i32 - (ti < 0.0) as i32) as f64
            })
            .collect();
        Llsq {
            m,
            n,
            powers,
            signs,
        }
    }

    /// The benchmark input: m uniforms in [0, 1) (GradBench: `np.random.rand(m)`).
    pub fn input(&self) -> Vec<f64> {
        super::Rng::new(31337).uniforms(self.m)
    }

    /// The rows of the objective: the powers `tᵢ⁰ … tᵢᵐ⁻¹` and the sign `sᵢ` of each sample.
    pub fn rows(&self) -> impl Iterator<Item = (&[f64], f64)> {
        self.powers
            .chunks_exact(self.m)
            .zip(self.signs.iter().copied())
    }

    /// The objective, for any `Float` with the reductions `r`.
    pub fn objective<T: Float>(&self, x: &[T], r: &impl Reduce<T>) -> T {
        let mut powers = vec![T::zero(); self.m];
        let residuals = self.rows().map(|(row, s)| {
            for (p, &v) in powers.iter_mut().zip(row) {
                *p = c(v);
            }
            let e = c::<T>(s) - r.dot(x, &powers);
            e * e
        });
        r.sum(residuals) * c(0.5)
    }

    /// The gradient by hand: `∂y/∂xⱼ = −Σᵢ rᵢ tᵢʲ` with `rᵢ = sᵢ − Σₗ xₗ tᵢˡ`.
    pub fn gradient(&self, x: &[f64]) -> Vec<f64> {
        let mut g = vec![0.0; self.m];
        for (row, s) in self.rows() {
            let r = s - row.iter().zip(x).map(|(p, x)| p * x).sum::<f64>();
            for (g, p) in g.iter_mut().zip(row) {
                *g -= r * p;
            }
        }
        g
    }
}

impl Function for Llsq {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        vec![self.objective(x, &Nary)]
    }
    fn sizes(&self) -> Option<(usize, usize)> {
        Some((self.m, 1))
    }
}
