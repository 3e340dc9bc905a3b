//! Compressed sweeps and decompression: one forward lane per column colour, one reverse adjoint
//! per row colour, one Hessian-vector product per star colour; then each structural nonzero is
//! read back from the compressed matrix.

use super::{Colouring, Pattern};
use crate::hessian::dual_sweep;
use crate::sweeps::check_declared;
use forward::DualVec;
use reverse::{AdjointsVec, Recording, Var};
use shared_ops::{Error, Function};

/// A compressed matrix `B` (rows × `k` colours, row-major) and what computed it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Compressed {
    /// `f(x)` (length m), or the gradient's value `[f(x)]` for a Hessian.
    pub value: Vec<f64>,
    /// The gradient, for a Hessian (empty otherwise).
    pub gradient: Vec<f64>,
    pub b: Vec<f64>,
    pub k: usize,
    pub sweeps: usize,
    pub lanes: usize,
}

/// Lanes for `k` colours: exactly `k` up to 4, then 8 (wider lanes are issue-12 work).
pub(crate) fn lanes_for(k: usize) -> usize {
    match k {
        0 | 1 => 1,
        2 => 2,
        3 => 3,
        4 => 4,
        _ => 8,
    }
}

macro_rules! by_lanes {
    ($k:expr, $f:ident::<N>($($arg:expr),*)) => {
        match lanes_for($k) {
            1 => $f::<1, _>($($arg),*),
            2 => $f::<2, _>($($arg),*),
            3 => $f::<3, _>($($arg),*),
            4 => $f::<4, _>($($arg),*),
            _ => $f::<8, _>($($arg),*),
        }
    };
}

/// `J·S` by forward sweeps: the columns of colour c are seeded in lane c (mod N).
pub(crate) fn forward<F: Function>(
    f: &F,
    x: &[f64],
    colours: &Colouring,
    out: &mut Compressed,
) -> Result<(), Error> {
    by_lanes!(colours.count, forward_lanes::<N>(f, x, colours, out))
}

fn forward_lanes<const N: usize, F: Function>(
    f: &F,
    x: &[f64],
    colours: &Colouring,
    out: &mut Compressed,
) -> Result<(), Error> {
    let k = colours.count;
    let mut xs: Vec<DualVec<f64, N>> = x.iter().map(|&v| DualVec::from(v)).collect();
    let sweeps = k.div_ceil(N).max(1);
    let mut m = None;
    for s in 0..sweeps {
        let lanes = s * N..((s + 1) * N).min(k);
        let seed = |xs: &mut [DualVec<f64, N>], t: f64| {
            for (x, &c) in xs.iter_mut().zip(&colours.colours) {
                if lanes.contains(&c) {
                    x.tangent[c - lanes.start] = t;
                }
            }
        };
        seed(&mut xs, 1.0);
        let ys = f.eval(&xs);
        seed(&mut xs, 0.0);
        match m {
            None => {
                check_declared(f, ys.len(), "compressed forward sweep 1")?;
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
        for (i, y) in ys.iter().enumerate() {
            for c in lanes.clone() {
                out.b[i * k + c] = y.tangent[c - lanes.start];
            }
        }
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
    match lanes_for(colours.count) {
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
    let mut seeds = Vec::new();
    for s in 0..sweeps {
        let lanes = s * Q..((s + 1) * Q).min(k);
        seeds.clear();
        for (&y, &c) in ys.iter().zip(&colours.colours) {
            if lanes.contains(&c) {
                let mut e = [0.0; Q];
                e[c - lanes.start] = 1.0;
                seeds.push((y, e));
            }
        }
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
    by_lanes!(colours.count, hessian_lanes::<N>(f, x, colours, out))
}

fn hessian_lanes<const N: usize, F: Function>(
    f: &F,
    x: &[f64],
    colours: &Colouring,
    out: &mut Compressed,
) -> Result<(), Error> {
    let (k, n) = (colours.count, x.len());
    let mut xs: Vec<DualVec<f64, N>> = x.iter().map(|&v| DualVec::from(v)).collect();
    let sweeps = k.div_ceil(N).max(1);
    out.b.clear();
    out.b.resize(n * k, 0.0);
    for s in 0..sweeps {
        let lanes = s * N..((s + 1) * N).min(k);
        let seed = |xs: &mut [DualVec<f64, N>], t: f64| {
            for (x, &c) in xs.iter_mut().zip(&colours.colours) {
                if lanes.contains(&c) {
                    x.tangent[c - lanes.start] = t;
                }
            }
        };
        seed(&mut xs, 1.0);
        let (value, adjoints, _) = dual_sweep(f, &xs)?;
        seed(&mut xs, 0.0);
        for (i, a) in adjoints.iter().enumerate() {
            for c in lanes.clone() {
                out.b[i * k + c] = a.tangent[c - lanes.start];
            }
        }
        out.value = vec![value];
        out.gradient = adjoints.iter().map(|a| a.primal).collect();
    }
    out.k = k;
    out.sweeps = sweeps;
    out.lanes = N;
    Ok(())
}

/// The nonzeros of `J` (in `p`'s order) from `J·S` (m × k): entry (i, j) is `B[i, c(j)]`.
/// Returns false if `B` holds a nonzero where no column of `p` could put one (the pattern
/// missed an entry: the function took another branch).
pub(crate) fn decompress_columns(
    p: &Pattern,
    c: &Colouring,
    b: &[f64],
    values: &mut Vec<f64>,
) -> bool {
    let k = c.count;
    values.clear();
    let mut clean = true;
    let mut used = vec![usize::MAX; k];
    for i in 0..p.rows() {
        let row = &b[i * k..(i + 1) * k];
        for &j in p.row(i) {
            values.push(row[c.colours[j]]);
            used[c.colours[j]] = i;
        }
        clean &= row.iter().zip(&used).all(|(&v, &u)| u == i || v == 0.0);
    }
    clean
}

/// The nonzeros of `J` (in `p`'s order) from `(Sᵀ·J)ᵀ` (n × k, transposed as [`reverse`]
/// stores it): entry (i, j) is `C[j, c(i)]`. `t` is `p`'s transpose, for the same check as
/// [`decompress_columns`].
pub(crate) fn decompress_rows(
    p: &Pattern,
    t: &Pattern,
    c: &Colouring,
    b: &[f64],
    values: &mut Vec<f64>,
) -> bool {
    let k = c.count;
    values.clear();
    for i in 0..p.rows() {
        values.extend(p.row(i).iter().map(|&j| b[j * k + c.colours[i]]));
    }
    let mut used = vec![usize::MAX; k];
    (0..t.rows()).all(|j| {
        for &i in t.row(j) {
            used[c.colours[i]] = j;
        }
        b[j * k..(j + 1) * k]
            .iter()
            .zip(&used)
            .all(|(&v, &u)| u == j || v == 0.0)
    })
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
