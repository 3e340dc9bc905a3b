//! The tape variable as a nalgebra scalar (`RealField`): decompositions of `DMatrix<Var>`
//! differentiate in reverse mode, checked against the known formulas, and `is_zero` is a value
//! test that a replayable tape keeps as a branch guard.

use approx::assert_relative_eq;
use nalgebra::{DMatrix, DVector};
use num_traits::Zero;
use reverse::{ReplayError, Tape, Var};
use shared_ops::Op;

fn x4() -> DMatrix<f64> {
    let mut x = DMatrix::from_fn(4, 4, |i, j| ((i * 5 + j * 3 + 1) % 7) as f64 / 7.0 - 0.5);
    for (j, i) in [2, 0, 3, 1].into_iter().enumerate() {
        x[(i, j)] += 3.0;
    }
    x
}

/// The gradient of det X through nalgebra's LU is det X · X⁻ᵀ.
#[test]
fn determinant_gradient_is_det_times_inverse_transpose() {
    let x = x4();
    let tape = Tape::new();
    let vars = tape.vars(x.as_slice());
    let m = DMatrix::from_column_slice(4, 4, &vars);
    let det = m.determinant();
    assert_eq!(det.value(), x.determinant());
    let g = tape.gradient(det).wrt_all(&vars);
    let expected = x.determinant() * x.clone().try_inverse().unwrap().transpose();
    assert_relative_eq!(
        DMatrix::from_column_slice(4, 4, &g),
        expected,
        max_relative = 1e-12
    );
}

/// The gradient of ‖A⁻¹b‖² through `try_inverse` (LU beyond 3×3) is −2 A⁻ᵀ y yᵀ, y = A⁻¹b.
#[test]
fn inverse_and_norm_gradient() {
    let x = x4();
    let b = DVector::from_vec(vec![1.0, -2.0, 0.5, 3.0]);
    let tape = Tape::new();
    let vars = tape.vars(x.as_slice());
    let m = DMatrix::from_column_slice(4, 4, &vars);
    let y = m.try_inverse().unwrap() * b.map(Var::constant);
    let f = y.norm_squared();
    let g = tape.gradient(f).wrt_all(&vars);
    let xi_t = x.clone().try_inverse().unwrap().transpose();
    let y0 = x.try_inverse().unwrap() * &b;
    let expected = -&xi_t * (2.0 * &y0) * y0.transpose();
    assert_relative_eq!(
        DMatrix::from_column_slice(4, 4, &g),
        expected,
        max_relative = 1e-11
    );
}

/// The symmetric eigenvalues of a diagonal `DMatrix<Var>`: the tridiagonalisation meets zero
/// columns, skipped by nalgebra's `is_zero`, which reads the value (a structural test would
/// have divided by a recorded 0 and given NaN). ∂λₖ/∂Aₖₖ = 1 and 0 elsewhere.
#[test]
fn eigenvalues_of_a_diagonal_matrix() {
    let tape = Tape::new();
    let d = [1.0, 6.0, 11.0];
    let vars = tape.vars(&[d[0], 0.0, 0.0, 0.0, d[1], 0.0, 0.0, 0.0, d[2]]);
    let m = DMatrix::from_column_slice(3, 3, &vars);
    let eig = m.symmetric_eigen().eigenvalues;
    for k in 0..3 {
        let at = d
            .iter()
            .position(|&v| v == eig[k].value())
            .expect("an eigenvalue is exact");
        let g = tape.gradient(eig[k]).wrt_all(&vars);
        let expected: Vec<f64> = (0..9)
            .map(|p| if p == 4 * at { 1.0 } else { 0.0 })
            .collect();
        assert_eq!(g, expected, "eigenvalue {k}");
    }
}

/// `is_zero` of a recorded variable tests its value, and a replayable tape keeps the answer:
/// re-evaluating where it changes is refused.
#[test]
fn is_zero_is_a_guarded_decision() {
    let tape = Tape::replayable();
    let x = tape.var(0.0);
    assert!(x.is_zero() && !x.is_structural_zero());
    let y = if x.is_zero() {
        x + Var::constant(1.0)
    } else {
        x * x
    };
    let mut rec = tape.finish();
    assert_eq!(rec.gradient(y).wrt(x), 1.0);
    let err = rec.reevaluate(&[2.0]).unwrap_err();
    assert!(matches!(err, ReplayError::Guard(_)), "{err}");
    assert!(err.to_string().contains("is_zero"), "{err}");
    assert!(Var::<f64>::zero().is_structural_zero());
}

/// The gradient of det X by nalgebra 0.34 (feature `nalgebra_v0_34`) is the same as by 0.35,
/// bit for bit, and det X · X⁻ᵀ.
#[test]
fn determinant_gradient_alike_on_nalgebra_v0_34() {
    let x = x4();
    let gradient_by = |det: fn(&[Var]) -> Var| {
        let tape = Tape::new();
        let vars = tape.vars(x.as_slice());
        let d = det(&vars);
        tape.gradient(d).wrt_all(&vars)
    };
    let new = gradient_by(|v| DMatrix::from_column_slice(4, 4, v).determinant());
    let old = gradient_by(|v| nalgebra_v0_34::DMatrix::from_column_slice(4, 4, v).determinant());
    assert_eq!(new, old);
    let expected = x.determinant() * x.clone().try_inverse().unwrap().transpose();
    assert_relative_eq!(
        DMatrix::from_column_slice(4, 4, &old),
        expected,
        max_relative = 1e-12
    );
}
