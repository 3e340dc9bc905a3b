//! Drivers for users who know they want forward mode, over closures.

use crate::{Dual, Taylor};
use shared_ops::{Error, Op};

/// `(f(x), f'(x))` by one forward sweep.
///
/// Generic over the number type of `x`, so it nests inside another derivative: the inner
/// derivative's `ε` is a different type from the outer one's, so they cannot be confused.
///
/// ```
/// use forward::{derivative, Dual};
///
/// // d/dx [x · (d/dy (x + y) at y = 1)] at x = 1 is 1 (perturbation confusion would give 2).
/// let (_, d) = derivative(
///     |x: Dual<f64>| x * derivative(|y: Dual<Dual<f64>>| Dual::from(x) + y, Dual::from(1.0)).1,
///     1.0,
/// );
/// assert_eq!(d, 1.0);
/// ```
#[inline]
pub fn derivative<T: Op, F: FnOnce(Dual<T>) -> Dual<T>>(f: F, x: T) -> (T, T) {
    let y = f(Dual::variable(x));
    (y.primal, y.tangent)
}

/// `(f(x), ∇f(x))` by n forward sweeps, one per input.
///
/// Forward mode pays per input: for many inputs and one output prefer reverse mode
/// (`reverse::gradient`) or let `jacobian::gradient` choose.
///
/// ```
/// use forward::Float;
/// let (y, g) = forward::gradient(|x| x[0] * x[1].exp(), &[3.0_f64, 0.0]);
/// assert_eq!((y, g), (3.0, vec![1.0, 3.0]));
/// ```
pub fn gradient<T: Op, F: Fn(&[Dual<T>]) -> Dual<T>>(f: F, x: &[T]) -> (T, Vec<T>) {
    let mut xs: Vec<Dual<T>> = x.iter().map(|&v| Dual::from(v)).collect();
    let mut value = None;
    let mut grad = Vec::with_capacity(x.len());
    for j in 0..x.len() {
        xs[j].tangent = T::one();
        let y = f(&xs);
        xs[j].tangent = T::zero();
        value = Some(y.primal);
        grad.push(y.tangent);
    }
    // n = 0: no sweep ran, evaluate once for the value.
    let value = value.unwrap_or_else(|| f(&xs).primal);
    (value, grad)
}

/// `(f(x), J·v)`: the Jacobian-vector product in one forward sweep, seeding the tangent `v`.
///
/// Errors if `v` and `x` differ in length.
///
/// ```
/// let (y, jv) = forward::jvp(|x| vec![x[0] * x[1], x[0] + x[1]], &[2.0_f64, 3.0], &[1.0, 1.0])
///     .unwrap();
/// assert_eq!((y, jv), (vec![6.0, 5.0], vec![5.0, 2.0]));
/// assert!(forward::jvp(|x| x.to_vec(), &[1.0_f64], &[1.0, 2.0]).is_err());
/// ```
pub fn jvp<T: Op, F: Fn(&[Dual<T>]) -> Vec<Dual<T>>>(
    f: F,
    x: &[T],
    v: &[T],
) -> Result<(Vec<T>, Vec<T>), Error> {
    Error::check_seed("tangent", x.len(), v.len())?;
    let xs: Vec<Dual<T>> = x.iter().zip(v).map(|(&p, &t)| Dual::new(p, t)).collect();
    Ok(f(&xs).into_iter().map(|d| (d.primal, d.tangent)).unzip())
}

/// `(f(x), J)` with the Jacobian as rows, `J[i][j] = ∂fᵢ/∂xⱼ`, by n forward sweeps over a closure.
///
/// The teaching driver: generic over the number type, one tangent per sweep, no plan. The name
/// says what it returns, `Vec<Vec<T>>` rows; `jacobian::jacobian` returns a `jacobian::Jacobian`
/// (an `f64` nalgebra matrix, chunked and threaded sweeps, and the plan that chose the mode).
/// Errors if `f` changes its output length between sweeps; an empty `x` gives m empty rows.
///
/// ```
/// use forward::Float;
/// let (y, j) = forward::jacobian_rows(|x| vec![x[0] * x[1], x[0].sin()], &[2.0_f64, 3.0]).unwrap();
/// assert_eq!(j[0], vec![3.0, 2.0]);
/// assert_eq!(j[1], vec![2.0_f64.cos(), 0.0]);
/// # let _ = y;
/// ```
#[allow(clippy::type_complexity)]
pub fn jacobian_rows<T: Op, F: Fn(&[Dual<T>]) -> Vec<Dual<T>>>(
    f: F,
    x: &[T],
) -> Result<(Vec<T>, Vec<Vec<T>>), Error> {
    let mut xs: Vec<Dual<T>> = x.iter().map(|&v| Dual::from(v)).collect();
    if x.is_empty() {
        // No sweep to run: evaluate once for the value and the number of rows.
        let value: Vec<T> = f(&xs).iter().map(|d| d.primal).collect();
        let rows = vec![Vec::new(); value.len()];
        return Ok((value, rows));
    }
    let mut value: Vec<T> = Vec::new();
    let mut rows: Vec<Vec<T>> = Vec::new();
    for j in 0..x.len() {
        xs[j].tangent = T::one();
        let y = f(&xs);
        xs[j].tangent = T::zero();
        if j == 0 {
            value = y.iter().map(|d| d.primal).collect();
            rows = vec![vec![T::zero(); x.len()]; y.len()];
        } else if y.len() != value.len() {
            return Err(Error::OutputChanged {
                first: value.len(),
                found: y.len(),
                during: format!("forward sweep {}", j + 1),
            });
        }
        for (row, d) in rows.iter_mut().zip(&y) {
            row[j] = d.tangent;
        }
    }
    Ok((value, rows))
}

/// The derivatives of every order `0..N` of `t ↦ f(x + t·v)` at t = 0, for each output:
/// `[f, d/dt f, …, d^{N−1}/dt^{N−1} f]`, by one Taylor sweep (O(N²) per operation).
///
/// The order-1 entries are the Jacobian-vector product `J·v` of [`jvp`], the order-2 entries
/// `vᵀ·∇²fᵢ·v`, and so on. Generic over the number type of `x` and `v`, so it nests (a
/// [`Dual`] inside differentiates the derivatives). Errors if `v` and `x` differ in length.
///
/// ```
/// use forward::{Float, Taylor};
///
/// // f(x, y) = x·eʸ along (1, 1) from (1, 0): g(t) = (1 + t)·eᵗ, g⁽ᵏ⁾(0) = k + 1.
/// let d = forward::taylor::<5, _>(|x| vec![x[0] * x[1].exp()], &[1.0, 0.0], &[1.0, 1.0])
///     .unwrap();
/// assert_eq!(d, vec![[1.0, 2.0, 3.0, 4.0, 5.0]]);
///
/// let err = forward::taylor::<3, f64>(|x: &[Taylor<f64, 3>]| x.to_vec(), &[1.0], &[1.0, 2.0]);
/// assert_eq!(
///     err.unwrap_err().to_string(),
///     "tangent seed has length 2, but must have length 1"
/// );
/// ```
pub fn taylor<const N: usize, T: Op>(
    f: impl Fn(&[Taylor<T, N>]) -> Vec<Taylor<T, N>>,
    x: &[T],
    v: &[T],
) -> Result<Vec<[T; N]>, Error> {
    Error::check_seed("tangent", x.len(), v.len())?;
    let xs: Vec<Taylor<T, N>> = x
        .iter()
        .zip(v)
        .map(|(&p, &t)| Taylor::variable(p, t))
        .collect();
    Ok(f(&xs).iter().map(Taylor::derivatives).collect())
}
