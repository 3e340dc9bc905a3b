//! Elementwise functions of one tensor: `exp`, `ln`, `tanh`, `sigmoid`,
//! `relu`, `powi`, `powf`, `sqrt`, `abs`.
//!
//! Each backward is `grad * f'(x)`, where `f'` is written either in terms of
//! the input `x` or, when cheaper, of the already computed output `y`
//! (e.g. `tanh' = 1 - y²`). Values outside an op's domain follow IEEE rules
//! (`ln(-1) = NaN`, `sqrt(0)` has an infinite derivative); they are not
//! errors.

use ndarray::{ArrayD, Zip};

use crate::tensor::Tensor;

/// Which value the derivative is expressed in.
#[derive(Clone, Copy)]
enum DerivOf {
    Input,
    Output,
}

impl Tensor {
    /// Applies `f` elementwise and records `grad * df(x or y)`.
    fn unary(
        &self,
        op: &'static str,
        f: impl Fn(f64) -> f64,
        deriv_of: DerivOf,
        df: impl Fn(f64) -> f64 + 'static,
    ) -> Tensor {
        let out = self.data().mapv(f);
        Tensor::from_op(out, op, &[self], move |args| {
            let at: &ArrayD<f64> = match deriv_of {
                DerivOf::Input => args.inputs[0],
                DerivOf::Output => args.output,
            };
            let g = Zip::from(args.grad).and(at).map_collect(|&g, &v| g * df(v));
            vec![Some(g)]
        })
    }

    /// `e^x` elementwise.
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    ///
    /// let x = Tensor::scalar(0.0).with_grad();
    /// let y = x.exp();
    /// y.backward().unwrap();
    /// assert_eq!((y.item().unwrap(), x.grad().unwrap()[[]]), (1.0, 1.0));
    /// ```
    pub fn exp(&self) -> Tensor {
        self.unary("exp", f64::exp, DerivOf::Output, |y| y)
    }

    /// Natural logarithm elementwise (`NaN` for negative inputs).
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    ///
    /// let x = Tensor::scalar(2.0).with_grad();
    /// x.ln().backward().unwrap();
    /// assert_eq!(x.grad().unwrap()[[]], 0.5);
    /// ```
    pub fn ln(&self) -> Tensor {
        self.unary("ln", f64::ln, DerivOf::Input, |x| 1.0 / x)
    }

    /// Hyperbolic tangent elementwise; derivative `1 - tanh²`.
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    ///
    /// let x = Tensor::scalar(0.0).with_grad();
    /// x.tanh().backward().unwrap();
    /// assert_eq!(x.grad().unwrap()[[]], 1.0);
    /// ```
    pub fn tanh(&self) -> Tensor {
        self.unary("tanh", f64::tanh, DerivOf::Output, |y| 1.0 - y * y)
    }

    /// Logistic sigmoid `1 / (1 + e^-x)`; derivative `s (1 - s)`.
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    ///
    /// let x = Tensor::scalar(0.0).with_grad();
    /// let s = x.sigmoid();
    /// s.backward().unwrap();
    /// assert_eq!((s.item().unwrap(), x.grad().unwrap()[[]]), (0.5, 0.25));
    /// ```
    pub fn sigmoid(&self) -> Tensor {
        self.unary("sigmoid", sigmoid, DerivOf::Output, |s| s * (1.0 - s))
    }

    /// `max(x, 0)` elementwise. Its derivative is taken as **0 at 0**.
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    /// use ndarray::array;
    ///
    /// let x = Tensor::new(array![-1.0, 0.0, 2.0], true);
    /// x.relu().sum().backward().unwrap();
    /// assert_eq!(x.grad().unwrap(), array![0.0, 0.0, 1.0].into_dyn());
    /// ```
    pub fn relu(&self) -> Tensor {
        self.unary(
            "relu",
            |x| x.max(0.0),
            DerivOf::Input,
            |x| if x > 0.0 { 1.0 } else { 0.0 },
        )
    }

    /// `x^n` for an integer exponent; derivative `n x^(n-1)` (and 0 for
    /// `n = 0`).
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    ///
    /// let x = Tensor::scalar(3.0).with_grad();
    /// x.powi(2).backward().unwrap();
    /// assert_eq!(x.grad().unwrap()[[]], 6.0);
    /// ```
    pub fn powi(&self, n: i32) -> Tensor {
        let nf = f64::from(n);
        self.unary(
            "powi",
            |x| x.powi(n),
            DerivOf::Input,
            move |x| {
                if n == 0 { 0.0 } else { nf * x.powi(n - 1) }
            },
        )
    }

    /// `x^p` for a real exponent; derivative `p x^(p-1)`. Negative `x` with a
    /// non-integer `p` gives `NaN`.
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    ///
    /// let x = Tensor::scalar(4.0).with_grad();
    /// x.powf(1.5).backward().unwrap();
    /// assert_eq!(x.grad().unwrap()[[]], 3.0); // 1.5 * 4^0.5
    /// ```
    pub fn powf(&self, p: f64) -> Tensor {
        self.unary(
            "powf",
            |x| x.powf(p),
            DerivOf::Input,
            move |x| {
                if p == 0.0 { 0.0 } else { p * x.powf(p - 1.0) }
            },
        )
    }

    /// Square root elementwise; derivative `1 / (2 sqrt x)`.
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    ///
    /// let x = Tensor::scalar(4.0).with_grad();
    /// x.sqrt().backward().unwrap();
    /// assert_eq!(x.grad().unwrap()[[]], 0.25);
    /// ```
    pub fn sqrt(&self) -> Tensor {
        self.unary("sqrt", f64::sqrt, DerivOf::Output, |y| 0.5 / y)
    }

    /// Absolute value elementwise. Its derivative is the sign of `x`, taken
    /// as **0 at 0** (unlike `f64::signum`, which gives 1 for `+0.0`).
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    /// use ndarray::array;
    ///
    /// let x = Tensor::new(array![-2.0, 0.0, 3.0], true);
    /// x.abs().sum().backward().unwrap();
    /// assert_eq!(x.grad().unwrap(), array![-1.0, 0.0, 1.0].into_dyn());
    /// ```
    pub fn abs(&self) -> Tensor {
        self.unary("abs", f64::abs, DerivOf::Input, |x| {
            if x > 0.0 {
                1.0
            } else if x < 0.0 {
                -1.0
            } else {
                0.0
            }
        })
    }
}

/// Numerically stable logistic function (no overflow of `e^-x` for very
/// negative `x`).
fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}
