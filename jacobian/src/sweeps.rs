//! The sweeps themselves: chunked forward sweeps, and one recording replayed by vector reverse
//! sweeps; either split across threads when the work is large enough to pay for them.

use forward::DualVec;
use nalgebra::DMatrix;
use rayon::prelude::*;
use reverse::{AdjointsVec, Recording, Tape, TapeStats, Var};
use shared_ops::{Error, Function};
use std::time::{Duration, Instant};

/// What the sweeps produced: value, matrix, sweeps run, lanes per sweep, threads used.
pub(crate) struct Swept {
    pub value: Vec<f64>,
    pub matrix: DMatrix<f64>,
    pub sweeps: usize,
    pub lanes: usize,
    pub threaded: bool,
    /// What the reverse recording holds (empty for forward mode).
    pub tape: TapeStats,
}

/// Work below this (estimated from the first sweep) stays on one thread: handing sweeps to
/// rayon costs tens of microseconds, and a noisy first sweep must not tip a small job over.
const PARALLEL_ABOVE: Duration = Duration::from_micros(500);

fn worth_threads(first: Duration, remaining: usize, threads: bool) -> bool {
    threads
        && remaining > 1
        && rayon::current_num_threads() > 1
        && first * remaining as u32 > PARALLEL_ABOVE
}

/// Checks an output length against what `f` declares.
pub(crate) fn check_declared<F: Function>(f: &F, m: usize, during: &str) -> Result<(), Error> {
    match f.sizes() {
        Some((_, declared)) if declared != m => Err(Error::OutputLength {
            expected: declared,
            found: m,
            during: during.to_string(),
        }),
        _ => Ok(()),
    }
}

fn length_changed(expected: usize, found: usize, during: String) -> Error {
    Error::OutputLength {
        expected,
        found,
        during,
    }
}

/// Tangents per forward sweep for n inputs: the narrowest of 1, 2, 4, 8 that covers n, else 8.
pub(crate) fn forward_lanes(n: usize) -> usize {
    match n {
        1 => 1,
        2 => 2,
        3..=4 => 4,
        _ => 8,
    }
}

/// Adjoints per reverse sweep for m outputs, as [`forward_lanes`].
pub(crate) fn reverse_lanes(m: usize) -> usize {
    forward_lanes(m.max(1))
}

pub(crate) fn forward<F: Function + Sync>(
    f: &F,
    x: &[f64],
    m: Option<usize>,
    threads: bool,
) -> Result<Swept, Error> {
    match forward_lanes(x.len()) {
        1 => forward_chunked::<1, F>(f, x, m, threads),
        2 => forward_chunked::<2, F>(f, x, m, threads),
        4 => forward_chunked::<4, F>(f, x, m, threads),
        _ => forward_chunked::<8, F>(f, x, m, threads),
    }
}

/// One forward sweep with the inputs of chunk `s` seeded: returns the N tangents of each output.
fn forward_sweep<const N: usize, F: Function>(
    f: &F,
    xs: &mut [DualVec<f64, N>],
    s: usize,
) -> Vec<DualVec<f64, N>> {
    let cols = s * N..((s + 1) * N).min(xs.len());
    for (l, j) in cols.clone().enumerate() {
        xs[j].tangent[l] = 1.0;
    }
    let ys = f.eval(xs);
    for (l, j) in cols.enumerate() {
        xs[j].tangent[l] = 0.0;
    }
    ys
}

/// ⌈n/N⌉ forward sweeps, each seeding N inputs with unit tangents and filling N columns.
fn forward_chunked<const N: usize, F: Function + Sync>(
    f: &F,
    x: &[f64],
    m: Option<usize>,
    threads: bool,
) -> Result<Swept, Error> {
    let n = x.len();
    let lifted: Vec<DualVec<f64, N>> = x.iter().map(|&v| DualVec::from(v)).collect();
    let sweeps = n.div_ceil(N);

    // The first sweep, alone: it fixes m and the value, and times one sweep (only when the
    // remaining sweeps could go to other threads: reading the clock costs tens of ns).
    let may_thread = threads && sweeps > 2 && rayon::current_num_threads() > 1;
    let mut xs = lifted;
    let start = may_thread.then(Instant::now);
    let first = forward_sweep(f, &mut xs, 0);
    let took = start.map(|s| s.elapsed()).unwrap_or_default();
    let m0 = first.len();
    if let Some(expected) = m
        && m0 != expected
    {
        return Err(length_changed(expected, m0, "forward sweep 1".into()));
    }
    check_declared(f, m0, "forward sweep 1")?;
    let value: Vec<f64> = first.iter().map(|y| y.primal).collect();
    let mut matrix = DMatrix::zeros(m0, n);
    let mut fill = |s: usize, ys: &[DualVec<f64, N>]| {
        for (l, j) in (s * N..((s + 1) * N).min(n)).enumerate() {
            for (i, y) in ys.iter().enumerate() {
                matrix[(i, j)] = y.tangent[l];
            }
        }
    };
    fill(0, &first);

    let run = |xs: &mut Vec<DualVec<f64, N>>, s: usize| {
        let ys = forward_sweep(f, xs, s);
        if ys.len() == m0 {
            Ok((s, ys))
        } else {
            Err(length_changed(
                m0,
                ys.len(),
                format!("forward sweep {}", s + 1),
            ))
        }
    };
    let threaded = may_thread && worth_threads(took, sweeps - 1, threads);
    if threaded {
        let done: Vec<_> = (1..sweeps)
            .into_par_iter()
            .map_init(|| xs.clone(), run)
            .collect::<Result<_, _>>()?;
        for (s, ys) in done {
            fill(s, &ys);
        }
    } else {
        for s in 1..sweeps {
            let (s, ys) = run(&mut xs, s)?;
            fill(s, &ys);
        }
    }
    Ok(Swept {
        value,
        matrix,
        sweeps,
        lanes: N,
        threaded,
        tape: TapeStats::default(),
    })
}

/// A finished recording of `f` with its inputs and outputs.
pub(crate) struct Recorded {
    pub rec: Recording,
    pub xs: Vec<Var>,
    pub ys: Vec<Var>,
}

/// Records `f` on a replayable tape (for the prepared drivers).
pub(crate) fn record_replayable<F: Function>(
    f: &F,
    x: &[f64],
    m: Option<usize>,
) -> Result<Recorded, Error> {
    let (tape, xs, ys) = record(f, Tape::replayable(), x, m)?;
    Ok(Recorded {
        rec: tape.finish(),
        xs,
        ys,
    })
}

/// Records `f` on a plain tape (sweeps only).
pub(crate) fn record_plain<F: Function>(
    f: &F,
    x: &[f64],
    m: Option<usize>,
) -> Result<Recorded, Error> {
    let (tape, xs, ys) = record(f, Tape::with_capacity(8 * x.len()), x, m)?;
    Ok(Recorded {
        rec: tape.finish(),
        xs,
        ys,
    })
}

/// Records `f` once on `tape`; returns the tape, the inputs and the outputs.
fn record<F: Function>(
    f: &F,
    tape: Tape,
    x: &[f64],
    m: Option<usize>,
) -> Result<(Tape, Vec<Var>, Vec<Var>), Error> {
    let xs = tape.vars(x);
    let ys = f.eval(&xs);
    if let Some(expected) = m
        && ys.len() != expected
    {
        return Err(length_changed(
            expected,
            ys.len(),
            "the reverse recording".into(),
        ));
    }
    check_declared(f, ys.len(), "the reverse recording")?;
    Ok((tape, xs, ys))
}

pub(crate) fn reverse<F: Function>(
    f: &F,
    x: &[f64],
    m: Option<usize>,
    threads: bool,
) -> Result<Swept, Error> {
    let (tape, xs, ys) = record(f, Tape::with_capacity(8 * x.len()), x, m)?;
    let rec = tape.finish();
    reverse_recorded(&Recorded { rec, xs, ys }, threads)
}

/// The reverse sweeps of a finished recording, Q rows at a time.
pub(crate) fn reverse_recorded(r: &Recorded, threads: bool) -> Result<Swept, Error> {
    let (rec, xs, ys) = (&r.rec, &r.xs[..], &r.ys[..]);
    match reverse_lanes(ys.len()) {
        1 => reverse_blocks::<1>(rec, xs, ys, threads),
        2 => reverse_blocks::<2>(rec, xs, ys, threads),
        4 => reverse_blocks::<4>(rec, xs, ys, threads),
        _ => reverse_blocks::<8>(rec, xs, ys, threads),
    }
}

/// One vector sweep for outputs `b·Q ..`: returns the Q adjoints of every input.
fn reverse_sweep<const Q: usize>(
    rec: &Recording,
    xs: &[Var],
    ys: &[Var],
    b: usize,
    adj: &mut AdjointsVec<f64, Q>,
) -> Vec<[f64; Q]> {
    let seeds: Vec<(Var, [f64; Q])> = ys[b * Q..((b + 1) * Q).min(ys.len())]
        .iter()
        .enumerate()
        .map(|(l, &y)| {
            let mut e = [0.0; Q];
            e[l] = 1.0;
            (y, e)
        })
        .collect();
    rec.sweep_vec_into(&seeds, adj);
    xs.iter().map(|&x| adj.wrt(x)).collect()
}

/// ⌈m/Q⌉ vector sweeps of one recording, each filling Q rows.
fn reverse_blocks<const Q: usize>(
    rec: &Recording,
    xs: &[Var],
    ys: &[Var],
    threads: bool,
) -> Result<Swept, Error> {
    let (n, m) = (xs.len(), ys.len());
    let blocks = m.div_ceil(Q);
    let mut matrix = DMatrix::zeros(m, n);
    let mut fill = |b: usize, rows: &[[f64; Q]]| {
        for (j, lanes) in rows.iter().enumerate() {
            for (l, i) in (b * Q..((b + 1) * Q).min(m)).enumerate() {
                matrix[(i, j)] = lanes[l];
            }
        }
    };
    let mut adj = AdjointsVec::default();
    let may_thread = threads && blocks > 2 && rayon::current_num_threads() > 1;
    let threaded = if blocks > 0 {
        let start = may_thread.then(Instant::now);
        fill(0, &reverse_sweep(rec, xs, ys, 0, &mut adj));
        let took = start.map(|s| s.elapsed()).unwrap_or_default();
        may_thread && worth_threads(took, blocks - 1, threads)
    } else {
        false
    };
    if threaded {
        let done: Vec<_> = (1..blocks)
            .into_par_iter()
            .map_init(AdjointsVec::default, |adj, b| {
                (b, reverse_sweep(rec, xs, ys, b, adj))
            })
            .collect();
        for (b, rows) in done {
            fill(b, &rows);
        }
    } else {
        for b in 1..blocks {
            fill(b, &reverse_sweep(rec, xs, ys, b, &mut adj));
        }
    }
    // The recording's values: those of its last evaluation (a replay's, not the Vars').
    let value = ys.iter().map(|&y| rec.value(y)).collect();
    Ok(Swept {
        value,
        matrix,
        sweeps: blocks,
        lanes: Q,
        threaded,
        tape: rec.stats(),
    })
}

/// `wᵀJ` by one recording and one sweep (`reverse::vjp`, whose buffers are kept between calls).
pub(crate) fn vjp<F: Function>(f: &F, x: &[f64], w: &[f64]) -> Result<(Vec<f64>, Vec<f64>), Error> {
    let mut declared = Ok(());
    let out = reverse::vjp(
        |xs: &[Var]| {
            let ys = f.eval(xs);
            declared = check_declared(f, ys.len(), "the reverse recording");
            ys
        },
        x,
        w,
    );
    declared?;
    out
}

/// `(f(x), ∇f(x))` for one output by one recording and one sweep (`reverse::gradient`).
pub(crate) fn gradient<F: Function>(f: &F, x: &[f64]) -> Result<(f64, Vec<f64>), Error> {
    let mut outputs = 1;
    let (y, g) = reverse::gradient(
        |xs: &[Var]| {
            let ys = f.eval(xs);
            outputs = ys.len();
            ys.first().copied().unwrap_or_default()
        },
        x,
    );
    if outputs != 1 {
        return Err(Error::NotScalar { outputs });
    }
    Ok((y, g))
}
