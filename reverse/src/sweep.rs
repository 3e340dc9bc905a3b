//! Adjoint sweeps: one tight loop over the nodes in reverse, `ū += ∂v/∂u · v̄`.
//!
//! Both a live [`Tape`] and a finished [`Recording`] sweep; the recording is `Send + Sync`, so
//! the sweeps of one recording can run on several threads.

use crate::tape::{Node, Tape, TapeData, misuse_foreign, recycle, take, with_tape};
use crate::var::Var;

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
#[derive(Clone, Debug, Default)]
pub struct Adjoints {
    tape: u64,
    adj: Vec<f64>,
}

impl Adjoints {
    /// The adjoint of `v` (0 for a constant, or for a node after the seeded outputs).
    /// Panics if `v` belongs to another tape.
    pub fn wrt(&self, v: Var) -> f64 {
        if v.is_constant() {
            return 0.0;
        }
        if v.tape() != self.tape {
            misuse_foreign(v.tape(), self.tape);
        }
        self.adj.get(v.index() as usize).copied().unwrap_or(0.0)
    }

    /// The adjoints of several variables, e.g. all inputs: the gradient.
    ///
    /// ```
    /// let tape = reverse::Tape::new();
    /// let x = tape.vars(&[1.0, 2.0]);
    /// let y = x[0] * x[1];
    /// assert_eq!(tape.gradient(y).wrt_all(&x), vec![2.0, 1.0]);
    /// ```
    pub fn wrt_all(&self, vs: &[Var]) -> Vec<f64> {
        vs.iter().map(|&v| self.wrt(v)).collect()
    }

    /// The adjoint of every node, by index (as long as the last seeded node).
    pub fn as_slice(&self) -> &[f64] {
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
pub struct AdjointsVec<const Q: usize> {
    tape: u64,
    adj: Vec<[f64; Q]>,
}

impl<const Q: usize> Default for AdjointsVec<Q> {
    fn default() -> Self {
        AdjointsVec {
            tape: 0,
            adj: Vec::new(),
        }
    }
}

impl<const Q: usize> AdjointsVec<Q> {
    /// The `Q` adjoints of `v` (zeros for a constant).
    pub fn wrt(&self, v: Var) -> [f64; Q] {
        if v.is_constant() {
            return [0.0; Q];
        }
        if v.tape() != self.tape {
            misuse_foreign(v.tape(), self.tape);
        }
        self.adj
            .get(v.index() as usize)
            .copied()
            .unwrap_or([0.0; Q])
    }
}

/// A finished recording: the Wengert list of a [`Tape`], detached from the thread that recorded
/// it. It can be swept any number of times, from any thread (`Send + Sync`), while a new tape
/// records. Its `Var`s can no longer take part in arithmetic.
///
/// ```
/// use reverse::Tape;
/// let tape = Tape::new();
/// let x = tape.vars(&[1.0, 2.0]);
/// let ys = [x[0] * x[1], x[0] - x[1]];
/// let rec = tape.finish();
/// let (rec, x) = (&rec, &x);
/// let rows: Vec<Vec<f64>> = std::thread::scope(|s| {
///     let handles: Vec<_> =
///         ys.iter().map(|&y| s.spawn(move || rec.gradient(y).wrt_all(x))).collect();
///     handles.into_iter().map(|h| h.join().unwrap()).collect()
/// });
/// assert_eq!(rows, vec![vec![2.0, 1.0], vec![1.0, -1.0]]);
/// ```
pub struct Recording {
    data: TapeData,
}

impl Drop for Recording {
    fn drop(&mut self) {
        recycle(core::mem::take(&mut self.data.nodes));
    }
}

impl Tape {
    /// Ends the recording and returns it, detached from this thread.
    pub fn finish(self) -> Recording {
        Recording { data: take(&self) }
    }
}

impl Recording {
    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.data.nodes.len()
    }

    /// True if nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.data.nodes.is_empty()
    }

    /// Bytes of the Wengert list (`len() × NODE_BYTES`).
    pub fn bytes(&self) -> usize {
        self.len() * crate::NODE_BYTES
    }

    fn id(&self) -> u64 {
        self.data.id
    }

    fn with_nodes<R>(&self, f: impl FnOnce(&[Node]) -> R) -> R {
        f(&self.data.nodes)
    }
}

impl Tape {
    fn with_nodes<R>(&self, f: impl FnOnce(&[Node]) -> R) -> R {
        with_tape(self.id(), |t| f(&t.nodes))
    }
}

/// The sweep methods, identical for a live tape and a finished recording.
macro_rules! sweep_methods {
    ($ty:ty, $make:literal) => {
        impl $ty {
            /// One reverse sweep seeded with `ȳ = 1`: the gradient of `y` with respect to every
            /// node.
            ///
            /// ```
            #[doc = $make]
            /// assert_eq!(t.gradient(y).wrt(x), 4.0);
            /// ```
            pub fn gradient(&self, y: Var) -> Adjoints {
                self.sweep(&[(y, 1.0)])
            }

            /// One reverse sweep from arbitrary output adjoints (a vector-Jacobian product).
            /// The recording is not consumed: sweep it again with other seeds.
            ///
            /// ```
            #[doc = $make]
            /// assert_eq!(t.sweep(&[(y, 0.5)]).wrt(x), 2.0);
            /// assert_eq!(t.sweep(&[(y, 2.0)]).wrt(x), 8.0); // replayed
            /// ```
            pub fn sweep(&self, seeds: &[(Var, f64)]) -> Adjoints {
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
            pub fn sweep_into(&self, seeds: &[(Var, f64)], out: &mut Adjoints) {
                let end = seed_end(self.id(), seeds.iter().map(|s| s.0));
                out.tape = self.id();
                out.adj.clear();
                out.adj.resize(end, 0.0);
                for &(v, s) in seeds {
                    if !v.is_constant() {
                        out.adj[v.index() as usize] += s;
                    }
                }
                self.with_nodes(|nodes| sweep_scalar(&nodes[..end], &mut out.adj));
            }

            /// One reverse sweep carrying `Q` adjoint directions at once: `Q` rows of a
            /// Jacobian for one pass over the tape. Each lane equals what
            /// [`sweep`](Self::sweep) gives for its seeds.
            ///
            /// ```
            #[doc = $make]
            /// assert_eq!(t.sweep_vec(&[(y, [1.0, 3.0])]).wrt(x), [4.0, 12.0]);
            /// ```
            pub fn sweep_vec<const Q: usize>(&self, seeds: &[(Var, [f64; Q])]) -> AdjointsVec<Q> {
                let mut out = AdjointsVec::default();
                self.sweep_vec_into(seeds, &mut out);
                out
            }

            /// [`sweep_vec`](Self::sweep_vec) into a reused buffer.
            pub fn sweep_vec_into<const Q: usize>(
                &self,
                seeds: &[(Var, [f64; Q])],
                out: &mut AdjointsVec<Q>,
            ) {
                let end = seed_end(self.id(), seeds.iter().map(|s| s.0));
                out.tape = self.id();
                out.adj.clear();
                out.adj.resize(end, [0.0; Q]);
                for &(v, s) in seeds {
                    if !v.is_constant() {
                        let a = &mut out.adj[v.index() as usize];
                        for (a, s) in a.iter_mut().zip(s) {
                            *a += s;
                        }
                    }
                }
                self.with_nodes(|nodes| sweep_lanes(&nodes[..end], &mut out.adj));
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
fn seed_end(id: u64, seeds: impl Iterator<Item = Var>) -> usize {
    let mut end = 0;
    for v in seeds {
        match v.tape() {
            0 => {}
            t if t == id => end = end.max(v.index() as usize + 1),
            t => misuse_foreign(t, id),
        }
    }
    end
}

/// The adjoint sweep. A zero adjoint or a zero partial contributes nothing (the structural-zero
/// convention of `shared_ops::rules`), so `0 · ∞` never turns into NaN.
///
/// The adjoint of node `i − 1` is carried in a register when node `i` feeds it (most nodes feed
/// the very next one): storing that contribution only to load it back one step later would put
/// a store-to-load round trip on the critical path. The additions happen in the same order as
/// in the plain loop, so the results are the same bits.
fn sweep_scalar(nodes: &[Node], adj: &mut [f64]) {
    let mut carried: Option<f64> = None;
    for i in (0..nodes.len()).rev() {
        let a = match carried.take() {
            Some(c) => {
                adj[i] = c;
                c
            }
            None => adj[i],
        };
        if a == 0.0 {
            continue;
        }
        let n = &nodes[i];
        for k in 0..2 {
            let w = n.partial[k];
            if w != 0.0 {
                let p = n.parent[k] as usize;
                if p + 1 == i {
                    carried = Some(carried.unwrap_or(adj[p]) + w * a);
                } else {
                    adj[p] += w * a;
                }
            }
        }
    }
}

/// The sweep with `Q` lanes; each lane gives exactly what [`sweep_scalar`] gives for it (the
/// same carried adjoint of node `i − 1`, the same order of additions).
fn sweep_lanes<const Q: usize>(nodes: &[Node], adj: &mut [[f64; Q]]) {
    let mut carried: Option<[f64; Q]> = None;
    for i in (0..nodes.len()).rev() {
        let a = match carried.take() {
            Some(c) => {
                adj[i] = c;
                c
            }
            None => adj[i],
        };
        if a == [0.0; Q] {
            continue;
        }
        let n = &nodes[i];
        for k in 0..2 {
            let w = n.partial[k];
            if w == 0.0 {
                continue;
            }
            let p = n.parent[k] as usize;
            let mut t = if p + 1 == i {
                carried.unwrap_or(adj[p])
            } else {
                adj[p]
            };
            if w.is_finite() {
                // w · 0 = 0 here, so the plain loop keeps the zero convention and vectorises.
                for (t, &a) in t.iter_mut().zip(&a) {
                    *t += w * a;
                }
            } else {
                for (t, &a) in t.iter_mut().zip(&a) {
                    *t += if a == 0.0 { 0.0 } else { w * a };
                }
            }
            if p + 1 == i {
                carried = Some(t);
            } else {
                adj[p] = t;
            }
        }
    }
}
