//! Finite differences, the independent check of every derivative, and a relative tolerance.

use shared_ops::Function;

/// Central differences of every output of `f` with respect to input `j`, with step `h`.
pub fn central(f: &impl Function, x: &[f64], j: usize, h: f64) -> Vec<f64> {
    let mut xp = x.to_vec();
    let mut xm = x.to_vec();
    xp[j] += h;
    xm[j] -= h;
    let (fp, fm) = (f.eval(&xp), f.eval(&xm));
    fp.iter()
        .zip(&fm)
        .map(|(a, b)| (a - b) / (2.0 * h))
        .collect()
}

/// The Jacobian column `j` by Richardson-extrapolated central differences (error O(h⁴)), or
/// `None` when two step sizes disagree: then a kink or a jump lies within the step and finite
/// differences cannot be trusted there.
pub fn fd_column(f: &impl Function, x: &[f64], j: usize) -> Option<Vec<f64>> {
    let h = 1e-3 * x[j].abs().max(1.0);
    let d1 = central(f, x, j, h);
    let d2 = central(f, x, j, h / 2.0);
    let rich: Vec<f64> = d1
        .iter()
        .zip(&d2)
        .map(|(a, b)| (4.0 * b - a) / 3.0)
        .collect();
    let d3 = central(f, x, j, h / 4.0);
    let rich2: Vec<f64> = d2
        .iter()
        .zip(&d3)
        .map(|(a, b)| (4.0 * b - a) / 3.0)
        .collect();
    let agree = rich
        .iter()
        .zip(&rich2)
        .all(|(a, b)| (a - b).abs() <= 1e-7 * (1.0 + a.abs()));
    agree.then_some(rich2)
}

/// `a` and `b` equal, or within `tol` relative to the larger of |a|, |b| and 1.
pub fn rel_close(a: f64, b: f64, tol: f64) -> bool {
    a == b || (a - b).abs() <= tol * a.abs().max(b.abs()).max(1.0)
}
