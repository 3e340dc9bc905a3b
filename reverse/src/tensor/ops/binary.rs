//! Elementwise `add`, `sub`, `mul`, `div` with NumPy broadcasting, and the
//! `std::ops` operators built on them.
//!
//! The operators accept any mix of `Tensor`, `&Tensor` and `f64`:
//!
//! ```
//! use reverse::tensor::Tensor;
//! use ndarray::array;
//!
//! let a = Tensor::new(array![[1.0], [2.0]], true); // (2, 1)
//! let b = Tensor::new(array![10.0, 20.0, 30.0], true); // (3,)
//! let c = &a * &b + 1.0; // broadcasts to (2, 3)
//! let d = 2.0 / &c - &a;
//! assert_eq!(d.shape(), vec![2, 3]);
//! d.sum().backward().unwrap();
//! assert_eq!(a.grad().unwrap().shape(), &[2, 1]); // summed back
//! ```
//!
//! Operators **panic** if the shapes do not broadcast (with the message of
//! [`TensorError::Broadcast`]); use the `try_` methods to get a `Result`.

use ndarray::{ArrayD, IxDyn, Zip};

use crate::tensor::broadcast::{broadcast_shapes, reduce_to_shape, reduce_to_shape_owned};
use crate::tensor::{Tensor, TensorError};

/// `f(x, y)` elementwise over `x` and `y` broadcast to `shape`.
fn zip2(
    x: &ArrayD<f64>,
    y: &ArrayD<f64>,
    shape: &[usize],
    f: impl Fn(f64, f64) -> f64,
) -> ArrayD<f64> {
    let (xv, yv) = (broadcast_view(x, shape), broadcast_view(y, shape));
    Zip::from(&xv).and(&yv).map_collect(|&a, &b| f(a, b))
}

/// `f(x, y, z)` elementwise over the three arrays broadcast to `shape`.
fn zip3(
    x: &ArrayD<f64>,
    y: &ArrayD<f64>,
    z: &ArrayD<f64>,
    shape: &[usize],
    f: impl Fn(f64, f64, f64) -> f64,
) -> ArrayD<f64> {
    let (xv, yv, zv) = (
        broadcast_view(x, shape),
        broadcast_view(y, shape),
        broadcast_view(z, shape),
    );
    Zip::from(&xv)
        .and(&yv)
        .and(&zv)
        .map_collect(|&a, &b, &c| f(a, b, c))
}

fn broadcast_view<'a>(x: &'a ArrayD<f64>, shape: &[usize]) -> ndarray::ArrayViewD<'a, f64> {
    x.broadcast(IxDyn(shape))
        .expect("shape was checked by broadcast_shapes")
}

/// Gradients of both inputs from `(a, b, grad_out, needs_grad)`, each
/// already summed back to its input's shape.
type BinaryBackward =
    fn(&ArrayD<f64>, &ArrayD<f64>, &ArrayD<f64>, [bool; 2]) -> [Option<ArrayD<f64>>; 2];

impl Tensor {
    /// Shared forward of the four ops: check shapes, compute, record.
    fn binary(
        &self,
        other: &Tensor,
        op: &'static str,
        f: fn(f64, f64) -> f64,
        backward: BinaryBackward,
    ) -> Result<Tensor, TensorError> {
        let out = {
            let (a, b) = (self.data(), other.data());
            let shape = broadcast_shapes(op, a.shape(), b.shape())?;
            zip2(&a, &b, &shape, f)
        };
        Ok(Tensor::from_op(out, op, &[self, other], move |args| {
            let [a, b] = [args.inputs[0], args.inputs[1]];
            let needs = [args.needs_grad[0], args.needs_grad[1]];
            backward(a, b, args.grad, needs).into()
        }))
    }

    /// Elementwise `self + other` with broadcasting.
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    /// use ndarray::array;
    ///
    /// let a = Tensor::new(array![[1.0, 2.0, 3.0]], false); // (1, 3)
    /// let b = Tensor::new(array![[10.0], [20.0]], false); // (2, 1)
    /// let c = a.try_add(&b).unwrap();
    /// assert_eq!(*c.data(), array![[11.0, 12.0, 13.0], [21.0, 22.0, 23.0]].into_dyn());
    /// assert!(a.try_add(&Tensor::zeros(&[2])).is_err());
    /// ```
    pub fn try_add(&self, other: &Tensor) -> Result<Tensor, TensorError> {
        self.binary(
            other,
            "add",
            |x, y| x + y,
            |a, b, g, needs| {
                [
                    needs[0].then(|| reduce_to_shape(g.view(), a.shape())),
                    needs[1].then(|| reduce_to_shape(g.view(), b.shape())),
                ]
            },
        )
    }

    /// Elementwise `self - other` with broadcasting.
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    /// use ndarray::array;
    ///
    /// let a = Tensor::new(array![5.0, 7.0], false);
    /// let c = a.try_sub(&Tensor::scalar(1.0)).unwrap();
    /// assert_eq!(*c.data(), array![4.0, 6.0].into_dyn());
    /// ```
    pub fn try_sub(&self, other: &Tensor) -> Result<Tensor, TensorError> {
        self.binary(
            other,
            "sub",
            |x, y| x - y,
            |a, b, g, needs| {
                [
                    needs[0].then(|| reduce_to_shape(g.view(), a.shape())),
                    needs[1].then(|| reduce_to_shape_owned(g.mapv(|v| -v), b.shape())),
                ]
            },
        )
    }

    /// Elementwise `self * other` with broadcasting.
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    /// use ndarray::array;
    ///
    /// let a = Tensor::new(array![1.0, 2.0], true);
    /// let b = Tensor::new(array![3.0, 4.0], true);
    /// let c = a.try_mul(&b).unwrap();
    /// c.sum().backward().unwrap();
    /// assert_eq!(a.grad().unwrap(), array![3.0, 4.0].into_dyn()); // = b
    /// assert_eq!(b.grad().unwrap(), array![1.0, 2.0].into_dyn()); // = a
    /// ```
    pub fn try_mul(&self, other: &Tensor) -> Result<Tensor, TensorError> {
        self.binary(
            other,
            "mul",
            |x, y| x * y,
            |a, b, g, needs| {
                [
                    needs[0].then(|| {
                        reduce_to_shape_owned(zip2(g, b, g.shape(), |g, b| g * b), a.shape())
                    }),
                    needs[1].then(|| {
                        reduce_to_shape_owned(zip2(g, a, g.shape(), |g, a| g * a), b.shape())
                    }),
                ]
            },
        )
    }

    /// Elementwise `self / other` with broadcasting (IEEE semantics: dividing
    /// by zero gives `inf`/`NaN`, not an error).
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    /// use ndarray::array;
    ///
    /// let a = Tensor::new(array![1.0, 2.0], false);
    /// let b = Tensor::scalar(4.0).with_grad();
    /// let c = a.try_div(&b).unwrap();
    /// assert_eq!(*c.data(), array![0.25, 0.5].into_dyn());
    /// c.sum().backward().unwrap();
    /// // d/db (1/b + 2/b) = -3 / b^2
    /// assert_eq!(b.grad().unwrap()[[]], -3.0 / 16.0);
    /// ```
    pub fn try_div(&self, other: &Tensor) -> Result<Tensor, TensorError> {
        self.binary(
            other,
            "div",
            |x, y| x / y,
            |a, b, g, needs| {
                [
                    needs[0].then(|| {
                        reduce_to_shape_owned(zip2(g, b, g.shape(), |g, b| g / b), a.shape())
                    }),
                    needs[1].then(|| {
                        let gb = zip3(g, a, b, g.shape(), |g, a, b| -g * a / (b * b));
                        reduce_to_shape_owned(gb, b.shape())
                    }),
                ]
            },
        )
    }

    /// Elementwise negation, `-self` (also available as the `-` operator).
    ///
    /// ```
    /// use reverse::tensor::Tensor;
    /// use ndarray::array;
    ///
    /// let a = Tensor::new(array![1.0, -2.0], false);
    /// assert_eq!(*a.neg().data(), array![-1.0, 2.0].into_dyn());
    /// assert_eq!(*(-&a).data(), array![-1.0, 2.0].into_dyn());
    /// ```
    #[allow(clippy::should_implement_trait)] // `Neg` is implemented too; this reads better in chains
    pub fn neg(&self) -> Tensor {
        let out = self.data().mapv(|v| -v);
        Tensor::from_op(out, "neg", &[self], |args| {
            vec![Some(args.grad.mapv(|g| -g))]
        })
    }
}

/// Implements `std::ops::$Trait` for every mix of `Tensor`, `&Tensor`, `f64`
/// by delegating to `Tensor::$try` (scalars become 0-d tensors and
/// broadcast).
macro_rules! impl_binary_operator {
    ($Trait:ident, $method:ident, $try:ident) => {
        impl std::ops::$Trait<&Tensor> for &Tensor {
            type Output = Tensor;
            fn $method(self, rhs: &Tensor) -> Tensor {
                self.$try(rhs).unwrap_or_else(|e| panic!("{e}"))
            }
        }
        impl std::ops::$Trait<Tensor> for &Tensor {
            type Output = Tensor;
            fn $method(self, rhs: Tensor) -> Tensor {
                std::ops::$Trait::$method(self, &rhs)
            }
        }
        impl std::ops::$Trait<&Tensor> for Tensor {
            type Output = Tensor;
            fn $method(self, rhs: &Tensor) -> Tensor {
                std::ops::$Trait::$method(&self, rhs)
            }
        }
        impl std::ops::$Trait<Tensor> for Tensor {
            type Output = Tensor;
            fn $method(self, rhs: Tensor) -> Tensor {
                std::ops::$Trait::$method(&self, &rhs)
            }
        }
        impl std::ops::$Trait<f64> for &Tensor {
            type Output = Tensor;
            fn $method(self, rhs: f64) -> Tensor {
                std::ops::$Trait::$method(self, &Tensor::scalar(rhs))
            }
        }
        impl std::ops::$Trait<f64> for Tensor {
            type Output = Tensor;
            fn $method(self, rhs: f64) -> Tensor {
                std::ops::$Trait::$method(&self, &Tensor::scalar(rhs))
            }
        }
        impl std::ops::$Trait<&Tensor> for f64 {
            type Output = Tensor;
            fn $method(self, rhs: &Tensor) -> Tensor {
                std::ops::$Trait::$method(&Tensor::scalar(self), rhs)
            }
        }
        impl std::ops::$Trait<Tensor> for f64 {
            type Output = Tensor;
            fn $method(self, rhs: Tensor) -> Tensor {
                std::ops::$Trait::$method(&Tensor::scalar(self), &rhs)
            }
        }
    };
}

impl_binary_operator!(Add, add, try_add);
impl_binary_operator!(Sub, sub, try_sub);
impl_binary_operator!(Mul, mul, try_mul);
impl_binary_operator!(Div, div, try_div);

impl std::ops::Neg for &Tensor {
    type Output = Tensor;
    fn neg(self) -> Tensor {
        Tensor::neg(self)
    }
}

impl std::ops::Neg for Tensor {
    type Output = Tensor;
    fn neg(self) -> Tensor {
        Tensor::neg(&self)
    }
}
