//! Sparsity detection by a number type: a [`Tracer`] carries the set of inputs it depends on,
//! and (for Hessians) every nonlinear operation adds the pairs of inputs it couples.
//!
//! Without values (*global* detection) the sets hold for every x, but a branch on a value
//! cannot be followed: the first one is kept as the reason to refuse (and no rule is evaluated
//! on a tracer that reads an input: its value is NaN). With values (*local*
//! detection) comparisons follow the point's branches, and the sets hold where the branches
//! are the same. A piecewise-constant result (`floor`, `signum`, `round`, …) has an empty set,
//! its derivative being zero, but its value depends on its inputs: global detection refuses a
//! branch on it as on them. The sets live in a thread-local arena for the duration of one
//! detection; in global detection of a Jacobian a set of up to four inputs lives in the tracer
//! itself, so that a stencil's row is built without touching the arena.

mod arena;
mod number;
mod ops;

pub use number::Tracer;

use super::Counts;
use arena::{ARENA, Arena, PLAIN, Spare};
use number::{EMPTY, FLAT, Form, NODE, and_input};
use shared_ops::{Error, Function, memory};

/// Which sparsity detection to run.
///
/// | | `Global` | `Local` |
/// |---|---|---|
/// | how | [`Tracer`]s without values | a recording at x (Jacobians), or [`Tracer`]s with values (Hessians) |
/// | holds | at every x | at x, and wherever `f` takes the same branches |
/// | branches on values | refused with [`Error::NeedsValues`] | followed |
/// | `max`, `min`, `abs` | both operands | both (`Tracer`), the winner (recording) |
///
/// `Auto` (the default) runs `Global` and falls back to `Local` if `f` branches on a value; the
/// plan says which ran.
///
/// ```
/// assert_eq!(jacobian::sparse::Detection::default(), jacobian::sparse::Detection::Auto);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Detection {
    /// Global, else local.
    #[default]
    Auto,
    /// Valid for every x; refuses functions that branch on values.
    Global,
    /// Valid at x (and where the branches are the same).
    Local,
}

/// The sets a traced evaluation left: per output its inputs, in compressed rows (row i is
/// `indices[offsets[i]..offsets[i + 1]]`, sorted); and the coupled pairs `(i, j)`, `i ≤ j`.
pub(crate) struct Traced {
    pub offsets: Vec<usize>,
    pub indices: Vec<usize>,
    /// The Jacobian pattern's counts, taken as the output loop writes it, if asked for.
    pub counts: Option<Counts>,
    pub pairs: Vec<(usize, usize)>,
    /// Every pair is coupled (then `pairs` is empty): an operation coupled all the inputs.
    pub full: bool,
}

/// What a [`trace`] takes from its outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Take {
    /// A Jacobian's pattern.
    Pattern,
    /// A Jacobian's pattern and its [`Counts`], for a colouring: taken as it is written.
    CountedPattern,
    /// A Hessian's coupled pairs.
    Pairs,
}

/// Evaluates `f` on tracers, with values if `local`, for what it should `take`.
pub(crate) fn trace<F: Function>(
    f: &F,
    x: &[f64],
    local: bool,
    take: Take,
) -> Result<Traced, Error> {
    let hessian = take == Take::Pairs;
    let n = x.len();
    assert!(
        n < NODE as usize,
        "sparsity detection of {n} inputs: at most 2³² − 3 (a tracer's sets are 32-bit)"
    );
    let Spare {
        bounds,
        items,
        inputs: mut xs,
    } = memory::take();
    let arena = Arena::new(bounds, items, n, local, hessian);
    let previous = ARENA.with(|a| a.replace(Some(arena)));
    let plain = !local && !hessian;
    let was_plain = PLAIN.replace(plain);
    xs.clear();
    xs.extend(x.iter().enumerate().map(|(k, &v)| match (plain, local) {
        (true, _) => Tracer::set([k as u32, EMPTY, EMPTY, EMPTY]),
        (false, true) => Tracer::node(k as u32, v),
        (false, false) => Tracer::node(k as u32, f64::NAN),
    }));
    let ys = f.eval(&xs);
    PLAIN.set(was_plain);
    let arena = ARENA
        .with(|a| a.replace(previous))
        .expect("the detection's arena");
    if let Some(what) = arena.refused {
        return Err(Error::NeedsValues { what });
    }
    let mut offsets = Vec::with_capacity(ys.len() + 1);
    let mut indices = Vec::new();
    let mut joined = Vec::new();
    let count = take == Take::CountedPattern;
    let mut counts = count.then(|| Counts::new(n));
    offsets.push(0);
    for y in &ys {
        let form = y.form();
        let set = match &form {
            Form::Node(node, value) => match and_input(*value).filter(|_| plain && *node < FLAT) {
                // A node and an input: their union, without writing it to the arena.
                Some(x) => {
                    let set = arena.set(*node);
                    match set.binary_search(&x) {
                        Ok(_) => set,
                        Err(at) => {
                            joined.clear();
                            joined.extend_from_slice(&set[..at]);
                            joined.push(x);
                            joined.extend_from_slice(&set[at..]);
                            &joined
                        }
                    }
                }
                None => arena.set(*node),
            },
            Form::Set(set) => Tracer::inputs(set),
        };
        if let Some(counts) = counts.as_mut() {
            counts.add_row(set);
        }
        indices.extend(set.iter().map(|&k| k as usize));
        offsets.push(indices.len());
    }
    if let Some(counts) = counts.as_mut() {
        counts.finish(indices.len());
    }
    memory::give(Spare {
        bounds: arena.bounds,
        items: arena.items,
        inputs: xs,
    });
    let full = arena.saturated;
    let mut pairs: Vec<(usize, usize)> = arena
        .pairs
        .unwrap_or_default()
        .into_iter()
        .map(|(i, j)| (i as usize, j as usize))
        .collect();
    pairs.sort_unstable();
    pairs.dedup();
    Ok(Traced {
        offsets,
        indices,
        counts,
        pairs,
        full,
    })
}
