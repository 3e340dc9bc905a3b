use crate::{Error, Op};

/// A vector function `f: Rⁿ → Rᵐ`, written once and run in any mode.
///
/// Closures cannot be generic over the number type, so a struct implementing `Function` is how
/// one definition serves `f64`, forward duals and reverse tape variables. The struct holds the
/// function's constant data (matrices, observations) as plain `f64`; lift it with
/// [`Op::constant`] where it meets the input.
///
/// ```
/// use shared_ops::{Function, Op};
///
/// /// f(x) = A·x for a fixed matrix A (row-major, m×n).
/// struct Linear { a: Vec<f64>, m: usize, n: usize }
///
/// impl Function for Linear {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         (0..self.m)
///             .map(|i| (0..self.n).map(|j| x[j] * self.a[i * self.n + j]).sum())
///             .collect()
///     }
///     fn sizes(&self) -> Option<(usize, usize)> {
///         Some((self.n, self.m))
///     }
/// }
///
/// let f = Linear { a: vec![1.0, 2.0, 3.0, 4.0], m: 2, n: 2 };
/// assert_eq!(f.eval(&[1.0_f64, 1.0]), vec![3.0, 7.0]);
/// assert!(f.check_input(3).is_err());
/// ```
pub trait Function {
    /// Evaluates `f(x)` with any number type.
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T>;

    /// The input and output sizes `(n, m)`, when the function knows them. Drivers then reject a
    /// wrong-sized input before `f` runs. `None` (the default) means "any n; m as returned".
    fn sizes(&self) -> Option<(usize, usize)> {
        None
    }

    /// Checks an input length against [`sizes`](Function::sizes).
    ///
    /// An empty input is not an error: a function of 0 inputs has an m×0 Jacobian, an empty
    /// gradient and a 0×0 Hessian, and every driver returns them with the value.
    fn check_input(&self, n: usize) -> Result<(), Error> {
        match self.sizes() {
            Some((expected, _)) if expected != n => Err(Error::InputLength { expected, found: n }),
            _ => Ok(()),
        }
    }
}

impl<F: Function> Function for &F {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        (**self).eval(x)
    }
    fn sizes(&self) -> Option<(usize, usize)> {
        (**self).sizes()
    }
}
