//! What a forward sweep carries: the directions of a seed matrix, N lanes at a time, on input
//! buffers that are kept between calls.
//!
//! Every forward product of this crate is `J·V` for some n×k seed matrix `V`: the full
//! Jacobian (`V = I`), a compressed sparse Jacobian (`V[j, c] = 1` where column j has colour
//! c), or directions the user chose ([`jvp_matrix`](crate::jvp_matrix)). A sweep seeds the
//! tangents of directions `s·N .. (s+1)·N` in lanes `0..N`, evaluates `f`, and clears them, so
//! all of these share one sweep kernel ([`sweep`]) and one choice of lanes ([`lanes_for`]).
//! One exception: a full Jacobian in a single sweep keeps its identity seeds in the kept
//! inputs from call to call ([`Inputs::lift_identity`]).

use forward::DualVec;
use nalgebra::DMatrix;
use reverse::Var;
use std::any::Any;
use std::ops::Range;

/// Lanes per forward sweep for `k` directions: `k` itself up to 4 (no lane is wasted), 8 up
/// to 8, else 16.
///
/// Sixteen lanes take less time than 8 on the dense tanh layer and on a 2×15 block of bundle
/// adjustment, and more on Rosenbrock's gradient, which is the price of the choice; 32 lanes
/// take more everywhere (`cargo bench -p benches --bench lanes`, one thread; see
/// benches/RESULTS.md).
/// [`PreparedJacobian::with_lanes`](crate::PreparedJacobian::with_lanes) offers 32, to measure.
pub(crate) fn lanes_for(k: usize) -> usize {
    match k {
        0 | 1 => 1,
        2 => 2,
        3 => 3,
        4 => 4,
        5..=8 => 8,
        _ => 16,
    }
}

/// Lanes for `k` directions of duals recorded on a tape (forward over reverse) or adjoints of
/// a vector reverse sweep: as [`lanes_for`], at most 8 (no bench shows wider lanes paying there).
pub(crate) fn tape_lanes(k: usize) -> usize {
    lanes_for(k).min(8)
}

/// Lanes of the Hessian drivers' duals for n inputs, and adjoints of vector reverse sweeps for
/// n outputs: the narrowest of 1, 2, 4, 8 that covers n, else 8. (Forward Jacobians take
/// [`lanes_for`], which also has 3; these compile one instance fewer.)
pub(crate) fn chunk_lanes(n: usize) -> usize {
    match n {
        1 => 1,
        2 => 2,
        3..=4 => 4,
        _ => 8,
    }
}

/// The lane counts [`PreparedJacobian::with_lanes`](crate::PreparedJacobian::with_lanes)
/// accepts: those of [`lanes_for`], and 32.
pub(crate) const LANES: [usize; 7] = [1, 2, 3, 4, 8, 16, 32];

/// Calls `$f::<N, _>($args)` with N = `$lanes`, one of the counts of [`lanes_for`].
macro_rules! by_lanes {
    ($lanes:expr, $f:ident::<N>($($arg:expr),*)) => {
        match $lanes {
            1 => $f::<1, _>($($arg),*),
            2 => $f::<2, _>($($arg),*),
            3 => $f::<3, _>($($arg),*),
            4 => $f::<4, _>($($arg),*),
            8 => $f::<8, _>($($arg),*),
            _ => $f::<16, _>($($arg),*),
        }
    };
}
pub(crate) use by_lanes;

/// The columns of a seed matrix: the directions of a forward product `J·V` (`V` n×k), or of
/// a reverse product `Wᵀ·J` (`W` m×k, seeding the outputs).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Seed<'a> {
    /// `V = I`: the full Jacobian, one direction per input.
    Identity,
    /// `V[j, c] = 1` where input j has colour `colours[j]` (of `count`): a compressed
    /// Jacobian or Hessian.
    Colours { colours: &'a [usize], count: usize },
    /// A dense n×k `V`.
    Matrix(&'a DMatrix<f64>),
}

impl Seed<'_> {
    /// k, the number of directions, for n inputs.
    #[inline]
    pub fn directions(&self, n: usize) -> usize {
        match self {
            Seed::Identity => n,
            Seed::Colours { count, .. } => *count,
            Seed::Matrix(v) => v.ncols(),
        }
    }

    /// Seeds directions `dirs` (at most N of them) into lanes `0..dirs.len()` of the inputs
    /// (`on`), or puts every tangent back to zero (`!on`). Lanes beyond `dirs` stay zero, so
    /// the tail of the last sweep carries nothing.
    pub fn write<const N: usize>(&self, xs: &mut [DualVec<f64, N>], dirs: &Range<usize>, on: bool) {
        let one = if on { 1.0 } else { 0.0 };
        match self {
            Seed::Identity => {
                // Lane l < N by the zip, so no index is checked in the loop.
                for (x, l) in xs[dirs.clone()].iter_mut().zip(0..N) {
                    x.tangent[l] = one;
                }
            }
            Seed::Colours { colours, .. } => {
                for (x, &c) in xs.iter_mut().zip(colours.iter()) {
                    if dirs.contains(&c) {
                        x.tangent[c - dirs.start] = one;
                    }
                }
            }
            Seed::Matrix(v) => {
                for (j, x) in xs.iter_mut().enumerate() {
                    x.tangent = [0.0; N];
                    if on {
                        for (l, c) in dirs.clone().enumerate() {
                            x.tangent[l] = v[(j, c)];
                        }
                    }
                }
            }
        }
    }

    /// The adjoint seeds of directions `dirs` (at most Q of them) for the outputs `ys` of a
    /// reverse product `Wᵀ·J`: each output with a nonzero seed, its lanes `0..dirs.len()`.
    pub fn adjoints<const Q: usize>(
        &self,
        ys: &[Var],
        dirs: &Range<usize>,
    ) -> Vec<(Var, [f64; Q])> {
        let unit = |l: usize| {
            let mut e = [0.0; Q];
            e[l] = 1.0;
            e
        };
        match self {
            Seed::Identity => dirs
                .clone()
                .enumerate()
                .map(|(l, i)| (ys[i], unit(l)))
                .collect(),
            Seed::Colours { colours, .. } => ys
                .iter()
                .zip(colours.iter())
                .filter(|(_, c)| dirs.contains(c))
                .map(|(&y, &c)| (y, unit(c - dirs.start)))
                .collect(),
            Seed::Matrix(w) => ys
                .iter()
                .enumerate()
                .map(|(i, &y)| {
                    let mut e = [0.0; Q];
                    for (l, c) in dirs.clone().enumerate() {
                        e[l] = w[(i, c)];
                    }
                    (y, e)
                })
                .collect(),
        }
    }
}

/// A function on N-lane duals, as the sweeps call it: one trait object type per lane count, so
/// that the sweep machinery is compiled once per N rather than once per user function and N.
pub(crate) type Eval<'a, const N: usize> = &'a dyn Fn(&[DualVec<f64, N>]) -> Vec<DualVec<f64, N>>;

/// [`Eval`] that threads may share.
pub(crate) type SyncEval<'a, const N: usize> =
    &'a (dyn Fn(&[DualVec<f64, N>]) -> Vec<DualVec<f64, N>> + Sync);

/// Sweep `s` of `J·V`: directions `s·N ..` seeded, `f` evaluated, the seeds cleared. Returns
/// the directions it carried and the outputs (lane l of output i is `(J·V)[i, s·N + l]`).
pub(crate) fn sweep<const N: usize>(
    f: Eval<'_, N>,
    xs: &mut [DualVec<f64, N>],
    seed: Seed<'_>,
    s: usize,
) -> (Range<usize>, Vec<DualVec<f64, N>>) {
    let k = seed.directions(xs.len());
    let dirs = s * N..((s + 1) * N).min(k);
    let ys = with_seeds(xs, seed, dirs.clone(), f);
    (dirs, ys)
}

/// `f` of the inputs with directions `dirs` of `seed` in their lanes, the seeds cleared
/// afterwards: when `f` returns, errs or panics.
pub(crate) fn with_seeds<const N: usize, R>(
    xs: &mut [DualVec<f64, N>],
    seed: Seed<'_>,
    dirs: Range<usize>,
    f: impl FnOnce(&[DualVec<f64, N>]) -> R,
) -> R {
    seed.write(xs, &dirs, true);
    let seeded = Seeded { xs, seed, dirs };
    f(seeded.xs)
}

/// Inputs whose lanes carry the seeds of `dirs`: clears them when dropped, also when `f`
/// panics, so that kept inputs ([`Inputs`]) have zero tangents between sweeps (but for the
/// identity seeds that [`Inputs::lift_identity`] keeps on purpose).
struct Seeded<'a, const N: usize> {
    xs: &'a mut [DualVec<f64, N>],
    seed: Seed<'a>,
    dirs: Range<usize>,
}

impl<const N: usize> Drop for Seeded<'_, N> {
    fn drop(&mut self) {
        self.seed.write(self.xs, &self.dirs, false);
    }
}

/// Input buffers kept between calls, in place: the inputs as `DualVec<f64, N>` for the N of
/// the last call. A fresh buffer per call costs page faults that rival a sweep (4 MB for bundle
/// adjustment), and most callers ask again with the same N.
///
/// Between calls the tangents are zero but for two cases, which the buffer records
/// ([`Tangents`]): after [`Inputs::lift_identity`] (a whole Jacobian in one sweep, as a
/// prepared block asks for at every call) they keep the identity seeds, so that the next such
/// call writes only the primals; after [`Inputs::seeded`] (colour seeds, on every input) they
/// keep those seeds, and the next call writes every input whole, or only the primals if it
/// asks for the same seeds again.
#[derive(Default)]
pub(crate) struct Inputs {
    /// A `Vec<DualVec<f64, N>>` for the N of the last call.
    kept: Option<Box<dyn Any + Send + Sync>>,
    /// Its allocation in bytes (the box cannot tell without N).
    bytes: usize,
    /// What the kept buffer's tangents hold.
    tangents: Tangents,
}

/// What the tangents of a kept buffer hold between calls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Tangents {
    /// Zero: each [`sweep`] clears its seeds.
    #[default]
    Zero,
    /// The identity seeds of [`Inputs::lift_identity`]: lane j of input j is 1.
    Identity,
    /// Seeds written on every input by [`Inputs::seeded`], for the key it was given (a
    /// colouring's number and the range of colours in the lanes).
    Seeded(Option<(u64, usize, usize)>),
}

impl Inputs {
    /// The inputs at `x`, every tangent zero: the kept buffer if it has N lanes, else a new
    /// one (which is then kept). A kept buffer of the same length only takes the new primals
    /// if its tangents are zero, or are the identity seeds of [`Inputs::lift_identity`], which
    /// are cleared here; for a 2×15 block that is 15 stores instead of 255. After
    /// [`Inputs::seeded`] every input is written whole.
    pub fn lift<const N: usize>(&mut self, x: &[f64]) -> &mut Vec<DualVec<f64, N>> {
        let left = std::mem::take(&mut self.tangents);
        let (xs, now) = self.primals::<N>(x, left);
        if now == Tangents::Identity {
            // No driver asks one buffer for both kinds today; should one, a seed left here
            // would be a silently wrong derivative, so it is cleared.
            Seed::Identity.write(xs, &(0..x.len()), false);
        }
        xs
    }

    /// The inputs at `x` seeded for the whole Jacobian in one sweep (`x.len() ≤ N`): input j
    /// carries the unit tangent eⱼ. The seeds stay in the kept buffer for the next call, which
    /// then writes the primals alone: for a 2×15 block that saves the 30 stores of seeding and
    /// clearing. A panic in `f` leaves them in place too, which the buffer still records.
    pub fn lift_identity<const N: usize>(&mut self, x: &[f64]) -> &mut Vec<DualVec<f64, N>> {
        debug_assert!(x.len() <= N, "{} inputs in one sweep of {N} lanes", x.len());
        let left = std::mem::replace(&mut self.tangents, Tangents::Identity);
        let (xs, now) = self.primals::<N>(x, left);
        if now != Tangents::Identity {
            Seed::Identity.write(xs, &(0..x.len()), true);
        }
        xs
    }

    /// The inputs at `x` with the colours `dirs` (at most N) of `colouring` in their lanes:
    /// lane `c − dirs.start` of each input of colour c in `dirs` is 1. Each input is written
    /// whole in one pass and the seeds are left in place: colours seed every input, so seeding
    /// and then clearing would each be a pass over all of them (a 100×100 grid's 10⁴ inputs of
    /// 8 lanes are 720 KB).
    ///
    /// `colouring_number` names the colouring (a prepared object's, unchanged while the number
    /// is): called again with the number and `dirs` of the last call, on the same buffer, it
    /// writes only the primals, the seeds in place being those asked for (a sparse Jacobian in
    /// one sweep, at every call of a Newton loop).
    pub fn seeded<const N: usize>(
        &mut self,
        x: &[f64],
        colours: &[usize],
        colouring_number: Option<u64>,
        dirs: &Range<usize>,
    ) -> &mut Vec<DualVec<f64, N>> {
        debug_assert!(dirs.len() <= N, "{} directions in {N} lanes", dirs.len());
        let key = colouring_number.map(|c| (c, dirs.start, dirs.end));
        let left = std::mem::replace(&mut self.tangents, Tangents::Seeded(key));
        let (xs, kept) = self.buffer::<N>(x.len());
        if kept && key.is_some() && left == Tangents::Seeded(key) {
            for (d, &v) in xs.iter_mut().zip(x) {
                d.primal = v;
            }
            return xs;
        }
        write_whole(xs, x, |j, t| {
            let c = colours[j];
            if dirs.contains(&c) {
                t[c - dirs.start] = 1.0;
            }
        });
        xs
    }

    /// The kept buffer for n inputs, and whether it was kept (its inputs as the last call left
    /// them) rather than made anew (every input zero).
    fn buffer<const N: usize>(&mut self, n: usize) -> (&mut Vec<DualVec<f64, N>>, bool) {
        let same_lanes = (self.kept.as_ref()).is_some_and(|b| b.is::<Vec<DualVec<f64, N>>>());
        if !same_lanes {
            self.kept = Some(Box::new(Vec::<DualVec<f64, N>>::new()));
            self.bytes = 0;
        }
        let xs = (self.kept.as_mut())
            .and_then(|b| b.downcast_mut::<Vec<DualVec<f64, N>>>())
            .expect("a buffer of N lanes, just made");
        let kept = xs.len() == n;
        if !kept {
            xs.clear();
            xs.resize(n, DualVec::from(0.0));
            self.bytes = xs.capacity() * size_of::<DualVec<f64, N>>();
        }
        (xs, kept)
    }

    /// The kept buffer with the primals of `x`, and what its tangents hold now: what the last
    /// call `left` if that is zero or the identity seeds, else zero (a new buffer, or every
    /// input written whole after [`Inputs::seeded`]).
    fn primals<const N: usize>(
        &mut self,
        x: &[f64],
        left: Tangents,
    ) -> (&mut Vec<DualVec<f64, N>>, Tangents) {
        let (xs, kept) = self.buffer::<N>(x.len());
        let now = if kept { left } else { Tangents::Zero };
        if let Tangents::Seeded(_) = now {
            write_whole(xs, x, |_, _| {});
            return (xs, Tangents::Zero);
        }
        debug_assert!(
            xs.iter()
                .enumerate()
                .all(|(j, d)| d.tangent.iter().enumerate().all(|(l, &t)| {
                    t == if now == Tangents::Identity && l == j {
                        1.0
                    } else {
                        0.0
                    }
                })),
            "a seed left behind"
        );
        for (d, &v) in xs.iter_mut().zip(x) {
            d.primal = v;
        }
        (xs, now)
    }

    /// The bytes the kept buffer holds.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

/// Writes input j whole: primal `x[j]`, tangents zero, then `seed(j, tangent)` writes its
/// seeds. In place: a tangent built aside and copied in is read back by wider loads than the
/// stores of its seeds, which stalls store-to-load forwarding and slows the grid's prepared
/// sweep.
fn write_whole<const N: usize>(
    xs: &mut [DualVec<f64, N>],
    x: &[f64],
    seed: impl Fn(usize, &mut [f64; N]),
) {
    for (j, (d, &primal)) in xs.iter_mut().zip(x).enumerate() {
        d.primal = primal;
        d.tangent = [0.0; N];
        seed(j, &mut d.tangent);
    }
}
