//! Adjoint sweeps: one tight loop over the nodes in reverse, `ū += ∂v/∂u · v̄`.

use crate::tape::{Node, Tape, misuse_foreign, with_tape};
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
        self.check(v);
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

    fn check(&self, v: Var) {
        if v.tape() != self.tape {
            crate::tape::STACK.with(|s| misuse_foreign(v.tape(), self.tape, &s.borrow()));
        }
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

impl<const Q: usize> AdjointsVec<Q> {
    /// The `Q` adjoints of `v` (zeros for a constant).
    pub fn wrt(&self, v: Var) -> [f64; Q] {
        if v.is_constant() {
            return [0.0; Q];
        }
        if v.tape() != self.tape {
            crate::tape::STACK.with(|s| misuse_foreign(v.tape(), self.tape, &s.borrow()));
        }
        self.adj
            .get(v.index() as usize)
            .copied()
            .unwrap_or([0.0; Q])
    }
}

impl Tape {
    /// One reverse sweep seeded with `ȳ = 1`: the gradient of `y` with respect to every node.
    ///
    /// ```
    /// let tape = reverse::Tape::new();
    /// let x = tape.var(2.0);
    /// let y = x * x;
    /// assert_eq!(tape.gradient(y).wrt(x), 4.0);
    /// ```
    pub fn gradient(&self, y: Var) -> Adjoints {
        self.sweep(&[(y, 1.0)])
    }

    /// One reverse sweep from arbitrary output adjoints (a vector-Jacobian product).
    /// The recording is not consumed: sweep it again with other seeds.
    ///
    /// ```
    /// let tape = reverse::Tape::new();
    /// let x = tape.var(2.0);
    /// let (a, b) = (x * x, x * 3.0);
    /// assert_eq!(tape.sweep(&[(a, 1.0), (b, 2.0)]).wrt(x), 10.0);
    /// assert_eq!(tape.sweep(&[(b, 1.0)]).wrt(x), 3.0); // replayed
    /// ```
    pub fn sweep(&self, seeds: &[(Var, f64)]) -> Adjoints {
        let mut out = Adjoints::default();
        self.sweep_into(seeds, &mut out);
        out
    }

    /// [`sweep`](Tape::sweep) into a reused buffer: no allocation once it is large enough.
    ///
    /// ```
    /// let tape = reverse::Tape::new();
    /// let x = tape.vars(&[1.0, 2.0]);
    /// let ys = [x[0] * x[1], x[0] + x[1]];
    /// let mut adj = reverse::Adjoints::default();
    /// let mut jac = Vec::new();
    /// for y in ys {
    ///     tape.sweep_into(&[(y, 1.0)], &mut adj);
    ///     jac.push(adj.wrt_all(&x));
    /// }
    /// assert_eq!(jac, vec![vec![2.0, 1.0], vec![1.0, 1.0]]);
    /// ```
    pub fn sweep_into(&self, seeds: &[(Var, f64)], out: &mut Adjoints) {
        let end = self.seed_end(seeds.iter().map(|s| s.0));
        out.tape = self.id();
        out.adj.clear();
        out.adj.resize(end, 0.0);
        for &(v, s) in seeds {
            if !v.is_constant() {
                out.adj[v.index() as usize] += s;
            }
        }
        with_tape(self.id(), |t| sweep_scalar(&t.nodes[..end], &mut out.adj));
    }

    /// One reverse sweep carrying `Q` adjoint directions at once: `Q` rows of a Jacobian for
    /// one pass over the tape.
    pub fn sweep_vec<const Q: usize>(&self, seeds: &[(Var, [f64; Q])]) -> AdjointsVec<Q> {
        let end = self.seed_end(seeds.iter().map(|s| s.0));
        let mut adj = vec![[0.0; Q]; end];
        for &(v, s) in seeds {
            if !v.is_constant() {
                let a = &mut adj[v.index() as usize];
                for l in 0..Q {
                    a[l] += s[l];
                }
            }
        }
        with_tape(self.id(), |t| sweep_lanes(&t.nodes[..end], &mut adj));
        AdjointsVec {
            tape: self.id(),
            adj,
        }
    }

    /// One past the last seeded node: nodes after it cannot reach a seed, so the sweep skips
    /// them. Panics for a seed of another tape.
    fn seed_end(&self, seeds: impl Iterator<Item = Var>) -> usize {
        seeds
            .filter_map(|v| self.index_of(v))
            .map(|i| i as usize + 1)
            .max()
            .unwrap_or(0)
    }
}

/// The adjoint sweep. A zero adjoint or a zero partial contributes nothing (the structural-zero
/// convention of `shared_ops::rules`), so `0 · ∞` never turns into NaN.
fn sweep_scalar(nodes: &[Node], adj: &mut [f64]) {
    for i in (0..nodes.len()).rev() {
        let a = adj[i];
        if a == 0.0 {
            continue;
        }
        let n = &nodes[i];
        for k in 0..2 {
            let w = n.partial[k];
            if w != 0.0 {
                adj[n.parent[k] as usize] += w * a;
            }
        }
    }
}

/// The sweep with `Q` lanes; each lane gives exactly what [`sweep_scalar`] gives for it.
fn sweep_lanes<const Q: usize>(nodes: &[Node], adj: &mut [[f64; Q]]) {
    for i in (0..nodes.len()).rev() {
        let a = adj[i];
        if a.iter().all(|&x| x == 0.0) {
            continue;
        }
        let n = &nodes[i];
        for k in 0..2 {
            let w = n.partial[k];
            if w != 0.0 {
                let p = &mut adj[n.parent[k] as usize];
                for l in 0..Q {
                    p[l] += if a[l] == 0.0 { 0.0 } else { w * a[l] };
                }
            }
        }
    }
}
