use crate::Op;
use crate::gradbench::Rng;
use reverse::checkpoint::Recurrence;

/// A recurrent layer run over a long input sequence: `h ← tanh(W·h + u·xᵢ + b)` with k units,
/// the scalar input `xᵢ = sin(i/10)` at step i, and the output `Σⱼ hⱼ` of the last state. The
/// parameters are `W` (k×k, row-major), then `u` and `b` (k each); the state is h.
///
/// On a tape a step is, per unit, one dot-product node of 2k edges, three nodes for
/// `+ u·xᵢ + b` and a tanh.
///
/// ```
/// use workloads::Rnn;
/// use reverse::checkpoint::{checkpointed_gradient, recorded_gradient};
/// let f = Rnn::new(3);
/// let (p, h0) = (f.input(), f.initial_state());
/// let g = checkpointed_gradient(&f, &p, &h0, 500, 8)?;
/// assert_eq!(g.wrt_params, recorded_gradient(&f, &p, &h0, 500)?.wrt_params);
/// # Ok::<(), reverse::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rnn {
    /// Units (the length of h).
    pub k: usize,
}

impl Rnn {
    /// The layer of k units.
    pub fn new(k: usize) -> Rnn {
        Rnn { k }
    }

    /// The benchmark parameters: W with normal entries of standard deviation 0.8/√k (so that
    /// the state neither dies out nor saturates), u and b normal.
    pub fn input(&self) -> Vec<f64> {
        let mut rng = Rng::new(31337);
        let scale = 0.8 / (self.k as f64).sqrt();
        let w = rng.normals(self.k * self.k).into_iter().map(|v| v * scale);
        w.chain(rng.normals(2 * self.k)).collect()
    }

    /// The initial state: `hⱼ = 0.1·j`.
    pub fn initial_state(&self) -> Vec<f64> {
        (0..self.k).map(|j| 0.1 * j as f64).collect()
    }
}

impl Recurrence for Rnn {
    fn sizes(&self) -> (usize, usize) {
        (self.k, self.k * (self.k + 2))
    }

    fn step<T: Op>(&self, i: usize, p: &[T], h: &[T], next: &mut [T]) {
        let k = self.k;
        let (w, ub) = p.split_at(k * k);
        let (u, b) = ub.split_at(k);
        let x = T::constant((i as f64 / 10.0).sin());
        for (j, out) in next.iter_mut().enumerate() {
            *out = (T::dot(&w[j * k..(j + 1) * k], h) + u[j] * x + b[j]).tanh();
        }
    }

    fn output<T: Op>(&self, _p: &[T], h: &[T]) -> T {
        h.iter().copied().sum()
    }
}
