//! `gmm`: the log posterior of a mixture of k Gaussians in d dimensions over n data points,
//! with a Wishart prior on the precision matrices (ADBench's objective, with the sign that
//! makes it the true log posterior).
//!
//! Component k has weight softmax(α)ₖ, mean μₖ and precision matrix QₖᵀQₖ, where Qₖ is lower
//! triangular with diagonal `exp(qₖ)` and strict lower triangle `lₖ`, given column by column
//! (column c holds rows c + 1 … d − 1). With `βᵢₖ = αₖ + Σⱼ qₖⱼ − ½‖Qₖ(xᵢ − μₖ)‖²`,
//!
//! ```text
//! L = −½ n d ln 2π + Σᵢ lseₖ βᵢₖ − n lse α
//!     + Σₖ [−½ γ² (‖exp qₖ‖² + ‖lₖ‖²) + m Σⱼ qₖⱼ] + k C
//! C = N d (ln γ − ½ ln 2) − ln Γ_d(N/2),   N = d + m + 1,
//! ln Γ_d(a) = ¼ d (d − 1) ln π + Σⱼ₌₁..d ln Γ(a + ½ (1 − j))
//! ```
//!
//! where `lse v = max v + ln Σ exp(vᵢ − max v)`. The objective is written once, as [`Gmm`],
//! over any [`Op`]: `objective` evaluates it on `f64`, and `jacobian` takes its gradient with
//! respect to the parameters, flattened as `[α, μ row by row, q row by row, l row by row]`, by
//! a [`PreparedGradient`](wengert::PreparedGradient) (recorded when the message is prepared;
//! each run evaluates the recording again, or records afresh, as its plan says, and sweeps
//! back once), and answers `{alpha, mu, q, l}` in the shapes of the input.

use crate::Run;
use crate::evals::{Gradient, Primal, scalar};
use crate::json;
use serde_json::Value;
use std::f64::consts::PI;
use wengert::{Function, Op};

/// The functions of `gmm`.
const FUNCTIONS: [&str; 2] = ["objective", "jacobian"];

/// Prepares a function of `gmm`: `objective` (a number) or `jacobian` (`{alpha, mu, q, l}`).
pub fn prepare(function: &str, input: &Value) -> Result<Box<dyn Run>, String> {
    if !FUNCTIONS.contains(&function) {
        return Err(crate::run::unknown("gmm", function, &FUNCTIONS));
    }
    let (f, params) = read(input)?;
    if function == "objective" {
        Ok(Primal::boxed(f, params, scalar))
    } else {
        let (k, d) = (f.k, f.d);
        let gradient = Gradient::boxed(f, params, json::array)?;
        Ok(Box::new(Shaped { gradient, k, d }))
    }
}

/// The log posterior of [`gmm`](self) as a function of the flattened parameters
/// `[α (k), μ (k·d), q (k·d), l (k·d(d−1)/2)]`, its data and prior constants held as `f64`.
#[derive(Clone, Debug, PartialEq)]
pub struct Gmm {
    /// Dimensions (at least 1).
    pub d: usize,
    /// Components (at least 1).
    pub k: usize,
    /// Data points.
    pub n: usize,
    /// The data, row by row: n×d.
    pub x: Vec<f64>,
    /// The prior's extra degrees of freedom m.
    pub m: f64,
    /// The prior's scale γ (positive).
    pub gamma: f64,
    /// The terms that depend on no parameter: `−½ n d ln 2π + k C`.
    pub constant: f64,
}

impl Gmm {
    /// The objective of `k` components in `d` dimensions over the `n` points `x` (row by row),
    /// with the prior's `m` and `gamma`.
    pub fn new(d: usize, k: usize, n: usize, x: Vec<f64>, m: usize, gamma: f64) -> Gmm {
        let (df, mf) = (d as f64, m as f64);
        let big_n = df + mf + 1.0;
        let log_gamma_d = 0.25 * df * (df - 1.0) * PI.ln()
            + (1..=d)
                .map(|j| ln_gamma(0.5 * big_n + 0.5 * (1.0 - j as f64)))
                .sum::<f64>();
        let c = big_n * df * (gamma.ln() - 0.5 * 2f64.ln()) - log_gamma_d;
        let constant = -0.5 * n as f64 * df * (2.0 * PI).ln() + k as f64 * c;
        Gmm {
            d,
            k,
            n,
            x,
            m: mf,
            gamma,
            constant,
        }
    }

    /// Entries of each strict lower triangle: d(d − 1)/2.
    pub fn tri(&self) -> usize {
        self.d * self.d.saturating_sub(1) / 2
    }

    /// Length of the flattened parameters: k (1 + 2d) + k d(d − 1)/2.
    pub fn params(&self) -> usize {
        self.k * (1 + 2 * self.d + self.tri())
    }
}

/// `max v + ln Σ exp(vᵢ − max v)` (v not empty).
fn logsumexp<T: Op>(v: &[T]) -> T {
    let a = v[1..].iter().fold(v[0], |a, &b| a.max(b));
    v.iter().map(|&b| (b - a).exp()).sum::<T>().ln() + a
}

impl Function for Gmm {
    fn eval<T: Op>(&self, p: &[T]) -> Vec<T> {
        let (d, k, tri) = (self.d, self.k, self.tri());
        let (alpha, rest) = p.split_at(k);
        let (mu, rest) = rest.split_at(k * d);
        let (q, l) = rest.split_at(k * d);
        let qdiag: Vec<T> = q.iter().map(|v| v.exp()).collect();
        let sum_q: Vec<T> = q
            .chunks_exact(d)
            .map(|qk| qk.iter().copied().sum())
            .collect();
        // The strict lower triangles row by row (row r of Qₖ holds r entries, from offset
        // r(r − 1)/2), gathered from the input's column-by-column order.
        let mut lrows = Vec::with_capacity(k * tri);
        for comp in 0..k {
            let lk = &l[comp * tri..(comp + 1) * tri];
            for r in 1..d {
                lrows.extend((0..r).map(|c| lk[c * d - c * (c + 1) / 2 + (r - c - 1)]));
            }
        }

        let mut centred = vec![T::zero(); d];
        let mut qx = vec![T::zero(); d];
        let mut beta = vec![T::zero(); k];
        let terms: Vec<T> = self
            .x
            .chunks_exact(d)
            .map(|xi| {
                for comp in 0..k {
                    let muk = &mu[comp * d..(comp + 1) * d];
                    // ‖Qₖ(xᵢ − μₖ)‖² = ‖Qₖ(μₖ − xᵢ)‖²: the data enter as constants.
                    for (c, (&m, &x)) in centred.iter_mut().zip(muk.iter().zip(xi)) {
                        *c = m - x;
                    }
                    let lk = &lrows[comp * tri..(comp + 1) * tri];
                    for r in 0..d {
                        let diag = qdiag[comp * d + r] * centred[r];
                        qx[r] = if r == 0 {
                            diag
                        } else {
                            let row = &lk[r * (r - 1) / 2..r * (r + 1) / 2];
                            diag + T::dot(row, &centred[..r])
                        };
                    }
                    beta[comp] = alpha[comp] + sum_q[comp] - T::dot(&qx, &qx) * 0.5;
                }
                logsumexp(&beta)
            })
            .collect();
        let loglik = terms.into_iter().sum::<T>() - logsumexp(alpha) * self.n as f64;
        let half_g2 = 0.5 * self.gamma * self.gamma;
        let prior: T = (0..k)
            .map(|comp| {
                let qd = &qdiag[comp * d..(comp + 1) * d];
                let lk = &l[comp * tri..(comp + 1) * tri];
                let frobenius = T::dot(qd, qd) + T::dot(lk, lk);
                sum_q[comp] * self.m - frobenius * half_g2
            })
            .sum();
        vec![loglik + prior + self.constant]
    }

    fn sizes(&self) -> Option<(usize, usize)> {
        Some((self.params(), 1))
    }
}

/// ln Γ(x) for x > 0 (NaN elsewhere), to about 1e-15 relative, or absolute near the zeros at
/// 1 and 2: the recurrence `ln Γ(x) = ln Γ(x + s) − ln(x (x + 1) ⋯ (x + s − 1))` lifts x to at
/// least 10, where Stirling's series to its 1/(156 x¹³) term is exact to the last bit.
///
/// ```
/// use wengert_gradbench::evals::gmm::ln_gamma;
/// assert!((ln_gamma(5.0) - 24f64.ln()).abs() < 1e-14); // Γ(5) = 4!
/// assert!((ln_gamma(0.5) - 0.5 * std::f64::consts::PI.ln()).abs() < 1e-14); // Γ(½) = √π
/// ```
pub fn ln_gamma(x: f64) -> f64 {
    if x.is_nan() || x <= 0.0 {
        return f64::NAN;
    }
    let (mut z, mut product) = (x, 1.0);
    while z < 10.0 {
        product *= z;
        z += 1.0;
    }
    let (inv, inv2) = (1.0 / z, 1.0 / (z * z));
    let series = inv
        * (1.0 / 12.0
            - inv2
                * (1.0 / 360.0
                    - inv2
                        * (1.0 / 1260.0
                            - inv2
                                * (1.0 / 1680.0
                                    - inv2
                                        * (1.0 / 1188.0
                                            - inv2 * (691.0 / 360_360.0 - inv2 / 156.0))))));
    (z - 0.5) * z.ln() - z + 0.5 * (2.0 * PI).ln() + series - product.ln()
}

/// The gradient's flat array as `{alpha, mu, q, l}`, each in the shape of its input.
struct Shaped {
    gradient: Box<dyn Run>,
    k: usize,
    d: usize,
}

impl Run for Shaped {
    fn run(&mut self) -> Result<(), String> {
        self.gradient.run()
    }

    fn output(&self) -> Value {
        let flat = match self.gradient.output() {
            Value::Array(v) => v,
            other => return other,
        };
        let (k, d) = (self.k, self.d);
        let tri = d * (d - 1) / 2;
        // k rows of `cols` entries from `flat[start..]` (k empty rows when cols is 0).
        let rows = |start: usize, cols: usize| {
            Value::Array(
                (0..k)
                    .map(|c| {
                        let from = (start + c * cols).min(flat.len());
                        let to = (start + (c + 1) * cols).min(flat.len());
                        Value::Array(flat[from..to].to_vec())
                    })
                    .collect(),
            )
        };
        serde_json::json!({
            "alpha": Value::Array(flat[..k.min(flat.len())].to_vec()),
            "mu": rows(k, d),
            "q": rows(k + k * d, d),
            "l": rows(k + 2 * k * d, tri),
        })
    }
}

/// The input's objective and its parameters flattened, every size checked.
fn read(input: &Value) -> Result<(Gmm, Vec<f64>), String> {
    let d = json::count(input, "d")?;
    let k = json::count(input, "k")?;
    let n = json::count(input, "n")?;
    let m = json::count(input, "m")?;
    let gamma = json::number(input, "gamma")?;
    if d == 0 || k == 0 {
        return Err(format!(
            "`d` and `k` must be at least 1, got d = {d} and k = {k}"
        ));
    }
    if !(gamma.is_finite() && gamma > 0.0) {
        return Err(format!("`gamma` must be positive, got {gamma}"));
    }
    let tri = d
        .checked_mul(d - 1)
        .map(|t| t / 2)
        .ok_or_else(|| format!("`d` = {d} is too large"))?;
    let x = shaped(input, "x", n, d, "n", "d")?;
    let alpha = json::vector(input, "alpha")?;
    json::expect_len("alpha", alpha.len(), k)?;
    let mu = shaped(input, "mu", k, d, "k", "d")?;
    let q = shaped(input, "q", k, d, "k", "d")?;
    let l = shaped(input, "l", k, tri, "k", "d(d − 1)/2")?;
    let params = [alpha, mu, q, l].concat();
    Ok((Gmm::new(d, k, n, x, m, gamma), params))
}

/// The matrix `name`, checked to be `rows`×`cols` (an empty matrix has no rows to show its
/// columns, so only its rows are checked).
fn shaped(
    input: &Value,
    name: &str,
    rows: usize,
    cols: usize,
    rows_are: &str,
    cols_are: &str,
) -> Result<Vec<f64>, String> {
    let (r, c, data) = json::matrix(input, name)?;
    if r != rows || (r > 0 && c != cols) {
        return Err(format!(
            "`{name}` is {r}×{c}, expected {rows_are}×{cols_are} = {rows}×{cols}"
        ));
    }
    Ok(data)
}
