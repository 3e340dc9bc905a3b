//! The examples that hand this library's derivatives to solvers converge.

use examples::fit::{TRUE, fit, noisy_data};
use examples::minimise::{by_lbfgs, by_newton, classic_start, near_start};

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

#[test]
fn newton_and_lbfgs_minimise_rosenbrock_100() {
    let newton = by_newton(near_start(100), 50);
    let last = newton.last().unwrap();
    assert!(
        last.gradient_norm < 1e-10 && last.cost < 1e-20,
        "{newton:?}"
    );
    // Quadratic convergence at the end: each gradient norm below 100 times the square of the
    // last (measured: 2.9e-4, 4.8e-6, 1.4e-13).
    let tail: Vec<f64> = newton
        .iter()
        .map(|it| it.gradient_norm)
        .filter(|&g| g < 1e-1)
        .collect();
    assert!(tail.len() >= 2, "{newton:?}");
    assert!(
        tail.windows(2).all(|w| w[1] < 100.0 * w[0] * w[0]),
        "{tail:?}"
    );
    let lbfgs = by_lbfgs(near_start(100), 5000);
    // Newton's method takes fewer (but dearer) iterations.
    assert!(
        newton.len() * 2 < lbfgs.len(),
        "{} against {}",
        newton.len(),
        lbfgs.len()
    );
    let far = by_lbfgs(classic_start(100), 5000);
    let last = far.last().unwrap();
    assert!(last.gradient_norm < 1e-8 && last.cost < 1e-15, "{last:?}");
}
