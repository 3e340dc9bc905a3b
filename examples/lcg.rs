//! Deterministic pseudo-random numbers for the examples (no `rand` dependency): a linear
//! congruential generator, and the fan-in-scaled weight matrices the tensor examples start
//! from.
//!
//! ```
//! use examples::lcg::Lcg;
//! let mut a = Lcg(1);
//! let v = a.next();
//! assert!((-1.0..1.0).contains(&v));
//! assert_eq!(Lcg(1).next(), v); // the same seed, the same numbers
//! ```

use tensor::Tensor;
use tensor::ndarray::Array2;

/// A linear congruential generator; the `u64` is its state (the seed).
pub struct Lcg(pub u64);

impl Lcg {
    /// Uniform in [-1, 1).
    #[allow(clippy::should_implement_trait)] // not an iterator: it never ends
    pub fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }

    /// A trainable `(rows, cols)` matrix, uniform and scaled by 1/√rows (the fan-in).
    pub fn matrix(&mut self, rows: usize, cols: usize) -> Tensor {
        let scale = 1.0 / (rows as f64).sqrt();
        Tensor::new(
            Array2::from_shape_fn((rows, cols), |_| self.next() * scale),
            true,
        )
    }
}
