//! Nonlinear least squares: a sum of two exponentials, y = a₁ e^{−k₁ t} + a₂ e^{−k₂ t}, fitted
//! to 60 noisy points by Levenberg–Marquardt (the `levenberg-marquardt` crate), with the
//! Jacobian of the residuals from this library (`jacobian::solvers::LeastSquares`).
//!
//! The model (two decaying species, a drug in two compartments, a capacitor pair) is the
//! classic hard fit: the two exponentials look alike, so the problem is badly conditioned and a
//! solver needs an exact Jacobian. The residual function is written once; [`LeastSquares`]
//! computes its Jacobian by forward sweeps (4 parameters against 60 residuals) at every step the
//! solver takes.
//!
//! Run: `cargo run --release --example fitting`

use examples::lcg::Lcg;
use jacobian::solvers::LeastSquares;
use jacobian::solvers::levenberg_marquardt::{LeastSquaresProblem, LevenbergMarquardt};
use jacobian::{Function, Op};

/// The parameters the data are drawn from: a₁, k₁, a₂, k₂.
const TRUE: [f64; 4] = [3.0, 2.0, 1.5, 0.25];

/// Observations (tᵢ, yᵢ), and the residuals of the model against them.
#[derive(Clone, Debug)]
struct Data {
    /// The times.
    t: Vec<f64>,
    /// The observed values.
    y: Vec<f64>,
}

/// y(t) = a₁ e^{−k₁ t} + a₂ e^{−k₂ t} for parameters (a₁, k₁, a₂, k₂).
fn model<T: Op>(p: &[T], t: T) -> T {
    p[0] * (-p[1] * t).exp() + p[2] * (-p[3] * t).exp()
}

/// The residuals model(tᵢ) − yᵢ.
impl Function for Data {
    fn eval<T: Op>(&self, p: &[T]) -> Vec<T> {
        let r = self.t.iter().zip(&self.y);
        r.map(|(&t, &y)| model(p, T::constant(t)) - y).collect()
    }
    fn sizes(&self) -> Option<(usize, usize)> {
        Some((4, self.t.len()))
    }
}

/// `n` observations of the model with [`TRUE`] parameters at t = 0, 0.1, 0.2, …, with Gaussian
/// noise of deviation `sigma` from a seeded generator (so every run draws the same data); also
/// the noise drawn.
fn noisy_data(n: usize, sigma: f64, seed: u64) -> (Data, Vec<f64>) {
    let mut rng = Lcg(seed);
    // The first draw is an affine function of the seed: skip it.
    rng.next();
    // Uniform in (0, 1), half a step clear of 0 so that its logarithm is finite.
    let mut uniform = move || 0.5 * (rng.next() + 1.0) + f64::EPSILON / 4.0;
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
struct Fitted {
    /// The fitted parameters (a₁, k₁, a₂, k₂).
    params: Vec<f64>,
    /// Whether the solver reports success.
    converged: bool,
    /// Its termination reason, in words.
    termination: String,
    /// The residual evaluations it made (one Jacobian per accepted step besides).
    evaluations: usize,
    /// ½‖r‖² at the fit.
    cost: f64,
    /// The Jacobian's last plan.
    plan: String,
}

/// Fits the model to `data` from the starting parameters `p0`.
fn fit(data: &Data, p0: [f64; 4]) -> Fitted {
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

fn main() {
    let (data, noise) = noisy_data(60, 0.002, 7);
    let start = [1.0, 1.0, 1.0, 0.1];
    let fitted = fit(&data, start);
    println!("y = a₁ e^(−k₁ t) + a₂ e^(−k₂ t), 60 points with noise σ = 0.002, from {start:?}");
    println!("{:>4} {:>10} {:>10}", "", "true", "fitted");
    for (name, (t, p)) in ["a₁", "k₁", "a₂", "k₂"]
        .iter()
        .zip(TRUE.iter().zip(&fitted.params))
    {
        println!("{name:>4} {t:>10.6} {p:>10.6}");
    }
    let rms = (2.0 * fitted.cost / 60.0).sqrt();
    let sigma = (noise.iter().map(|e| e * e).sum::<f64>() / 60.0).sqrt();
    println!("rms residual {rms:.5} (the noise drawn: {sigma:.5})");
    let outcome = if fitted.converged {
        "converged"
    } else {
        "failed"
    };
    println!(
        "{outcome} ({}) after {} residual evaluations; the Jacobian by {}",
        fitted.termination, fitted.evaluations, fitted.plan
    );
    println!(
        "y(1) fitted {:.6}, true {:.6}",
        model(&fitted.params, 1.0),
        model(&TRUE, 1.0)
    );
}

#[cfg(test)]
mod tests {
    use super::{TRUE, fit, noisy_data};

    #[test]
    fn runs() {
        super::main();
    }

    #[test]
    fn levenberg_marquardt_fits_two_exponentials() {
        let (data, _) = noisy_data(60, 0.002, 7);
        let fitted = fit(&data, [1.0, 1.0, 1.0, 0.1]);
        assert!(fitted.converged, "{}", fitted.termination);
        for (p, t) in fitted.params.iter().zip(TRUE) {
            assert!(
                (p - t).abs() < 0.05 * t.abs(),
                "{:?} against {TRUE:?}",
                fitted.params
            );
        }
        // The fit explains the data down to the noise: rms residual ≈ σ.
        let rms = (2.0 * fitted.cost / 60.0).sqrt();
        assert!(rms < 0.0025, "rms {rms}");
        // Without noise the true parameters come back to 1e-10.
        let (exact, _) = noisy_data(60, 0.0, 7);
        let fitted = fit(&exact, [1.0, 1.0, 1.0, 0.1]);
        for (p, t) in fitted.params.iter().zip(TRUE) {
            assert!((p - t).abs() < 1e-10, "{:?}", fitted.params);
        }
    }
}
