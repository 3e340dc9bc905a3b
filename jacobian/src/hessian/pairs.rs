//! The four ways to compute a Hessian, one function each. Every one returns the value, the
//! gradient, the n×n matrix (not yet symmetrised), the sweeps run and the largest recording.

use forward::DualVec;
use nalgebra::DMatrix;
use reverse::{AdjointsVec, Tape, TapeStats, Var};
use shared_ops::num_traits::{One, Zero};
use shared_ops::{Error, Function, Op};
use std::ops::Range;

/// A duals of duals, the numbers of forward over forward.
pub(crate) type D2<const N: usize> = DualVec<DualVec<f64, N>, N>;

/// `f` on the numbers of one pair, as a trait object: the pairs and the plan are compiled once
/// per lane count, not once per (function, lane count).
pub(crate) type Eval<'a, T> = &'a dyn Fn(&[T]) -> Vec<T>;

/// `f` on the numbers of every pair (and on `f64`), for the planned Hessian.
pub(crate) struct Evals<'a, const N: usize> {
    pub plain: Eval<'a, f64>,
    pub forward_over_reverse: Eval<'a, Var<DualVec<f64, N>>>,
    pub reverse_over_forward: Eval<'a, DualVec<Var, N>>,
    pub forward_over_forward: Eval<'a, D2<N>>,
    pub reverse_over_reverse: Eval<'a, Var<Var>>,
}

/// What one pair computed.
pub(crate) struct Parts {
    pub value: f64,
    pub gradient: Vec<f64>,
    pub matrix: DMatrix<f64>,
    pub sweeps: usize,
    pub tape: TapeStats,
}

impl Parts {
    pub(crate) fn new(n: usize) -> Parts {
        Parts {
            value: 0.0,
            gradient: vec![0.0; n],
            matrix: DMatrix::zeros(n, n),
            sweeps: 0,
            tape: TapeStats::default(),
        }
    }
}

/// The one output of a scalar function, or `Err(NotScalar)`.
pub(crate) fn scalar<T>(ys: Vec<T>) -> Result<T, Error> {
    let outputs = ys.len();
    <[T; 1]>::try_from(ys)
        .map(|[y]| y)
        .map_err(|_| Error::NotScalar { outputs })
}

/// Chunk `s` of `n` inputs, `N` per chunk.
fn chunk<const N: usize>(s: usize, n: usize) -> Range<usize> {
    s * N..((s + 1) * N).min(n)
}

/// One recording of `f` on a tape of `DualVec<f64, N>` at the seeded inputs `xs`, and one
/// sweep: the value, and for each input its adjoint, whose primal is ∂f/∂xᵢ and whose N tangents
/// are (H·V)ᵢ for the N directions seeded in `xs`. Forward over reverse and `hvp_many` both
/// run on it.
pub(crate) fn dual_sweep<const N: usize, F: Function>(
    f: &F,
    xs: &[DualVec<f64, N>],
) -> Result<(f64, Vec<DualVec<f64, N>>, TapeStats), Error> {
    recorded_dual_sweep(&|vs| f.eval(vs), xs)
}

/// [`dual_sweep`] behind a trait object (compiled once per N).
fn recorded_dual_sweep<const N: usize>(
    f: Eval<'_, Var<DualVec<f64, N>>>,
    xs: &[DualVec<f64, N>],
) -> Result<(f64, Vec<DualVec<f64, N>>, TapeStats), Error> {
    let tape = Tape::with_capacity(8 * xs.len());
    let vs = tape.vars(xs);
    let y = scalar(f(&vs))?;
    let adjoints = tape.sweep_wrt(&[(y, DualVec::one())], &vs);
    Ok((Op::value(&y), adjoints, tape.stats()))
}

/// Forward over reverse: per chunk of N columns, record `f` on a tape of `DualVec<f64, N>`
/// whose inputs carry unit tangents, and sweep once ([`dual_sweep`]). The adjoint of input i
/// then holds ∂f/∂xᵢ in its primal and the N Hessian entries ∂²f/∂xᵢ∂xⱼ in its tangents.
///
/// Runs the chunks in `chunks` only, so that the plan can look at the first recording before
/// it decides how to do the rest.
pub(crate) fn forward_over_reverse<const N: usize>(
    f: Eval<'_, Var<DualVec<f64, N>>>,
    x: &[f64],
    out: &mut Parts,
    chunks: Range<usize>,
) -> Result<(), Error> {
    let mut xs: Vec<DualVec<f64, N>> = x.iter().map(|&v| DualVec::from(v)).collect();
    for s in chunks {
        let cols = chunk::<N>(s, x.len());
        for (l, j) in cols.clone().enumerate() {
            xs[j].tangent[l] = 1.0;
        }
        let (value, adjoints, tape) = recorded_dual_sweep(f, &xs)?;
        for (l, j) in cols.enumerate() {
            xs[j].tangent[l] = 0.0;
            for (i, a) in adjoints.iter().enumerate() {
                out.matrix[(i, j)] = a.tangent[l];
            }
        }
        out.value = value;
        out.gradient = adjoints.iter().map(|a| a.primal).collect();
        out.tape = tape;
        out.sweeps += 1;
    }
    Ok(())
}

/// Reverse over forward: per chunk of N columns, record on a `Tape<f64>` the forward sweep of a
/// `DualVec<Var, N>` seeded with unit tangents; its N output tangents are ∂f/∂xⱼ as tape
/// variables, and one vector sweep of N adjoints pulls each back to a Hessian column.
pub(crate) fn reverse_over_forward<const N: usize>(
    f: Eval<'_, DualVec<Var, N>>,
    x: &[f64],
) -> Result<Parts, Error> {
    let n = x.len();
    let mut out = Parts::new(n);
    let mut adj = AdjointsVec::<f64, N>::default();
    let chunks = n.div_ceil(N);
    for s in 0..chunks {
        let cols = chunk::<N>(s, n);
        let tape = Tape::with_capacity(8 * n * (N + 1));
        let vs = tape.vars(x);
        let mut xs: Vec<DualVec<Var, N>> = vs.iter().map(|&v| DualVec::from(v)).collect();
        for (l, j) in cols.clone().enumerate() {
            xs[j].tangent[l] = Var::one();
        }
        let y = scalar(f(&xs))?;
        let seeds: Vec<(Var, [f64; N])> = (0..cols.len())
            .map(|l| {
                let mut e = [0.0; N];
                e[l] = 1.0;
                (y.tangent[l], e)
            })
            .collect();
        tape.sweep_vec_into(&seeds, &mut adj);
        out.tape = tape.stats();
        for (l, j) in cols.enumerate() {
            out.gradient[j] = y.tangent[l].value();
            for (i, &v) in vs.iter().enumerate() {
                out.matrix[(i, j)] = adj.wrt(v)[l];
            }
        }
        out.value = y.primal.value();
    }
    out.sweeps = chunks;
    Ok(out)
}

/// Forward over forward: per pair of chunks (I, J) with J ≥ I, one sweep of a
/// `DualVec<DualVec<f64, N>, N>` whose outer tangents seed chunk I and inner tangents chunk J;
/// the N×N tangent-of-tangent block is H[I, J], mirrored into H[J, I]. No tape.
pub(crate) fn forward_over_forward<const N: usize>(
    f: Eval<'_, D2<N>>,
    x: &[f64],
) -> Result<Parts, Error> {
    let n = x.len();
    let mut out = Parts::new(n);
    let mut xs: Vec<D2<N>> = x.iter().map(|&v| D2::from(DualVec::from(v))).collect();
    let chunks = n.div_ceil(N);
    for si in 0..chunks {
        let rows = chunk::<N>(si, n);
        for (a, i) in rows.clone().enumerate() {
            xs[i].tangent[a] = DualVec::one();
        }
        for sj in si..chunks {
            let cols = chunk::<N>(sj, n);
            for (b, j) in cols.clone().enumerate() {
                xs[j].primal.tangent[b] = 1.0;
            }
            let y = scalar(f(&xs))?;
            out.sweeps += 1;
            for (b, j) in cols.clone().enumerate() {
                xs[j].primal.tangent[b] = 0.0;
                out.gradient[j] = y.primal.tangent[b];
                for (a, i) in rows.clone().enumerate() {
                    let h = y.tangent[a].tangent[b];
                    out.matrix[(i, j)] = h;
                    out.matrix[(j, i)] = h;
                }
            }
            out.value = y.value();
        }
        for (a, i) in rows.enumerate() {
            xs[i].tangent[a] = DualVec::zero();
        }
    }
    Ok(out)
}

/// Reverse over reverse: one recording on a `Tape<f64>` of `f` recorded on an inner
/// `Tape<Var>` *and of that inner tape's sweep*, whose results are the gradient as tape
/// variables; then vector sweeps of N adjoints pull N gradient entries back to N Hessian rows.
///
/// Sweeps the row blocks in `blocks` only: the rows of a block that forward over reverse
/// already computed as columns are not needed again.
pub(crate) fn reverse_over_reverse<const N: usize>(
    f: Eval<'_, Var<Var>>,
    x: &[f64],
    out: &mut Parts,
    blocks: Range<usize>,
) -> Result<(), Error> {
    let n = x.len();
    let tape = Tape::with_capacity(32 * n);
    let vs = tape.vars(x);
    let mut outputs = 1;
    let (y, g) = reverse::gradient(
        |xs: &[Var<Var>]| {
            let ys = f(xs);
            outputs = ys.len();
            ys.first().copied().unwrap_or_default()
        },
        &vs,
    );
    if outputs != 1 {
        return Err(Error::NotScalar { outputs });
    }
    let recording = tape.finish();
    out.tape = recording.stats();
    out.value = y.value().value();
    out.gradient = g.iter().map(|g| g.value()).collect();
    let mut adj = AdjointsVec::<f64, N>::default();
    for b in blocks {
        let rows = chunk::<N>(b, n);
        let seeds: Vec<(Var, [f64; N])> = rows
            .clone()
            .enumerate()
            .map(|(l, i)| {
                let mut e = [0.0; N];
                e[l] = 1.0;
                (g[i], e)
            })
            .collect();
        recording.sweep_vec_into(&seeds, &mut adj);
        for (j, &v) in vs.iter().enumerate() {
            let lanes = adj.wrt(v);
            for (l, i) in rows.clone().enumerate() {
                out.matrix[(i, j)] = lanes[l];
            }
        }
        out.sweeps += 1;
    }
    Ok(())
}
