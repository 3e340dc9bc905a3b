//! Elementwise functions of one tensor: `exp`, `ln`, `tanh`, `sigmoid`,
//! `relu`, `powi`, `powf`, `sqrt`, `abs`.
//!
//! Each op is a rule of [`shared_ops::rules`], the same table the scalar modes use: the forward
//! pass evaluates the rule elementwise and, when a graph is recorded, keeps its local partials
//! `f'(x)`, so the backward is one multiply `grad · f'(x)`. Values outside an op's domain follow
//! IEEE rules (`ln(-1) = NaN`, `sqrt(0)` has an infinite derivative); they are not errors.

use ndarray::{ArrayD, Zip};
use shared_ops::Unary;
use shared_ops::rules::{Abs, Exp, Ln, Powf, Powi, Relu, Sigmoid, Sqrt, Tanh};

use crate::tensor::{Element, Tensor, is_grad_enabled};

/// A scalar exponent as a one-argument rule: `x ↦ xᵖ` through the two-argument `Powf` rule.
#[derive(Clone, Copy)]
struct PowfBy(f64);

impl Unary for PowfBy {
    const NAME: &'static str = "powf";
    fn eval<T: shared_ops::Op>(self, x: T) -> (T, T) {
        let (y, dx, _) = shared_ops::Binary::eval(Powf, x, T::constant(self.0));
        (y, dx)
    }
}

impl<T: Element> Tensor<T> {
    /// Applies `f` elementwise and records `grad * df(x or y)`.
    /// Applies `rule` elementwise. The partials are kept only when the result records a graph.
    pub(crate) fn unary<R: Unary + 'static>(&self, op: &'static str, rule: R) -> Tensor<T> {
        let x = self.data();
        if !(is_grad_enabled() && self.requires_grad()) {
            let y = x.mapv(|v| rule.eval(v).0);
            drop(x);
            return Tensor::from_op(y, op, &[self], |_| vec![None]);
        }
        let mut dx = ArrayD::zeros(x.raw_dim());
        let y = Zip::from(&mut dx).and(&*x).map_collect(|d, &v| {
            let (y, dv) = rule.eval(v);
            *d = dv;
            y
        });
        drop(x);
        Tensor::from_op(y, op, &[self], move |args| vec![Some(args.grad * &dx)])
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
    pub fn exp(&self) -> Tensor<T> {
        self.unary("exp", Exp)
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
    pub fn ln(&self) -> Tensor<T> {
        self.unary("ln", Ln)
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
    pub fn tanh(&self) -> Tensor<T> {
        self.unary("tanh", Tanh)
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
    pub fn sigmoid(&self) -> Tensor<T> {
        self.unary("sigmoid", Sigmoid)
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
    pub fn relu(&self) -> Tensor<T> {
        self.unary("relu", Relu)
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
    pub fn powi(&self, n: i32) -> Tensor<T> {
        self.unary("powi", Powi(n))
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
    pub fn powf(&self, p: f64) -> Tensor<T> {
        self.unary("powf", PowfBy(p))
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
    pub fn sqrt(&self) -> Tensor<T> {
        self.unary("sqrt", Sqrt)
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
    pub fn abs(&self) -> Tensor<T> {
        self.unary("abs", Abs)
    }
}
