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

/// A compressed matrix `B` (rows × `k` colours, row-major), what computed it, and the lanes'
/// input buffer kept for the next call.
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

/// `J·S` by forward sweeps: the columns of colour c are seeded in lane c (mod N).
pub(crate) fn forward<F: Function>(
    f: &F,
    x: &[f64],
    colours: &Colouring,
    out: &mut Compressed,
) -> Result<(), Error> {
    by_lanes!(
        lanes_for(colours.count),
        forward_sweeps::<N>(f, x, colours, out)
    )
}

fn forward_sweeps<const N: usize, F: Function>(
    f: &F,
    x: &[f64],
    colours: &Colouring,
    out: &mut Compressed,
) -> Result<(), Error> {
    let eval = |xs: &[DualVec<f64, N>]| f.eval(xs);
    compressed_sweeps::<N>(&eval, f.sizes(), x, colours, out)
}

/// [`forward_sweeps`] behind a trait object: compiled once per lane count.
fn compressed_sweeps<const N: usize>(
    f: Eval<'_, N>,
    sizes: Option<(usize, usize)>,
    x: &[f64],
    colours: &Colouring,
    out: &mut Compressed,
) -> Result<(), Error> {
    let k = colours.count;
    let xs = out.inputs.lift::<N>(x);
    let sweeps = k.div_ceil(N).max(1);
    let mut m = None;
    for s in 0..sweeps {
        let (lanes, ys) = lanes::sweep(f, xs, Seed::Colours(colours), s);
        match m {
            None => {
                check_sizes(sizes, ys.len(), "compressed forward sweep 1")?;
                m = Some(ys.len());
                out.value.clear();
                out.value.extend(ys.iter().map(|y| y.primal));
                out.b.clear();
                out.b.resize(ys.len() * k, 0.0);
            }
            Some(m) if m != ys.len() => {
                return Err(Error::OutputLength {
                    expected: m,
                    found: ys.len(),
                    during: format!("compressed forward sweep {}", s + 1),
                });
            }
            Some(_) => {}
        }
        copy_lanes(&mut out.b, k, &lanes, &ys);
    }
    out.k = k;
    out.sweeps = sweeps;
    out.lanes = N;
    Ok(())
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

/// How a compressed Jacobian is read back: for each nonzero (in the pattern's order) the entry
/// of the compressed matrix that holds it, and the entries that no nonzero reads, which must be
/// zero if the pattern holds (a nonzero there means the function took another branch).
pub(crate) struct Gather {
    /// 4 bytes per nonzero: the table is read at every call.
    slots: Vec<u32>,
    unread: Vec<u32>,
}

impl Gather {
    /// For `J·S`, m × k row-major: nonzero (i, j) is `B[i, c(j)]`.
    pub(crate) fn column_slots<'a>(
        p: &'a Pattern,
        c: &'a Colouring,
    ) -> impl Iterator<Item = usize> + 'a {
        let k = c.count;
        (0..p.rows()).flat_map(move |i| p.row(i).iter().map(move |&j| i * k + c.colours[j]))
    }

    /// For `(Sᵀ·J)ᵀ`, n × k row-major (as [`reverse`] stores it): nonzero (i, j) is
    /// `C[j, c(i)]`.
    pub(crate) fn row_slots<'a>(
        p: &'a Pattern,
        c: &'a Colouring,
    ) -> impl Iterator<Item = usize> + 'a {
        let k = c.count;
        (0..p.rows()).flat_map(move |i| p.row(i).iter().map(move |&j| j * k + c.colours[i]))
    }

    /// The table of [`column_slots`](Self::column_slots), with the check.
    pub(crate) fn columns(p: &Pattern, c: &Colouring) -> Gather {
        Gather::new(Self::column_slots(p, c).collect(), p.rows() * c.count)
    }

    /// The table of [`row_slots`](Self::row_slots), with the check.
    pub(crate) fn rows(p: &Pattern, c: &Colouring) -> Gather {
        Gather::new(Self::row_slots(p, c).collect(), p.cols() * c.count)
    }

    /// Reads `values` from `b` by `slots` without a table or a check: a one-shot call, right
    /// after detection at this point.
    pub(crate) fn read_once(slots: impl Iterator<Item = usize>, b: &[f64], values: &mut [f64]) {
        for (v, s) in values.iter_mut().zip(slots) {
            *v = b[s];
        }
    }

    fn new(slots: Vec<usize>, entries: usize) -> Gather {
        let index = |s: usize| u32::try_from(s).expect("a compressed matrix of < 2³² entries");
        let mut read = vec![false; entries];
        for &s in &slots {
            read[s] = true;
        }
        let unread = (0..entries).filter(|&s| !read[s]).map(index).collect();
        let slots = slots.into_iter().map(index).collect();
        Gather { slots, unread }
    }

    /// Writes the nonzeros into `values`; returns false if an unread entry of `b` is nonzero.
    pub(crate) fn read(&self, b: &[f64], values: &mut [f64]) -> bool {
        for (v, &s) in values.iter_mut().zip(&self.slots) {
            *v = b[s as usize];
        }
        self.unread.iter().all(|&s| b[s as usize] == 0.0)
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
