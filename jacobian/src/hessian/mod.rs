//! Second derivatives: Hessians of scalar functions by any of four mode pairs, Hessian-vector
//! products, and second-order directional derivatives of vector functions.

mod pairs;

pub(crate) use pairs::dual_sweep;
mod plan;
mod products;

pub use plan::{HessianPlan, Pair, PairEstimate, estimate_hessian, hessian_cost};
pub use products::{Hvp, SecondDirectional, hvp, hvp_many, second_directional};

use crate::lanes::chunk_lanes;
use nalgebra::DMatrix;
use pairs::{Evals, Parts};
use shared_ops::{Error, Function};

/// A Hessian with the value and gradient it was taken with, and the plan that computed it.
#[derive(Clone, Debug)]
pub struct Hessian {
    /// `f(x)`.
    pub value: f64,
    /// `∇f(x)`, length n.
    pub gradient: Vec<f64>,
    /// `H[(i, j)] = ∂²f/∂xᵢ∂xⱼ`, n×n and exactly symmetric.
    pub matrix: DMatrix<f64>,
    /// The mode pair that ran and why.
    pub plan: HessianPlan,
}

/// The Hessian of a function with one output, by the pair the cost model finds cheapest: forward
/// over forward for one or two inputs, forward over reverse up to 8, and beyond that forward
/// over reverse or reverse over reverse by the shape of f's tape (see [`HessianPlan`]).
///
/// Errors on an `x` of another length than `f` declares, or an `f` with other than one output;
/// an empty `x` gives the value, an empty gradient and a 0×0 matrix. The matrix is exactly symmetric: each pair computes both triangles, and the
/// result is their mean (they differ by rounding only).
///
/// ```
/// use jacobian::{Function, Op};
/// /// Rosenbrock's function of two variables.
/// struct Rosenbrock;
/// impl Function for Rosenbrock {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         let (a, b) = (T::one() - x[0], x[1] - x[0] * x[0]);
///         vec![a * a + b * b * 100.0]
///     }
/// }
/// let h = jacobian::hessian(&Rosenbrock, &[1.0, 1.0])?;
/// assert_eq!(h.value, 0.0);
/// assert_eq!(h.gradient, vec![0.0, 0.0]);
/// assert_eq!(h.matrix.as_slice(), &[802.0, -400.0, -400.0, 200.0]);
/// println!("{}", h.plan);
/// # Ok::<(), jacobian::Error>(())
/// ```
pub fn hessian<F: Function>(f: &F, x: &[f64]) -> Result<Hessian, Error> {
    hessian_with(f, x, Pair::Auto)
}

/// The Hessian by the given pair of modes (`Auto` plans). All four give the same matrix up to
/// rounding.
///
/// ```
/// use jacobian::{Function, Op, Pair};
/// struct F;
/// impl Function for F {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         vec![x[0].exp() * x[1]]
///     }
/// }
/// for pair in Pair::ALL {
///     let h = jacobian::hessian_with(&F, &[0.0, 2.0], pair)?;
///     assert_eq!(h.plan.pair, pair);
///     assert_eq!(h.matrix.as_slice(), &[2.0, 1.0, 1.0, 0.0]);
/// }
/// # Ok::<(), jacobian::Error>(())
/// ```
pub fn hessian_with<F: Function>(f: &F, x: &[f64], pair: Pair) -> Result<Hessian, Error> {
    check_scalar(f, x.len())?;
    match chunk_lanes(x.len()) {
        1 => planned::<1, F>(f, x, pair),
        2 => planned::<2, F>(f, x, pair),
        4 => planned::<4, F>(f, x, pair),
        _ => planned::<8, F>(f, x, pair),
    }
}

/// Runs `pair` with chunks of N. `Auto` takes forward over forward for one or two inputs (one
/// sweep, no tape), forward over reverse when one chunk covers the inputs, and otherwise runs
/// the first forward-over-reverse chunk, reads the shape of f's tape from it, and continues
/// with the cheaper of forward over reverse and reverse over reverse (the model never prefers
/// the other two once there are two chunks).
fn planned<const N: usize, F: Function>(f: &F, x: &[f64], pair: Pair) -> Result<Hessian, Error> {
    let evals = Evals::<N> {
        plain: &|x| f.eval(x),
        forward_over_reverse: &|x| f.eval(x),
        reverse_over_forward: &|x| f.eval(x),
        forward_over_forward: &|x| f.eval(x),
        reverse_over_reverse: &|x| f.eval(x),
    };
    planned_with(&evals, x, pair)
}

/// [`planned`] on `f`'s trait objects: compiled once per N.
fn planned_with<const N: usize>(f: &Evals<'_, N>, x: &[f64], pair: Pair) -> Result<Hessian, Error> {
    let n = x.len();
    let chunks = n.div_ceil(N);
    let mut parts = Parts::new(n);
    let (pair, estimate, reason) = match pair {
        Pair::Auto if chunks == 1 && N <= 2 => {
            parts = pairs::forward_over_forward::<N>(f.forward_over_forward, x)?;
            let reason = format!("{n} inputs: one sweep of duals of duals, no tape to record");
            (Pair::ForwardOverForward, None, reason)
        }
        Pair::Auto if chunks == 1 => {
            pairs::forward_over_reverse::<N>(f.forward_over_reverse, x, &mut parts, 0..1)?;
            let reason = format!("{N} tangents cover all {n} inputs: one recording, one sweep");
            (Pair::ForwardOverReverse, None, reason)
        }
        Pair::Auto => {
            pairs::forward_over_reverse::<N>(f.forward_over_reverse, x, &mut parts, 0..1)?;
            let t = parts.tape;
            let estimate = estimate_hessian(n, &t);
            let pair = estimate.cheapest();
            let other = match pair {
                Pair::ReverseOverReverse => Pair::ForwardOverReverse,
                _ => Pair::ReverseOverReverse,
            };
            if pair == Pair::ReverseOverReverse {
                pairs::reverse_over_reverse::<N>(f.reverse_over_reverse, x, &mut parts, 1..chunks)?;
                mirror_first_columns(&mut parts.matrix, N);
            } else {
                pairs::forward_over_reverse::<N>(f.forward_over_reverse, x, &mut parts, 1..chunks)?;
            }
            let reason = format!(
                "f records {} nodes, {} weighted and {} unit edges (read from the first chunk): \
                 estimated {:.0} against {:.0} for {other}",
                t.nodes,
                t.edges,
                t.unit_edges,
                estimate.cost(pair),
                estimate.cost(other)
            );
            (pair, Some(estimate), reason)
        }
        forced => {
            match forced {
                Pair::ForwardOverReverse => pairs::forward_over_reverse::<N>(
                    f.forward_over_reverse,
                    x,
                    &mut parts,
                    0..chunks,
                )?,
                Pair::ReverseOverReverse => pairs::reverse_over_reverse::<N>(
                    f.reverse_over_reverse,
                    x,
                    &mut parts,
                    0..chunks,
                )?,
                Pair::ReverseOverForward => {
                    parts = pairs::reverse_over_forward::<N>(f.reverse_over_forward, x)?
                }
                _ => parts = pairs::forward_over_forward::<N>(f.forward_over_forward, x)?,
            }
            (forced, None, "pair forced by the caller".to_string())
        }
    };
    if n == 0 {
        // No chunk to sweep (reverse over reverse still records once): the value by itself.
        parts.value = pairs::scalar((f.plain)(x))?;
    }
    let mut matrix = parts.matrix;
    symmetrise(&mut matrix);
    let plan = HessianPlan::new(pair, n, (parts.sweeps, N), parts.tape, estimate, reason);
    Ok(Hessian {
        value: parts.value,
        gradient: parts.gradient,
        matrix,
        plan,
    })
}

/// After one forward-over-reverse chunk (columns `..k`) and reverse-over-reverse rows `k..`,
/// the block of rows `..k` and columns `k..` is known only as its transpose: copy it.
fn mirror_first_columns(h: &mut DMatrix<f64>, k: usize) {
    for i in 0..k.min(h.nrows()) {
        for j in k..h.ncols() {
            h[(i, j)] = h[(j, i)];
        }
    }
}

/// `H ← (H + Hᵀ)/2`: the two triangles differ by rounding only, and the mean is symmetric to
/// the bit.
pub(crate) fn symmetrise(h: &mut DMatrix<f64>) {
    for j in 0..h.ncols() {
        for i in j + 1..h.nrows() {
            let mean = 0.5 * (h[(i, j)] + h[(j, i)]);
            h[(i, j)] = mean;
            h[(j, i)] = mean;
        }
    }
}

/// The checks every driver for a function with one output (gradient, Hessian, HVP) makes
/// before it runs: an input of the declared length, and one declared output.
pub(crate) fn check_scalar<F: Function>(f: &F, n: usize) -> Result<(), Error> {
    f.check_input(n)?;
    match f.sizes() {
        Some((_, m)) if m != 1 => Err(Error::NotScalar { outputs: m }),
        _ => Ok(()),
    }
}
