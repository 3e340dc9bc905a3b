//! Compressed sweeps and decompression: one forward lane per column colour, one reverse adjoint
//! per row colour, one Hessian-vector product per star colour; then each structural nonzero is
//! read back from the compressed matrix.

use super::{Colouring, Pattern};
use crate::hessian::dual_sweep;
use crate::lanes::{self, Eval, Inputs, Seed, by_lanes, lanes_for, tape_lanes};
use crate::sweeps::check_sizes;
use forward::DualVec;
use reverse::{AdjointsVec, Recording, Var};
use shared_ops::{Error, Function};
use std::cell::RefCell;
use std::ops::Range;

/// What compressed sweeps computed: `f(x)`, the compressed matrix `B` of reverse sweeps and
/// Hessian products (rows × `k` colours, row-major; forward sweeps are read lane by lane and
/// leave it empty), and the lanes' input buffer kept for the next call.
#[derive(Default)]
pub(crate) struct Compressed {
    /// `f(x)` (length m), or the gradient's value `[f(x)]` for a Hessian.
    pub value: Vec<f64>,
    /// The gradient, for a Hessian (empty otherwise).
    pub gradient: Vec<f64>,
    pub b: Vec<f64>,
    pub k: usize,
    pub sweeps: usize,
    pub lanes: usize,
    /// The lanes' input buffer, kept for the next call.
    inputs: Inputs,
}

thread_local! {
    /// The buffers of the last one-shot sparse Jacobian on this thread, for the next one: fresh
    /// ones cost a page fault per 4 KiB at every call (with n = m = 10⁴ and 8 lanes, 1.3 MB of
    /// inputs and compressed matrix).
    static SPARE: RefCell<Compressed> = RefCell::new(Compressed::default());
}

/// Spare buffers above this many bytes are given back rather than kept.
const SPARE_LIMIT: usize = 64 << 20;

impl Compressed {
    /// The buffers the last one-shot call on this thread left ([`Compressed::keep`]), or new
    /// ones.
    pub fn spare() -> Compressed {
        SPARE.with(|s| std::mem::take(&mut *s.borrow_mut()))
    }

    /// Keeps the buffers for the next one-shot call on this thread, unless they hold more than
    /// 64 MiB. What a call reads from them is overwritten first: the inputs' primals and
    /// every entry of `b`.
    pub fn keep(self) {
        let bytes = 8 * (self.b.capacity() + self.value.capacity() + self.gradient.capacity())
            + self.inputs.bytes();
        if bytes <= SPARE_LIMIT {
            SPARE.with(|s| *s.borrow_mut() = self);
        }
    }
}

/// Copies the tangents of one sweep into the columns `lanes` of `b` (rows × `k`, row-major).
fn copy_lanes<const N: usize>(
    b: &mut [f64],
    k: usize,
    lanes: &Range<usize>,
    ys: &[DualVec<f64, N>],
) {
    for (row, y) in b.chunks_exact_mut(k).zip(ys) {
        row[lanes.clone()].copy_from_slice(&y.tangent[..lanes.len()]);
    }
}

/// How the nonzeros are read out of compressed results: by a [`Gather`] table, which also
/// checks that no entry outside the pattern is nonzero, or, right after detection at this
/// point (a one-shot call), straight from the pattern and colouring, with no table and no
/// check.
#[derive(Clone, Copy)]
pub(crate) enum Read<'a> {
    Table(&'a Gather),
    Once(&'a Pattern),
}

/// `J·S` by forward sweeps: the columns of colour c are seeded in lane c (mod N). Each sweep's
/// nonzeros are read from its outputs' lanes into `values` (in the pattern's order) as it
/// ends: the compressed matrix is never stored. Returns whether every entry outside the
/// pattern was zero (always true for [`Read::Once`]).
pub(crate) fn forward<F: Function>(
    f: &F,
    x: &[f64],
    colours: &Colouring,
    out: &mut Compressed,
    read: Read<'_>,
    values: &mut [f64],
) -> Result<bool, Error> {
    by_lanes!(
        lanes_for(colours.count),
        forward_sweeps::<N>(f, x, colours, out, read, values)
    )
}

fn forward_sweeps<const N: usize, F: Function>(
    f: &F,
    x: &[f64],
    colours: &Colouring,
    out: &mut Compressed,
    read: Read<'_>,
    values: &mut [f64],
) -> Result<bool, Error> {
    let eval = |xs: &[DualVec<f64, N>]| f.eval(xs);
    compressed_sweeps::<N>(&eval, f.sizes(), x, colours, out, read, values)
}

/// [`forward_sweeps`] behind a trait object: compiled once per lane count.
fn compressed_sweeps<const N: usize>(
    f: Eval<'_, N>,
    sizes: Option<(usize, usize)>,
    x: &[f64],
    colours: &Colouring,
    out: &mut Compressed,
    read: Read<'_>,
    values: &mut [f64],
) -> Result<bool, Error> {
    let k = colours.count;
    let xs = out.inputs.lift::<N>(x);
    let sweeps = k.div_ceil(N).max(1);
    let rows = match read {
        Read::Table(g) => g.rows,
        Read::Once(p) => p.rows(),
    };
    let mut clean = true;
    for s in 0..sweeps {
        let (lanes, ys) = lanes::sweep(f, xs, Seed::Colours(colours), s);
        let during = || format!("compressed forward sweep {}", s + 1);
        check_sizes(sizes, ys.len(), &during())?;
        if ys.len() != rows {
            return Err(Error::OutputLength {
                expected: rows,
                found: ys.len(),
                during: during(),
            });
        }
        if s == 0 {
            out.value.clear();
            out.value.extend(ys.iter().map(|y| y.primal));
        }
        clean &= match read {
            Read::Table(g) => g.read_lanes(s, &ys, values),
            Read::Once(p) => {
                read_lanes_once(p, colours, &lanes, &ys, values);
                true
            }
        };
    }
    out.k = k;
    out.sweeps = sweeps;
    out.lanes = N;
    Ok(clean)
}

/// The nonzeros of the colours `lanes` from one sweep's outputs, without a table: nonzero
/// (i, j) of colour c in `lanes` is lane `c − lanes.start` of output i.
fn read_lanes_once<const N: usize>(
    p: &Pattern,
    colours: &Colouring,
    lanes: &Range<usize>,
    ys: &[DualVec<f64, N>],
    values: &mut [f64],
) {
    let (offsets, indices) = (p.offsets(), p.indices());
    for (y, row) in ys.iter().zip(offsets.windows(2)) {
        let (at, columns) = (&mut values[row[0]..row[1]], &indices[row[0]..row[1]]);
        for (v, &j) in at.iter_mut().zip(columns) {
            let lane = colours.colours[j].wrapping_sub(lanes.start);
            if lane < lanes.len() {
                *v = y.tangent[lane];
            }
        }
    }
}

/// `Sᵀ·J` by reverse sweeps of one recording, stored transposed (n × colours): the outputs of
/// row colour c are seeded in adjoint c (mod Q).
pub(crate) fn reverse(
    rec: &Recording,
    xs: &[Var],
    ys: &[Var],
    colours: &Colouring,
    out: &mut Compressed,
) {
    match tape_lanes(colours.count) {
        1 => reverse_lanes::<1>(rec, xs, ys, colours, out),
        2 => reverse_lanes::<2>(rec, xs, ys, colours, out),
        3 => reverse_lanes::<3>(rec, xs, ys, colours, out),
        4 => reverse_lanes::<4>(rec, xs, ys, colours, out),
        _ => reverse_lanes::<8>(rec, xs, ys, colours, out),
    }
}

fn reverse_lanes<const Q: usize>(
    rec: &Recording,
    xs: &[Var],
    ys: &[Var],
    colours: &Colouring,
    out: &mut Compressed,
) {
    let (k, n) = (colours.count, xs.len());
    let sweeps = k.div_ceil(Q);
    out.value.clear();
    out.value.extend(ys.iter().map(|&y| rec.value(y)));
    out.b.clear();
    out.b.resize(n * k, 0.0);
    let mut adj = AdjointsVec::default();
    for s in 0..sweeps {
        let lanes = s * Q..((s + 1) * Q).min(k);
        let seeds = Seed::Colours(colours).adjoints::<Q>(ys, &lanes);
        rec.sweep_vec_into(&seeds, &mut adj);
        for (j, &x) in xs.iter().enumerate() {
            let a = adj.wrt(x);
            for c in lanes.clone() {
                out.b[j * k + c] = a[c - lanes.start];
            }
        }
    }
    out.k = k;
    out.sweeps = sweeps;
    out.lanes = Q;
}

/// `H·S` by forward-over-reverse sweeps: the inputs of star colour c carry tangent c (mod N).
pub(crate) fn hessian<F: Function>(
    f: &F,
    x: &[f64],
    colours: &Colouring,
    out: &mut Compressed,
) -> Result<(), Error> {
    if colours.count <= 1 {
        // One colour: a single Hessian-vector product along the all-ones vector, by the
        // one-tangent dual of `hvp` (measured 1.6× faster than a one-lane `DualVec` tape on
        // k-means, whose Hessian is diagonal).
        let p = crate::hvp(f, x, &vec![1.0; x.len()])?;
        (out.value, out.gradient, out.b) = (vec![p.value], p.gradient, p.product);
        (out.k, out.sweeps, out.lanes) = (1, 1, 1);
        return Ok(());
    }
    match tape_lanes(colours.count) {
        1 => hessian_lanes::<1, F>(f, x, colours, out),
        2 => hessian_lanes::<2, F>(f, x, colours, out),
        3 => hessian_lanes::<3, F>(f, x, colours, out),
        4 => hessian_lanes::<4, F>(f, x, colours, out),
        _ => hessian_lanes::<8, F>(f, x, colours, out),
    }
}

fn hessian_lanes<const N: usize, F: Function>(
    f: &F,
    x: &[f64],
    colours: &Colouring,
    out: &mut Compressed,
) -> Result<(), Error> {
    let (k, n) = (colours.count, x.len());
    let xs = out.inputs.lift::<N>(x);
    let sweeps = k.div_ceil(N).max(1);
    out.b.clear();
    out.b.resize(n * k, 0.0);
    let seed = Seed::Colours(colours);
    for s in 0..sweeps {
        let lanes = s * N..((s + 1) * N).min(k);
        // Cleared also when f errs or panics: the inputs are kept for the next call.
        let (value, adjoints, _) =
            lanes::with_seeds(xs, seed, lanes.clone(), |xs| dual_sweep(f, xs))?;
        copy_lanes(&mut out.b, k, &lanes, &adjoints);
        if s == 0 {
            out.value = vec![value];
            out.gradient = adjoints.iter().map(|a| a.primal).collect();
        }
    }
    out.k = k;
    out.sweeps = sweeps;
    out.lanes = N;
    Ok(())
}

/// How compressed results are read back: for each nonzero (in the pattern's order) the entry
/// that holds it, and the entries that no nonzero reads, which must be zero if the pattern
/// holds (a nonzero there means the function took another branch).
///
/// Forward sweeps are read lane by lane from each sweep's outputs, one part per sweep (entry
/// `i·N + l`: lane l of output i); reverse sweeps from the n × k compressed matrix (entry
/// `j·k + c`), in one part.
pub(crate) struct Gather {
    /// Outputs of a forward sweep (the rows of the pattern).
    rows: usize,
    /// Entries per row of what a part reads: N lanes, or k colours.
    width: usize,
    parts: Vec<Part>,
}

/// What one sweep's results give.
struct Part {
    /// The values this part writes, by index; `None`: every value, in order.
    targets: Option<Vec<u32>>,
    /// For each, the entry it reads (4 bytes per nonzero: the table is read at every call).
    entries: Vec<u32>,
    /// Entries no nonzero reads: zero while the pattern holds.
    unread: Vec<u32>,
}

fn index(s: usize) -> u32 {
    u32::try_from(s).expect("compressed results of < 2³² entries")
}

impl Gather {
    /// For `J·S` by forward sweeps of `lanes_for(k)` lanes: nonzero (i, j) of colour c is lane
    /// `c mod N` of output i in sweep `c / N`.
    pub(crate) fn columns(p: &Pattern, c: &Colouring) -> Gather {
        let (m, k) = (p.rows(), c.count);
        let n = lanes_for(k);
        let sweeps = k.div_ceil(n).max(1);
        let mut parts: Vec<Part> = (0..sweeps)
            .map(|_| Part {
                targets: (sweeps > 1).then(Vec::new),
                entries: Vec::new(),
                unread: Vec::new(),
            })
            .collect();
        let mut read = vec![vec![false; m * n]; sweeps];
        let mut v = 0;
        for i in 0..m {
            for &j in p.row(i) {
                let (s, lane) = (c.colours[j] / n, c.colours[j] % n);
                let part = &mut parts[s];
                part.entries.push(index(i * n + lane));
                if let Some(t) = &mut part.targets {
                    t.push(index(v));
                }
                read[s][i * n + lane] = true;
                v += 1;
            }
        }
        for (s, (part, read)) in parts.iter_mut().zip(&read).enumerate() {
            let used = n.min(k - s * n);
            part.unread = (0..m * n)
                .filter(|&e| e % n < used && !read[e])
                .map(index)
                .collect();
        }
        Gather {
            rows: m,
            width: n,
            parts,
        }
    }

    /// For `(Sᵀ·J)ᵀ`, n × k row-major (as [`reverse`] stores it): nonzero (i, j) is
    /// `C[j, c(i)]`.
    pub(crate) fn rows(p: &Pattern, c: &Colouring) -> Gather {
        let k = c.count;
        let entries: Vec<u32> = Self::row_slots(p, c).map(index).collect();
        let mut read = vec![false; p.cols() * k];
        for &e in &entries {
            read[e as usize] = true;
        }
        let unread = (0..read.len()).filter(|&e| !read[e]).map(index).collect();
        Gather {
            rows: p.rows(),
            width: k,
            parts: vec![Part {
                targets: None,
                entries,
                unread,
            }],
        }
    }

    /// For `(Sᵀ·J)ᵀ`: the entry of each nonzero, in the pattern's order.
    pub(crate) fn row_slots<'a>(
        p: &'a Pattern,
        c: &'a Colouring,
    ) -> impl Iterator<Item = usize> + 'a {
        let k = c.count;
        (0..p.rows()).flat_map(move |i| p.row(i).iter().map(move |&j| j * k + c.colours[i]))
    }

    /// Reads `values` from `b` by `slots` without a table or a check: a one-shot call, right
    /// after detection at this point.
    pub(crate) fn read_once(slots: impl Iterator<Item = usize>, b: &[f64], values: &mut [f64]) {
        for (v, s) in values.iter_mut().zip(slots) {
            *v = b[s];
        }
    }

    /// Writes the nonzeros of a [`rows`](Self::rows) table into `values` from the compressed
    /// matrix `b`; returns false if an unread entry of `b` is nonzero.
    pub(crate) fn read(&self, b: &[f64], values: &mut [f64]) -> bool {
        self.parts[0].read(|e| b[e], values)
    }

    /// Writes the nonzeros that sweep `s` of a [`columns`](Self::columns) table carries into
    /// `values`, from the sweep's outputs; returns false if an unread lane is nonzero.
    fn read_lanes<const N: usize>(
        &self,
        s: usize,
        ys: &[DualVec<f64, N>],
        values: &mut [f64],
    ) -> bool {
        assert_eq!(self.width, N, "a table made for {} lanes", self.width);
        self.parts[s].read(|e| ys[e / N].tangent[e % N], values)
    }
}

impl Part {
    fn read(&self, get: impl Fn(usize) -> f64, values: &mut [f64]) -> bool {
        match &self.targets {
            None => {
                for (v, &e) in values.iter_mut().zip(&self.entries) {
                    *v = get(e as usize);
                }
            }
            Some(targets) => {
                for (&t, &e) in targets.iter().zip(&self.entries) {
                    values[t as usize] = get(e as usize);
                }
            }
        }
        self.unread.iter().all(|&e| get(e as usize) == 0.0)
    }
}

/// The nonzeros of a Hessian (in `p`'s order) from `H·S` (n × k) and a star colouring: the
/// diagonal is `B[i, c(i)]`; an off-diagonal (i, j) is `B[i, c(j)]` if j is the only neighbour
/// of i of its colour, else `B[j, c(i)]` (a star colouring makes one of the two hold). Both
/// triangles are read from the same entry, so the result is exactly symmetric.
pub(crate) fn decompress_star(p: &Pattern, c: &Colouring, b: &[f64], values: &mut Vec<f64>) {
    let k = c.count;
    let n = p.rows();
    // count[c] = neighbours of the current row with colour c (row i's, while i is current).
    let mut count = vec![0u32; k];
    let mut unique: Vec<bool> = Vec::with_capacity(p.nnz());
    for i in 0..n {
        for &j in p.row(i) {
            count[c.colours[j]] += 1;
        }
        unique.extend(p.row(i).iter().map(|&j| count[c.colours[j]] == 1));
        for &j in p.row(i) {
            count[c.colours[j]] = 0;
        }
    }
    let entry = |i: usize, j: usize| p.row(i).binary_search(&j).map(|q| p.offsets()[i] + q);
    values.clear();
    for i in 0..n {
        for &j in p.row(i) {
            let (lo, hi) = (i.min(j), i.max(j));
            // Read (lo, hi) and (hi, lo) alike: from row lo if hi is unique there, else row hi.
            let v = if i == j {
                b[i * k + c.colours[i]]
            } else if unique[entry(lo, hi).expect("a symmetric pattern")] {
                b[lo * k + c.colours[hi]]
            } else {
                b[hi * k + c.colours[lo]]
            };
            values.push(v);
        }
    }
}
