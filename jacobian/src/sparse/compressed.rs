//! Compressed sweeps and decompression: one forward lane per column colour, one reverse adjoint
//! per row colour, one Hessian-vector product per star colour; then each structural nonzero is
//! read back from the compressed matrix.

use super::{Colouring, Pattern};
use crate::hessian::dual_sweep;
use crate::lanes::{Eval, Inputs, Seed, by_lanes, chunk_lanes, lanes_for, tape_lanes};
use crate::sweeps::{Work, check_sizes};
use forward::DualVec;
use reverse::{AdjointsVec, Recording, Var};
use shared_ops::memory::Reusable;
use shared_ops::{Error, Function};
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
    /// The reverse sweeps' adjoints, kept for the next call.
    work: Work,
}

/// The buffers of a one-shot sparse Jacobian wait in the thread's kept buffers
/// (`shared_ops::memory`) for the next one: fresh ones cost a page fault per 4 KiB at every
/// call. Emptying leaves them as they are: what a call reads from them is overwritten first
/// (the inputs' primals and every entry of `b`), and the inputs' tangents are zero between
/// sweeps ([`Inputs`]).
impl Reusable for Compressed {
    fn bytes(&self) -> usize {
        8 * (self.b.capacity() + self.value.capacity() + self.gradient.capacity())
            + self.inputs.bytes()
    }
    fn shrink(&mut self) {}
    fn empty(&mut self) {}
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

/// How the nonzeros are read out of forward sweeps: nonzero (i, j) of colour c is lane
/// `c − s·N` of output i in sweep `s = c / N`. With a [`Gather::Columns`] table, each output's
/// other lanes are checked to be zero; right after detection at this point (a one-shot call)
/// there is nothing to check.
#[derive(Clone, Copy)]
pub(crate) enum Read<'a> {
    Checked(&'a Gather),
    Once,
}

/// `J·S` by forward sweeps: the columns of colour c are seeded in lane c (mod N). Each sweep's
/// nonzeros are read from its outputs' lanes into `values` (in the pattern's order) as it
/// ends: the compressed matrix is never stored. Returns whether every lane outside the
/// pattern was zero (always true for [`Read::Once`]).
pub(crate) fn forward<F: Function>(
    f: &F,
    x: &[f64],
    p: &Pattern,
    seeds: Seeds<'_>,
    out: &mut Compressed,
    read: Read<'_>,
    values: &mut [f64],
) -> Result<bool, Error> {
    by_lanes!(
        lanes_for(seeds.0.count),
        forward_sweeps::<N>(f, x, p, seeds, out, read, values)
    )
}

/// The colouring that seeds the sweeps (columns, or a Hessian's star colouring), and its number
/// while it does not change (a prepared object's; see [`Inputs::seeded`]).
pub(crate) type Seeds<'a> = (&'a Colouring, Option<u64>);

fn forward_sweeps<const N: usize, F: Function>(
    f: &F,
    x: &[f64],
    p: &Pattern,
    seeds: Seeds<'_>,
    out: &mut Compressed,
    read: Read<'_>,
    values: &mut [f64],
) -> Result<bool, Error> {
    let eval = |xs: &[DualVec<f64, N>]| f.eval(xs);
    compressed_sweeps::<N>(&eval, f.sizes(), x, p, seeds, out, read, values)
}

/// [`forward_sweeps`] behind a trait object: compiled once per lane count.
#[allow(clippy::too_many_arguments)]
fn compressed_sweeps<const N: usize>(
    f: Eval<'_, N>,
    sizes: Option<(usize, usize)>,
    x: &[f64],
    p: &Pattern,
    (colours, colouring_number): Seeds<'_>,
    out: &mut Compressed,
    read: Read<'_>,
    values: &mut [f64],
) -> Result<bool, Error> {
    let (k, m) = (colours.count, p.rows());
    let sweeps = k.div_ceil(N).max(1);
    let mut clean = true;
    for s in 0..sweeps {
        let lanes = s * N..((s + 1) * N).min(k);
        let ys = f(out
            .inputs
            .seeded::<N>(x, &colours.colours, colouring_number, &lanes));
        check_sizes(sizes, ys.len(), "a compressed forward sweep")?;
        if ys.len() != m {
            return Err(Error::OutputChanged {
                first: m,
                found: ys.len(),
                during: format!("compressed forward sweep {}", s + 1),
            });
        }
        // The first sweep's values are read in the same pass over its outputs.
        let value = (s == 0).then(|| {
            out.value.clear();
            &mut out.value
        });
        let to = To {
            lanes,
            values,
            value,
        };
        let offsets = p.offsets();
        clean &= match read {
            Read::Checked(Gather::Columns { colours, masks }) => {
                let masks = &masks[s * m..(s + 1) * m];
                let row = |r: Range<usize>| colours[r].iter().map(|&c| c as usize);
                read_sweep(offsets, row, &ys, to, Some(masks))
            }
            Read::Checked(Gather::Rows { .. }) => unreachable!("a table of reverse sweeps"),
            Read::Once => {
                let (indices, colours) = (p.indices(), &colours.colours);
                let row = |r: Range<usize>| indices[r].iter().map(|&j| colours[j]);
                read_sweep(offsets, row, &ys, to, None)
            }
        };
    }
    out.k = k;
    out.sweeps = sweeps;
    out.lanes = N;
    Ok(clean)
}

/// Where one sweep's outputs go: the nonzeros of the colours `lanes` into `values`, and the
/// outputs' values into `value` (the first sweep's).
struct To<'a> {
    lanes: Range<usize>,
    values: &'a mut [f64],
    value: Option<&'a mut Vec<f64>>,
}

/// Reads one sweep's outputs in one pass: nonzero q of row i, of colour c in `to.lanes` (the
/// colours of row i's nonzeros are `row_colours(offsets[i]..offsets[i + 1])`), is lane
/// `c − to.lanes.start` of output i. With `masks` (per output, the lanes its nonzeros read),
/// returns whether every other lane of the sweep is zero (a NaN is not).
fn read_sweep<const N: usize, I: Iterator<Item = usize>>(
    offsets: &[usize],
    row_colours: impl Fn(Range<usize>) -> I,
    ys: &[DualVec<f64, N>],
    to: To<'_>,
    masks: Option<&[u32]>,
) -> bool {
    let To {
        lanes,
        values,
        mut value,
    } = to;
    let used = lanes.len();
    // The sweep's lanes (the others carry no seed).
    let lanes_used = u32::MAX >> (32 - used.max(1));
    if let Some(value) = value.as_mut() {
        value.resize(ys.len(), 0.0);
    }
    let mut clean = true;
    for (i, (y, row)) in ys.iter().zip(offsets.windows(2)).enumerate() {
        if let Some(value) = value.as_mut() {
            value[i] = y.primal;
        }
        let (row, lane) = (row[0]..row[1], |c: usize| c.wrapping_sub(lanes.start));
        for (c, v) in row_colours(row.clone()).zip(&mut values[row]) {
            if let Some(&t) = y.tangent[..used].get(lane(c)) {
                *v = t;
            }
        }
        if let Some(masks) = masks {
            let nonzero = (y.tangent.iter().enumerate())
                .fold(0, |bits, (l, &t)| bits | (u32::from(t != 0.0) << l));
            clean &= nonzero & lanes_used & !masks[i] == 0;
        }
    }
    clean
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
    // The lanes a compiled vector sweep takes (see `Recording::compile_lanes`).
    match chunk_lanes(colours.count) {
        1 => reverse_lanes::<1>(rec, xs, ys, colours, out),
        2 => reverse_lanes::<2>(rec, xs, ys, colours, out),
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
    let adj: &mut AdjointsVec<f64, Q> = out.work.lanes();
    for s in 0..sweeps {
        let lanes = s * Q..((s + 1) * Q).min(k);
        let seeds = Seed::Colours {
            colours: &colours.colours,
            count: colours.count,
        }
        .adjoints::<Q>(ys, &lanes);
        rec.sweep_vec_into(&seeds, adj);
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
    seeds: Seeds<'_>,
    out: &mut Compressed,
) -> Result<(), Error> {
    let colours = seeds.0;
    if colours.count <= 1 {
        // One colour: a single Hessian-vector product along the all-ones vector, by the
        // one-tangent dual of `hvp` (faster than a one-lane `DualVec` tape on k-means, whose
        // Hessian is diagonal).
        let p = crate::hvp(f, x, &vec![1.0; x.len()])?;
        (out.value, out.gradient, out.b) = (vec![p.value], p.gradient, p.product);
        (out.k, out.sweeps, out.lanes) = (1, 1, 1);
        return Ok(());
    }
    match tape_lanes(colours.count) {
        1 => hessian_lanes::<1, F>(f, x, seeds, out),
        2 => hessian_lanes::<2, F>(f, x, seeds, out),
        3 => hessian_lanes::<3, F>(f, x, seeds, out),
        4 => hessian_lanes::<4, F>(f, x, seeds, out),
        _ => hessian_lanes::<8, F>(f, x, seeds, out),
    }
}

fn hessian_lanes<const N: usize, F: Function>(
    f: &F,
    x: &[f64],
    (colours, colouring_number): Seeds<'_>,
    out: &mut Compressed,
) -> Result<(), Error> {
    let (k, n) = (colours.count, x.len());
    let sweeps = k.div_ceil(N).max(1);
    out.b.clear();
    out.b.resize(n * k, 0.0);
    for s in 0..sweeps {
        let lanes = s * N..((s + 1) * N).min(k);
        let xs = out
            .inputs
            .seeded::<N>(x, &colours.colours, colouring_number, &lanes);
        let (value, adjoints, _) = dual_sweep(f, xs)?;
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

/// What the check of a prepared object's sweeps reads: which entries of the compressed results
/// hold nonzeros, so that a nonzero anywhere else (the function took another branch) is seen.
pub(crate) enum Gather {
    /// Forward sweeps of N lanes, read by [`Read::Checked`]: each nonzero's colour, and per
    /// sweep and output a mask of the lanes its nonzeros read (sweep-major, m per sweep).
    Columns { colours: Vec<u32>, masks: Vec<u32> },
    /// Reverse sweeps' n × k compressed matrix (as [`reverse`] stores it): the entry of each
    /// nonzero in the pattern's order (nonzero (i, j) is `C[j, c(i)]`), and the entries no
    /// nonzero reads.
    Rows { entries: Vec<u32>, unread: Vec<u32> },
}

fn index(s: usize) -> u32 {
    u32::try_from(s).expect("compressed results of < 2³² entries")
}

impl Gather {
    /// The table of forward sweeps of `lanes_for(k)` lanes.
    pub(crate) fn columns(p: &Pattern, c: &Colouring) -> Gather {
        let (m, n) = (p.rows(), lanes_for(c.count));
        assert!(n <= 32, "a lane mask of 32 bits, {n} lanes");
        let sweeps = c.count.div_ceil(n).max(1);
        let colours: Vec<u32> = p.indices().iter().map(|&j| index(c.colours[j])).collect();
        let mut masks = vec![0; sweeps * m];
        for (i, row) in p.offsets().windows(2).enumerate() {
            for &colour in &colours[row[0]..row[1]] {
                let colour = colour as usize;
                masks[colour / n * m + i] |= 1 << (colour % n);
            }
        }
        Gather::Columns { colours, masks }
    }

    /// The table of reverse sweeps.
    pub(crate) fn rows(p: &Pattern, c: &Colouring) -> Gather {
        let entries: Vec<u32> = Self::row_slots(p, c).map(index).collect();
        let mut read = vec![false; p.cols() * c.count];
        for &e in &entries {
            read[e as usize] = true;
        }
        let unread = (0..read.len()).filter(|&e| !read[e]).map(index).collect();
        Gather::Rows { entries, unread }
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
        let Gather::Rows { entries, unread } = self else {
            unreachable!("a table of forward sweeps read as reverse ones")
        };
        for (v, &e) in values.iter_mut().zip(entries) {
            *v = b[e as usize];
        }
        unread.iter().all(|&e| b[e as usize] == 0.0)
    }
}

/// The nonzeros of a Hessian (in `p`'s order) from `H·S` (n × k) and a star colouring: the
/// diagonal is `B[i, c(i)]`; an off-diagonal (i, j) is `B[i, c(j)]` if j is the only neighbour
/// of i of its colour, else `B[j, c(i)]` (a star colouring makes one of the two hold). Both
/// triangles are read from the same entry, so the result is exactly symmetric.
pub(crate) fn decompress_star(p: &Pattern, c: &Colouring, b: &[f64], values: &mut [f64]) {
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
    let mut out = values.iter_mut();
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
            *out.next().expect("one value per nonzero") = v;
        }
    }
}
