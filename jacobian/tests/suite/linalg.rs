//! Derivatives through nalgebra's linear algebra, reached from `Function`s by `Real<T>`: norms,
//! inverses, determinants, LU, Cholesky, QR, symmetric eigenvalues and singular values. Each is
//! taken in forward and in reverse mode, checked against finite differences and against the
//! known formulas: d det X = det X · tr(X⁻¹ dX), d X⁻¹ = −X⁻¹ dX X⁻¹, dλ = vᵀ dA v,
//! dσ = uᵀ dX v.

use crate::common::fd_column;
use jacobian::{Function, Grad, Op, PreparedGradient, Real, Replay, jvp};
use nalgebra::{DMatrix, DVector};
use proptest::prelude::*;

/// The `rows`×`cols` matrix whose entries, column by column (nalgebra's order), are `x`.
fn matrix<T: Op>(x: &[T], rows: usize, cols: usize) -> DMatrix<Real<T>> {
    DMatrix::from_iterator(rows, cols, x[..rows * cols].iter().map(|&v| Real(v)))
}

/// The entries of `m`, column by column.
fn entries<T: Op>(m: &DMatrix<Real<T>>) -> Vec<T> {
    m.iter().map(|r| r.0).collect()
}

fn constant<T: Op>(c: f64) -> Real<T> {
    Real(T::constant(c))
}

/// (X + Xᵀ)/2 + diag(0, 4, 8, …): symmetric, with eigenvalues kept apart by the diagonal.
fn symmetric<T: Op>(x: &[T], n: usize) -> DMatrix<Real<T>> {
    let m = matrix(x, n, n);
    DMatrix::from_fn(n, n, |i, j| {
        let spread = if i == j { 4.0 * i as f64 } else { 0.0 };
        (m[(i, j)] + m[(j, i)]) * constant(0.5) + constant(spread)
    })
}

/// ‖x‖.
struct Norm;
impl Function for Norm {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        vec![
            DVector::from_iterator(x.len(), x.iter().map(|&v| Real(v)))
                .norm()
                .0,
        ]
    }
}

/// det X (nalgebra: closed forms up to 3×3, LU with partial pivoting beyond).
struct Det(usize);
impl Function for Det {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        vec![matrix(x, self.0, self.0).determinant().0]
    }
}

/// ln |det X|.
struct LogAbsDet(usize);
impl Function for LogAbsDet {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        vec![matrix(x, self.0, self.0).determinant().0.abs().ln()]
    }
}

/// X⁻¹, by `try_inverse`.
struct Inverse(usize);
impl Function for Inverse {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let inv = matrix(x, self.0, self.0).try_inverse();
        entries(&inv.expect("the test matrices are invertible"))
    }
}

/// y = X⁻¹ b by `lu().solve`; the input is X's n² entries, then b.
struct LuSolve(usize);
impl Function for LuSolve {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let n = self.0;
        let b = DVector::from_iterator(n, x[n * n..].iter().map(|&v| Real(v)));
        let y = matrix(x, n, n).lu().solve(&b);
        y.expect("invertible").iter().map(|r| r.0).collect()
    }
}

/// The SPD matrix A = (X + Xᵀ)/2 + (n + 1)·I by Cholesky: ln det A = 2 Σ ln Lᵢᵢ, the entries of
/// L, and A⁻¹·1 by the factor's solve.
struct Cholesky(usize);
impl Cholesky {
    fn spd<T: Op>(&self, x: &[T]) -> DMatrix<Real<T>> {
        let n = self.0;
        let m = matrix(x, n, n);
        let shift = DMatrix::<Real<T>>::identity(n, n) * constant(n as f64 + 1.0);
        (&m + m.transpose()) * constant(0.5) + shift
    }
}
impl Function for Cholesky {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let n = self.0;
        let chol = self.spd(x).cholesky().expect("positive definite");
        let l = chol.l();
        let log_det = (0..n).map(|i| l[(i, i)].0.ln()).sum::<T>() * T::constant(2.0);
        let solved = chol.solve(&DVector::from_element(n, constant(1.0)));
        let mut out = vec![log_det];
        out.extend(entries(&l));
        out.extend(solved.iter().map(|r| r.0));
        out
    }
}

/// X = QR by Householder reflections: Σ ln |Rᵢᵢ| (= ln |det X|), then Q's and R's entries.
struct Qr(usize);
impl Function for Qr {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let qr = matrix(x, self.0, self.0).qr();
        let r = qr.r();
        let log_det = r.diagonal().iter().map(|d| d.0.abs().ln()).sum::<T>();
        let mut out = vec![log_det];
        out.extend(entries(&qr.q()));
        out.extend(entries(&r));
        out
    }
}

/// The eigenvalues of the symmetric matrix (X + Xᵀ)/2 + diag(0, 4, 8, …).
struct Eigenvalues(usize);
impl Function for Eigenvalues {
    /// In increasing order: the order nalgebra's iterations find them in may change under a
    /// finite difference's step (seen on a 4×4 case: 11 of 16 columns jumped).
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let mut values: Vec<T> = symmetric(x, self.0)
            .symmetric_eigen()
            .eigenvalues
            .iter()
            .map(|r| r.0)
            .collect();
        values.sort_by(|a, b| a.value().total_cmp(&b.value()));
        values
    }
}

/// The singular values of the `rows`×`cols` matrix X + diag(5, 15, 25, …). With X's entries in
/// [−1, 1], ‖X‖₂ ≤ 4, so by Weyl's inequality σₖ lies within 4 of 5 + 10k: the singular values
/// stay at least 2 apart and at least 1 from their kink at 0, where finite differences could not
/// be trusted (a spread of 4·k let σ₀ and σ₁ come within 0.012 of each other).
struct SingularValues(usize, usize);
impl SingularValues {
    fn spread<T: Op>(&self, x: &[T]) -> DMatrix<Real<T>> {
        let mut m = matrix(x, self.0, self.1);
        for i in 0..self.0.min(self.1) {
            m[(i, i)] += constant(5.0 + 10.0 * i as f64);
        }
        m
    }
}
impl Function for SingularValues {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let svd = self.spread(x).svd(false, false);
        svd.singular_values.iter().map(|r| r.0).collect()
    }
}

/// The largest |entry| of `m`, at least 1: the scale tolerances are relative to.
fn scale(m: &DMatrix<f64>) -> f64 {
    m.iter().fold(1.0, |s, v| s.max(v.abs()))
}

fn assert_close(a: &DMatrix<f64>, b: &DMatrix<f64>, tol: f64, what: &str) {
    assert_eq!(a.shape(), b.shape(), "{what}: shapes");
    let tol = tol * scale(a).max(scale(b));
    for j in 0..a.ncols() {
        for i in 0..a.nrows() {
            let (x, y) = (a[(i, j)], b[(i, j)]);
            assert!(
                (x - y).abs() <= tol,
                "{what}: entry ({i}, {j}): {x} against {y} (tolerance {tol:e})"
            );
        }
    }
}

/// The Jacobian of `f` at `x` by forward mode (a `jvp` per column, one tangent each) and by
/// reverse mode (one recording, a sweep per output). Checks that the primal of both is the
/// plain `f64` evaluation bit for bit (`Real` adds nothing to the primal arithmetic), that the
/// two modes agree, and that every column that finite differences can trust agrees with them;
/// returns the forward Jacobian. (Forward Jacobians of 2 to 16 lanes go through nalgebra in
/// `forward/tests/real_field.rs`; here one lane, and `reverse`'s own driver rather than
/// `jacobian_with`, whose every mode and lane count would compile nalgebra's decompositions
/// over its number type, keep the test's compile time down.)
fn both_modes(f: &(impl Function + Sync), x: &[f64], fd_tol: f64) -> DMatrix<f64> {
    let plain = f.eval::<f64>(x);
    let mut fwd = DMatrix::zeros(plain.len(), x.len());
    for j in 0..x.len() {
        let unit: Vec<f64> = (0..x.len())
            .map(|k| if k == j { 1.0 } else { 0.0 })
            .collect();
        let (y, column) = jvp(f, x, &unit).unwrap();
        assert_eq!(y, plain, "forward primal = plain f64");
        fwd.set_column(j, &DVector::from_vec(column));
    }
    let (value, rev) = reverse_jacobian(f, x);
    assert_eq!(value, plain, "reverse primal = plain f64");
    // Through an iterative decomposition's many rotations the two modes' sums round
    // differently: 1.1e-12 of the scale seen on a 5×5 eigenproblem (the regression file).
    assert_close(&fwd, &rev, 1e-11, "forward against reverse");
    let mut checked = 0;
    for j in 0..x.len() {
        if let Some(col) = fd_column(f, x, j) {
            let col = DMatrix::from_column_slice(col.len(), 1, &col);
            let ours = DMatrix::from_column_slice(col.nrows(), 1, fwd.column(j).as_slice());
            assert_close(
                &ours,
                &col,
                fd_tol,
                &format!("column {j} against finite differences"),
            );
            checked += 1;
        }
    }
    assert!(
        2 * checked >= x.len(),
        "finite differences trusted in only {checked} of {} columns",
        x.len()
    );
    fwd
}

/// `(f(x), J)` by reverse mode alone: one recording, a sweep per output.
fn reverse_jacobian(f: &impl Function, x: &[f64]) -> (Vec<f64>, DMatrix<f64>) {
    let (value, rows) = reverse::jacobian_rows(|xs| f.eval(xs), x);
    let j = DMatrix::from_fn(rows.len(), x.len(), |i, k| rows[i][k]);
    (value, j)
}

/// An n×n matrix of entries in [−1, 1] plus 3 on a permuted diagonal: invertible and well
/// conditioned, and LU's partial pivoting swaps rows wherever the permutation does.
fn invertible(n: usize) -> impl Strategy<Value = Vec<f64>> {
    let perm = Just((0..n).collect::<Vec<usize>>()).prop_shuffle();
    (prop::collection::vec(-1.0..1.0_f64, n * n), perm).prop_map(move |(mut x, perm)| {
        for (j, &i) in perm.iter().enumerate() {
            x[i + j * n] += 3.0;
        }
        x
    })
}

fn inverse_f64(x: &[f64], n: usize) -> DMatrix<f64> {
    DMatrix::from_column_slice(n, n, &x[..n * n])
        .try_inverse()
        .unwrap()
}

/// Column p = i + j·n of a Jacobian with respect to X's entries is ∂/∂Xᵢⱼ.
fn exact(m: usize, n: usize, d: impl Fn(usize, usize, usize) -> f64) -> DMatrix<f64> {
    DMatrix::from_fn(m, n * n, |out, p| d(out, p % n, p / n))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn norm_gradient_is_x_over_norm(x in prop::collection::vec(-2.0..2.0_f64, 1..12)) {
        let nrm = x.iter().map(|v| v * v).sum::<f64>().sqrt();
        // Away from the kink at 0 by a hundred finite-difference steps (10⁻³): at ‖x‖ = 0.0026
        // the steps straddled the kink's neighbourhood and no column could be trusted.
        prop_assume!(nrm > 0.1);
        let j = both_modes(&Norm, &x, 1e-7);
        let expected = DMatrix::from_fn(1, x.len(), |_, k| x[k] / nrm);
        assert_close(&j, &expected, 1e-14, "∇‖x‖ = x/‖x‖");
    }

    /// Sizes 2 and 3 take nalgebra's closed forms, 4 and 5 its LU.
    #[test]
    fn determinant_derivative_is_det_times_inverse_transpose(
        (n, x) in (2..=5usize).prop_flat_map(|n| (Just(n), invertible(n)))
    ) {
        let j = both_modes(&Det(n), &x, 1e-7);
        let det = DMatrix::from_column_slice(n, n, &x).determinant();
        let inv = inverse_f64(&x, n);
        // ∂ det X / ∂Xᵢⱼ = det X · (X⁻¹)ⱼᵢ.
        let expected = exact(1, n, |_, i, jj| det * inv[(jj, i)]);
        assert_close(&j, &expected, 1e-12, "d det X = det X · tr(X⁻¹ dX)");
    }

    #[test]
    fn inverse_derivative_is_minus_inverse_dx_inverse(
        (n, x) in (2..=5usize).prop_flat_map(|n| (Just(n), invertible(n)))
    ) {
        let j = both_modes(&Inverse(n), &x, 1e-7);
        let inv = inverse_f64(&x, n);
        // Output k = a + b·n is (X⁻¹)ₐᵦ; ∂(X⁻¹)ₐᵦ/∂Xᵢⱼ = −(X⁻¹)ₐᵢ (X⁻¹)ⱼᵦ.
        let expected = exact(n * n, n, |k, i, jj| -inv[(k % n, i)] * inv[(jj, k / n)]);
        assert_close(&j, &expected, 1e-12, "d X⁻¹ = −X⁻¹ dX X⁻¹");
    }

    #[test]
    fn lu_solve_derivative(
        (n, x, b) in (2..=5usize).prop_flat_map(|n| {
            (Just(n), invertible(n), prop::collection::vec(-1.0..1.0_f64, n))
        })
    ) {
        let input: Vec<f64> = x.iter().chain(&b).copied().collect();
        let j = both_modes(&LuSolve(n), &input, 1e-7);
        let inv = inverse_f64(&x, n);
        let y = &inv * DVector::from_column_slice(&b);
        // y = X⁻¹b: ∂yₐ/∂Xᵢⱼ = −(X⁻¹)ₐᵢ yⱼ and ∂yₐ/∂bₖ = (X⁻¹)ₐₖ.
        let expected = DMatrix::from_fn(n, n * n + n, |a, p| {
            if p < n * n { -inv[(a, p % n)] * y[p / n] } else { inv[(a, p - n * n)] }
        });
        assert_close(&j, &expected, 1e-12, "d(X⁻¹b)");
    }

    #[test]
    fn cholesky_log_det_derivative_is_the_inverse(
        (n, x) in (1..=5usize).prop_flat_map(|n| (Just(n), prop::collection::vec(-1.0..1.0_f64, n * n)))
    ) {
        let f = Cholesky(n);
        let j = both_modes(&f, &x, 1e-7);
        let a = DMatrix::from_fn(n, n, |r, c| f.spd(&x)[(r, c)].0);
        let inv = a.try_inverse().unwrap();
        // d ln det A = tr(A⁻¹ dA), and ∂A/∂Xᵢⱼ = (Eᵢⱼ + Eⱼᵢ)/2: the row is (A⁻¹)ᵢⱼ.
        let expected = exact(1, n, |_, i, jj| inv[(i, jj)]);
        assert_close(&j.rows(0, 1).into_owned(), &expected, 1e-12, "d ln det A = tr(A⁻¹ dA)");
    }

    #[test]
    fn qr_log_abs_det_derivative_is_the_inverse_transpose(
        (n, x) in (2..=5usize).prop_flat_map(|n| (Just(n), invertible(n)))
    ) {
        let j = both_modes(&Qr(n), &x, 1e-7);
        let inv = inverse_f64(&x, n);
        let expected = exact(1, n, |_, i, jj| inv[(jj, i)]);
        assert_close(&j.rows(0, 1).into_owned(), &expected, 1e-12, "d ln |det X| from R");
    }

    #[test]
    fn eigenvalue_derivatives_are_v_da_v(
        (n, x) in (2..=5usize).prop_flat_map(|n| (Just(n), prop::collection::vec(-1.0..1.0_f64, n * n)))
    ) {
        let j = both_modes(&Eigenvalues(n), &x, 1e-6);
        let a = DMatrix::from_fn(n, n, |r, c| symmetric(&x, n)[(r, c)].0);
        let eig = a.symmetric_eigen();
        // ∂λₖ/∂Xᵢⱼ = vₖᵀ (Eᵢⱼ + Eⱼᵢ)/2 vₖ = vₖᵢ vₖⱼ, the eigenvectors in increasing order of
        // their eigenvalues.
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&p, &q| eig.eigenvalues[p].total_cmp(&eig.eigenvalues[q]));
        let v = &eig.eigenvectors;
        let expected = exact(n, n, |k, i, jj| v[(i, order[k])] * v[(jj, order[k])]);
        assert_close(&j, &expected, 1e-9, "dλ = vᵀ dA v");
    }

    #[test]
    fn singular_value_derivatives_are_u_dx_v(
        (rows, cols, x) in (1..=4usize, 1..=4usize).prop_flat_map(|(r, c)| {
            (Just(r), Just(c), prop::collection::vec(-1.0..1.0_f64, r * c))
        })
    ) {
        let f = SingularValues(rows, cols);
        let j = both_modes(&f, &x, 1e-6);
        let m = DMatrix::from_fn(rows, cols, |r, c| f.spread(&x)[(r, c)].0);
        let svd = m.svd(true, true);
        let (u, vt) = (svd.u.unwrap(), svd.v_t.unwrap());
        // ∂σₖ/∂Xᵢⱼ = uᵢₖ vⱼₖ, with the singular vectors of the same run's order.
        let expected = DMatrix::from_fn(rows.min(cols), rows * cols, |k, p| {
            u[(p % rows, k)] * vt[(k, p / rows)]
        });
        assert_close(&j, &expected, 1e-9, "dσ = uᵀ dX v");
    }
}

/// The second derivatives of ln |det X| through LU (n = 4), forward over reverse (a jvp of the
/// gradient per column, on a tape of duals) and reverse over reverse (the gradient recorded on
/// an outer tape): ∂²/∂Xᵢⱼ∂Xₖₗ = −(X⁻¹)ⱼₖ (X⁻¹)ₗᵢ. (One pair each: `hessian` would compile
/// nalgebra's LU for every pair and lane count.)
#[test]
fn log_det_hessian_through_lu() {
    let n = 4;
    let mut x: Vec<f64> = (0..n * n)
        .map(|k| ((k * 7 + 3) % 11) as f64 / 11.0 - 0.5)
        .collect();
    for (j, i) in [2, 0, 3, 1].into_iter().enumerate() {
        x[i + j * n] += 3.0;
    }
    let grad = Grad(LogAbsDet(n));
    let mut fr = DMatrix::zeros(n * n, n * n);
    for q in 0..n * n {
        let unit: Vec<f64> = (0..n * n).map(|k| if k == q { 1.0 } else { 0.0 }).collect();
        let (g, column) = jvp(&grad, &x, &unit).unwrap();
        assert_eq!(g, grad.eval::<f64>(&x));
        fr.set_column(q, &DVector::from_vec(column));
    }
    let (_, rr) = reverse_jacobian(&grad, &x);
    let inv = inverse_f64(&x, n);
    let expected = DMatrix::from_fn(n * n, n * n, |p, q| {
        let (i, j, k, l) = (p % n, p / n, q % n, q / n);
        -inv[(j, k)] * inv[(l, i)]
    });
    assert_close(&fr, &expected, 1e-12, "∇² ln |det X|, forward over reverse");
    assert_close(&rr, &expected, 1e-12, "∇² ln |det X|, reverse over reverse");
    let g = DMatrix::from_row_slice(1, n * n, &grad.eval::<f64>(&x));
    assert_close(
        &g,
        &exact(1, n, |_, i, j| inv[(j, i)]),
        1e-13,
        "∇ ln |det X|",
    );
}

/// A recording of an LU determinant keeps its pivot choices as branch guards: re-evaluated where
/// the same rows win, it gives a fresh recording's gradient bit for bit; where another row
/// wins, re-evaluation is refused and the driver records afresh.
#[test]
fn lu_pivots_are_branch_guards() {
    let n = 4;
    let at = |perm: [usize; 4], shift: f64| {
        let mut x: Vec<f64> = (0..n * n)
            .map(|k| ((k * 5 + 1) % 9) as f64 / 9.0 - 0.5 + shift)
            .collect();
        for (j, i) in perm.into_iter().enumerate() {
            x[i + j * n] += 3.0;
        }
        x
    };
    let mut prepared = PreparedGradient::new(Det(n), &at([1, 3, 0, 2], 0.0)).unwrap();

    let same_pivots = at([1, 3, 0, 2], 0.01);
    let replayed = prepared.gradient(&same_pivots).unwrap();
    assert_eq!(prepared.last(), &Replay::Reevaluated);
    assert_eq!(replayed, jacobian::gradient(&Det(n), &same_pivots).unwrap());

    let other_pivots = at([2, 0, 3, 1], 0.0);
    let fresh = prepared.gradient(&other_pivots).unwrap();
    match prepared.last() {
        Replay::Rerecorded(why) => assert!(why.contains("guard"), "{why}"),
        other => panic!("expected a fresh recording, got {other:?}"),
    }
    assert_eq!(fresh, jacobian::gradient(&Det(n), &other_pivots).unwrap());
}

/// `Real<f64>` is the plain float: nalgebra's results are the same bits.
#[test]
fn real_of_f64_is_f64() {
    let x: Vec<f64> = (0..25)
        .map(|k| ((k * 7 + 2) % 13) as f64 / 13.0 - 0.4)
        .collect();
    let plain = DMatrix::from_column_slice(5, 5, &x);
    let wrapped = matrix(&x, 5, 5);
    let unwrap = |m: DMatrix<Real<f64>>| m.map(|r| r.0);
    assert_eq!(wrapped.determinant().0, plain.determinant());
    assert_eq!(
        unwrap(wrapped.clone().try_inverse().unwrap()),
        plain.clone().try_inverse().unwrap()
    );
    assert_eq!(unwrap(wrapped.clone().qr().r()), plain.clone().qr().r());
    let sym = &plain + plain.transpose();
    let sym_wrapped = &wrapped + wrapped.transpose();
    let eig = sym_wrapped.symmetric_eigen().eigenvalues.map(|r| r.0);
    assert_eq!(eig, sym.symmetric_eigen().eigenvalues);
    let sv = wrapped.svd(false, false).singular_values.map(|r| r.0);
    assert_eq!(sv, plain.svd(false, false).singular_values);
}

/// A singular matrix is singular in every mode: nalgebra's `is_zero` tests read the primal,
/// as for `f64`, so `try_inverse` gives `None` even where the determinant's tangent is not zero.
#[test]
fn singular_matrices_are_refused_in_every_mode() {
    struct Invertible;
    impl Function for Invertible {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            let ok = matrix(x, 2, 2).try_inverse().is_some();
            vec![T::constant(if ok { 1.0 } else { 0.0 })]
        }
    }
    let singular = [1.0, 2.0, 2.0, 4.0];
    assert_eq!(Invertible.eval(&singular), vec![0.0]);
    let (fwd, _) = jvp(&Invertible, &singular, &[1.0, 0.0, 0.0, 0.0]).unwrap();
    let (rev, _) = reverse_jacobian(&Invertible, &singular);
    assert_eq!((fwd, rev), (vec![0.0], vec![0.0]));
}

/// Eigenvalues and singular values of a diagonal matrix: every Householder reflection meets a
/// zero column and is skipped by its `is_zero` test, which reads the primal as for `f64` (a
/// recorded 0 is not structurally zero, so a structural test would divide by 0 here). The
/// derivatives are exact: ∂λₖ/∂Aₖₖ = ∂σₖ/∂Xₖₖ = 1, and 0 elsewhere.
#[test]
fn decompositions_of_a_diagonal_matrix() {
    let x = [1.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 7.0];
    // The eigenvalues' matrix adds diag(0, 4, 8): diag(1, 6, 15); the singular values' adds
    // diag(5, 15, 25): diag(6, 17, 32). nalgebra's SVD divides the matrix by its largest entry
    // and multiplies the values back: with 32 both are exact (with 28, ∂σ₁/∂X₂₂ came out
    // 1.1e-16 instead of 0).
    for (what, j) in [
        ("eigenvalues", both_modes(&Eigenvalues(3), &x, 1e-7)),
        (
            "singular values",
            both_modes(&SingularValues(3, 3), &x, 1e-7),
        ),
    ] {
        let values = if what == "eigenvalues" {
            Eigenvalues(3).eval(&x)
        } else {
            SingularValues(3, 3).eval(&x)
        };
        // In the order nalgebra returns them: the 1 at (k, the input of that diagonal entry).
        let expected = DMatrix::from_fn(3, 9, |k, p| {
            let diagonal = if what == "eigenvalues" {
                [1.0, 6.0, 15.0]
            } else {
                [6.0, 17.0, 32.0]
            };
            let d = diagonal.iter().position(|&v| v == values[k]).unwrap();
            if p == d * 4 { 1.0 } else { 0.0 }
        });
        assert_eq!(j, expected, "{what}");
    }
}
