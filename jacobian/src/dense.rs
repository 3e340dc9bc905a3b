//! The dense drivers: a full Jacobian by the cheaper mode, a gradient, Jacobian-vector and
//! vector-Jacobian products (one or many directions), and their options.

use crate::plan::{Direction, Mode, Plan};
use crate::{hessian, lanes, sweeps};
use nalgebra::DMatrix;
use shared_ops::{Error, Function};

/// A Jacobian with the value it was taken at and the plan that computed it.
#[derive(Clone, Debug)]
pub struct Jacobian {
    /// `f(x)`, length m.
    pub value: Vec<f64>,
    /// `J[(i, j)] = ∂fᵢ/∂xⱼ`, m rows and n columns.
    pub matrix: DMatrix<f64>,
    /// The mode that ran and why.
    pub plan: Plan,
}

/// The Jacobian of `f` at `x`, in the mode the plan finds cheaper ([`Mode::Auto`]).
///
/// Errors on an `x` of another length than `f` declares, or an `f` whose output length changes
/// between evaluations. An empty `x` is not an error: the value and an m×0 matrix, as every
/// driver answers for a function of 0 inputs. Large Jacobians split their sweeps across threads
/// (see [`Options`]); `f` is therefore `Sync`.
///
/// ```
/// use jacobian::{Function, Op};
/// struct Norm2;
/// impl Function for Norm2 {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         vec![x.iter().map(|&v| v * v).sum()]
///     }
/// }
/// let x: Vec<f64> = (1..=100).map(f64::from).collect();
/// let j = jacobian::jacobian(&Norm2, &x)?;
/// assert_eq!(j.plan.mode, jacobian::Mode::Reverse); // 1 output, 100 inputs
/// assert_eq!(j.matrix[(0, 2)], 6.0);
/// # Ok::<(), jacobian::Error>(())
/// ```
pub fn jacobian<F: Function + Sync>(f: &F, x: &[f64]) -> Result<Jacobian, Error> {
    jacobian_with_options(f, x, Options::default())
}

/// The Jacobian of `f` at `x` in the given mode (`Auto` plans).
///
/// ```
/// use jacobian::{Function, Mode, Op};
/// struct F;
/// impl Function for F {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         vec![x[0].exp() * x[1]]
///     }
/// }
/// let j = jacobian::jacobian_with(&F, &[0.0, 2.0], Mode::Forward)?;
/// assert_eq!(j.plan.mode, Mode::Forward);
/// assert_eq!(j.matrix.as_slice(), &[2.0, 1.0]);
/// # Ok::<(), jacobian::Error>(())
/// ```
pub fn jacobian_with<F: Function + Sync>(f: &F, x: &[f64], mode: Mode) -> Result<Jacobian, Error> {
    jacobian_with_options(
        f,
        x,
        Options {
            mode,
            ..Options::default()
        },
    )
}

/// How to compute a Jacobian: the mode, and whether sweeps may run on several threads.
///
/// Threads (rayon's pool) are used only when the first sweep shows that the rest would take
/// long enough to pay for them; the matrix is identical either way.
///
/// ```
/// use jacobian::{Mode, Options};
/// let serial = Options { mode: Mode::Reverse, threads: false };
/// assert_eq!(Options::default().mode, Mode::Auto);
/// assert!(Options::default().threads);
/// # let _ = serial;
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Forward, reverse, or let the plan choose (the default).
    pub mode: Mode,
    /// Allow splitting the sweeps across threads (default `true`).
    pub threads: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            mode: Mode::Auto,
            threads: true,
        }
    }
}

/// The Jacobian of `f` at `x` with explicit [`Options`].
///
/// ```
/// use jacobian::{Function, Mode, Op, Options};
/// struct F;
/// impl Function for F {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         x.iter().map(|&v| v.sin()).collect()
///     }
/// }
/// let x = [0.1; 16];
/// let a = jacobian::jacobian_with_options(&F, &x, Options { mode: Mode::Forward, threads: false })?;
/// let b = jacobian::jacobian_with_options(&F, &x, Options { mode: Mode::Reverse, threads: true })?;
/// assert_eq!(a.matrix, b.matrix);
/// assert_eq!(a.plan.threads, 1);
/// # Ok::<(), jacobian::Error>(())
/// ```
pub fn jacobian_with_options<F: Function + Sync>(
    f: &F,
    x: &[f64],
    options: Options,
) -> Result<Jacobian, Error> {
    f.check_input(x.len())?;
    let n = x.len();
    let (mode, m, forced) = match Direction::forced(options.mode) {
        None => {
            // The plan needs m: take it from the declared sizes, else from one plain evaluation.
            let m = match f.sizes() {
                Some((_, m)) => m,
                None => f.eval(x).len(),
            };
            (Plan::choose(n, m), Some(m), false)
        }
        Some(forced) => (forced, f.sizes().map(|s| s.1), true),
    };
    let swept = match mode {
        Direction::Forward => sweeps::forward(f, x, m, options.threads)?,
        Direction::Reverse => sweeps::reverse(f, x, m, options.threads)?,
    };
    let plan = Plan::new(mode, n, &swept, forced);
    Ok(Jacobian {
        value: swept.value,
        matrix: swept.matrix,
        plan,
    })
}

/// `(f(x), ∇f(x))` for a function with one output: one recording and one reverse sweep.
///
/// Errors if `f` has more or fewer than one output, or on bad input as [`jacobian`].
///
/// ```
/// use jacobian::{Function, Op};
/// struct Rosenbrock;
/// impl Function for Rosenbrock {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         let (a, b) = (T::one() - x[0], x[1] - x[0] * x[0]);
///         vec![a * a + b * b * 100.0]
///     }
/// }
/// let (y, g) = jacobian::gradient(&Rosenbrock, &[1.0, 1.0])?;
/// assert_eq!((y, g), (0.0, vec![0.0, 0.0]));
/// # Ok::<(), jacobian::Error>(())
/// ```
pub fn gradient<F: Function>(f: &F, x: &[f64]) -> Result<(f64, Vec<f64>), Error> {
    hessian::check_scalar(f, x.len())?;
    sweeps::gradient(f, x)
}

/// `(f(x), J·v)`: a Jacobian-vector product in one forward sweep.
///
/// The sweep runs on `forward::Dual<f64, Unchecked>`, without the per-operation NaN test of the
/// structural-zero convention; if a tangent of the result is NaN, it runs again on
/// `forward::Dual<f64>`, with the test, and that result is returned. Either way the result is
/// the convention's, bit for bit (a `0·∞` NaN reaches every output that depends on it). A
/// function whose J·v is NaN for another reason pays for two sweeps. The n dual inputs are
/// built in a buffer the thread keeps for its next jvp (up to 64 MiB).
///
/// Errors if `v` does not have the length of `x`.
///
/// ```
/// use jacobian::{Function, Op};
/// struct F;
/// impl Function for F {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         vec![x[0] * x[1], x[0] - x[1]]
///     }
/// }
/// let (y, jv) = jacobian::jvp(&F, &[2.0, 3.0], &[1.0, 0.5])?;
/// assert_eq!((y, jv), (vec![6.0, -1.0], vec![4.0, 0.5]));
/// assert!(jacobian::jvp(&F, &[2.0, 3.0], &[1.0]).is_err());
/// # Ok::<(), jacobian::Error>(())
/// ```
#[allow(clippy::type_complexity)]
pub fn jvp<F: Function>(f: &F, x: &[f64], v: &[f64]) -> Result<(Vec<f64>, Vec<f64>), Error> {
    f.check_input(x.len())?;
    Error::check_seed("tangent", x.len(), v.len())?;
    let ys = sweeps::on_kept_duals(x, v, |xs| f.eval(xs));
    let (y, jv) = if ys.iter().any(|y| y.tangent.is_nan()) {
        forward::jvp(|xs| f.eval(xs), x, v)?
    } else {
        // Collects of known length (`unzip` grows both vectors from empty); the values then
        // take over f's output allocation in place (a `Vec` collected from its own
        // `into_iter`), one allocation fewer.
        let jv = ys.iter().map(|y| y.tangent).collect();
        (ys.into_iter().map(|y| y.primal).collect(), jv)
    };
    sweeps::check_declared(f, y.len(), "the forward sweep")?;
    Ok((y, jv))
}

/// `(f(x), wᵀ·J)`: a vector-Jacobian product in one recording and one reverse sweep.
///
/// Errors if `w` does not have one entry per output.
///
/// ```
/// use jacobian::{Function, Op};
/// struct F;
/// impl Function for F {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         vec![x[0] * x[1], x[0] - x[1]]
///     }
/// }
/// let (y, wj) = jacobian::vjp(&F, &[2.0, 3.0], &[1.0, 2.0])?;
/// assert_eq!((y, wj), (vec![6.0, -1.0], vec![5.0, 0.0]));
/// assert!(jacobian::vjp(&F, &[2.0, 3.0], &[1.0]).is_err());
/// # Ok::<(), jacobian::Error>(())
/// ```
#[allow(clippy::type_complexity)]
pub fn vjp<F: Function>(f: &F, x: &[f64], w: &[f64]) -> Result<(Vec<f64>, Vec<f64>), Error> {
    f.check_input(x.len())?;
    sweeps::vjp(f, x, w)
}

/// `J·V` or `Wᵀ·J` at a point: k products with the Jacobian from one set of sweeps, with the
/// [`Plan`] that ran them ([`Plan::products`] is k).
///
/// [`Products::new`] is an empty result for the `_into` methods of
/// [`PreparedJacobian`](crate::PreparedJacobian) to fill, which size it on their first call and
/// then write in place.
///
/// ```
/// let p = jacobian::Products::new();
/// assert_eq!((p.value.len(), p.matrix.shape(), p.plan.products), (0, (0, 0), 0));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Products {
    /// f(x).
    pub value: Vec<f64>,
    /// `J·V` (m×k) or `Wᵀ·J` (k×n).
    pub matrix: DMatrix<f64>,
    /// Which sweeps ran, on how many threads.
    pub plan: Plan,
}

impl Products {
    /// An empty result, to be filled by a prepared object's `_into` methods.
    pub fn new() -> Products {
        Products {
            value: Vec::new(),
            matrix: DMatrix::zeros(0, 0),
            plan: Plan::new(Direction::Forward, 0, &sweeps::Swept::default(), true),
        }
    }

    /// The result of the sweeps `out` ran for `k` products of an n-input Jacobian.
    pub(crate) fn of(mode: Direction, n: usize, k: usize, out: sweeps::Swept) -> Products {
        let plan = Plan::for_products(mode, n, k, &out);
        Products {
            value: out.value,
            matrix: out.matrix,
            plan,
        }
    }
}

impl Default for Products {
    fn default() -> Self {
        Products::new()
    }
}

/// `J·V` for an n×k seed matrix `V`: k Jacobian-vector products in ⌈k/N⌉ forward sweeps of N
/// lanes, the directions sharing sweeps as the columns of a Jacobian do. The sweeps may run on
/// several threads where the work is large; [`jvp_matrix_with`] decides per call.
///
/// `V = I` gives the Jacobian itself; a few chosen directions beside unit columns (the extra
/// columns of a hand-tracking model, say) ride in the same sweeps. Errors on an `x` of
/// another length than `f` declares, or a `V` without n rows.
///
/// ```
/// use jacobian::nalgebra::DMatrix;
/// use jacobian::{Function, Op};
/// struct F;
/// impl Function for F {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         vec![x[0] * x[1], x[0] + x[1].sin()]
///     }
/// }
/// // The two unit directions and their sum, in one sweep of 3 lanes.
/// let v = DMatrix::from_row_slice(2, 3, &[1.0, 0.0, 1.0, 0.0, 1.0, 1.0]);
/// let p = jacobian::jvp_matrix(&F, &[2.0, 0.0], &v)?;
/// assert_eq!(p.value, vec![0.0, 2.0]);
/// assert_eq!(p.matrix.as_slice(), &[0.0, 1.0, 2.0, 1.0, 2.0, 2.0]); // column-major 2×3
/// assert_eq!((p.plan.products, p.plan.sweeps, p.plan.lanes), (3, 1, 3));
/// assert!(jacobian::jvp_matrix(&F, &[2.0, 0.0], &DMatrix::zeros(3, 1)).is_err());
/// # Ok::<(), jacobian::Error>(())
/// ```
pub fn jvp_matrix<F: Function + Sync>(
    f: &F,
    x: &[f64],
    v: &DMatrix<f64>,
) -> Result<Products, Error> {
    jvp_matrix_with(f, x, v, true)
}

/// [`jvp_matrix`] with the threads decided by the caller: `threads: false` runs every sweep on
/// the calling thread (the plan says how many ran).
///
/// ```
/// use jacobian::nalgebra::DMatrix;
/// use jacobian::{Function, Op};
/// struct F;
/// impl Function for F {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         x.iter().map(|&v| v.sin()).collect()
///     }
/// }
/// let p = jacobian::jvp_matrix_with(&F, &[0.0; 64], &DMatrix::identity(64, 64), false)?;
/// assert_eq!((p.plan.threads, p.matrix[(5, 5)]), (1, 1.0));
/// # Ok::<(), jacobian::Error>(())
/// ```
pub fn jvp_matrix_with<F: Function + Sync>(
    f: &F,
    x: &[f64],
    v: &DMatrix<f64>,
    threads: bool,
) -> Result<Products, Error> {
    f.check_input(x.len())?;
    Error::check_seed("tangent matrix", x.len(), v.nrows())?;
    let (m, seed) = (f.sizes().map(|s| s.1), lanes::Seed::Matrix(v));
    let mut out = sweeps::Swept::default();
    sweeps::forward_seeded(
        f,
        x,
        seed,
        m,
        threads,
        &mut lanes::Inputs::default(),
        &mut out,
    )?;
    Ok(Products::of(Direction::Forward, x.len(), v.ncols(), out))
}

/// `Wᵀ·J` for an m×k weight matrix `W`: k vector-Jacobian products from one recording and
/// ⌈k/Q⌉ reverse sweeps of Q adjoints; the result is k×n, row c being `wᶜᵀ·J`. The sweeps may
/// run on several threads where the work is large; [`vjp_matrix_with`] decides per call.
///
/// `W = I` gives the Jacobian itself. Errors on bad input as [`jacobian`], or a `W` without m
/// rows.
///
/// ```
/// use jacobian::nalgebra::DMatrix;
/// use jacobian::{Function, Op};
/// struct F;
/// impl Function for F {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         vec![x[0] * x[1], x[0] - x[1]]
///     }
/// }
/// let w = DMatrix::from_row_slice(2, 2, &[1.0, 0.0, 2.0, 1.0]);
/// let p = jacobian::vjp_matrix(&F, &[2.0, 3.0], &w)?;
/// assert_eq!(p.value, vec![6.0, -1.0]);
/// assert_eq!(p.matrix, DMatrix::from_row_slice(2, 2, &[5.0, 0.0, 1.0, -1.0]));
/// assert!(jacobian::vjp_matrix(&F, &[2.0, 3.0], &DMatrix::zeros(3, 1)).is_err());
/// # Ok::<(), jacobian::Error>(())
/// ```
pub fn vjp_matrix<F: Function + Sync>(
    f: &F,
    x: &[f64],
    w: &DMatrix<f64>,
) -> Result<Products, Error> {
    vjp_matrix_with(f, x, w, true)
}

/// [`vjp_matrix`] with the threads decided by the caller (`false`: the calling thread only).
///
/// ```
/// use jacobian::nalgebra::DMatrix;
/// use jacobian::{Function, Op};
/// struct F;
/// impl Function for F {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         x.iter().map(|&v| v * v).collect()
///     }
/// }
/// let p = jacobian::vjp_matrix_with(&F, &[1.0; 64], &DMatrix::identity(64, 64), false)?;
/// assert_eq!((p.plan.threads, p.matrix[(3, 3)]), (1, 2.0));
/// # Ok::<(), jacobian::Error>(())
/// ```
pub fn vjp_matrix_with<F: Function + Sync>(
    f: &F,
    x: &[f64],
    w: &DMatrix<f64>,
    threads: bool,
) -> Result<Products, Error> {
    f.check_input(x.len())?;
    let mut r = sweeps::record_plain(f, x, f.sizes().map(|s| s.1))?;
    Error::check_seed("weight matrix", r.ys.len(), w.nrows())?;
    let mut out = sweeps::Swept::default();
    sweeps::reverse_seeded(&mut r, lanes::Seed::Matrix(w), threads, &mut out);
    Ok(Products::of(Direction::Reverse, x.len(), w.ncols(), out))
}
