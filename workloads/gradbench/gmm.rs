use super::{Nary, Reduce, c};
use crate::{Function, Op};
use core::f64::consts::PI;
use shared_ops::num_traits::Float;

/// GradBench `gmm`: the log posterior of a mixture of k Gaussians in d dimensions, over n data
/// points, with a Wishart prior on the precision matrices (the suite's current definition,
/// ADBench's objective with its sign and transposition fixed).
///
/// Component k has weight softmax(α)ₖ, mean μₖ and precision matrix QₖᵀQₖ, where Qₖ is lower
/// triangular with diagonal `exp(qₖ)` and strict lower triangle `lₖ` (column-major). With
/// `βᵢₖ = αₖ + Σⱼ qₖⱼ − ½‖Qₖ(xᵢ − μₖ)‖²`,
///
/// ```text
/// objective = −½ n d ln 2π + Σᵢ lseₖ βᵢₖ − n lse α
///             + Σₖ [−½ γ² (‖exp qₖ‖² + ‖lₖ‖²) + m Σⱼ qₖⱼ] + k C
/// C = N d (ln γ − ½ ln 2) − ln Γ_d(N/2),  N = d + m + 1
/// ```
///
/// The inputs are `[α (k), μ (k·d), q (k·d), l (k·d(d−1)/2)]`; γ = 1 and m = 0 as in the suite.
/// Each row of `Qₖ(xᵢ − μₖ)` is one [`Op::dot`], and so is each squared norm.
///
/// ```
/// use workloads::{Function, gradbench::Gmm};
/// let f = Gmm::new(2, 3, 5);
/// let p = f.input();
/// assert_eq!(p.len(), 3 + 6 + 6 + 3);
/// let (_, g) = jacobian::gradient(&f, &p)?;
/// let fwd = jacobian::jacobian_with(&f, &p, jacobian::Mode::Forward)?;
/// workloads::assert_close(&g, fwd.matrix.as_slice(), 1e-12, "gmm");
/// # Ok::<(), jacobian::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Gmm {
    /// Dimensions.
    pub d: usize,
    /// Components.
    pub k: usize,
    /// Data points.
    pub n: usize,
    /// The data, row-major n×d.
    pub x: Vec<f64>,
    /// The prior's scale γ.
    pub gamma: f64,
    /// The prior's extra degrees of freedom m.
    pub m: usize,
}

impl Gmm {
    /// A mixture of k components in d dimensions over n standard-normal data points.
    pub fn new(d: usize, k: usize, n: usize) -> Gmm {
        let x = super::Rng::new(31337).normals(n * d);
        Gmm {
            d,
            k,
            n,
            x,
            gamma: 1.0,
            m: 0,
        }
    }

    /// Entries of each strict lower triangle.
    fn tri(&self) -> usize {
        self.d * (self.d - 1) / 2
    }

    /// The benchmark parameters, as GradBench draws them: α, q and l standard normal, μ
    /// uniform in [0, 1).
    pub fn input(&self) -> Vec<f64> {
        let (d, k) = (self.d, self.k);
        let mut rng = super::Rng::new(27182);
        let alpha = rng.normals(k);
        let mu = rng.uniforms(k * d);
        let q = rng.normals(k * d);
        let l = rng.normals(k * self.tri());
        [alpha, mu, q, l].concat()
    }

    /// The constant of the prior (it does not depend on the parameters): `N d (ln γ − ½ ln 2) − ln Γ_d(N/2)`, `N = d + m + 1`.
    pub fn prior_constant(&self) -> f64 {
        let d = self.d as f64;
        let big_n = d + self.m as f64 + 1.0;
        let log_gamma_d = 0.25 * d * (d - 1.0) * PI.ln()
            + (1..=self.d)
                .map(|j| ln_gamma(0.5 * big_n + 0.5 * (1.0 - j as f64)))
                .sum::<f64>();
        big_n * d * (self.gamma.ln() - 0.5 * 2f64.ln()) - log_gamma_d
    }
}

/// `max v + ln Σ exp(vᵢ − max v)`.
fn logsumexp<T: Float>(v: &[T], r: &impl Reduce<T>) -> T {
    let a = v[1..].iter().fold(v[0], |a, &b| a.max(b));
    r.sum(v.iter().map(|&vi| (vi - a).exp())).ln() + a
}

impl Gmm {
    /// The objective, for any `Float` with the reductions `r`.
    pub fn objective<T: Float>(&self, p: &[T], r: &impl Reduce<T>) -> T {
        let (d, k, tri) = (self.d, self.k, self.tri());
        let (alpha, rest) = p.split_at(k);
        let (mu, rest) = rest.split_at(k * d);
        let (q, l) = rest.split_at(k * d);
        let qdiag: Vec<T> = q.iter().map(|v| v.exp()).collect();
        let sum_q: Vec<T> = q
            .chunks_exact(d)
            .map(|qk| r.sum(qk.iter().copied()))
            .collect();
        // Row r of the strict lower triangle of Qₖ (l is column-major: column c holds rows
        // c + 1 … d − 1), gathered once per component.
        let rows: Vec<Vec<Vec<T>>> = (0..k)
            .map(|comp| {
                let lc = &l[comp * tri..(comp + 1) * tri];
                (0..d)
                    .map(|row| {
                        (0..row)
                            .map(|col| lc[col * d - col * (col + 1) / 2 + (row - col - 1)])
                            .collect()
                    })
                    .collect()
            })
            .collect();

        let half = c::<T>(0.5);
        let mut xc = vec![T::zero(); d];
        let mut qx = vec![T::zero(); d];
        let mut beta = vec![T::zero(); k];
        let terms = self.x.chunks_exact(d).map(|xi| {
            for comp in 0..k {
                for j in 0..d {
                    xc[j] = c::<T>(xi[j]) - mu[comp * d + j];
                }
                for row in 0..d {
                    let diag = qdiag[comp * d + row] * xc[row];
                    qx[row] = if row == 0 {
                        diag
                    } else {
                        diag + r.dot(&rows[comp][row], &xc[..row])
                    };
                }
                beta[comp] = alpha[comp] + sum_q[comp] - r.dot(&qx, &qx) * half;
            }
            logsumexp(&beta, r)
        });
        let slse = r.sum(terms);
        let (n, df) = (self.n as f64, d as f64);
        let loglik = c::<T>(-0.5 * n * df * (2.0 * PI).ln()) + slse - logsumexp(alpha, r) * c(n);
        let g2 = c::<T>(0.5 * self.gamma * self.gamma);
        let m = c::<T>(self.m as f64);
        let prior = r.sum((0..k).map(|comp| {
            let qd = &qdiag[comp * d..(comp + 1) * d];
            let lc = &l[comp * tri..(comp + 1) * tri];
            let frobenius = r.dot(qd, qd) + r.dot(lc, lc);
            m * sum_q[comp] - g2 * frobenius
        }));
        loglik + prior + c(k as f64 * self.prior_constant())
    }
}

impl Function for Gmm {
    fn eval<T: Op>(&self, p: &[T]) -> Vec<T> {
        vec![self.objective(p, &Nary)]
    }
    fn sizes(&self) -> Option<(usize, usize)> {
        Some((self.k * (1 + 2 * self.d) + self.k * self.tri(), 1))
    }
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms: about 15 digits), for the prior's constant.
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1 − x) = π / sin(πx).
        return (PI / (PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let t = x + 7.5;
    let s = G[1..]
        .iter()
        .enumerate()
        .fold(G[0], |s, (i, g)| s + g / (x + i as f64 + 1.0));
    0.5 * (2.0 * PI).ln() + (x + 0.5) * t.ln() - t + s.ln()
}

#[cfg(test)]
mod tests {
    use super::ln_gamma;

    #[test]
    fn ln_gamma_at_known_values() {
        // Γ(1) = Γ(2) = 1, Γ(1/2) = √π, Γ(5) = 24, Γ(10.5) = 1133278.3889487855…
        assert!(ln_gamma(1.0).abs() < 1e-14);
        assert!(ln_gamma(2.0).abs() < 1e-14);
        assert!((ln_gamma(0.5) - 0.5 * core::f64::consts::PI.ln()).abs() < 1e-14);
        assert!((ln_gamma(5.0) - 24f64.ln()).abs() < 1e-13);
        assert!((ln_gamma(10.5) - 1_133_278.388_948_785_5f64.ln()).abs() < 1e-12);
    }
}
