//! The sweeps themselves: chunked forward sweeps, and one recording replayed by vector reverse
//! sweeps; either split across threads when the work is large enough to pay for them.

use crate::lanes::{self, Inputs, Seed, SyncEval, by_lanes};
use forward::{Dual, DualVec, Unchecked};
use nalgebra::DMatrix;
use rayon::prelude::*;
use reverse::{Adjoints, AdjointsVec, Recording, Tape, TapeStats, Var};
use shared_ops::{Error, Function, memory};
use std::any::Any;
use std::ops::Range;
use std::time::{Duration, Instant};

/// What the sweeps produced: value, matrix, sweeps run, lanes per sweep, threads used. The
/// sweeps write into one they are given, reusing its value and matrix where the sizes match.
pub(crate) struct Swept {
    pub value: Vec<f64>,
    pub matrix: DMatrix<f64>,
    pub sweeps: usize,
    pub lanes: usize,
    /// Threads the sweeps ran on (1: the calling thread).
    pub threads: usize,
    /// What the reverse recording holds (empty for forward mode).
    pub tape: TapeStats,
}

impl Default for Swept {
    fn default() -> Self {
        Swept::with_buffers(Vec::new(), DMatrix::zeros(0, 0))
    }
}

impl Swept {
    /// A result to be written into `value` and `matrix` (kept from an earlier call, say);
    /// `Default` would build a second matrix only to drop it.
    pub(crate) fn with_buffers(value: Vec<f64>, matrix: DMatrix<f64>) -> Swept {
        Swept {
            value,
            matrix,
            sweeps: 0,
            lanes: 0,
            threads: 1,
            tape: TapeStats::default(),
        }
    }

    /// Makes the matrix `rows × cols` (every entry is then written by the sweeps: a matrix of
    /// that shape already is reused as it is).
    #[inline]
    fn shape(&mut self, rows: usize, cols: usize) {
        if self.matrix.shape() != (rows, cols) {
            self.matrix = DMatrix::zeros(rows, cols);
        }
    }
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
    check_sizes(f.sizes(), m, during)
}

/// Checks an output length against declared sizes (`Function::sizes`).
#[inline]
pub(crate) fn check_sizes(
    sizes: Option<(usize, usize)>,
    m: usize,
    during: &str,
) -> Result<(), Error> {
    match sizes {
        Some((_, declared)) if declared != m => Err(output_length(declared, m, during)),
        _ => Ok(()),
    }
}

/// The error of [`check_sizes`], out of the callers' way.
#[cold]
fn output_length(declared: usize, found: usize, during: &str) -> Error {
    Error::OutputLength {
        declared,
        found,
        during: during.to_string(),
    }
}

/// An output length that differs from an earlier evaluation's.
#[cold]
fn length_changed(first: usize, found: usize, during: String) -> Error {
    Error::OutputChanged {
        first,
        found,
        during,
    }
}

/// `eval` on the duals `(xᵢ, vᵢ)`, built in a buffer of the thread's kept ones
/// (`shared_ops::memory`): from n = 65 on, a fresh vector of them is a `malloc` past glibc's
/// per-thread caches (1 KiB), which a long-running program's fragmented heap makes slower
/// still. A nested call (a jvp inside `eval`) finds the buffer taken and builds its own.
///
/// The duals start on a cache line: a buffer from `mmap` starts 16 bytes past a page, and there
/// half of the 32-byte stores span two lines, which slows the writing of the duals, a large
/// part of the jvp of a cheap function such as Rosenbrock's.
#[inline]
pub(crate) fn on_kept_duals<R>(
    x: &[f64],
    v: &[f64],
    eval: impl FnOnce(&[Dual<f64, Unchecked>]) -> R,
) -> R {
    const LINE: usize = 64;
    const PER_LINE: usize = LINE / size_of::<Dual<f64, Unchecked>>();
    let mut xs: Vec<Dual<f64, Unchecked>> = memory::take();
    xs.reserve(x.len() + PER_LINE - 1);
    // `usize::MAX` where no whole number of duals reaches a line; then any skip is as good.
    let skip = xs.as_ptr().align_offset(LINE).min(PER_LINE - 1);
    xs.resize(skip, Dual::default());
    write_duals(&mut xs, x, v);
    let out = eval(&xs[skip..]);
    memory::give(xs);
    out
}

/// Appends the duals `(xᵢ, vᵢ)` to `xs`.
#[inline(always)]
fn write_duals(xs: &mut Vec<Dual<f64, Unchecked>>, x: &[f64], v: &[f64]) {
    xs.extend((x.iter().zip(v)).map(|(&primal, &tangent)| Dual::unchecked(primal, tangent)));
}

/// Adjoints per reverse sweep for m outputs: [`chunk_lanes`](lanes::chunk_lanes).
pub(crate) fn reverse_lanes(m: usize) -> usize {
    lanes::chunk_lanes(m.max(1))
}

/// The full Jacobian by forward sweeps ([`lanes_for`](crate::lanes::lanes_for) lanes each).
pub(crate) fn forward<F: Function + Sync>(
    f: &F,
    x: &[f64],
    m: Option<usize>,
    threads: bool,
) -> Result<Swept, Error> {
    let mut out = Swept::default();
    forward_seeded(
        f,
        x,
        Seed::Identity,
        m,
        threads,
        &mut Inputs::default(),
        &mut out,
    )?;
    Ok(out)
}

/// `(f(x), J·V)` into `out` by forward sweeps along the columns of `V`, in the lanes
/// [`lanes_for`](lanes::lanes_for) chooses for V's column count, on the buffers of `inputs`.
pub(crate) fn forward_seeded<F: Function + Sync>(
    f: &F,
    x: &[f64],
    seed: Seed<'_>,
    m: Option<usize>,
    threads: bool,
    inputs: &mut Inputs,
    out: &mut Swept,
) -> Result<(), Error> {
    let k = seed.directions(x.len());
    let lanes = lanes::lanes_for(k);
    by_lanes!(
        lanes,
        forward_chunked::<N>(f, x, seed, m, threads, inputs, out)
    )
}

/// ⌈k/N⌉ forward sweeps, each seeding N directions of `seed` and filling N columns of `J·V`.
pub(crate) fn forward_chunked<const N: usize, F: Function + Sync>(
    f: &F,
    x: &[f64],
    seed: Seed<'_>,
    m: Option<usize>,
    threads: bool,
    inputs: &mut Inputs,
    out: &mut Swept,
) -> Result<(), Error> {
    let eval = |xs: &[DualVec<f64, N>]| f.eval(xs);
    chunked::<N>(&eval, f.sizes(), x, seed, m, threads, inputs, out)
}

/// [`forward_chunked`] behind a trait object: compiled once per lane count, not once per user
/// function and lane count (a build with many functions, such as the jacobian test suite,
/// would otherwise hold a copy for each).
#[allow(clippy::too_many_arguments)]
fn chunked<const N: usize>(
    f: SyncEval<'_, N>,
    sizes: Option<(usize, usize)>,
    x: &[f64],
    seed: Seed<'_>,
    m: Option<usize>,
    threads: bool,
    inputs: &mut Inputs,
    out: &mut Swept,
) -> Result<(), Error> {
    let k = seed.directions(x.len());
    let sweeps = k.div_ceil(N).max(1);

    // The first sweep, alone: it fixes m and the value, and times one sweep (only when the
    // remaining sweeps could go to other threads: reading the clock costs tens of ns).
    let may_thread = threads && sweeps > 2 && rayon::current_num_threads() > 1;
    // The whole Jacobian in one sweep: the seeds stay in the kept inputs between calls.
    let whole = sweeps == 1 && matches!(seed, Seed::Identity);
    let xs = if whole {
        inputs.lift_identity::<N>(x)
    } else {
        inputs.lift::<N>(x)
    };
    let start = may_thread.then(Instant::now);
    let (dirs, first) = if whole {
        (0..k, f(xs))
    } else {
        lanes::sweep(f, xs, seed, 0)
    };
    let took = start.map(|s| s.elapsed()).unwrap_or_default();
    let m0 = first.len();
    // What the function declares first: an earlier length may itself be the declared one.
    check_sizes(sizes, m0, "forward sweep 1")?;
    if let Some(expected) = m
        && m0 != expected
    {
        return Err(length_changed(expected, m0, "forward sweep 1".into()));
    }
    out.value.clear();
    out.value.extend(first.iter().map(|y| y.primal));
    out.shape(m0, k);
    let matrix = out.matrix.as_mut_slice();
    // A transposition: the sweep's outputs hold rows (N lanes each), the column-major storage
    // takes columns of m0 entries. For a few rows the column's length is a constant
    // ([`columns_of`]); otherwise the inner loop runs along the longer of the two, since for a
    // small block the loops' set-up costs more than the copies (a 2×15 block column by column,
    // without `columns_of`, would run 15 loops of 2).
    // Slices, not nalgebra's views, and no index checked per entry.
    let mut fill = |dirs: Range<usize>, ys: &[DualVec<f64, N>]| {
        let block = &mut matrix[dirs.start * m0..dirs.end * m0];
        match m0 {
            0 => {}
            // The same loop, each arm with its row count a constant.
            1 => columns_of(block, ys, 1),
            2 => columns_of(block, ys, 2),
            3 => columns_of(block, ys, 3),
            4 => columns_of(block, ys, 4),
            _ if m0 >= dirs.len() => columns_of(block, ys, m0),
            _ => {
                for (i, y) in ys.iter().enumerate().take(m0) {
                    for (column, &t) in block.chunks_exact_mut(m0).zip(&y.tangent) {
                        column[i] = t;
                    }
                }
            }
        }
    };
    fill(dirs, &first);

    let run = |xs: &mut Vec<DualVec<f64, N>>, s: usize| {
        let (dirs, ys) = lanes::sweep(f, xs, seed, s);
        if ys.len() == m0 {
            Ok((dirs, ys))
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
        let done = in_parallel(1..sweeps, &|| xs.clone(), &run)?;
        for (dirs, ys) in done {
            fill(dirs, &ys);
        }
    } else {
        for s in 1..sweeps {
            let (dirs, ys) = run(xs, s)?;
            fill(dirs, &ys);
        }
    }
    (out.sweeps, out.lanes, out.threads) = (sweeps, N, thread_count(threaded));
    out.tape = TapeStats::default();
    Ok(())
}

/// The block's columns of `rows` entries, column by column: entry i of column l is lane l of
/// output i. Inlined always, so that a constant `rows` unrolls each column's copies with no
/// loop set up per column. `ys`
/// has `rows` outputs and `block` at most N columns.
#[inline(always)]
fn columns_of<const N: usize>(block: &mut [f64], ys: &[DualVec<f64, N>], rows: usize) {
    for (column, l) in block.chunks_exact_mut(rows).zip(0..N) {
        for (entry, y) in column.iter_mut().zip(&ys[..rows]) {
            *entry = y.tangent[l];
        }
    }
}

/// A finished recording of `f` with its inputs and outputs, and the adjoints its sweeps work
/// in. A prepared object owns one: its recording is freed with it, and its sweeps take nothing
/// from the thread's kept buffers.
pub(crate) struct Recorded {
    pub rec: Recording,
    pub xs: Vec<Var>,
    pub ys: Vec<Var>,
    pub work: Work,
}

/// The adjoints of a recording's sweeps, kept between them: scalar ones, and the vector sweep's
/// of the last lane count.
#[derive(Default)]
pub(crate) struct Work {
    pub adjoints: Adjoints<f64>,
    lanes: Option<Box<dyn Any + Send + Sync>>,
}

impl Work {
    /// The vector sweep's adjoints for `Q` lanes, kept from the last sweep of `Q` lanes.
    pub fn lanes<const Q: usize>(&mut self) -> &mut AdjointsVec<f64, Q> {
        if !self
            .lanes
            .as_ref()
            .is_some_and(|b| b.is::<AdjointsVec<f64, Q>>())
        {
            self.lanes = Some(Box::new(AdjointsVec::<f64, Q>::default()));
        }
        (self.lanes.as_mut())
            .and_then(|b| b.downcast_mut())
            .expect("made for Q lanes above")
    }
}

impl Recorded {
    /// A recording that a prepared object keeps: freed when dropped.
    pub fn owned(rec: Recording, xs: Vec<Var>, ys: Vec<Var>) -> Recorded {
        Recorded {
            rec: rec.free_on_drop(),
            xs,
            ys,
            work: Work::default(),
        }
    }

    /// This recording, kept by a prepared object: freed when dropped.
    pub fn into_owned(self) -> Recorded {
        Recorded {
            rec: self.rec.free_on_drop(),
            ..self
        }
    }

    /// A recording for one call: its arrays go back to the thread's kept buffers after it.
    pub fn for_one_call(rec: Recording, xs: Vec<Var>, ys: Vec<Var>) -> Recorded {
        Recorded {
            rec,
            xs,
            ys,
            work: Work::default(),
        }
    }
}

/// Records `f` on a replayable tape (for the prepared drivers).
pub(crate) fn record_replayable<F: Function>(
    f: &F,
    x: &[f64],
    m: Option<usize>,
) -> Result<Recorded, Error> {
    let (tape, xs, ys) = record(f, Tape::replayable(), x, m)?;
    Ok(Recorded::owned(tape.finish(), xs, ys))
}

/// Records `f` on a plain tape (sweeps only), for one call.
pub(crate) fn record_plain<F: Function>(
    f: &F,
    x: &[f64],
    m: Option<usize>,
) -> Result<Recorded, Error> {
    let (tape, xs, ys) = record(f, Tape::with_capacity(8 * x.len()), x, m)?;
    Ok(Recorded::for_one_call(tape.finish(), xs, ys))
}

/// Records `f` on a plain tape, for a prepared object that records at every call: in the
/// buffers of its last recording `last` if it has one (they are its own; see
/// [`Recorded::owned`]).
pub(crate) fn record_plain_again<F: Function>(
    f: &F,
    x: &[f64],
    m: Option<usize>,
    last: Option<Recorded>,
) -> Result<Recorded, Error> {
    let Some(Recorded { rec, work, .. }) = last else {
        let (tape, xs, ys) = record(f, Tape::with_capacity(8 * x.len()), x, m)?;
        return Ok(Recorded::owned(tape.finish(), xs, ys));
    };
    let (tape, xs, ys) = record(f, rec.record_again(), x, m)?;
    Ok(Recorded {
        rec: tape.finish(),
        xs,
        ys,
        work,
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
    // What the function declares first: an earlier length may itself be the declared one.
    check_declared(f, ys.len(), "the reverse recording")?;
    if let Some(expected) = m
        && ys.len() != expected
    {
        return Err(length_changed(
            expected,
            ys.len(),
            "the reverse recording".into(),
        ));
    }
    Ok((tape, xs, ys))
}

pub(crate) fn reverse<F: Function>(
    f: &F,
    x: &[f64],
    m: Option<usize>,
    threads: bool,
) -> Result<Swept, Error> {
    let mut r = record_plain(f, x, m)?;
    reverse_recorded(&mut r, threads)
}

/// The reverse sweeps of a finished recording, Q rows at a time.
pub(crate) fn reverse_recorded(r: &mut Recorded, threads: bool) -> Result<Swept, Error> {
    let mut out = Swept::default();
    reverse_seeded(r, Seed::Identity, threads, &mut out);
    Ok(out)
}

/// `Wᵀ·J` into `out` by the reverse sweeps of a finished recording, along the columns of
/// `seed` (the identity for the Jacobian), Q at a time.
pub(crate) fn reverse_seeded(r: &mut Recorded, seed: Seed<'_>, threads: bool, out: &mut Swept) {
    let (rec, xs, ys, work) = (&r.rec, &r.xs[..], &r.ys[..], &mut r.work);
    match reverse_lanes(seed.directions(ys.len())) {
        1 => reverse_blocks::<1>(rec, xs, ys, seed, threads, work.lanes(), out),
        2 => reverse_blocks::<2>(rec, xs, ys, seed, threads, work.lanes(), out),
        4 => reverse_blocks::<4>(rec, xs, ys, seed, threads, work.lanes(), out),
        _ => reverse_blocks::<8>(rec, xs, ys, seed, threads, work.lanes(), out),
    }
}

/// Vector sweep `b` of `Wᵀ·J`: the outputs seeded with directions `b·Q ..` of `seed` (W's
/// columns; the identity for a full Jacobian). Returns those directions and the Q adjoints of
/// every input.
fn reverse_sweep<const Q: usize>(
    rec: &Recording,
    xs: &[Var],
    ys: &[Var],
    seed: Seed<'_>,
    b: usize,
    adj: &mut AdjointsVec<f64, Q>,
) -> (Range<usize>, Vec<[f64; Q]>) {
    let k = seed.directions(ys.len());
    let dirs = b * Q..((b + 1) * Q).min(k);
    let seeds = seed.adjoints::<Q>(ys, &dirs);
    rec.sweep_vec_into(&seeds, adj);
    (dirs, xs.iter().map(|&x| adj.wrt(x)).collect())
}

/// ⌈k/Q⌉ vector sweeps of one recording, each filling Q rows of `Wᵀ·J` (k×n; the Jacobian
/// itself for the identity seed).
#[allow(clippy::too_many_arguments)]
fn reverse_blocks<const Q: usize>(
    rec: &Recording,
    xs: &[Var],
    ys: &[Var],
    seed: Seed<'_>,
    threads: bool,
    adj: &mut AdjointsVec<f64, Q>,
    out: &mut Swept,
) {
    let (n, k) = (xs.len(), seed.directions(ys.len()));
    let blocks = k.div_ceil(Q);
    out.shape(k, n);
    let matrix = &mut out.matrix;
    let mut fill = |dirs: Range<usize>, rows: &[[f64; Q]]| {
        for (j, lanes) in rows.iter().enumerate() {
            for (l, i) in dirs.clone().enumerate() {
                matrix[(i, j)] = lanes[l];
            }
        }
    };
    let may_thread = threads && blocks > 2 && rayon::current_num_threads() > 1;
    let threaded = if blocks > 0 {
        let start = may_thread.then(Instant::now);
        let (dirs, rows) = reverse_sweep(rec, xs, ys, seed, 0, adj);
        fill(dirs, &rows);
        let took = start.map(|s| s.elapsed()).unwrap_or_default();
        may_thread && worth_threads(took, blocks - 1, threads)
    } else {
        false
    };
    if threaded {
        let done = in_parallel(1..blocks, &AdjointsVec::default, &|adj, b| {
            Ok(reverse_sweep(rec, xs, ys, seed, b, adj))
        })
        .expect("a reverse sweep cannot fail");
        for (dirs, rows) in done {
            fill(dirs, &rows);
        }
    } else {
        for b in 1..blocks {
            let (dirs, rows) = reverse_sweep(rec, xs, ys, seed, b, adj);
            fill(dirs, &rows);
        }
    }
    // The recording's values: those of its last evaluation (a replay's, not the Vars').
    out.value.clear();
    out.value.extend(ys.iter().map(|&y| rec.value(y)));
    (out.sweeps, out.lanes, out.threads) = (blocks, Q, thread_count(threaded));
    out.tape = rec.stats();
}

/// `run(buffer, s)` for every `s` of `range` on rayon's pool, each split with a buffer from
/// `init`, the results in order. The closures arrive as trait objects, so that rayon's
/// machinery is compiled once per lane count rather than once per user function and lane count
/// (otherwise a large share of a build with many functions); one dynamic call per sweep
/// costs nothing beside the sweep.
fn in_parallel<B, R: Send>(
    range: Range<usize>,
    init: &(dyn Fn() -> B + Sync),
    run: &(dyn Fn(&mut B, usize) -> Result<R, Error> + Sync),
) -> Result<Vec<R>, Error> {
    range.into_par_iter().map_init(init, run).collect()
}

/// The threads sweeps ran on: rayon's pool when they were split across it.
#[inline]
fn thread_count(threaded: bool) -> usize {
    if threaded {
        rayon::current_num_threads()
    } else {
        1
    }
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
