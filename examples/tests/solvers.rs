//! Newton's method and L-BFGS, fed this library's derivatives, minimise Rosenbrock.

use examples::minimise::{by_lbfgs, by_newton, classic_start, near_start};

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
