//! Adjoint sweeps over a live [`Tape`] or a finished [`Recording`], and their results.
//!
//! The recording is `Send + Sync`, so the sweeps of one recording can run on several threads.

pub(crate) mod kernel;
mod scalar;
pub(crate) mod schedule;

use crate::tape::Var;
use crate::tape::live::foreign;
use crate::tape::{Recording, Tape};
use shared_ops::Op;
use shared_ops::memory;

/// The adjoints of one reverse sweep: `∂(seeded output)/∂(node)` for every node of the tape.
///
/// ```
/// let tape = reverse::Tape::new();
/// let x = tape.var(3.0);
/// let y = x * x;
/// let adj = tape.gradient(y);
/// assert_eq!(adj.wrt(x), 6.0);
/// assert_eq!(adj.wrt(reverse::Var::constant(1.0)), 0.0); // constants have no adjoint
/// ```
#[derive(Clone, Debug)]
pub struct Adjoints<T = f64> {
    tape: u64,
    adj: Vec<T>,
}

impl<T> Default for Adjoints<T> {
    fn default() -> Self {
        Adjoints {
            tape: 0,
            adj: Vec::new(),
        }
    }
}

impl<T: Op> Adjoints<T> {
    /// The adjoint of `v`, `∂y/∂v` for the seeded `y` (0 for a constant, or for a node after
    /// the seeded outputs). Panics if `v` belongs to another tape.
    ///
    /// ```
    /// let tape = reverse::Tape::new();
    /// let x = tape.var(2.0);
    /// let s = x - 1.0;
    /// let g = tape.gradient(s * x);
    /// assert_eq!((g.wrt(x), g.wrt(s)), (3.0, 2.0)); // s + x, and x
    /// ```
    pub fn wrt(&self, v: Var<T>) -> T {
        if v.is_constant() {
            return T::zero();
        }
        if v.tape() != self.tape {
            foreign(v.tape(), self.tape);
        }
        self.adj
            .get(v.index() as usize)
            .copied()
            .unwrap_or_else(T::zero)
    }

    /// The adjoints of several variables, e.g. all inputs: the gradient.
    ///
    /// ```
    /// let tape = reverse::Tape::new();
    /// let x = tape.vars(&[1.0, 2.0]);
    /// let y = x[0] * x[1];
    /// assert_eq!(tape.gradient(y).wrt_all(&x), vec![2.0, 1.0]);
    /// ```
    pub fn wrt_all(&self, vs: &[Var<T>]) -> Vec<T> {
        vs.iter().map(|&v| self.wrt(v)).collect()
    }

    /// The adjoint of every node, by index (as long as the last seeded node).
    pub fn as_slice(&self) -> &[T] {
        &self.adj
    }
}

/// The adjoints of a vector sweep: `Q` adjoint directions carried at once.
///
/// ```
/// use reverse::Float;
/// let tape = reverse::Tape::new();
/// let x = tape.var(2.0);
/// let (y1, y2) = (x * x, x.sin());
/// let adj = tape.sweep_vec(&[(y1, [1.0, 0.0]), (y2, [0.0, 1.0])]);
/// assert_eq!(adj.wrt(x), [4.0, 2.0_f64.cos()]);
/// ```
#[derive(Clone, Debug)]
pub struct AdjointsVec<T, const Q: usize> {
    tape: u64,
    adj: Vec<[T; Q]>,
    /// The nodes the last sweep reached: the adjoints from it on are zero. (A compiled sweep
    /// keeps one per node of the recording, so that the next sweep zeroes only these.)
    live: usize,
}

impl<T, const Q: usize> Default for AdjointsVec<T, Q> {
    fn default() -> Self {
        AdjointsVec {
            tape: 0,
            adj: Vec::new(),
            live: 0,
        }
    }
}

impl<T: Op, const Q: usize> AdjointsVec<T, Q> {
    /// The `Q` adjoints of `v` (zeros for a constant). Panics as [`Adjoints::wrt`].
    pub fn wrt(&self, v: Var<T>) -> [T; Q] {
        if v.is_constant() {
            return [T::zero(); Q];
        }
        if v.tape() != self.tape {
            foreign(v.tape(), self.tape);
        }
        self.adj
            .get(v.index() as usize)
            .copied()
            .unwrap_or([T::zero(); Q])
    }
}

/// The sweep methods, identical for a live tape and a finished recording.
macro_rules! sweep_methods {
    ($ty:ident, $make:literal) => {
        impl<T: Op> $ty<T> {
            /// One reverse sweep seeded with `ȳ = 1`: the gradient of `y` with respect to every
            /// node.
            ///
            /// ```
            #[doc = $make]
            /// assert_eq!(t.gradient(y).wrt(x), 4.0);
            /// ```
            pub fn gradient(&self, y: Var<T>) -> Adjoints<T> {
                self.sweep(&[(y, T::one())])
            }

            /// One reverse sweep from arbitrary output adjoints (a vector-Jacobian product).
            /// The recording is not consumed: sweep it again with other seeds.
            ///
            /// ```
            #[doc = $make]
            /// assert_eq!(t.sweep(&[(y, 0.5)]).wrt(x), 2.0);
            /// assert_eq!(t.sweep(&[(y, 2.0)]).wrt(x), 8.0); // replayed
            /// ```
            pub fn sweep(&self, seeds: &[(Var<T>, T)]) -> Adjoints<T> {
                let mut out = Adjoints::default();
                self.sweep_into(seeds, &mut out);
                out
            }

            /// [`sweep`](Self::sweep) into a reused buffer: no allocation once it is large
            /// enough.
            ///
            /// ```
            #[doc = $make]
            /// let mut adj = reverse::Adjoints::default();
            /// t.sweep_into(&[(y, 1.0)], &mut adj);
            /// assert_eq!(adj.wrt(x), 4.0);
            /// ```
            pub fn sweep_into(&self, seeds: &[(Var<T>, T)], out: &mut Adjoints<T>) {
                let end = seed_end(self.id(), seeds.iter().map(|s| s.0));
                out.tape = self.id();
                out.adj.clear();
                out.adj.resize(end, T::zero());
                for &(v, s) in seeds {
                    if !v.is_constant() {
                        out.adj[v.index() as usize] += s;
                    }
                }
                self.with_data(|d| scalar::scalar(d, &mut out.adj));
            }

            /// The adjoints of `xs` only, after one sweep from `seeds` (e.g. a gradient with
            /// respect to the inputs). The adjoint of every node is computed in a buffer that
            /// this thread keeps for the next sweep (see [`spare_limit`](shared_ops::memory::spare_limit)),
            /// so nothing proportional to the tape is allocated.
            ///
            /// ```
            #[doc = $make]
            /// assert_eq!(t.sweep_wrt(&[(y, 1.0)], &[x]), vec![4.0]);
            /// ```
            pub fn sweep_wrt(&self, seeds: &[(Var<T>, T)], xs: &[Var<T>]) -> Vec<T> {
                let mut adj = Adjoints {
                    tape: 0,
                    adj: memory::take::<Vec<T>>(),
                };
                let out = self.sweep_wrt_with(seeds, xs, &mut adj);
                memory::give(adj.adj);
                out
            }

            /// [`sweep_wrt`](Self::sweep_wrt) with the adjoints of every node computed in
            /// `work`, a buffer the caller keeps (a prepared object's own): no allocation once
            /// it is large enough, and nothing taken from the thread's kept buffers. What
            /// `work` holds afterwards is unspecified.
            ///
            /// ```
            #[doc = $make]
            /// let mut work = reverse::Adjoints::default();
            /// assert_eq!(t.sweep_wrt_with(&[(y, 1.0)], &[x], &mut work), vec![4.0]);
            /// ```
            pub fn sweep_wrt_with(
                &self,
                seeds: &[(Var<T>, T)],
                xs: &[Var<T>],
                adj: &mut Adjoints<T>,
            ) -> Vec<T> {
                self.sweep_into(seeds, adj);
                adj.wrt_all(xs)
            }

            /// One reverse sweep carrying `Q` adjoint directions at once: `Q` rows of a
            /// Jacobian for one pass over the tape. Each lane equals what
            /// [`sweep`](Self::sweep) gives for its seeds.
            ///
            /// ```
            #[doc = $make]
            /// assert_eq!(t.sweep_vec(&[(y, [1.0, 3.0])]).wrt(x), [4.0, 12.0]);
            /// ```
            pub fn sweep_vec<const Q: usize>(
                &self,
                seeds: &[(Var<T>, [T; Q])],
            ) -> AdjointsVec<T, Q> {
                let mut out = AdjointsVec::default();
                self.sweep_vec_into(seeds, &mut out);
                out
            }

            /// [`sweep_vec`](Self::sweep_vec) into a reused buffer.
            pub fn sweep_vec_into<const Q: usize>(
                &self,
                seeds: &[(Var<T>, [T; Q])],
                out: &mut AdjointsVec<T, Q>,
            ) {
                let end = seed_end(self.id(), seeds.iter().map(|s| s.0));
                // Zeroes what the last sweep of this recording reached, and up to `end`.
                let reached = if out.tape == self.id() {
                    out.live
                } else {
                    out.adj.len()
                };
                let stale = reached.max(end).min(out.adj.len());
                out.adj[..stale].fill([T::zero(); Q]);
                if out.adj.len() < end {
                    out.adj.resize(end, [T::zero(); Q]);
                }
                (out.tape, out.live) = (self.id(), end);
                for &(v, s) in seeds {
                    if !v.is_constant() {
                        let a = &mut out.adj[v.index() as usize];
                        for (a, s) in a.iter_mut().zip(s) {
                            *a += s;
                        }
                    }
                }
                self.with_data(|d| scalar::vector(d, &mut out.adj, end));
            }
        }
    };
}

sweep_methods!(
    Tape,
    "let t = reverse::Tape::new();\nlet x = t.var(2.0);\nlet y = x * x;"
);
sweep_methods!(
    Recording,
    "let tape = reverse::Tape::new();\nlet x = tape.var(2.0);\nlet y = x * x;\nlet t = tape.finish();"
);

/// One past the last seeded node: nodes after it cannot reach a seed, so the sweep skips them.
/// Panics for a seed of another tape.
fn seed_end<T: Op>(id: u64, seeds: impl Iterator<Item = Var<T>>) -> usize {
    let mut end = 0;
    for v in seeds {
        match v.tape() {
            0 => {}
            t if t == id => end = end.max(v.index() as usize + 1),
            t => foreign(t, id),
        }
    }
    end
}
