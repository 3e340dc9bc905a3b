//! Elementwise functions of one tensor, and any user rule applied elementwise.
//!
//! Each op is a rule of [`shared_ops::rules`], the same table the scalar modes use: the forward
//! pass evaluates the rule over the whole array ([`Unary::eval_slice`], vectorised where the
//! table has a kernel) and, when a graph is recorded, keeps its local partials
//! `f'(x)`, so the backward is one multiply `grad · f'(x)` under the rule table's convention
//! (a zero factor gives exactly 0, see [`chain`](super::chain)). Values outside an op's domain
//! follow IEEE rules (`ln(-1) = NaN`, `sqrt(0)` has an infinite derivative); they are not
//! errors. Kinks take the table's conventions: `abs` and `relu` have derivative 0 at 0, and
//! `clamp` has ½ at its bounds (the tie of `max`/`min`).

use shared_ops::rules::{self, Max, Min, Powf, Powi};
use shared_ops::{Binary, Op, Unary};

use crate::storage::{Buf, Storage};
use crate::{Element, Tensor};

/// A scalar exponent as a one-argument rule: `x ↦ xᵖ` through the two-argument `Powf` rule.
#[derive(Clone, Copy)]
struct PowfBy(f64);

impl Unary for PowfBy {
    const NAME: &'static str = "powf";
    fn eval<T: Op>(self, x: T) -> (T, T) {
        let (y, dx, _) = Powf.eval(x, T::constant(self.0));
        (y, dx)
    }
}

/// `min(max(x, lo), hi)` by the `max` and `min` rules with constant bounds.
#[derive(Clone, Copy)]
struct Clamp(f64, f64);

impl Unary for Clamp {
    const NAME: &'static str = "clamp";
    fn eval<T: Op>(self, x: T) -> (T, T) {
        let (m, dm, _) = Max.eval(x, T::constant(self.0));
        let (y, dy, _) = Min.eval(m, T::constant(self.1));
        (y, dm * dy)
    }
}

impl<T: Element> Tensor<T> {
    /// Applies a one-argument rule elementwise: a built-in one of [`shared_ops::rules`] or a
    /// user's, written once for every mode. Its partials are kept only when the result
    /// records a graph; the backward multiplies them by the gradient under the rule table's
    /// structural-zero convention, as the scalar modes do.
    ///
    /// ```
    /// use tensor::ndarray::array;
    /// use tensor::Tensor;
    /// use shared_ops::{Op, Unary};
    ///
    /// /// softplus(x) = ln(1 + eˣ), its derivative the logistic function.
    /// #[derive(Clone, Copy)]
    /// struct Softplus;
    /// impl Unary for Softplus {
    ///     const NAME: &'static str = "softplus";
    ///     fn eval<T: Op>(self, x: T) -> (T, T) {
    ///         (x.exp().ln_1p(), (T::one() + (-x).exp()).recip())
    ///     }
    /// }
    ///
    /// let x = Tensor::new(array![0.0, 1.0], true);
    /// let y = x.apply1(Softplus);
    /// assert_eq!(y.op_name(), "softplus");
    /// y.sum().backward().unwrap();
    /// assert_eq!(x.grad().unwrap()[0], 0.5);
    /// // The same rule on a tape variable gives the same derivative.
    /// let tape = reverse::Tape::new();
    /// let v = tape.var(1.0);
    /// assert_eq!(tape.gradient(v.apply1(Softplus)).wrt(v), x.grad().unwrap()[1]);
    /// ```
    pub fn apply1<R: Unary>(&self, rule: R) -> Tensor<T> {
        self.map_with_partial(R::NAME, ByRule(rule))
    }

    /// `kernel` over the elements in row-major order, writing values and, when the result
    /// records a graph, partials, which the node keeps in row-major order (one element inline).
    pub(crate) fn map_with_partial(
        &self,
        op: &'static str,
        kernel: impl Elementwise<T>,
    ) -> Tensor<T> {
        let x = self.read();
        let xs = x.as_slice();
        let mut y = Buf::scratch(xs.len());
        let mut dx = Tensor::records(&[self]).then(|| Buf::scratch(xs.len()));
        // The kernel compiled again for the CPU's widest vectors (AVX-512 where there is one,
        // else AVX2 with FMA): the rule table's tanh kernel runs much faster there than in the
        // baseline SSE2 build. The same operations in the same order: the same bits.
        pulp::Arch::new().dispatch(Run {
            kernel: &kernel,
            x: xs,
            y: y.as_mut_slice(),
            d: dx.as_mut().map(Buf::as_mut_slice),
        });
        let y = Storage::new(x.raw_dim(), y);
        drop(x);
        self.elementwise_result(y, op, dx)
    }

    /// `xⁿ` for an integer exponent; derivative `n xⁿ⁻¹` (and 0 for `n = 0`).
    ///
    /// ```
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::scalar(3.0).with_grad();
    /// x.powi(2).backward().unwrap();
    /// assert_eq!(x.grad().unwrap()[[]], 6.0);
    /// ```
    pub fn powi(&self, n: i32) -> Tensor<T> {
        self.apply1(Powi(n))
    }

    /// `xᵖ` for a real exponent; derivative `p xᵖ⁻¹`. Negative `x` with a non-integer `p`
    /// gives `NaN`.
    ///
    /// ```
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::scalar(4.0).with_grad();
    /// x.powf(1.5).backward().unwrap();
    /// assert_eq!(x.grad().unwrap()[[]], 3.0); // 1.5 * 4^0.5
    /// ```
    pub fn powf(&self, p: f64) -> Tensor<T> {
        self.apply1(PowfBy(p))
    }

    /// Clamps every element into `[lo, hi]`: `min(max(x, lo), hi)`. The derivative is 1
    /// inside, 0 outside and ½ at a bound (the tie convention of `max` and `min`; PyTorch
    /// gives 1 there). `lo > hi` gives `hi` everywhere, as `min(max(x, lo), hi)` does.
    ///
    /// ```
    /// use tensor::ndarray::array;
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::new(array![-2.0, 0.0, 1.0, 3.0], true);
    /// let y = x.clamp(-1.0, 1.0);
    /// assert_eq!(y.data(), array![-1.0, 0.0, 1.0, 1.0].into_dyn());
    /// y.sum().backward().unwrap();
    /// assert_eq!(x.grad().unwrap(), array![0.0, 1.0, 0.5, 0.0].into_dyn());
    /// ```
    pub fn clamp(&self, lo: f64, hi: f64) -> Tensor<T> {
        self.apply1(Clamp(lo, hi))
    }

    /// The natural logarithm, as PyTorch names it: [`ln`](Tensor::ln).
    ///
    /// ```
    /// use tensor::Tensor;
    ///
    /// assert_eq!(Tensor::scalar(1.0).log().item().unwrap(), 0.0);
    /// ```
    pub fn log(&self) -> Tensor<T> {
        self.ln()
    }
}

/// The elementwise methods that are one rule of the table each.
macro_rules! elementwise {
    ($($(#[$doc:meta])* $method:ident $rule:ident;)*) => {
        impl<T: Element> Tensor<T> {
            $(
                $(#[$doc])*
                pub fn $method(&self) -> Tensor<T> {
                    self.apply1(rules::$rule)
                }
            )*
        }
    };
}

elementwise! {
    /// `eˣ` elementwise.
    ///
    /// ```
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::scalar(0.0).with_grad();
    /// let y = x.exp();
    /// y.backward().unwrap();
    /// assert_eq!((y.item().unwrap(), x.grad().unwrap()[[]]), (1.0, 1.0));
    /// ```
    exp Exp;
    /// Natural logarithm elementwise (`NaN` for negative inputs, derivative `+∞` at 0).
    ///
    /// ```
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::scalar(2.0).with_grad();
    /// x.ln().backward().unwrap();
    /// assert_eq!(x.grad().unwrap()[[]], 0.5);
    /// ```
    ln Ln;
    /// Sine elementwise.
    ///
    /// ```
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::scalar(0.0).with_grad();
    /// x.sin().backward().unwrap();
    /// assert_eq!(x.grad().unwrap()[[]], 1.0);
    /// ```
    sin Sin;
    /// Cosine elementwise.
    ///
    /// ```
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::scalar(0.0).with_grad();
    /// x.cos().backward().unwrap();
    /// assert_eq!(x.grad().unwrap()[[]], 0.0);
    /// ```
    cos Cos;
    /// Hyperbolic tangent elementwise; derivative `1 − tanh²`. Both come from one vectorised
    /// exponential per element (the rule's kernel, within 1 ulp of the exact tanh and 3 of the
    /// exact derivative; the scalar modes' `libm` value may differ by an ulp or two).
    ///
    /// ```
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::scalar(0.0).with_grad();
    /// x.tanh().backward().unwrap();
    /// assert_eq!(x.grad().unwrap()[[]], 1.0);
    /// ```
    tanh Tanh;
    /// Logistic sigmoid `1 / (1 + e⁻ˣ)`.
    ///
    /// ```
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::scalar(0.0).with_grad();
    /// let s = x.sigmoid();
    /// s.backward().unwrap();
    /// assert_eq!((s.item().unwrap(), x.grad().unwrap()[[]]), (0.5, 0.25));
    /// ```
    sigmoid Sigmoid;
    /// `max(x, 0)` elementwise. Its derivative is taken as **0 at 0**.
    ///
    /// ```
    /// use tensor::ndarray::array;
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::new(array![-1.0, 0.0, 2.0], true);
    /// x.relu().sum().backward().unwrap();
    /// assert_eq!(x.grad().unwrap(), array![0.0, 0.0, 1.0].into_dyn());
    /// ```
    relu Relu;
    /// Square root elementwise; derivative `1 / (2√x)`, `+∞` at 0 (and a zero gradient
    /// reaching it gives 0, not NaN).
    ///
    /// ```
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::scalar(4.0).with_grad();
    /// x.sqrt().backward().unwrap();
    /// assert_eq!(x.grad().unwrap()[[]], 0.25);
    /// ```
    sqrt Sqrt;
    /// Absolute value elementwise. Its derivative is the sign of `x`, taken as **0 at 0**
    /// (unlike `f64::signum`, which gives 1 for `+0.0`).
    ///
    /// ```
    /// use tensor::ndarray::array;
    /// use tensor::Tensor;
    ///
    /// let x = Tensor::new(array![-2.0, 0.0, 3.0], true);
    /// x.abs().sum().backward().unwrap();
    /// assert_eq!(x.grad().unwrap(), array![-1.0, 0.0, 1.0].into_dyn());
    /// ```
    abs Abs;
}

/// What an elementwise op computes over a whole array: the values into `y` and, when asked,
/// the partials into `d`. Implementations are `#[inline(always)]`, so that the dispatch of
/// [`Tensor::map_with_partial`] compiles them for the CPU's widest vectors.
pub(crate) trait Elementwise<T> {
    fn eval(&self, x: &[T], y: &mut [T], d: Option<&mut [T]>);
}

/// A rule of the table, by its slice form ([`Unary::eval_slice`], vectorised where the table
/// has a kernel).
struct ByRule<R>(R);

impl<T: Element, R: Unary> Elementwise<T> for ByRule<R> {
    #[inline(always)]
    fn eval(&self, x: &[T], y: &mut [T], d: Option<&mut [T]>) {
        T::unary_slice(self.0, x, y, d);
    }
}

/// One run of a kernel, as `pulp` dispatches it: `with_simd` is instantiated inside a function
/// compiled for the instruction set found at run time, and everything it calls is inlined.
struct Run<'a, T, K> {
    kernel: &'a K,
    x: &'a [T],
    y: &'a mut [T],
    d: Option<&'a mut [T]>,
}

impl<T: Element, K: Elementwise<T>> pulp::WithSimd for Run<'_, T, K> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        self.kernel.eval(self.x, self.y, self.d);
    }
}
