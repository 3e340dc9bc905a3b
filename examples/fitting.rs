//! A sum of two exponentials, y = a₁ e^{−k₁ t} + a₂ e^{−k₂ t}, fitted to 60 noisy points by
//! Levenberg–Marquardt (the `levenberg-marquardt` crate), with the Jacobian of the residuals
//! from this library (`jacobian::solvers::LeastSquares`). See `examples::fit`.
//!
//! Run: `cargo run --release --example fitting`

use examples::fit::{TRUE, fit, model, noisy_data};

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
    println!(
        "{} after {} residual evaluations; the Jacobian by {}",
        fitted.termination, fitted.evaluations, fitted.plan
    );
    println!(
        "y(1) fitted {:.6}, true {:.6}",
        model(&fitted.params, 1.0),
        model(&TRUE, 1.0)
    );
}
