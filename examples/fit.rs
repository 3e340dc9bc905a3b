//! Nonlinear least squares: a sum of two exponentials fitted to noisy data by
//! Levenberg–Marquardt, with the Jacobian from this library.
//!
//! The model y(t) = a₁ e^{−k₁ t} + a₂ e^{−k₂ t} (two decaying species, a drug in two
//! compartments, a capacitor pair) is the classic hard fit: the two exponentials look alike, so
//! the problem is badly conditioned and a solver needs an exact Jacobian. The residual
//! function is written once; [`LeastSquares`] computes its Jacobian by forward sweeps
//! (4 parameters against 60 residuals) at every step the solver takes.
//!
//! ```
//! use examples::fit::{TRUE, fit, noisy_data};
//! let (data, _) = noisy_data(60, 0.002, 7);
//! let fitted = fit(&data, [1.0, 1.0, 1.0, 0.1]);
//! assert!(fitted.converged);
//! for (p, t) in fitted.params.iter().zip(TRUE) {
//!     assert!((p - t).abs() < 0.05 * t.abs(), "{p} against {t}");
//! }
//! ```

use jacobian::solvers::LeastSquares;
use jacobian::solvers::levenberg_marquardt::{LeastSquaresProblem, LevenbergMarquardt};
use jacobian::{Function, Op};

/// The parameters the data are drawn from: a₁, k₁, a₂, k₂.
pub const TRUE: [f64; 4] = [3.0, 2.0, 1.5, 0.25];

/// Observations (tᵢ, yᵢ), and the residuals of the model against them.
#[derive(Clone, Debug)]
pub struct Data {
    /// The times.
    pub t: Vec<f64>,
    /// The observed values.
    pub y: Vec<f64>,
}

/// y(t) = a₁ e^{−k₁ t} + a₂ e^{−k₂ t} for parameters (a₁, k₁, a₂, k₂).
pub fn model<T: Op>(p: &[T], t: T) -> T {
    p[0] * (-p[1] * t).exp() + p[2] * (-p[3] * t).exp()
}

/// The residuals model(tᵢ) − yᵢ.
impl Function for Data {
    fn eval<T: Op>(&self, p: &[T]) -> Vec<T> {
        let r = self.t.iter().zip(&self.y);
        r.map(|(&t, &y)| model(p, T::constant(t)) - T::constant(y))
            .collect()
    }
    fn sizes(&self) -> Option<(usize, usize)> {
        Some((4, self.t.len()))
    }
}

/// `n` observations of the model with [`TRUE`] parameters at t = 0, 0.1, 0.2, …, with Gaussian
/// noise of deviation `sigma` from a seeded generator (so every run draws the same data); also
/// the noise drawn.
pub fn noisy_data(n: usize, sigma: f64, seed: u64) -> (Data, Vec<f64>) {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    // A 64-bit linear congruential generator, its top 53 bits as a uniform in (0, 1).
    let mut uniform = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    let t: Vec<f64> = (0..n).map(|i| i as f64 * 0.1).collect();
    // Box–Muller: two uniforms give a standard normal.
    let noise: Vec<f64> = (0..n)
        .map(|_| sigma * (-2.0 * uniform().ln()).sqrt() * (std::f64::consts::TAU * uniform()).cos())
        .collect();
    let y = t
        .iter()
        .zip(&noise)
        .map(|(&t, e)| model(&TRUE, t) + e)
        .collect();
    (Data { t, y }, noise)
}

/// What [`fit`] found.
#[derive(Clone, Debug)]
pub struct Fitted {
    /// The fitted parameters (a₁, k₁, a₂, k₂).
    pub params: Vec<f64>,
    /// Whether the solver reports success.
    pub converged: bool,
    /// Its termination reason, in words.
    pub termination: String,
    /// The residual evaluations it made (one Jacobian per accepted step besides).
    pub evaluations: usize,
    /// ½‖r‖² at the fit.
    pub cost: f64,
    /// The Jacobian's last plan.
    pub plan: String,
}

/// Fits the model to `data` from the starting parameters `p0`.
pub fn fit(data: &Data, p0: [f64; 4]) -> Fitted {
    let problem = LeastSquares::new(data.clone(), &p0).expect("4 parameters, as the model takes");
    let (done, report) = LevenbergMarquardt::new().minimize(problem);
    Fitted {
        params: done.params().iter().copied().collect(),
        converged: report.termination.was_successful(),
        termination: format!("{:?}", report.termination),
        evaluations: report.number_of_evaluations,
        cost: report.objective_function,
        plan: done.plan().map_or_else(String::new, |p| p.to_string()),
    }
}
