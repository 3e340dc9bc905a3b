//! Objectives of the GradBench suite (the successor of ADBench), written once over [`Op`] so that
//! the same code is the plain `f64` function, a forward sweep and a reverse recording.
//!
//! Each is a [`Function`](crate::Function) with one output whose inputs are the parameters the
//! suite differentiates with respect to; the constant data live in the struct, generated
//! deterministically by [`Rng`] from the sizes (GradBench draws them with numpy; the
//! distributions are the same, the numbers are not).
//!
//! Each objective is written once, over `num_traits::Float` and a [`Reduce`] that says how to
//! sum and take dot products: [`Nary`] for our numbers (one node each on a tape), and, for
//! number types that have neither `Sum` nor an n-ary dot product (echidna's, in the benches'
//! `peers` feature), [`Folds`].
//!
//! | workload | objective | inputs | GradBench eval |
//! |---|---|---|---|
//! | [`Llsq`] | ½ Σᵢ (sᵢ − Σⱼ xⱼ tᵢʲ)² | the m coefficients | `llsq` |
//! | [`Lse`] | max x + ln Σ exp(xᵢ − max x) | the n values | `lse` |
//! | [`Det`] | det A by expansion along first rows of minors | the ℓ² entries | `det` |
//! | [`Gmm`] | log posterior of a Gaussian mixture with a Wishart prior | α, μ, q, l | `gmm` |
//! | [`Kmeans`] | Σᵢ minⱼ ‖Cⱼ − Pᵢ‖², and a Newton step (gradient / Hessian diagonal) | the k·d centroid coordinates | `kmeans` |
//! | [`Lstm`] | the loss of an LSTM of l layers of b units over c characters | 8lb + 3b weights and biases | `lstm` |
//! | [`Ode`] | yₙ₋₁(2) of y₀' = x₀, yᵢ' = xᵢyᵢ₋₁ by s RK4 steps (a [`Recurrence`](reverse::Recurrence), and as a whole a `Function`) | the n coefficients x | `ode` |
//!
//! [`Op`]: crate::Op

use shared_ops::Op;
use shared_ops::num_traits::Float;

mod det;
mod gmm;
mod kmeans;
mod llsq;
mod lse;
mod lstm;
mod ode;

pub use det::Det;
pub use gmm::Gmm;
pub use kmeans::Kmeans;
pub use llsq::Llsq;
pub use lse::Lse;
pub use lstm::Lstm;
pub use ode::Ode;

/// How an objective sums and takes dot products.
pub trait Reduce<T> {
    /// The sum of the items, in order (zero for none).
    fn sum(&self, items: impl Iterator<Item = T>) -> T;
    /// `Σ aᵢ·bᵢ`, in order.
    fn dot(&self, a: &[T], b: &[T]) -> T;
}

/// Our reductions: `Sum` and [`Op::dot`], each one n-ary node on a tape.
///
/// ```
/// use workloads::gradbench::{Nary, Reduce};
/// assert_eq!(Nary.dot(&[1.0, 2.0], &[3.0, 4.0]), 11.0);
/// assert_eq!(Nary.sum([1.0, 2.0].into_iter()), 3.0);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Nary;

impl<T: Op> Reduce<T> for Nary {
    fn sum(&self, items: impl Iterator<Item = T>) -> T {
        items.sum()
    }
    fn dot(&self, a: &[T], b: &[T]) -> T {
        T::dot(a, b)
    }
}

/// Reductions by folds of binary operations, for any `Float` (echidna's numbers, which have no
/// `Sum`): the same order of operations as [`Nary`].
///
/// ```
/// use workloads::gradbench::{Folds, Reduce};
/// assert_eq!(Folds.dot(&[1.0, 2.0], &[3.0, 4.0]), 11.0);
/// assert_eq!(Folds.sum(std::iter::empty::<f64>()), 0.0);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Folds;

impl<T: Float> Reduce<T> for Folds {
    fn sum(&self, mut items: impl Iterator<Item = T>) -> T {
        let first = items.next().unwrap_or_else(T::zero);
        items.fold(first, |s, v| s + v)
    }
    fn dot(&self, a: &[T], b: &[T]) -> T {
        self.sum(a.iter().zip(b).map(|(&x, &y)| x * y))
    }
}

/// An `f64` constant of any `Float` type.
fn c<T: Float>(v: f64) -> T {
    T::from(v).expect("an f64 constant")
}

/// A small deterministic generator (SplitMix64) for the workloads' data: uniform numbers in
/// [0, 1) and standard normals (Box–Muller).
///
/// ```
/// let mut a = workloads::gradbench::Rng::new(31337);
/// let mut b = workloads::gradbench::Rng::new(31337);
/// let u = a.uniform();
/// assert!((0.0..1.0).contains(&u));
/// assert_eq!(u, b.uniform());
/// ```
#[derive(Clone, Debug)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng { state: seed }
    }

    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1), with 53 random bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A standard normal.
    pub fn normal(&mut self) -> f64 {
        let u = 1.0 - self.uniform(); // in (0, 1]
        let v = self.uniform();
        (-2.0 * u.ln()).sqrt() * (2.0 * core::f64::consts::PI * v).cos()
    }

    /// `n` uniforms.
    pub fn uniforms(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.uniform()).collect()
    }

    /// `n` standard normals.
    pub fn normals(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.normal()).collect()
    }
}
