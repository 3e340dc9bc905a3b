//! Hessian-vector products (forward over reverse) and second-order directional derivatives of
//! vector functions (forward over forward).

use super::check_scalar;
use super::pairs::{dual_sweep, scalar};
use crate::lanes::chunk_lanes;
use forward::{Dual, DualVec};
use nalgebra::DMatrix;
use reverse::Tape;
use shared_ops::num_traits::One;
use shared_ops::{Error, Function, Op};

/// A Hessian-vector product with the value and gradient that came with it.
#[derive(Clone, Debug, PartialEq)]
pub struct Hvp {
    /// `f(x)`.
    pub value: f64,
    /// `∇f(x)`.
    pub gradient: Vec<f64>,
    /// `H·v`.
    pub product: Vec<f64>,
}

/// `H·v` by forward over reverse: one recording on a tape of [`Dual`]s whose inputs carry the
/// tangent `v`, and one sweep; the adjoints' tangents are `H·v`. About the cost of two
/// gradients, whatever n.
///
/// Errors as [`hessian`](crate::hessian), and if `v` does not have the length of `x`.
///
/// ```
/// use jacobian::{Function, Op};
/// struct F;
/// impl Function for F {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         vec![x[0] * x[0] * x[1]] // H = [[2x₁, 2x₀], [2x₀, 0]]
///     }
/// }
/// let p = jacobian::hvp(&F, &[3.0, 2.0], &[1.0, 1.0])?;
/// assert_eq!((p.value, p.gradient, p.product), (18.0, vec![12.0, 9.0], vec![10.0, 6.0]));
/// assert!(jacobian::hvp(&F, &[3.0, 2.0], &[1.0]).is_err());
/// # Ok::<(), jacobian::Error>(())
/// ```
pub fn hvp<F: Function>(f: &F, x: &[f64], v: &[f64]) -> Result<Hvp, Error> {
    check_scalar(f, x.len())?;
    Error::check_seed("tangent", x.len(), v.len())?;
    let xs: Vec<Dual<f64>> = x.iter().zip(v).map(|(&x, &v)| Dual::new(x, v)).collect();
    let tape = Tape::with_capacity(8 * x.len());
    let vs = tape.vars(&xs);
    let y = scalar(f.eval(&vs))?;
    let adjoints = tape.sweep_wrt(&[(y, Dual::one())], &vs);
    Ok(Hvp {
        value: Op::value(&y),
        gradient: adjoints.iter().map(|a| a.primal).collect(),
        product: adjoints.iter().map(|a| a.tangent).collect(),
    })
}

/// `H·V` for an n×k matrix `V`, by forward over reverse with up to 8 directions per
/// recording: ⌈k/8⌉ recordings and sweeps of a tape of 8-tangent duals.
///
/// Errors as [`hvp`], and if `V` does not have n rows.
///
/// ```
/// use jacobian::{Function, Op};
/// use nalgebra::DMatrix;
/// struct F;
/// impl Function for F {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         vec![x[0] * x[0] * x[1]]
///     }
/// }
/// let hv = jacobian::hvp_many(&F, &[3.0, 2.0], &DMatrix::identity(2, 2))?;
/// assert_eq!(hv.as_slice(), &[4.0, 6.0, 6.0, 0.0]); // the Hessian itself
/// # Ok::<(), jacobian::Error>(())
/// ```
pub fn hvp_many<F: Function>(f: &F, x: &[f64], v: &DMatrix<f64>) -> Result<DMatrix<f64>, Error> {
    check_scalar(f, x.len())?;
    Error::check_seed("tangent", x.len(), v.nrows())?;
    match chunk_lanes(v.ncols().max(1)) {
        1 => hvp_lanes::<1, F>(f, x, v),
        2 => hvp_lanes::<2, F>(f, x, v),
        4 => hvp_lanes::<4, F>(f, x, v),
        _ => hvp_lanes::<8, F>(f, x, v),
    }
}

fn hvp_lanes<const N: usize, F: Function>(
    f: &F,
    x: &[f64],
    v: &DMatrix<f64>,
) -> Result<DMatrix<f64>, Error> {
    let (n, k) = v.shape();
    let mut out = DMatrix::zeros(n, k);
    let mut xs: Vec<DualVec<f64, N>> = x.iter().map(|&x| DualVec::from(x)).collect();
    for s in 0..k.div_ceil(N) {
        let cols = s * N..((s + 1) * N).min(k);
        for (i, xi) in xs.iter_mut().enumerate() {
            xi.tangent = [0.0; N];
            for (l, c) in cols.clone().enumerate() {
                xi.tangent[l] = v[(i, c)];
            }
        }
        let (_, adjoints, _) = dual_sweep(f, &xs)?;
        for (l, c) in cols.enumerate() {
            for (i, a) in adjoints.iter().enumerate() {
                out[(i, c)] = a.tangent[l];
            }
        }
    }
    Ok(out)
}

/// The value, first and second derivative of every output along one direction.
#[derive(Clone, Debug, PartialEq)]
pub struct SecondDirectional {
    /// `f(x)`, length m.
    pub value: Vec<f64>,
    /// `J·v`: the first directional derivative of each output.
    pub first: Vec<f64>,
    /// `vᵀ∇²fᵢ v`: the second directional derivative of each output.
    pub second: Vec<f64>,
}

/// `f(x)`, `J·v` and `vᵀ∇²fᵢ v` for every output of a vector function, in one forward-over-
/// forward sweep (a dual of duals with `v` seeded at both levels). This is the second-order
/// correction of geodesic Levenberg–Marquardt and Gauss–Newton, without forming any Hessian.
///
/// Errors on bad input as [`jacobian`](crate::jacobian), and if `v` does not have the length of
/// `x`.
///
/// ```
/// use jacobian::{Function, Op};
/// struct F;
/// impl Function for F {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         vec![x[0] * x[1], x[0].sin()]
///     }
/// }
/// let d = jacobian::second_directional(&F, &[0.0, 3.0], &[1.0, 2.0])?;
/// assert_eq!(d.value, vec![0.0, 0.0]);
/// assert_eq!(d.first, vec![3.0, 1.0]); // [x₁v₀ + x₀v₁, cos x₀ · v₀]
/// assert_eq!(d.second, vec![4.0, 0.0]); // [2v₀v₁, −sin x₀ · v₀²]
/// # Ok::<(), jacobian::Error>(())
/// ```
pub fn second_directional<F: Function>(
    f: &F,
    x: &[f64],
    v: &[f64],
) -> Result<SecondDirectional, Error> {
    f.check_input(x.len())?;
    Error::check_seed("tangent", x.len(), v.len())?;
    let xs: Vec<Dual<Dual<f64>>> = x
        .iter()
        .zip(v)
        .map(|(&x, &v)| Dual::new(Dual::new(x, v), Dual::new(v, 0.0)))
        .collect();
    let ys = f.eval(&xs);
    crate::sweeps::check_declared(f, ys.len(), "the forward sweep")?;
    Ok(SecondDirectional {
        value: ys.iter().map(|y| y.primal.primal).collect(),
        first: ys.iter().map(|y| y.primal.tangent).collect(),
        second: ys.iter().map(|y| y.tangent.tangent).collect(),
    })
}
