use super::{Nary, Reduce};
use crate::{Function, Op};
use shared_ops::num_traits::Float;

/// GradBench `lse`: log-sum-exp with the max shift, `A + ln Σ exp(xᵢ − A)`, `A = max x`, written
/// from its primitives (a running maximum and a sum) as the suite asks. Its gradient is the
/// softmax (GradBench: n from 2 500 to 1 280 000).
///
/// ```
/// use workloads::{Function, gradbench::Lse};
/// let f = Lse::new(5);
/// let x = f.input();
/// let (_, g) = jacobian::gradient(&f, &x)?;
/// workloads::assert_close(&g, &Lse::gradient(&x), 1e-14, "softmax");
/// # Ok::<(), jacobian::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lse {
    /// Inputs.
    pub n: usize,
}

impl Lse {
    /// The objective of n inputs.
    pub fn new(n: usize) -> Lse {
        Lse { n }
    }

    /// The benchmark input: n uniforms in [0, 1) (GradBench: `np.random.rand(n)`).
    pub fn input(&self) -> Vec<f64> {
        super::Rng::new(31337).uniforms(self.n)
    }

    /// The objective, for any `Float` with the reductions `r`.
    pub fn objective<T: Float>(x: &[T], r: &impl Reduce<T>) -> T {
        let a = x[1..].iter().fold(x[0], |a, &b| a.max(b));
        r.sum(x.iter().map(|&xi| (xi - a).exp())).ln() + a
    }

    /// The softmax `exp(xᵢ − lse x)`: the gradient by hand.
    pub fn gradient(x: &[f64]) -> Vec<f64> {
        let y = Lse::new(x.len()).eval(x)[0];
        x.iter().map(|xi| (xi - y).exp()).collect()
    }
}

impl Function for Lse {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        vec![Lse::objective(x, &Nary)]
    }
    fn sizes(&self) -> Option<(usize, usize)> {
        Some((self.n, 1))
    }
}
