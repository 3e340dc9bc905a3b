//! The duals and Taylor numbers as nalgebra scalars (`RealField`): decompositions differentiate
//! in forward mode, checked against the known formulas, and the scalar methods nalgebra adds
//! follow the rule table.

use approx::assert_relative_eq;
use forward::{Dual, DualVec, Taylor};
use nalgebra::{ComplexField, DMatrix, Matrix2, Matrix3, RealField, Rotation3, Vector3};
use num_traits::{FromPrimitive, Signed, Zero};
use shared_ops::Op;

/// A well-conditioned 4×4 matrix whose LU swaps rows (3 on a permuted diagonal).
fn x4() -> DMatrix<f64> {
    let mut x = DMatrix::from_fn(4, 4, |i, j| ((i * 5 + j * 3 + 1) % 7) as f64 / 7.0 - 0.5);
    for (j, i) in [2, 0, 3, 1].into_iter().enumerate() {
        x[(i, j)] += 3.0;
    }
    x
}

/// A direction of perturbation.
fn v4() -> DMatrix<f64> {
    DMatrix::from_fn(4, 4, |i, j| ((i * 3 + j * 7 + 2) % 5) as f64 / 5.0 - 0.4)
}

/// X + t·V as duals: the tangent of every entry is V's.
fn along(x: &DMatrix<f64>, v: &DMatrix<f64>) -> DMatrix<Dual<f64>> {
    x.zip_map(v, Dual::new)
}

#[test]
fn inverse_tangent_is_minus_inverse_v_inverse() {
    let (x, v) = (x4(), v4());
    let inv = along(&x, &v).try_inverse().expect("invertible");
    let xi = x.clone().try_inverse().unwrap();
    let expected = -&xi * &v * &xi;
    assert_relative_eq!(inv.map(|d| d.primal), xi, epsilon = 1e-15);
    assert_relative_eq!(inv.map(|d| d.tangent), expected, epsilon = 1e-13);
}

#[test]
fn determinant_in_four_lanes_is_det_times_trace() {
    let x = x4();
    let dirs: Vec<DMatrix<f64>> = (0..4)
        .map(|k| DMatrix::from_fn(4, 4, |i, j| if (i + j + k) % 3 == 0 { 1.0 } else { -0.5 }))
        .collect();
    let m = DMatrix::from_fn(4, 4, |i, j| {
        DualVec::<f64, 4>::new(x[(i, j)], core::array::from_fn(|k| dirs[k][(i, j)]))
    });
    let det = m.determinant();
    let xi = x.clone().try_inverse().unwrap();
    assert_eq!(det.primal, x.determinant());
    for (k, dir) in dirs.iter().enumerate() {
        // d det X = det X · tr(X⁻¹ dX).
        let expected = x.determinant() * (&xi * dir).trace();
        assert_relative_eq!(det.tangent[k], expected, max_relative = 1e-13);
    }
}

/// det(X + tV) of a 2×2 matrix is quadratic in t: its second derivative is 2 det V, exactly.
#[test]
fn nested_duals_give_the_second_derivative_of_det() {
    let (x, v) = (
        Matrix2::new(1.0, 2.0, 3.0, 4.0),
        Matrix2::new(0.5, -1.0, 2.0, 1.5),
    );
    let m = x.zip_map(&v, |a, b| {
        Dual::new(Dual::new(a, b), Dual::new(b, 0.0)) // t on both levels
    });
    let det = m.determinant();
    assert_eq!(det.tangent.tangent, 2.0 * v.determinant());
}

/// det(X + tV) of a 3×3 matrix is a cubic in t; its Taylor coefficients end in det V.
#[test]
fn taylor_coefficients_of_a_determinant() {
    let x = Matrix3::new(2.0, 1.0, 0.0, 1.0, 3.0, 1.0, 0.0, 1.0, 4.0);
    let v = Matrix3::new(1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0);
    let m = x.zip_map(&v, Taylor::<f64, 5>::variable);
    let c = m.determinant().c;
    assert_eq!(c[0], x.determinant());
    assert_relative_eq!(c[3], v.determinant(), epsilon = 1e-14);
    assert_eq!(c[4], 0.0);
}

#[test]
fn cholesky_and_lu_solves_agree_with_the_inverse() {
    let (x, v) = (x4(), v4());
    let a = &x * x.transpose();
    let da = &v * x.transpose() + &x * v.transpose();
    let m = along(&a, &da);
    let b = DMatrix::from_fn(4, 1, |i, _| Dual::from(i as f64 + 1.0));
    let by_chol = m.clone().cholesky().expect("SPD").solve(&b);
    let by_lu = m.lu().solve(&b).expect("invertible");
    // y = A⁻¹b, dy = −A⁻¹ dA y.
    let ai = a.try_inverse().unwrap();
    let y = &ai * b.map(|d| d.primal);
    let dy = -&ai * &da * &y;
    for sol in [by_chol, by_lu] {
        assert_relative_eq!(sol.map(|d| d.primal), y, max_relative = 1e-12);
        assert_relative_eq!(
            sol.map(|d| d.tangent),
            dy,
            max_relative = 1e-11,
            epsilon = 1e-13
        );
    }
}

/// d/dθ R_z(θ) = [e_z]× R_z(θ): a rotation built from a dual angle.
#[test]
fn rotation_derivative_is_the_cross_product_matrix() {
    let theta = 0.7;
    let r = Rotation3::from_axis_angle(&Vector3::z_axis(), Dual::variable(theta));
    let dr = r.matrix().map(|d| d.tangent);
    let plain = Rotation3::from_axis_angle(&Vector3::z_axis(), theta);
    let skew = Matrix3::new(0.0, -1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    assert_relative_eq!(dr, skew * plain.matrix(), epsilon = 1e-15);
}

/// The scalar methods that nalgebra adds, at their edges.
#[test]
fn scalar_methods() {
    let d = |x: f64| Dual::variable(x);
    // sinc: 1 at 0 with derivative 0; its series and sin x / x meet at |x| = 1/16.
    assert_eq!(ComplexField::sinc(d(0.0)), Dual::new(1.0, 0.0));
    for x in [1e-3, 0.0625 - 1e-12, 0.0625, 0.5] {
        let s = ComplexField::sinc(d(x));
        assert_relative_eq!(s.primal, x.sin() / x, max_relative = 1e-15);
        let slope = (x * x.cos() - x.sin()) / (x * x);
        assert_relative_eq!(s.tangent, slope, max_relative = 1e-9, epsilon = 1e-15);
    }
    let s = ComplexField::sinhc(d(1e-2));
    assert_relative_eq!(
        s.tangent,
        (1e-2 * 1e-2_f64.cosh() - 1e-2_f64.sinh()) / 1e-4,
        max_relative = 1e-9
    );
    // The modulus, argument and roots of a real.
    assert_eq!(
        ComplexField::argument(d(-2.0)).primal,
        core::f64::consts::PI
    );
    assert_eq!(ComplexField::modulus(d(-2.0)), Dual::new(2.0, -1.0));
    assert_eq!(ComplexField::try_sqrt(d(-1.0)), None);
    assert_eq!(ComplexField::try_sqrt(d(4.0)), Some(Dual::new(2.0, 0.25)));
    // √ at 0 exists, with the infinite derivative of the rule table.
    assert_eq!(
        ComplexField::try_sqrt(d(0.0)),
        Some(Dual::new(0.0, f64::INFINITY))
    );
    assert_eq!(
        RealField::copysign(d(3.0), Dual::from(-1.0)),
        Dual::new(-3.0, -1.0)
    );
    assert_eq!(
        RealField::clamp(d(5.0), Dual::from(0.0), Dual::from(1.0)),
        Dual::new(1.0, 0.0)
    );
    assert_eq!(<Dual<f64> as RealField>::pi().primal, core::f64::consts::PI);
    // Signed and FromPrimitive.
    assert_eq!(Signed::abs(&d(-2.0)), Dual::new(2.0, -1.0));
    assert!(Signed::is_negative(&d(-0.0)));
    assert_eq!(Dual::<f64>::from_i64(-3), Some(Dual::new(-3.0, 0.0)));
}

/// Conversions: from `f64` a constant, to `f64` the primal.
#[test]
fn conversions() {
    let c: Dual<f64> = nalgebra::convert(2.5);
    assert_eq!(c, Dual::new(2.5, 0.0));
    assert_eq!(
        nalgebra::try_convert::<Dual<f64>, f64>(Dual::new(1.5, 9.0)),
        Some(1.5)
    );
    let m = Matrix2::new(1.0, 2.0, 3.0, 4.0).cast::<Dual<f64>>();
    assert_eq!(m[(1, 0)], Dual::new(3.0, 0.0));
}

/// `is_zero` reads the primal, as for the `f64` a dual replaces; the structural zero of the
/// rule table's convention is zero in every component.
#[test]
fn zero_by_value_and_structural_zero() {
    let t = Dual::new(0.0, 1.0);
    assert!(t.is_zero() && !t.is_structural_zero());
    assert!(Dual::<f64>::zero().is_structural_zero());
    let lanes = DualVec::<f64, 2>::new(0.0, [0.0, 1.0]);
    assert!(lanes.is_zero() && !lanes.is_structural_zero());
    assert!(!DualVec::<f64, 2>::new(1.0, [0.0; 2]).is_zero());
    // The convention is unchanged: √ at 0 times a zero tangent contributes nothing.
    let y = (Dual::new(0.0, 0.0)).sqrt() + Dual::variable(1.0);
    assert_eq!(y.tangent, 1.0);
}

/// The same decompositions through each nalgebra version the numbers support (0.35 by the
/// `nalgebra` feature, 0.34 by `nalgebra_v0_34`): the tangents against the known formulas, and
/// the two versions against each other.
macro_rules! decompositions_in {
    ($name:ident, $na:ident) => {
        mod $name {
            use approx::assert_relative_eq;
            use forward::Dual;
            use $na::{DMatrix, DVector};

            fn x() -> DMatrix<f64> {
                DMatrix::from_fn(3, 3, |i, j| {
                    if i == j {
                        4.0
                    } else {
                        1.0 / (1 + i + j) as f64
                    }
                })
            }
            fn v() -> DMatrix<f64> {
                DMatrix::from_fn(3, 3, |i, j| ((i * 2 + j * 5) % 4) as f64 / 4.0 - 0.3)
            }
            fn along(x: &DMatrix<f64>, v: &DMatrix<f64>) -> DMatrix<Dual<f64>> {
                x.zip_map(v, Dual::new)
            }

            /// d(X⁻¹) = −X⁻¹ dX X⁻¹, by LU; d(X⁻¹b) the same applied to b.
            pub fn inverse_and_solve() -> (Vec<f64>, Vec<f64>) {
                let (x, v) = (x(), v());
                let inv = along(&x, &v).try_inverse().expect("invertible");
                let xi = x.clone().try_inverse().unwrap();
                let expected = -&xi * &v * &xi;
                assert_relative_eq!(inv.map(|d| d.tangent), expected, epsilon = 1e-13);
                let b = DVector::from_vec(vec![1.0, -2.0, 0.5]).map(Dual::from);
                let y = along(&x, &v).lu().solve(&b).expect("invertible");
                let dy = &expected * DVector::from_vec(vec![1.0, -2.0, 0.5]);
                assert_relative_eq!(y.map(|d| d.tangent), dy, epsilon = 1e-13);
                (
                    inv.map(|d| d.tangent).as_slice().to_vec(),
                    y.map(|d| d.tangent).as_slice().to_vec(),
                )
            }

            /// Of a symmetric positive definite S = X + Xᵀ along W = V + Vᵀ: the Cholesky factor
            /// reproduces dS = dL Lᵀ + L dLᵀ, and d(λ) = qᵀ W q for each eigenpair (λ, q).
            pub fn cholesky_and_eigen() -> (Vec<f64>, Vec<f64>) {
                let (x, v) = (x(), v());
                let (s, w) = (&x + x.transpose(), &v + v.transpose());
                let l = along(&s, &w).cholesky().expect("positive definite").l();
                let (l0, dl) = (l.map(|d| d.primal), l.map(|d| d.tangent));
                let ds = &dl * l0.transpose() + &l0 * dl.transpose();
                assert_relative_eq!(ds, w, epsilon = 1e-12);
                let e = along(&s, &w).symmetric_eigen();
                let plain = s.clone().symmetric_eigen();
                for k in 0..3 {
                    let q = plain.eigenvectors.column(k);
                    let i = (0..3)
                        .min_by(|&a, &b| {
                            let d =
                                |j: usize| (e.eigenvalues[j].primal - plain.eigenvalues[k]).abs();
                            d(a).total_cmp(&d(b))
                        })
                        .unwrap();
                    let dl = (q.transpose() * &w * q)[(0, 0)];
                    assert_relative_eq!(e.eigenvalues[i].tangent, dl, epsilon = 1e-9);
                }
                (
                    dl.as_slice().to_vec(),
                    e.eigenvalues.iter().map(|d| d.tangent).collect(),
                )
            }
        }
    };
}
decompositions_in!(on_nalgebra_v0_35, nalgebra);
decompositions_in!(on_nalgebra_v0_34, nalgebra_v0_34);

#[test]
fn decompositions_differentiate_alike_on_both_nalgebra_versions() {
    let (new, old) = (
        on_nalgebra_v0_35::inverse_and_solve(),
        on_nalgebra_v0_34::inverse_and_solve(),
    );
    assert_eq!(new, old, "LU: the same tangents, bit for bit");
    let (new, old) = (
        on_nalgebra_v0_35::cholesky_and_eigen(),
        on_nalgebra_v0_34::cholesky_and_eigen(),
    );
    assert_eq!(new.0, old.0, "Cholesky: the same tangents, bit for bit");
    for (a, b) in new.1.iter().zip(&old.1) {
        assert!((a - b).abs() < 1e-9, "eigenvalue tangents {a} and {b}");
    }
}
