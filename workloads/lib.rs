//! Workloads shared by the benchmarks (and checked by tests before they are timed).
//!
//! The workloads, each written once, generic over [`Op`], so that the same code runs as the
//! plain `f64` function (the baseline every table is divided by), with forward duals and on the
//! reverse tape:
//!
//! * **Rosenbrock** (`Rⁿ → R`, a loss): [`rosenbrock`], the [`Rosenbrock`] [`Function`], its input
//!   [`rosenbrock_input`] and the hand-written gradient [`rosenbrock_gradient`], the floor no AD
//!   tool can beat. A gradient is one reverse sweep, or ⌈n/8⌉ chunked forward sweeps.
//! * **Dense tanh layer** (`Rⁿ → Rᵐ`): [`DenseTanh`], `f(x) = tanh(A·sin x)`, with its input
//!   [`dense_input`] and analytic Jacobian [`DenseTanh::jacobian`]. Wide (n ≫ m: more inputs
//!   than outputs) favours reverse mode, tall (n ≪ m) forward mode.
//! * **GradBench objectives** ([`gradbench`]): least squares, log-sum-exp, determinant by minors,
//!   Gaussian mixture, k-means, and the long loop of an ODE solved by Runge–Kutta: the workloads
//!   of the cross-tool suite.
//! * **Recurrent layer** ([`Rnn`]): `h ← tanh(W·h + u·xᵢ + b)` over a long sequence, with the ODE
//!   the workload of checkpointing ([`reverse::checkpoint`]).
//! * **Sparse Jacobians** ([`sparse`]): a tridiagonal system, the Bratu problem on a grid, and
//!   GradBench's bundle adjustment: Jacobians with a few nonzeros per row at any size, the
//!   workloads of colourings and compressed sweeps.
//!
//! ```
//! use workloads::{Rosenbrock, rosenbrock_gradient, rosenbrock_input};
//!
//! let x = rosenbrock_input(5);
//! let (_, g) = jacobian::gradient(&Rosenbrock::new(5), &x)?;
//! let mut want = vec![0.0; 5];
//! rosenbrock_gradient(&x, &mut want);
//! workloads::assert_close(&g, &want, 1e-12, "Rosenbrock gradient");
//! # Ok::<(), jacobian::Error>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod gradbench;
mod rnn;
mod second_order;
pub mod sparse;

pub use rnn::Rnn;
pub use second_order::{SinQuad, rosenbrock_hessian};

pub use shared_ops::{Function, Op};

/// Rosenbrock's function, `f(x) = Σ_{i<n-1} (1 − xᵢ)² + 100 (xᵢ₊₁ − xᵢ²)²`, for any number type.
///
/// It is 0 for fewer than two inputs. Each term costs about ten elementary operations, so
/// a reverse tape holds about 10n nodes. The constant 100 is an `f64` (`b * b * 100.0`), so that
/// forward mode forms no zero tangent for it.
///
/// ```
/// assert_eq!(workloads::rosenbrock(&[1.0_f64; 4]), 0.0);
/// assert_eq!(workloads::rosenbrock(&[0.0_f64, 0.0]), 1.0);
/// ```
pub fn rosenbrock<T: Op>(x: &[T]) -> T {
    x.windows(2)
        .map(|w| {
            let a = T::one() - w[0];
            let b = w[1] - w[0] * w[0];
            a * a + b * b * 100.0
        })
        .sum()
}

/// The benchmark input for Rosenbrock: `xᵢ = 0.5 + 0.01·(i mod 100)`.
///
/// ```
/// let x = workloads::rosenbrock_input(102);
/// assert_eq!((x[0], x[1], x[100], x[101]), (0.5, 0.51, 0.5, 0.51));
/// ```
pub fn rosenbrock_input(n: usize) -> Vec<f64> {
    (0..n).map(|i| 0.5 + 0.01 * (i % 100) as f64).collect()
}

/// The analytic gradient of [`rosenbrock`], written by hand: the floor for every AD tool.
///
/// With `aᵢ = 1 − xᵢ` and `bᵢ = xᵢ₊₁ − xᵢ²`, term i adds `−2aᵢ − 400·xᵢ·bᵢ` to `gᵢ` and
/// `200·bᵢ` to `gᵢ₊₁`. It is written as two passes without a read-after-write between
/// iterations, so that the compiler vectorises both, as it does the plain function.
///
/// # Panics
///
/// If `g` does not have the length of `x`.
///
/// ```
/// let mut g = [0.0; 2];
/// workloads::rosenbrock_gradient(&[0.0, 0.0], &mut g);
/// assert_eq!(g, [-2.0, 0.0]);
/// ```
pub fn rosenbrock_gradient(x: &[f64], g: &mut [f64]) {
    assert_eq!(x.len(), g.len(), "gradient length");
    let Some(last) = g.last_mut() else { return };
    *last = 0.0;
    // ∂/∂xᵢ of term i, for i < n − 1.
    for (gi, w) in g.iter_mut().zip(x.windows(2)) {
        let b = w[1] - w[0] * w[0];
        *gi = -2.0 * (1.0 - w[0]) - 400.0 * w[0] * b;
    }
    // ∂/∂xᵢ₊₁ of term i.
    for (gi, w) in g[1..].iter_mut().zip(x.windows(2)) {
        *gi += 200.0 * (w[1] - w[0] * w[0]);
    }
}

/// `(f(x), ∇f(x)·v)` for [`rosenbrock`], written by hand in one loop: what one forward sweep
/// must compute, with no number type in the way (the floor for a jvp, as
/// [`rosenbrock_gradient`] is for a gradient).
///
/// With `aᵢ = 1 − xᵢ` and `bᵢ = xᵢ₊₁ − xᵢ²`, term i adds `aᵢ² + 100 bᵢ²` to the value and
/// `−2aᵢ·vᵢ + 200 bᵢ·(vᵢ₊₁ − 2xᵢvᵢ)` to the directional derivative.
///
/// # Panics
///
/// If `v` does not have the length of `x`.
///
/// ```
/// // At 0 along e₀: f = 1, ∂f/∂x₀ = −2.
/// assert_eq!(workloads::rosenbrock_jvp(&[0.0, 0.0], &[1.0, 0.0]), (1.0, -2.0));
/// ```
pub fn rosenbrock_jvp(x: &[f64], v: &[f64]) -> (f64, f64) {
    assert_eq!(x.len(), v.len(), "tangent length");
    let (mut value, mut tangent) = (0.0, 0.0);
    for (w, t) in x.windows(2).zip(v.windows(2)) {
        let (a, b) = (1.0 - w[0], w[1] - w[0] * w[0]);
        value += a * a + b * b * 100.0;
        tangent += -2.0 * a * t[0] + 200.0 * b * (t[1] - 2.0 * w[0] * t[0]);
    }
    (value, tangent)
}

/// Rosenbrock's function as a [`Function`] with a declared size `(n, 1)`.
///
/// ```
/// use workloads::{Function, Rosenbrock};
/// let f = Rosenbrock::new(3);
/// assert_eq!(f.sizes(), Some((3, 1)));
/// assert_eq!(f.eval(&[1.0_f64, 1.0, 1.0]), vec![0.0]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rosenbrock {
    /// Number of inputs.
    pub n: usize,
}

impl Rosenbrock {
    /// Rosenbrock's function of `n` inputs.
    pub fn new(n: usize) -> Rosenbrock {
        Rosenbrock { n }
    }
}

impl Function for Rosenbrock {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        vec![rosenbrock(x)]
    }
    fn sizes(&self) -> Option<(usize, usize)> {
        Some((self.n, 1))
    }
}

/// A dense tanh layer, `f(x) = tanh(A·sin x)` with `A` m×n, `A_ij = sin(i + 2j)/n` (from 0).
///
/// The evaluation takes n sines, m·n multiply-adds (each matrix entry lifted with
/// [`Op::constant`]) and m tanh: on a reverse tape, about 2·m·n nodes.
///
/// ```
/// use workloads::{DenseTanh, Function};
/// let f = DenseTanh::new(2, 3);
/// assert_eq!(f.sizes(), Some((2, 3)));
/// assert_eq!(f.a[1 * 2 + 1], 3.0_f64.sin() / 2.0); // A₁₁ = sin(1 + 2)/n
/// assert_eq!(f.eval(&[0.0_f64, 0.0]), vec![0.0; 3]);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct DenseTanh {
    /// The matrix A, row-major: `a[i * n + j] = A_ij`.
    pub a: Vec<f64>,
    /// Inputs (columns of A).
    pub n: usize,
    /// Outputs (rows of A).
    pub m: usize,
}

impl DenseTanh {
    /// The layer with n inputs and m outputs.
    pub fn new(n: usize, m: usize) -> DenseTanh {
        let a = (0..m)
            .flat_map(|i| (0..n).map(move |j| ((i + 2 * j) as f64).sin() / n as f64))
            .collect();
        DenseTanh { a, n, m }
    }

    /// The analytic Jacobian, row-major m×n: `J_ij = A_ij·cos xⱼ / cosh² zᵢ`, zᵢ = Σⱼ A_ij sin xⱼ
    /// (tanh′ as 1/cosh², not 1 − fᵢ², which cancels where tanh saturates).
    ///
    /// # Panics
    ///
    /// If `x` does not have n entries.
    ///
    /// ```
    /// use workloads::DenseTanh;
    /// let f = DenseTanh::new(2, 1);
    /// assert_eq!(f.jacobian(&[0.0, 0.0]), f.a); // at 0: J = A
    /// ```
    pub fn jacobian(&self, x: &[f64]) -> Vec<f64> {
        assert_eq!(x.len(), self.n, "input length");
        let mut j = vec![0.0; self.m * self.n];
        for i in 0..self.m {
            let row = &self.a[i * self.n..(i + 1) * self.n];
            let z: f64 = row.iter().zip(x).map(|(a, x)| a * x.sin()).sum();
            let dy = z.cosh().powi(-2);
            for k in 0..self.n {
                j[i * self.n + k] = dy * self.a[i * self.n + k] * x[k].cos();
            }
        }
        j
    }
}

impl Function for DenseTanh {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let s: Vec<T> = x.iter().map(|v| v.sin()).collect();
        self.a
            .chunks_exact(self.n)
            .map(|row| row.iter().zip(&s).map(|(&a, &s)| s * a).sum::<T>().tanh())
            .collect()
    }
    fn sizes(&self) -> Option<(usize, usize)> {
        Some((self.n, self.m))
    }
}

/// The benchmark input for the dense layer: `xⱼ = 0.1·(j mod 17) − 0.3`.
///
/// ```
/// let x = workloads::dense_input(18);
/// assert_eq!((x[0], x[17]), (-0.3, -0.3));
/// ```
pub fn dense_input(n: usize) -> Vec<f64> {
    (0..n).map(|j| 0.1 * (j % 17) as f64 - 0.3).collect()
}

/// The largest relative difference `|got − want| / max(|got|, |want|)` over two slices
/// (0 where the entries are equal, ∞ where one is NaN or infinite and they differ).
///
/// # Panics
///
/// If the lengths differ.
///
/// ```
/// assert_eq!(workloads::max_rel_diff(&[1.0, 0.0], &[1.0, 0.0]), 0.0);
/// assert_eq!(workloads::max_rel_diff(&[2.0], &[1.0]), 0.5);
/// ```
pub fn max_rel_diff(got: &[f64], want: &[f64]) -> f64 {
    assert_eq!(got.len(), want.len(), "lengths differ");
    got.iter()
        .zip(want)
        .map(|(&g, &w)| {
            if g == w {
                0.0
            } else if !g.is_finite() || !w.is_finite() {
                f64::INFINITY // a NaN, or unequal infinities
            } else {
                (g - w).abs() / g.abs().max(w.abs())
            }
        })
        .fold(0.0, f64::max)
}

/// Asserts that `got` matches `want` entry by entry to `rel` relative ([`max_rel_diff`]).
///
/// The benchmarks call it on every peer's result before timing it, so that a wrong answer is
/// never timed.
///
/// # Panics
///
/// If the lengths differ or an entry is off by more than `rel`, naming `what`.
///
/// ```
/// workloads::assert_close(&[1.0, 2.0], &[1.0, 2.0 + 1e-15], 1e-12, "ok");
/// ```
#[track_caller]
pub fn assert_close(got: &[f64], want: &[f64], rel: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths differ");
    let d = max_rel_diff(got, want);
    assert!(d <= rel, "{what}: relative difference {d:e} > {rel:e}");
}

/// A Jacobian's matrix as a row-major `Vec` (`[i * n + j] = ∂fᵢ/∂xⱼ`), to compare with
/// [`DenseTanh::jacobian`] and with other crates' results.
///
/// ```
/// use workloads::{DenseTanh, dense_input, row_major};
/// let f = DenseTanh::new(3, 2);
/// let x = dense_input(3);
/// let j = jacobian::jacobian(&f, &x)?;
/// workloads::assert_close(&row_major(&j), &f.jacobian(&x), 1e-12, "Jacobian");
/// # Ok::<(), jacobian::Error>(())
/// ```
pub fn row_major(j: &jacobian::Jacobian) -> Vec<f64> {
    j.matrix.transpose().as_slice().to_vec()
}

/// The same workloads written for the peer crates' number types (feature `peers`).
#[cfg(feature = "peers")]
pub mod peers;
