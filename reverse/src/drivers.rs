//! Drivers for users who know they want reverse mode, over closures.
//!
//! Each is generic over the scalar `T` of its inputs, as `forward::derivative` is, so that every
//! pair of modes nests: called with `f64` it records a `Tape<f64>`; called inside a forward
//! derivative with `Dual<f64>` it records a `Tape<Dual<f64>>` (forward-over-reverse); called inside
//! another reverse derivative with `Var<f64>` it records a `Tape<Var<f64>>` (reverse-over-reverse).

use crate::{Adjoints, Tape, Var};
use shared_ops::memory;
use shared_ops::{Error, Op};

/// `(f(x), ∇f(x))`: one recording and one reverse sweep, whatever the number of inputs.
///
/// ```
/// use reverse::Float;
/// let (y, g) = reverse::gradient(|x| x[0] * x[1].exp(), &[3.0, 0.0]);
/// assert_eq!((y, g), (3.0, vec![1.0, 3.0]));
/// ```
///
/// Nested, the levels are kept apart: d/dx [x · d/dy (x + y) at y = 1] at x = 1 is 1.
///
/// ```
/// use reverse::{Var, gradient};
/// let (_, d) = gradient(
///     |x: &[Var]| {
///         let (_, inner) = gradient(|y: &[Var<Var>]| Var::constant(x[0]) + y[0], &[Var::constant(1.0)]);
///         x[0] * inner[0]
///     },
///     &[1.0],
/// );
/// assert_eq!(d, vec![1.0]);
/// ```
pub fn gradient<T: Op, F: FnOnce(&[Var<T>]) -> Var<T>>(f: F, x: &[T]) -> (T, Vec<T>) {
    let tape = Tape::with_capacity(x.len() * 4);
    let mut xs = memory::take::<Vec<Var<T>>>();
    tape.vars_into(x, &mut xs);
    let y = f(&xs);
    let g = tape.sweep_wrt(&[(y, T::one())], &xs);
    memory::give(xs);
    (y.value(), g)
}

/// `(f(x), wᵀJ)`: the vector-Jacobian product, one recording and one sweep seeded with `w`.
///
/// Errors if `w` does not have one entry per output.
///
/// ```
/// let f = |x: &[reverse::Var]| vec![x[0] * x[1], x[0] + x[1]];
/// let (y, wj) = reverse::vjp(f, &[2.0, 3.0], &[1.0, 1.0]).unwrap();
/// assert_eq!((y, wj), (vec![6.0, 5.0], vec![4.0, 3.0]));
/// assert!(reverse::vjp(f, &[2.0, 3.0], &[1.0]).is_err());
/// ```
pub fn vjp<T: Op, F: FnOnce(&[Var<T>]) -> Vec<Var<T>>>(
    f: F,
    x: &[T],
    w: &[T],
) -> Result<(Vec<T>, Vec<T>), Error> {
    let tape = Tape::with_capacity(x.len() * 4);
    let mut xs = memory::take::<Vec<Var<T>>>();
    tape.vars_into(x, &mut xs);
    let ys = f(&xs);
    Error::check_seed("adjoint", ys.len(), w.len())?;
    let seeds: Vec<(Var<T>, T)> = ys.iter().copied().zip(w.iter().copied()).collect();
    let values = ys.iter().map(|&y| y.value()).collect();
    let wj = tape.sweep_wrt(&seeds, &xs);
    memory::give(xs);
    Ok((values, wj))
}

/// `(f(x), J)` with the Jacobian as rows, `J[i][j] = ∂fᵢ/∂xⱼ`: one recording, then m sweeps
/// replaying it.
///
/// The teaching driver: generic over the number type, one adjoint per sweep, no plan. The name
/// says what it returns, `Vec<Vec<T>>` rows; `jacobian::jacobian` returns a `jacobian::Jacobian`
/// (an `f64` nalgebra matrix, vector and threaded sweeps, and the plan that chose the mode).
/// It cannot fail: one recording fixes the output length. An empty `x` gives m empty rows.
///
/// ```
/// use reverse::Float;
/// let (_, j) = reverse::jacobian_rows(|x| vec![x[0] * x[1], x[0].sin()], &[2.0, 3.0]);
/// assert_eq!(j, vec![vec![3.0, 2.0], vec![2.0_f64.cos(), 0.0]]);
/// ```
pub fn jacobian_rows<T: Op, F: FnOnce(&[Var<T>]) -> Vec<Var<T>>>(
    f: F,
    x: &[T],
) -> (Vec<T>, Vec<Vec<T>>) {
    let tape = Tape::with_capacity(x.len() * 4);
    let xs = tape.vars(x);
    let ys = f(&xs);
    let mut adj = Adjoints::default();
    let rows = ys
        .iter()
        .map(|&y| {
            tape.sweep_into(&[(y, T::one())], &mut adj);
            adj.wrt_all(&xs)
        })
        .collect();
    (ys.iter().map(|&y| y.value()).collect(), rows)
}
