//! Sparsity detection: the pattern of a Jacobian and of a Hessian, with the kind that ran.
//!
//! * [`tracer`]: *global* detection, by evaluating the function on index-set numbers, whose
//!   pattern holds at every point (or local, carrying values, where the function branches);
//! * [`local`]: *local* detection of a Jacobian from a recording at one point, by a forward
//!   sweep of index sets over its graph;
//! * [`union`]: the merge of sorted index sets that both are made of.

mod local;
mod tracer;
pub(super) mod union;

pub use local::recording_pattern;
pub use tracer::{Detection, Tracer};

use super::{Counts, Pattern};
use crate::sweeps::check_declared;
use reverse::{Recording, Tape, Var};
use shared_ops::{Error, Function};
use tracer::{Take, trace};

/// A detected pattern, the kind of detection that ran (`Global` or `Local`, never `Auto`), and
/// why global detection was given up, if it was.
pub(crate) struct Detected {
    pub pattern: Pattern,
    pub ran: Detection,
    pub fallback: Option<String>,
    /// The recording local Jacobian detection made (its reverse sweeps can reuse it).
    pub recording: Option<(Recording, Vec<Var>, Vec<Var>)>,
    /// The pattern's counts, if the detection took them as it wrote the pattern.
    pub counts: Option<Counts>,
}

/// Runs global detection, falls back to local on [`Error::NeedsValues`] under `Auto`.
fn global_then_local<T>(
    detection: Detection,
    global: impl FnOnce() -> Result<T, Error>,
    local: impl FnOnce() -> Result<T, Error>,
) -> Result<(T, Detection, Option<String>), Error> {
    match detection {
        Detection::Local => Ok((local()?, Detection::Local, None)),
        Detection::Global => Ok((global()?, Detection::Global, None)),
        Detection::Auto => match global() {
            Ok(t) => Ok((t, Detection::Global, None)),
            Err(Error::NeedsValues { what }) => Ok((local()?, Detection::Local, Some(what))),
            Err(e) => Err(e),
        },
    }
}

/// The pattern of `f`'s Jacobian at `x`, with its [`Counts`] if `counted` and the detection
/// could take them as it wrote the pattern (global detection does).
pub(crate) fn detect_jacobian<F: Function>(
    f: &F,
    x: &[f64],
    detection: Detection,
    counted: bool,
) -> Result<Detected, Error> {
    f.check_input(x.len())?;
    let n = x.len();
    let (mut recording, mut counts) = (None, None);
    let (pattern, ran, fallback) = global_then_local(
        detection,
        || {
            let take = if counted {
                Take::CountedPattern
            } else {
                Take::Pattern
            };
            let t = trace(f, x, false, take)?;
            check_declared(f, t.offsets.len() - 1, "sparsity detection")?;
            counts = t.counts;
            Ok(Pattern::from_csr(n, t.offsets, t.indices))
        },
        || {
            let tape = Tape::with_capacity(8 * n);
            let xs = tape.vars(x);
            let ys = f.eval(&xs);
            check_declared(f, ys.len(), "sparsity detection")?;
            let rec = tape.finish();
            let pattern = local::recording_pattern(&rec, &xs, &ys);
            recording = Some((rec, xs, ys));
            Ok(pattern)
        },
    )?;
    Ok(Detected {
        pattern,
        ran,
        fallback,
        recording,
        counts,
    })
}

pub(crate) fn detect_hessian<F: Function>(
    f: &F,
    x: &[f64],
    detection: Detection,
) -> Result<Detected, Error> {
    crate::hessian::check_scalar(f, x.len())?;
    let n = x.len();
    let run = |local: bool| -> Result<Pattern, Error> {
        let t = trace(f, x, local, Take::Pairs)?;
        if t.offsets.len() != 2 {
            return Err(Error::NotScalar {
                outputs: t.offsets.len() - 1,
            });
        }
        if t.full {
            return Pattern::from_rows(n, &vec![(0..n).collect(); n]);
        }
        let mut rows = vec![Vec::new(); n];
        for (i, j) in t.pairs {
            rows[i].push(j);
            if i != j {
                rows[j].push(i);
            }
        }
        Pattern::from_rows(n, &rows)
    };
    let (pattern, ran, fallback) = global_then_local(detection, || run(false), || run(true))?;
    Ok(Detected {
        pattern,
        ran,
        fallback,
        recording: None,
        counts: None,
    })
}

/// The sparsity pattern of `f`'s Jacobian at `x` (m rows, n columns), by the given detection.
///
/// # Errors
///
/// Bad input as [`jacobian`](crate::jacobian); [`Error::NeedsValues`] if `Global` detection
/// meets a branch on a value.
///
/// ```
/// use jacobian::sparse::{Detection, jacobian_pattern};
/// use jacobian::{Function, Op};
/// struct Clamp;
/// impl Function for Clamp {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         // A branch on a value: global detection cannot follow it.
///         vec![if x[0] > x[1] { x[0] * x[2] } else { x[1] }]
///     }
/// }
/// let x = [2.0, 1.0, 5.0];
/// assert!(jacobian_pattern(&Clamp, &x, Detection::Global).is_err());
/// let p = jacobian_pattern(&Clamp, &x, Detection::Local)?; // the branch taken at x
/// assert_eq!(p.row(0), &[0, 2]);
/// assert_eq!(jacobian_pattern(&Clamp, &x, Detection::Auto)?, p);
/// # Ok::<(), jacobian::Error>(())
/// ```
pub fn jacobian_pattern<F: Function>(
    f: &F,
    x: &[f64],
    detection: Detection,
) -> Result<Pattern, Error> {
    Ok(detect_jacobian(f, x, detection, false)?.pattern)
}

/// The symmetric sparsity pattern of the Hessian of a scalar `f` (n×n): `(i, j)` is in it if
/// some nonlinear operation couples inputs i and j (`x₀·x₁` couples 0 and 1, `sin x₀` couples
/// 0 with itself, `x₀ + x₁` nothing).
///
/// # Errors
///
/// As [`jacobian_pattern`], and [`Error::NotScalar`] unless `f` has one output.
///
/// ```
/// use jacobian::sparse::{Detection, hessian_pattern};
/// use jacobian::{Function, Op};
/// struct F;
/// impl Function for F {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         vec![x[0] * x[1] + x[2].exp() + x[3]]
///     }
/// }
/// let p = hessian_pattern(&F, &[1.0; 4], Detection::Global)?;
/// assert_eq!((p.row(0), p.row(1), p.row(2), p.row(3)), (&[1][..], &[0][..], &[2][..], &[][..]));
/// # Ok::<(), jacobian::Error>(())
/// ```
pub fn hessian_pattern<F: Function>(
    f: &F,
    x: &[f64],
    detection: Detection,
) -> Result<Pattern, Error> {
    Ok(detect_hessian(f, x, detection)?.pattern)
}
