//! Derivatives that are themselves [`Function`]s, as JAX's `grad`, `jvp`, `vjp`, `jacfwd` and
//! `jacrev` are: generic over the number type like any other function, so they compose.
//!
//! Each transform differentiates *at the number type it is evaluated with*: `Grad(&f)` evaluated
//! with `f64` records a `Tape<f64>`; evaluated by a forward driver with `DualVec<f64, N>` it
//! records a `Tape<DualVec<f64, N>>` and sweeps tangents along with the adjoints. So the driver
//! that runs a transform chooses the outer mode, and the transform the inner one:
//!
//! | composition | inner | outer | gives |
//! |---|---|---|---|
//! | `jacobian_with(&Grad(&f), x, Forward)` | reverse | forward | the Hessian, forward over reverse |
//! | `jacobian_with(&Grad(&f), x, Reverse)` | reverse | reverse | the Hessian, reverse over reverse |
//! | `jacobian_with(&JacFwd(&f), x, Forward)` | forward | forward | Hessians stacked, forward over forward |
//! | `jacobian_with(&JacRev(&f), x, Forward)` | reverse | forward | JAX's `jacfwd(jacrev(f))` |
//! | `gradient(&Jvp::new(&f, v), x)` | forward | reverse | `H·v`, reverse over forward |
//! | `jvp(&Grad(&f), x, v)` | reverse | forward | `H·v`, forward over reverse |
//! | `Grad(&Grad(&f))` (one input) | reverse | reverse | `f''` |
//!
//! [`hessian`](crate::hessian) and [`hvp`](crate::hvp) run these pairs without building a
//! `Function` per chunk, and choose the pair by a cost model.
//!
//! ```
//! use jacobian::{Function, Grad, Mode, Op, jacobian_with};
//!
//! /// f(x) = x₀²·x₁ + sin x₁.
//! struct F;
//! impl Function for F {
//!     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
//!         vec![x[0] * x[0] * x[1] + x[1].sin()]
//!     }
//! }
//! let x = [1.5, 0.5];
//! let h = jacobian_with(&Grad(&F), &x, Mode::Forward)?.matrix; // forward over reverse
//! let r = jacobian_with(&Grad(&F), &x, Mode::Reverse)?.matrix; // reverse over reverse
//! assert_eq!(h[(0, 0)], 2.0 * x[1]);
//! assert_eq!(h[(0, 1)], 2.0 * x[0]);
//! assert!((r[(1, 1)] + x[1].sin()).abs() < 1e-15);
//! # Ok::<(), jacobian::Error>(())
//! ```

use forward::Dual;
use reverse::Var;
use shared_ops::{Function, Op};

/// The one output of a scalar function, or a panic that names the transform and the count.
#[track_caller]
fn only<T>(what: &str, ys: Vec<T>) -> T {
    let m = ys.len();
    match <[T; 1]>::try_from(ys) {
        Ok([y]) => y,
        Err(_) => panic!(
            "{what} needs a function with 1 output, but this one returned {m}: \
             use Vjp or JacRev for vector functions"
        ),
    }
}

/// The gradient as a function, `x ↦ ∇f(x)`: JAX's `grad`. One recording and one reverse sweep
/// at the number type it is evaluated with; see the [module docs](self) for the compositions.
///
/// # Panics
///
/// If `f` has other than one output. [`hessian`](crate::hessian) returns an `Err` instead.
///
/// ```
/// use jacobian::{Function, Grad, Op};
/// struct Cube;
/// impl Function for Cube {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         vec![x[0].powi(3)]
///     }
/// }
/// assert_eq!(Grad(&Cube).eval(&[2.0]), vec![12.0]);
/// assert_eq!(Grad(&Grad(&Cube)).eval(&[2.0]), vec![12.0]); // f'' = 6x, reverse over reverse
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Grad<F>(pub F);

impl<F: Function> Function for Grad<F> {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        reverse::gradient(|xs: &[Var<T>]| only("Grad", self.0.eval(xs)), x).1
    }
    fn sizes(&self) -> Option<(usize, usize)> {
        self.0.sizes().map(|(n, _)| (n, n))
    }
}

/// The Jacobian-vector product along a fixed direction as a function, `x ↦ J(x)·v`: one
/// forward sweep with a [`Dual`] at the number type it is evaluated with.
///
/// # Panics
///
/// If `x` and `v` differ in length, naming both (the drivers check [`sizes`](Function::sizes)
/// first when `f` declares them).
///
/// ```
/// use jacobian::{Function, Jvp, Op};
/// struct F;
/// impl Function for F {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         vec![x[0] * x[0] * x[1]]
///     }
/// }
/// let v = [1.0, 0.0];
/// assert_eq!(Jvp::new(&F, &v).eval(&[3.0, 2.0]), vec![12.0]); // ∂f/∂x₀ = 2x₀x₁
/// // Its gradient is H·v, reverse over forward.
/// let (_, hv) = jacobian::gradient(&Jvp::new(&F, &v), &[3.0, 2.0])?;
/// assert_eq!(hv, vec![4.0, 6.0]);
/// # Ok::<(), jacobian::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Jvp<F> {
    f: F,
    v: Vec<f64>,
}

impl<F: Function> Jvp<F> {
    /// `x ↦ J(x)·v` for the direction `v`.
    pub fn new(f: F, v: &[f64]) -> Self {
        Jvp { f, v: v.to_vec() }
    }
}

impl<F: Function> Function for Jvp<F> {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let v: Vec<T> = self.v.iter().map(|&v| T::constant(v)).collect();
        match forward::jvp(|xs: &[Dual<T>]| self.f.eval(xs), x, &v) {
            Ok((_, jv)) => jv,
            Err(e) => panic!("Jvp: {e}"),
        }
    }
    fn sizes(&self) -> Option<(usize, usize)> {
        self.f.sizes().map(|(_, m)| (self.v.len(), m))
    }
}

/// The vector-Jacobian product with fixed output weights as a function, `x ↦ wᵀJ(x)`: one
/// recording and one reverse sweep at the number type it is evaluated with.
///
/// # Panics
///
/// If `w` does not have one entry per output of `f`.
///
/// ```
/// use jacobian::{Function, Op, Vjp};
/// struct F;
/// impl Function for F {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         vec![x[0] * x[1], x[0] + x[1]]
///     }
/// }
/// assert_eq!(Vjp::new(&F, &[1.0, 2.0]).eval(&[3.0, 4.0]), vec![6.0, 5.0]);
/// ```
#[derive(Clone, Debug)]
pub struct Vjp<F> {
    f: F,
    w: Vec<f64>,
}

impl<F: Function> Vjp<F> {
    /// `x ↦ wᵀJ(x)` for the output weights `w`.
    pub fn new(f: F, w: &[f64]) -> Self {
        Vjp { f, w: w.to_vec() }
    }
}

impl<F: Function> Function for Vjp<F> {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let w: Vec<T> = self.w.iter().map(|&w| T::constant(w)).collect();
        match reverse::vjp(|xs: &[Var<T>]| self.f.eval(xs), x, &w) {
            Ok((_, wj)) => wj,
            Err(e) => panic!("Vjp: {e}"),
        }
    }
    fn sizes(&self) -> Option<(usize, usize)> {
        self.f.sizes().map(|(n, _)| (n, n))
    }
}

/// The Jacobian as a function by n forward sweeps, `x ↦ J(x)` flattened row by row (entry
/// `i·n + j` is `∂fᵢ/∂xⱼ`): JAX's `jacfwd`.
///
/// # Panics
///
/// If `f`'s output length changes from one sweep to the next within an evaluation: a
/// [`Function`] returns no `Result`, so the transform stops with `forward::jacobian_rows`'s
/// error, which names the sweep and both lengths. The drivers check this for a plain `f`
/// and return it as an error.
///
/// ```
/// use jacobian::{Function, JacFwd, Op};
/// struct F;
/// impl Function for F {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         vec![x[0] * x[1], x[0].exp()]
///     }
/// }
/// assert_eq!(JacFwd(&F).eval(&[0.0, 2.0]), vec![2.0, 0.0, 1.0, 0.0]);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct JacFwd<F>(pub F);

impl<F: Function> Function for JacFwd<F> {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        match forward::jacobian_rows(|xs: &[Dual<T>]| self.0.eval(xs), x) {
            Ok((_, rows)) => rows.concat(),
            Err(e) => panic!("JacFwd: {e}"),
        }
    }
    fn sizes(&self) -> Option<(usize, usize)> {
        self.0.sizes().map(|(n, m)| (n, m * n))
    }
}

/// The Jacobian as a function by one recording and m reverse sweeps, flattened row by row as
/// [`JacFwd`]: JAX's `jacrev`.
///
/// ```
/// use jacobian::{Function, JacFwd, JacRev, Mode, Op, jacobian_with};
/// struct F;
/// impl Function for F {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         vec![x[0] * x[1], x[0].exp()]
///     }
/// }
/// let x = [0.5, 2.0];
/// assert_eq!(JacRev(&F).eval(&x), JacFwd(&F).eval(&x));
/// // jacfwd(jacrev(f)): the Hessians of both outputs stacked, (2·2)×2.
/// let h = jacobian_with(&JacRev(&F), &x, Mode::Forward)?.matrix;
/// assert_eq!((h.nrows(), h.ncols()), (4, 2));
/// assert_eq!(h[(1, 0)], 1.0); // ∂²(x₀x₁)/∂x₁∂x₀
/// # Ok::<(), jacobian::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct JacRev<F>(pub F);

impl<F: Function> Function for JacRev<F> {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        reverse::jacobian_rows(|xs: &[Var<T>]| self.0.eval(xs), x)
            .1
            .concat()
    }
    fn sizes(&self) -> Option<(usize, usize)> {
        self.0.sizes().map(|(n, m)| (n, m * n))
    }
}
