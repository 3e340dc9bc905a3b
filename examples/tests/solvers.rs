//! The examples that hand this library's derivatives to solvers converge, and the robot arm's
//! Jacobian is the geometric one.

use examples::arm::{Arm, solve_ik};
use examples::fit::{TRUE, fit, noisy_data};
use examples::minimise::{by_lbfgs, by_newton, classic_start, near_start};
use jacobian::{Function, Mode, jacobian_with};

/// ∂p/∂q by either mode equals zᵢ × (p − oᵢ), column by column, at poses of all kinds.
#[test]
fn arm_jacobian_is_the_geometric_jacobian() {
    let arm = Arm::six_joints();
    for q in [
        [0.0; 6],
        [0.3, -0.4, 0.9, 0.2, -0.5, 0.1],
        [3.0, 1.5, -2.5, 0.7, 2.9, -1.1],
    ] {
        let geometric = arm.geometric_jacobian(&q);
        let (_, hand) = arm.frames(&q);
        for mode in [Mode::Forward, Mode::Reverse] {
            let j = jacobian_with(&arm, &q, mode).unwrap();
            assert_eq!(j.value, arm.eval::<f64>(&q));
            assert!((j.value[0] - hand[0]).abs() < 1e-15);
            let gap = (&j.matrix - &geometric).abs().max();
            assert!(
                gap < 1e-14,
                "{mode:?} at {q:?}: {gap:e}\n{}\n{geometric}",
                j.matrix
            );
        }
    }
}

#[test]
fn inverse_kinematics_reaches_the_target() {
    let arm = Arm::six_joints();
    let target = [0.4, 0.3, 0.5];
    let ik = solve_ik(&arm, &[0.0; 6], target, 0.05, 100).unwrap();
    assert!(
        ik.error < 1e-10,
        "error {:e} after {} steps",
        ik.error,
        ik.steps.len()
    );
    let hand = arm.eval::<f64>(&ik.q);
    for k in 0..3 {
        assert!((hand[k] - target[k]).abs() < 1e-10);
    }
    // Damped steps shrink the error at every step here.
    assert!(
        ik.steps.windows(2).all(|w| w[1].error < w[0].error),
        "{:?}",
        ik.steps
    );
}

/// A target out of reach, 3 m from the shoulder (which the base's 0.3 m link holds at
/// (0, 0, 0.3)) for 0.9 m of links beyond it: the damped steps stay bounded, and the hand ends
/// stretched towards the target, 2.1 m short.
#[test]
fn inverse_kinematics_out_of_reach_stays_bounded() {
    let arm = Arm::six_joints();
    let ik = solve_ik(&arm, &[0.1; 6], [3.0, 0.0, 0.3], 0.05, 200).unwrap();
    assert!(ik.steps.iter().all(|s| s.step < 10.0), "{:?}", ik.steps);
    let reach: f64 = arm.links[1..].iter().map(|l| l.norm()).sum();
    // Never nearer than the stretched arm can be, and within 1% of it.
    assert!(
        ik.error >= 3.0 - reach - 1e-12,
        "error {} with reach {reach}",
        ik.error
    );
    assert!(
        ik.error < (3.0 - reach) * 1.01,
        "error {} with reach {reach}",
        ik.error
    );
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
