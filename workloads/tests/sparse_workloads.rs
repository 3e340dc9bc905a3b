//! The sparse workloads: Jacobians in both modes, against central differences and exact
//! formulas, and their declared patterns against the Jacobians' nonzeros; with feature `peers`,
//! echidna's sparse Jacobians and Hessians against our dense ones.

use jacobian::Mode;
use jacobian::sparse::Pattern;
use workloads::sparse::{BundleAdjustment, Grid, Tridiagonal};
use workloads::{Function, assert_close, row_major};

/// The Jacobian (row-major) in forward mode, checked against reverse mode, and the value of
/// both against the plain function.
fn both_modes<F: Function + Sync>(f: &F, x: &[f64], what: &str) -> Vec<f64> {
    let fwd = jacobian::jacobian_with(f, x, Mode::Forward).unwrap();
    let rev = jacobian::jacobian_with(f, x, Mode::Reverse).unwrap();
    let y = f.eval(x);
    assert_eq!(fwd.value, y, "{what}: forward value");
    assert_eq!(rev.value, y, "{what}: reverse value");
    let j = row_major(&fwd);
    assert_close(
        &j,
        &row_major(&rev),
        1e-12,
        &format!("{what}: forward vs reverse"),
    );
    j
}

/// Central differences of every output along every input, row-major (error O(h²)).
fn central<F: Function>(f: &F, x: &[f64], h: f64) -> Vec<f64> {
    let n = x.len();
    let m = f.eval(x).len();
    let mut j = vec![0.0; m * n];
    for col in 0..n {
        let (mut a, mut b) = (x.to_vec(), x.to_vec());
        a[col] += h;
        b[col] -= h;
        let (fa, fb) = (f.eval(&a), f.eval(&b));
        for row in 0..m {
            j[row * n + col] = (fa[row] - fb[row]) / (2.0 * h);
        }
    }
    j
}

/// Asserts `|ad − fd| ≤ tol·(1 + |ad|)` entry by entry (absolute where the entries are small,
/// as the structural zeros are).
#[track_caller]
fn assert_near_fd(ad: &[f64], fd: &[f64], tol: f64, what: &str) {
    assert_eq!(ad.len(), fd.len(), "{what}: lengths");
    for (k, (a, d)) in ad.iter().zip(fd).enumerate() {
        assert!(
            (a - d).abs() <= tol * (1.0 + a.abs()),
            "{what}: entry {k}: AD {a:e}, central differences {d:e}"
        );
    }
}

/// The pattern of the entries that are not exactly zero in a row-major m×n matrix.
fn nonzeros(j: &[f64], n: usize) -> Pattern {
    let rows: Vec<Vec<usize>> = j
        .chunks_exact(n)
        .map(|row| (0..n).filter(|&c| row[c] != 0.0).collect())
        .collect();
    Pattern::from_rows(n, &rows).unwrap()
}

#[test]
fn tridiagonal_jacobian_is_exact_and_matches_its_pattern() {
    let f = Tridiagonal::new(7);
    let x = f.input();
    let j = both_modes(&f, &x, "tridiagonal");
    let mut want = vec![0.0; 49];
    for i in 0..7 {
        want[i * 7 + i] = x[i].cos() - 2.0;
        if i > 0 {
            want[i * 7 + i - 1] = 1.0;
        }
        if i < 6 {
            want[i * 7 + i + 1] = 1.0;
        }
    }
    assert_eq!(
        j, want,
        "tridiagonal: against ∂Fᵢ/∂xᵢ = cos xᵢ − 2 and 1 beside"
    );
    assert_near_fd(&j, &central(&f, &x, 1e-5), 1e-8, "tridiagonal");
    assert_eq!(nonzeros(&j, 7), f.pattern());
    // The value at the ends: x₋₁ = x₇ = 0.
    let y = f.eval(&x);
    assert_eq!(y[0], -2.0 * x[0] + x[1] + x[0].sin());
    assert_eq!(y[6], x[5] + -2.0 * x[6] + x[6].sin());
}

#[test]
fn grid_jacobian_is_the_stencil_and_matches_its_pattern() {
    let k = 4;
    let f = Grid::new(k);
    // The benchmark input is symmetric about the grid's centre: perturb it so that a transposed
    // or mirrored index would show.
    let u: Vec<f64> = f
        .input()
        .iter()
        .enumerate()
        .map(|(p, v)| v + 0.01 * p as f64)
        .collect();
    let j = both_modes(&f, &u, "grid");
    let h2 = 1.0 / 25.0;
    let n = k * k;
    for p in 0..n {
        let (i, jj) = (p / k, p % k);
        for q in 0..n {
            let (a, b) = (q / k, q % k);
            let want = if p == q {
                4.0 - h2 * Grid::LAMBDA * u[p].exp()
            } else if i.abs_diff(a) + jj.abs_diff(b) == 1 {
                -1.0
            } else {
                0.0
            };
            let got = j[p * n + q];
            assert!(
                (got - want).abs() <= 1e-15 * want.abs(),
                "J[{p}, {q}] = {got}, want {want}"
            );
        }
    }
    assert_near_fd(&j, &central(&f, &u, 1e-5), 1e-8, "grid");
    assert_eq!(nonzeros(&j, n), f.pattern());
    // A corner has two neighbours: F₀₀ = 4u₀₀ − u₁₀ − u₀₁ − h²λ e^u₀₀.
    let y = f.eval(&u);
    let want = 4.0 * u[0] - u[k] - u[1] - h2 * Grid::LAMBDA * u[0].exp();
    assert!((y[0] - want).abs() <= 1e-15, "{} vs {want}", y[0]);
}

#[test]
fn bundle_adjustment_jacobian_in_both_modes_and_by_differences() {
    let f = BundleAdjustment::new(3, 5, 11);
    let x = f.input();
    let (n, _) = f.sizes().unwrap();
    let j = both_modes(&f, &x, "ba");
    assert_near_fd(&j, &central(&f, &x, 1e-6), 1e-6, "ba");
    assert_eq!(nonzeros(&j, n), f.pattern(), "ba: nonzeros vs pattern");
}

#[test]
fn bundle_adjustment_blocks_hold_29_nonzeros_and_gradbench_stores_31() {
    let f = BundleAdjustment::new(3, 5, 11);
    let x = f.input();
    let (n, m) = f.sizes().unwrap();
    let p = f.pattern();
    let j = row_major(&jacobian::jacobian(&f, &x).unwrap());
    let (points, weights) = (11 * 3, 11 * 3 + 3 * 5);
    for i in 0..11 {
        let rows = [2 * i, 2 * i + 1, 2 * 11 + i];
        let lens = rows.map(|r| p.row(r).len());
        assert_eq!(lens, [14, 14, 1], "observation {i}");
        // GradBench's row holds the camera's 11 columns, the point's 3 and the weight: 15, of
        // which the other coordinate of the principal point is an exact zero.
        let (cam, point) = f.observation(i);
        for (coordinate, &r) in rows[..2].iter().enumerate() {
            let mut block: Vec<usize> = (11 * cam..11 * cam + 11).collect();
            block.extend(points + 3 * point..points + 3 * point + 3);
            block.push(weights + i);
            let stored: Vec<usize> = block
                .iter()
                .copied()
                .filter(|&c| j[r * n + c] != 0.0)
                .collect();
            assert_eq!(stored, p.row(r), "observation {i}, row {r}");
            let other = 11 * cam + 8 - coordinate; // v₀ for the x row, u₀ for the y row
            assert_eq!(block.len() - stored.len(), 1);
            assert_eq!(j[r * n + other], 0.0);
        }
    }
    assert_eq!((p.rows(), p.nnz()), (m, 11 * 29));

    // At GradBench's size: 29 per observation, 14 in the longest row.
    let big = BundleAdjustment::new(49, 7_776, 31_843);
    let p = big.pattern();
    assert_eq!((p.cols(), p.rows()), (55_710, 95_529));
    assert_eq!((p.nnz(), p.max_row_len()), (31_843 * 29, 14));
}

/// ADBench's Rodrigues form against the rotation matrix `I + sin θ K + (1 − cos θ) K²`.
#[test]
fn bundle_adjustment_projects_by_the_rotation_matrix() {
    let f = BundleAdjustment::new(2, 3, 4);
    let x = f.input();
    let r = f.eval(&x);
    for i in 0..4 {
        let (cam, point) = f.observation(i);
        let c = &x[11 * cam..11 * cam + 11];
        let pt = &x[22 + 3 * point..22 + 3 * point + 3];
        let w = x[22 + 9 + i];
        let theta = (c[0] * c[0] + c[1] * c[1] + c[2] * c[2]).sqrt();
        let a = [c[0] / theta, c[1] / theta, c[2] / theta];
        let k = [[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]];
        let mut rot = [[0.0; 3]; 3];
        for (row, rot_row) in rot.iter_mut().enumerate() {
            for (col, entry) in rot_row.iter_mut().enumerate() {
                let k2: f64 = (0..3).map(|l| k[row][l] * k[l][col]).sum();
                let identity = if row == col { 1.0 } else { 0.0 };
                *entry = identity + theta.sin() * k[row][col] + (1.0 - theta.cos()) * k2;
            }
        }
        let d = [pt[0] - c[3], pt[1] - c[4], pt[2] - c[5]];
        let xc: Vec<f64> = (0..3)
            .map(|row| (0..3).map(|l| rot[row][l] * d[l]).sum())
            .collect();
        assert!(
            xc[2] > 3.0,
            "observation {i}: the point is in front of the camera"
        );
        let (px, py) = (xc[0] / xc[2], xc[1] / xc[2]);
        let rsq = px * px + py * py;
        let l = 1.0 + c[9] * rsq + c[10] * rsq * rsq;
        let proj = [px * l * c[6] + c[7], py * l * c[6] + c[8]];
        for coordinate in 0..2 {
            let want = w * (proj[coordinate] - f.features[2 * i + coordinate]);
            let got = r[2 * i + coordinate];
            assert!(
                (got - want).abs() <= 1e-12 * (1.0 + want.abs()),
                "observation {i}: {got} vs {want}"
            );
            // The generated features are the projections plus noise of half a pixel.
            assert!(want.abs() < 5.0 * w, "observation {i}: residual {want}");
        }
    }
}

/// At a zero rotation ADBench takes its first-order branch, `x + r × x`; its derivative is the
/// rotation's exact derivative there, which central differences (through the other branch) see.
#[test]
fn bundle_adjustment_jacobian_at_a_zero_rotation() {
    let f = BundleAdjustment::new(2, 3, 4);
    let mut x = f.input();
    x[..3].fill(0.0);
    let j = both_modes(&f, &x, "ba at rotation 0");
    assert_near_fd(&j, &central(&f, &x, 1e-6), 1e-6, "ba at rotation 0");
}

#[cfg(feature = "peers")]
mod peers {
    use super::{Pattern, both_modes};
    use workloads::peers::{
        EchidnaSparseHessian, EchidnaSparseJacobian, FloatResiduals, echidna_sparse_hessian,
        echidna_sparse_jacobian, tridiagonal_float,
    };
    use workloads::sparse::{BundleAdjustment, Grid, Tridiagonal};
    use workloads::{Function, Rosenbrock, assert_close, rosenbrock_hessian, rosenbrock_input};

    /// The pattern of coordinates `(rows, cols)` of an m×n matrix.
    fn coordinates(m: usize, n: usize, rows: &[u32], cols: &[u32]) -> Pattern {
        let mut by_row = vec![Vec::new(); m];
        for (&r, &c) in rows.iter().zip(cols) {
            by_row[r as usize].push(c as usize);
        }
        Pattern::from_rows(n, &by_row).unwrap()
    }

    /// The entries of a row-major matrix with n columns at the coordinates.
    fn gather(j: &[f64], n: usize, rows: &[u32], cols: &[u32]) -> Vec<f64> {
        rows.iter()
            .zip(cols)
            .map(|(&r, &c)| j[r as usize * n + c as usize])
            .collect()
    }

    /// echidna's one-shot and prepared sparse Jacobians against our dense one and our pattern,
    /// the prepared one at a second point too; returns echidna's number of colours.
    fn check_jacobian<F: Function + FloatResiduals + Sync>(
        f: &F,
        x: &[f64],
        x2: &[f64],
        pattern: &Pattern,
        what: &str,
    ) -> u32 {
        let (n, m) = f.sizes().unwrap();
        let j = both_modes(f, x, what);
        let (rows, cols, values) = echidna_sparse_jacobian(f, x);
        assert_eq!(
            &coordinates(m, n, &rows, &cols),
            pattern,
            "{what}: echidna's pattern"
        );
        assert_close(&values, &gather(&j, n, &rows, &cols), 1e-12, what);

        // Prepared with the pattern echidna detects, and with ours (columns coloured).
        let mut prepared = EchidnaSparseJacobian::new(f, x);
        let mut given = EchidnaSparseJacobian::with_pattern(f, x, pattern);
        assert!(given.is_forward());
        for p in [&prepared, &given] {
            assert_eq!(
                (p.rows(), p.cols()),
                (&rows[..], &cols[..]),
                "{what}: coordinates"
            );
        }
        for (point, label) in [(x, "at the recording"), (x2, "at a new point")] {
            let j = both_modes(f, point, what);
            let want = gather(&j, n, &rows, &cols);
            for (p, how) in [(&mut prepared, "detected"), (&mut given, "given")] {
                let (value, values) = p.at(point);
                assert_eq!(value, f.eval(point), "{what}, {how}, {label}: value");
                assert_close(&values, &want, 1e-12, &format!("{what}, {how}, {label}"));
            }
        }
        prepared.colours()
    }

    #[test]
    fn tridiagonal_float_is_the_workload() {
        let f = Tridiagonal::new(9);
        let x = f.input();
        assert_eq!(tridiagonal_float(&x), f.eval(&x));
    }

    #[test]
    fn echidna_sparse_jacobians() {
        let f = Tridiagonal::new(7);
        let x = f.input();
        let x2: Vec<f64> = x.iter().map(|v| 0.5 - v).collect();
        let colours = check_jacobian(&f, &x, &x2, &f.pattern(), "tridiagonal");
        assert_eq!(colours, 3, "tridiagonal: colours");

        let f = Grid::new(4);
        let u = f.input();
        let u2: Vec<f64> = u
            .iter()
            .enumerate()
            .map(|(p, v)| v * (1.0 + 0.1 * p as f64))
            .collect();
        let colours = check_jacobian(&f, &u, &u2, &f.pattern(), "grid");
        assert!((5..=7).contains(&colours), "grid: {colours} colours");

        let f = BundleAdjustment::new(3, 5, 11);
        let x = f.input();
        let x2: Vec<f64> = x.iter().map(|v| v * 1.01).collect();
        check_jacobian(&f, &x, &x2, &f.pattern(), "ba");
    }

    #[test]
    fn echidna_sparse_hessians_of_rosenbrock() {
        let n = 8;
        let f = Rosenbrock::new(n);
        let x = rosenbrock_input(n);
        let lower = |h: &[f64], rows: &[u32], cols: &[u32]| -> Vec<f64> {
            rows.iter()
                .zip(cols)
                .map(|(&r, &c)| h[r as usize * n + c as usize])
                .collect()
        };
        // The pattern: the diagonal and the first subdiagonal.
        let (rows, cols, values) = echidna_sparse_hessian(&f, &x);
        let mut want_pattern: Vec<(u32, u32)> = Vec::new();
        for i in 0..n as u32 {
            if i > 0 {
                want_pattern.push((i, i - 1));
            }
            want_pattern.push((i, i));
        }
        let got_pattern: Vec<(u32, u32)> = rows.iter().copied().zip(cols.iter().copied()).collect();
        assert_eq!(got_pattern, want_pattern);

        let ours = jacobian::hessian(&f, &x).unwrap();
        let dense = ours.matrix.as_slice().to_vec(); // symmetric: column-major is row-major
        assert_close(
            &values,
            &lower(&dense, &rows, &cols),
            1e-12,
            "one-shot vs ours",
        );
        assert_close(
            &values,
            &lower(&rosenbrock_hessian(&x), &rows, &cols),
            1e-12,
            "by hand",
        );

        let prepared = EchidnaSparseHessian::new(&f, &x);
        assert_eq!((prepared.rows(), prepared.cols()), (&rows[..], &cols[..]));
        assert_eq!(prepared.colours(), 3);
        let x2: Vec<f64> = x.iter().map(|v| 1.5 - v).collect();
        for point in [&x, &x2] {
            let (value, gradient, values) = prepared.at(point);
            let ours = jacobian::hessian(&f, point).unwrap();
            assert!((value - ours.value).abs() <= 1e-12 * ours.value.abs());
            assert_close(&gradient, &ours.gradient, 1e-12, "prepared gradient");
            let want = lower(&rosenbrock_hessian(point), &rows, &cols);
            assert_close(&values, &want, 1e-12, "prepared Hessian");
        }
    }
}
