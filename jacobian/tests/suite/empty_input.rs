//! One rule for an empty input, in every driver: a function of 0 inputs is differentiated like
//! any other. Its value is computed once and its derivatives are empty: an m×0 Jacobian, an
//! empty gradient, a 0×0 Hessian, and `J·v = 0` (there is no direction to move in).

use jacobian::sparse::{
    PreparedSparseHessian, PreparedSparseJacobian, sparse_hessian, sparse_jacobian,
};
use jacobian::{
    Function, Grad, Mode, Op, Pair, Preparation, PreparedGradient, PreparedHessian, PreparedHvp,
    PreparedJacobian, cost_report, gradient, hessian_with, hvp, hvp_many, jacobian_with, jvp,
    jvp_matrix, second_directional, vjp, vjp_matrix,
};
use nalgebra::DMatrix;
use reverse::Var;

/// Two outputs that do not depend on the (absent) inputs; the sum makes `x` appear in `f`.
struct Constants;
impl Function for Constants {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let s: T = x.iter().copied().sum();
        vec![
            s + T::constant(1.0),
            s * T::constant(3.0) + T::constant(2.0),
        ]
    }
}

/// One output: a scalar function of 0 inputs.
struct Scalar;
impl Function for Scalar {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        vec![x.iter().fold(T::constant(5.0), |a, &v| a + v * v)]
    }
}

#[test]
fn jacobians_are_m_by_zero() {
    for mode in [Mode::Auto, Mode::Forward, Mode::Reverse] {
        let j = jacobian_with(&Constants, &[], mode).unwrap();
        assert_eq!(j.value, vec![1.0, 2.0], "{mode:?}");
        assert_eq!(j.matrix.shape(), (2, 0), "{mode:?}");
    }
    let mut p = PreparedJacobian::new(Constants, &[]).unwrap();
    let j = p.jacobian(&[]).unwrap();
    assert_eq!((j.value, j.matrix.shape()), (vec![1.0, 2.0], (2, 0)));

    let s = sparse_jacobian(&Constants, &[]).unwrap();
    assert_eq!(s.value, vec![1.0, 2.0]);
    assert_eq!(
        (s.matrix.nrows(), s.matrix.ncols(), s.matrix.nnz()),
        (2, 0, 0)
    );
    let mut p = PreparedSparseJacobian::new(Constants, &[]).unwrap();
    let s = p.jacobian(&[]).unwrap();
    assert_eq!((s.matrix.nrows(), s.matrix.ncols()), (2, 0));

    let report = cost_report(&Constants, &[]).unwrap();
    assert_eq!(report.max_difference, 0.0);
}

#[test]
fn closure_drivers_agree() {
    let f = |x: &[forward::Dual<f64>]| Constants.eval(x);
    let (y, j) = forward::jacobian_rows(f, &[]).unwrap();
    assert_eq!((y, j), (vec![1.0, 2.0], vec![vec![], vec![]]));
    let (y, j) = reverse::jacobian_rows(|x: &[Var]| Constants.eval(x), &[]);
    assert_eq!((y, j), (vec![1.0, 2.0], vec![vec![], vec![]]));
    let (y, g) = forward::gradient(|x| Scalar.eval(x)[0], &[]);
    assert_eq!((y, g), (5.0, vec![]));
    let (y, g) = reverse::gradient(|x: &[Var]| Scalar.eval(x)[0], &[]);
    assert_eq!((y, g), (5.0, vec![]));
}

#[test]
fn products_are_empty_or_zero() {
    let (y, jv) = jvp(&Constants, &[], &[]).unwrap();
    assert_eq!((y, jv), (vec![1.0, 2.0], vec![0.0, 0.0]));
    let (y, wj) = vjp(&Constants, &[], &[1.0, 1.0]).unwrap();
    assert_eq!((y, wj), (vec![1.0, 2.0], vec![]));
    let jacobian::Products {
        value: _,
        matrix: jv,
        ..
    } = jvp_matrix(&Constants, &[], &DMatrix::zeros(0, 3)).unwrap();
    assert_eq!(jv, DMatrix::zeros(2, 3));
    let jacobian::Products {
        value: _,
        matrix: wj,
        ..
    } = vjp_matrix(&Constants, &[], &DMatrix::identity(2, 2)).unwrap();
    assert_eq!(wj.shape(), (2, 0));
    let d = second_directional(&Constants, &[], &[]).unwrap();
    assert_eq!((d.first, d.second), (vec![0.0, 0.0], vec![0.0, 0.0]));
    // Seeds are still checked against the 0 inputs and 2 outputs.
    assert!(jvp(&Constants, &[], &[1.0]).is_err());
    assert!(vjp(&Constants, &[], &[1.0]).is_err());
}

#[test]
fn gradients_and_hessians_are_empty() {
    assert_eq!(gradient(&Scalar, &[]).unwrap(), (5.0, vec![]));
    let mut p = PreparedGradient::new(Scalar, &[]).unwrap();
    assert_eq!(p.gradient(&[]).unwrap(), (5.0, vec![]));
    for pair in [Pair::Auto].into_iter().chain(Pair::ALL) {
        let h = hessian_with(&Scalar, &[], pair).unwrap();
        assert_eq!(
            (h.value, h.gradient.len(), h.matrix.shape()),
            (5.0, 0, (0, 0)),
            "{pair}"
        );
    }
    let h = hvp(&Scalar, &[], &[]).unwrap();
    assert_eq!((h.value, h.gradient, h.product), (5.0, vec![], vec![]));
    for preparation in [Preparation::Auto, Preparation::Record, Preparation::Compile] {
        let mut p = PreparedHvp::with_preparation(Scalar, &[], preparation).unwrap();
        let h = p.hvp(&[], &[]).unwrap();
        assert_eq!((h.value, h.gradient, h.product), (5.0, vec![], vec![]));
        let mut p = PreparedHessian::with_preparation(Scalar, &[], preparation).unwrap();
        let h = p.hessian(&[]).unwrap();
        assert_eq!(
            (h.value, h.gradient.len(), h.matrix.shape()),
            (5.0, 0, (0, 0))
        );
    }
    assert_eq!(
        hvp_many(&Scalar, &[], &DMatrix::zeros(0, 2))
            .unwrap()
            .shape(),
        (0, 2)
    );
    let s = sparse_hessian(&Scalar, &[]).unwrap();
    assert_eq!((s.value, s.matrix.nrows(), s.matrix.ncols()), (5.0, 0, 0));
    let mut p = PreparedSparseHessian::new(Scalar, &[]).unwrap();
    assert_eq!(p.hessian(&[]).unwrap().matrix.nnz(), 0);
    // The gradient transform of a 0-input function has no outputs.
    assert_eq!(Grad(Scalar).eval(&[] as &[f64]), Vec::<f64>::new());
    // The scalar check still applies.
    assert!(gradient(&Constants, &[]).is_err());
}
