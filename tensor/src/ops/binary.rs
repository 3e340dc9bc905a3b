//! Elementwise `add`, `sub`, `mul`, `div` with NumPy broadcasting, and the
//! `std::ops` operators built on them.
//!
//! The operators accept any mix of `Tensor`, `&Tensor` and `f64`:
//!
//! ```
//! use tensor::Tensor;
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

use ndarray::{ArrayD, ArrayRefD, IxDyn, Zip};

use shared_ops::{Binary, rules};

use super::chain;
use crate::broadcast::{broadcast_shapes, reduce_to_shape, reduce_to_shape_owned};
use crate::ops::unary::Elementwise;
use crate::{Element, Tensor, TensorError, pool};

/// `f(x, y)` elementwise over `x` and `y` broadcast to `shape`.
///
/// Contiguous operands that broadcast by repeating one of them whole (the same shape, a bias
/// row added to every row of a batch) take loops over slices, which vectorise; others
/// ndarray's `Zip`. The same `f` on the same pairs: the same bits either way.
fn zip2<T: Element>(
    x: &ArrayRefD<T>,
    y: &ArrayRefD<T>,
    shape: &[usize],
    f: impl Fn(T, T) -> T,
) -> ArrayD<T> {
    if let Some(out) = tiled(x, y, shape, &f).or_else(|| tiled(y, x, shape, &|b, a| f(a, b))) {
        return ArrayD::from_shape_vec(IxDyn(shape), out).expect("one value per element");
    }
    let (xv, yv) = (broadcast_view(x, shape), broadcast_view(y, shape));
    Zip::from(&xv).and(&yv).map_collect(|&a, &b| f(a, b))
}

/// `f(x, y)` in row-major order when `x` has the result's shape and `y` broadcasts to it by
/// repetition along leading axes (its shape, but for leading 1s, is the result's trailing
/// shape), both contiguous in row-major order; else `None`.
fn tiled<T: Element>(
    x: &ArrayRefD<T>,
    y: &ArrayRefD<T>,
    shape: &[usize],
    f: &impl Fn(T, T) -> T,
) -> Option<Vec<T>> {
    let (xs, ys) = (x.as_slice()?, y.as_slice()?);
    let lead = y.shape().iter().take_while(|&&d| d == 1).count();
    let inner = &y.shape()[lead..];
    if x.shape() != shape || !shape.ends_with(inner) || ys.is_empty() {
        return None;
    }
    let mut out = pool::take_empty(xs.len());
    if let [b] = *ys {
        out.extend(xs.iter().map(|&a| f(a, b)));
    } else {
        for row in xs.chunks_exact(ys.len()) {
            out.extend(row.iter().zip(ys).map(|(&a, &b)| f(a, b)));
        }
    }
    Some(out)
}

fn broadcast_view<'a, T: Element>(
    x: &'a ArrayRefD<T>,
    shape: &[usize],
) -> ndarray::ArrayViewD<'a, T> {
    x.broadcast(IxDyn(shape))
        .expect("shape was checked by broadcast_shapes")
}

/// Gradients of both inputs from `(a, b, grad_out, needs_grad)`, each
/// already summed back to its input's shape.
impl<T: Element> Tensor<T> {
    /// Applies a two-argument rule elementwise with NumPy broadcasting: a built-in one of
    /// [`shared_ops::rules`] or a user's. The backward multiplies the output gradient by the
    /// rule's partials (under the structural-zero convention) and sums each back to its
    /// input's shape.
    ///
    /// ```
    /// use tensor::ndarray::array;
    /// use tensor::Tensor;
    /// use shared_ops::rules::Hypot;
    ///
    /// let a = Tensor::new(array![3.0, 0.0], true);
    /// let b = Tensor::new(array![4.0], true); // broadcasts
    /// let r = a.apply2(&b, Hypot).unwrap();
    /// assert_eq!(r.data(), array![5.0, 4.0].into_dyn());
    /// r.sum().backward().unwrap();
    /// assert_eq!(a.grad().unwrap(), array![0.6, 0.0].into_dyn());
    /// assert_eq!(b.grad().unwrap(), array![1.8].into_dyn()); // 4/5 + 4/4
    /// assert!(a.apply2(&Tensor::zeros(&[3]), Hypot).is_err());
    /// ```
    pub fn apply2<R: Binary>(&self, other: &Tensor<T>, rule: R) -> Result<Tensor<T>, TensorError> {
        self.binary(other, R::NAME, rule)
    }

    /// The forward of every binary op: check shapes, compute, record.
    fn binary<R: Binary>(
        &self,
        other: &Tensor<T>,
        op: &'static str,
        rule: R,
    ) -> Result<Tensor<T>, TensorError> {
        let out = {
            let (a, b) = (self.read(), other.read());
            let (a, b) = (a.view(), b.view());
            let shape = broadcast_shapes(op, a.shape(), b.shape())?;
            zip2(&a, &b, &shape, |x, y| T::binary(rule, x, y).0)
        };
        Ok(Tensor::from_op(out, op, &[self, other], move |args| {
            let [a, b] = [args.inputs[0], args.inputs[1]];
            if R::UNIT_PARTIALS {
                // `+`, `−`: the gradient itself (negated where the partial is −1), summed down
                // to each input's shape with no full-size product in between. The last input
                // of the result's shape takes the gradient itself, not a copy.
                let (_, pa, pb) = T::binary(rule, T::zero(), T::zero());
                let g = args.grad;
                let owner = (0..2)
                    .rev()
                    .find(|&i| args.needs_grad[i] && args.inputs[i].shape() == g.shape());
                let mut out = [0, 1].map(|i| {
                    (args.needs_grad[i] && owner != Some(i))
                        .then(|| reduce_to_shape(g.view(), args.inputs[i].shape()))
                });
                if let Some(i) = owner {
                    out[i] = Some(g);
                }
                for (d, p) in out.iter_mut().zip([pa, pb]) {
                    if p < T::zero() {
                        *d = d.take().map(|d| d.mapv_into(|v| -v));
                    }
                }
                return out.into();
            }
            let g = &args.grad;
            let shape = g.shape();
            let (av, bv) = (broadcast_view(a, shape), broadcast_view(b, shape));
            let partial = |first: bool| {
                Zip::from(g).and(&av).and(&bv).map_collect(|&g, &a, &b| {
                    let (_, pa, pb) = T::binary(rule, a, b);
                    chain(g, if first { pa } else { pb })
                })
            };
            let (da, db) = match (args.needs_grad[0], args.needs_grad[1]) {
                (true, true) => {
                    // One evaluation of the rule gives both partials.
                    let (mut da, mut db) = (ArrayD::zeros(g.raw_dim()), ArrayD::zeros(g.raw_dim()));
                    Zip::from(&mut da)
                        .and(&mut db)
                        .and(g)
                        .and(&av)
                        .and(&bv)
                        .for_each(|da, db, &g, &a, &b| {
                            let (_, pa, pb) = T::binary(rule, a, b);
                            *da = chain(g, pa);
                            *db = chain(g, pb);
                        });
                    (Some(da), Some(db))
                }
                (first, second) => (first.then(|| partial(true)), second.then(|| partial(false))),
            };
            let da = da.map(|d| reduce_to_shape_owned(d, a.shape()));
            let db = db.map(|d| reduce_to_shape_owned(d, b.shape()));
            vec![da, db]
        }))
    }

    /// `rule(self, c)` (or `rule(c, self)` with `left`) for a scalar `c`: one node with the
    /// rule's partial in `self`, not a 0-d tensor node for `c` and a broadcast. The values and
    /// gradients are those of the broadcast, bit for bit.
    fn with_scalar<R: Binary>(&self, c: T, left: bool, rule: R, op: &'static str) -> Tensor<T> {
        self.map_with_partial(op, WithScalar { rule, c, left })
    }
}

/// `rule(x, c)` (or `rule(c, x)`) elementwise, the partial in `x`.
struct WithScalar<R, T> {
    rule: R,
    c: T,
    left: bool,
}

impl<R: Binary, T: Element> WithScalar<R, T> {
    #[inline(always)]
    fn at(&self, x: T) -> (T, T) {
        if self.left {
            let (y, _, d) = T::binary(self.rule, self.c, x);
            (y, d)
        } else {
            let (y, d, _) = T::binary(self.rule, x, self.c);
            (y, d)
        }
    }
}

impl<R: Binary, T: Element> Elementwise<T> for WithScalar<R, T> {
    #[inline(always)]
    fn eval(&self, xs: &[T], ys: &mut [T], ds: Option<&mut [T]>) {
        match ds {
            Some(ds) => {
                for ((&x, y), d) in xs.iter().zip(ys).zip(ds) {
                    (*y, *d) = self.at(x);
                }
            }
            None => {
                for (&x, y) in xs.iter().zip(ys) {
                    *y = self.at(x).0;
                }
            }
        }
    }
}

impl<T: Element> Tensor<T> {
    /// `max(self, other)` elementwise with broadcasting. At a tie each side gets half the
    /// gradient; a NaN loses (as `f64::max`) and gets none.
    ///
    /// ```
    /// use tensor::ndarray::array;
    /// use tensor::Tensor;
    ///
    /// let a = Tensor::new(array![1.0, 2.0, 3.0], true);
    /// let b = Tensor::new(array![2.0], true);
    /// let m = a.maximum(&b).unwrap();
    /// assert_eq!(m.data(), array![2.0, 2.0, 3.0].into_dyn());
    /// m.sum().backward().unwrap();
    /// assert_eq!(a.grad().unwrap(), array![0.0, 0.5, 1.0].into_dyn());
    /// assert_eq!(b.grad().unwrap(), array![1.5].into_dyn());
    /// ```
    pub fn maximum(&self, other: &Tensor<T>) -> Result<Tensor<T>, TensorError> {
        self.binary(other, "maximum", rules::Max)
    }

    /// `min(self, other)` elementwise with broadcasting; ties as [`maximum`](Tensor::maximum).
    ///
    /// ```
    /// use tensor::ndarray::array;
    /// use tensor::Tensor;
    ///
    /// let a = Tensor::new(array![1.0, 3.0], false);
    /// let m = a.minimum(&Tensor::scalar(2.0)).unwrap();
    /// assert_eq!(m.data(), array![1.0, 2.0].into_dyn());
    /// ```
    pub fn minimum(&self, other: &Tensor<T>) -> Result<Tensor<T>, TensorError> {
        self.binary(other, "minimum", rules::Min)
    }

    /// Elementwise `self + other` with broadcasting.
    ///
    /// ```
    /// use tensor::Tensor;
    /// use ndarray::array;
    ///
    /// let a = Tensor::new(array![[1.0, 2.0, 3.0]], false); // (1, 3)
    /// let b = Tensor::new(array![[10.0], [20.0]], false); // (2, 1)
    /// let c = a.try_add(&b).unwrap();
    /// assert_eq!(c.data(), array![[11.0, 12.0, 13.0], [21.0, 22.0, 23.0]].into_dyn());
    /// assert!(a.try_add(&Tensor::zeros(&[2])).is_err());
    /// ```
    pub fn try_add(&self, other: &Tensor<T>) -> Result<Tensor<T>, TensorError> {
        self.binary(other, "add", rules::Add)
    }

    /// Elementwise `self - other` with broadcasting.
    ///
    /// ```
    /// use tensor::Tensor;
    /// use ndarray::array;
    ///
    /// let a = Tensor::new(array![5.0, 7.0], false);
    /// let c = a.try_sub(&Tensor::scalar(1.0)).unwrap();
    /// assert_eq!(c.data(), array![4.0, 6.0].into_dyn());
    /// ```
    pub fn try_sub(&self, other: &Tensor<T>) -> Result<Tensor<T>, TensorError> {
        self.binary(other, "sub", rules::Sub)
    }

    /// Elementwise `self * other` with broadcasting.
    ///
    /// ```
    /// use tensor::Tensor;
    /// use ndarray::array;
    ///
    /// let a = Tensor::new(array![1.0, 2.0], true);
    /// let b = Tensor::new(array![3.0, 4.0], true);
    /// let c = a.try_mul(&b).unwrap();
    /// c.sum().backward().unwrap();
    /// assert_eq!(a.grad().unwrap(), array![3.0, 4.0].into_dyn()); // = b
    /// assert_eq!(b.grad().unwrap(), array![1.0, 2.0].into_dyn()); // = a
    /// ```
    pub fn try_mul(&self, other: &Tensor<T>) -> Result<Tensor<T>, TensorError> {
        self.binary(other, "mul", rules::Mul)
    }

    /// Elementwise `self / other` with broadcasting (IEEE semantics: dividing
    /// by zero gives `inf`/`NaN`, not an error).
    ///
    /// ```
    /// use tensor::Tensor;
    /// use ndarray::array;
    ///
    /// let a = Tensor::new(array![1.0, 2.0], false);
    /// let b = Tensor::scalar(4.0).with_grad();
    /// let c = a.try_div(&b).unwrap();
    /// assert_eq!(c.data(), array![0.25, 0.5].into_dyn());
    /// c.sum().backward().unwrap();
    /// // d/db (1/b + 2/b) = -3 / b^2
    /// assert_eq!(b.grad().unwrap()[[]], -3.0 / 16.0);
    /// ```
    pub fn try_div(&self, other: &Tensor<T>) -> Result<Tensor<T>, TensorError> {
        self.binary(other, "div", rules::Div)
    }

    /// Elementwise negation, `-self` (also available as the `-` operator).
    ///
    /// ```
    /// use tensor::Tensor;
    /// use ndarray::array;
    ///
    /// let a = Tensor::new(array![1.0, -2.0], false);
    /// assert_eq!(a.neg().data(), array![-1.0, 2.0].into_dyn());
    /// assert_eq!((-&a).data(), array![-1.0, 2.0].into_dyn());
    /// ```
    #[allow(clippy::should_implement_trait)] // `Neg` is implemented too; this reads better in chains
    pub fn neg(&self) -> Tensor<T> {
        self.apply1(rules::Neg)
    }
}

/// Implements `std::ops::$Trait` for every mix of `Tensor<T>`, `&Tensor<T>` and a scalar `T`
/// by delegating to `Tensor::$try` (scalars become 0-d tensors and broadcast).
macro_rules! impl_binary_operator {
    ($Trait:ident, $method:ident, $try:ident) => {
        impl<T: Element> std::ops::$Trait<&Tensor<T>> for &Tensor<T> {
            type Output = Tensor<T>;
            fn $method(self, rhs: &Tensor<T>) -> Tensor<T> {
                self.$try(rhs).unwrap_or_else(|e| panic!("{e}"))
            }
        }
        impl<T: Element> std::ops::$Trait<Tensor<T>> for &Tensor<T> {
            type Output = Tensor<T>;
            fn $method(self, rhs: Tensor<T>) -> Tensor<T> {
                std::ops::$Trait::$method(self, &rhs)
            }
        }
        impl<T: Element> std::ops::$Trait<&Tensor<T>> for Tensor<T> {
            type Output = Tensor<T>;
            fn $method(self, rhs: &Tensor<T>) -> Tensor<T> {
                std::ops::$Trait::$method(&self, rhs)
            }
        }
        impl<T: Element> std::ops::$Trait<Tensor<T>> for Tensor<T> {
            type Output = Tensor<T>;
            fn $method(self, rhs: Tensor<T>) -> Tensor<T> {
                std::ops::$Trait::$method(&self, &rhs)
            }
        }
        impl<T: Element> std::ops::$Trait<T> for &Tensor<T> {
            type Output = Tensor<T>;
            fn $method(self, rhs: T) -> Tensor<T> {
                self.with_scalar(rhs, false, rules::$Trait, stringify!($method))
            }
        }
        impl<T: Element> std::ops::$Trait<T> for Tensor<T> {
            type Output = Tensor<T>;
            fn $method(self, rhs: T) -> Tensor<T> {
                self.with_scalar(rhs, false, rules::$Trait, stringify!($method))
            }
        }
        impl_binary_operator!(@scalar_lhs $Trait, $method, f64);
    };
    // A scalar on the left needs an impl per scalar type (the orphan rule). Only `f64` has one:
    // with a second, `2.0 - &x` would not compile wherever the element type is still to be
    // inferred (`Tensor::new(array![1.0, 2.0], true)`). With `f32` elements, put the scalar on
    // the right or make it a tensor: `Tensor::scalar(2.0) - &x`.
    (@scalar_lhs $Trait:ident, $method:ident, $s:ty) => {
        impl std::ops::$Trait<&Tensor<$s>> for $s {
            type Output = Tensor<$s>;
            fn $method(self, rhs: &Tensor<$s>) -> Tensor<$s> {
                rhs.with_scalar(self, true, rules::$Trait, stringify!($method))
            }
        }
        impl std::ops::$Trait<Tensor<$s>> for $s {
            type Output = Tensor<$s>;
            fn $method(self, rhs: Tensor<$s>) -> Tensor<$s> {
                rhs.with_scalar(self, true, rules::$Trait, stringify!($method))
            }
        }
    };
}

impl_binary_operator!(Add, add, try_add);
impl_binary_operator!(Sub, sub, try_sub);
impl_binary_operator!(Mul, mul, try_mul);
impl_binary_operator!(Div, div, try_div);

impl<T: Element> std::ops::Neg for &Tensor<T> {
    type Output = Tensor<T>;
    fn neg(self) -> Tensor<T> {
        Tensor::neg(self)
    }
}

impl<T: Element> std::ops::Neg for Tensor<T> {
    type Output = Tensor<T>;
    fn neg(self) -> Tensor<T> {
        Tensor::neg(&self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The slice loops give what `Zip` gives, bit for bit, for every way one operand can repeat
    /// the other, on either side; other broadcasts and non-contiguous operands take `Zip`.
    #[test]
    fn tiled_broadcasts_equal_zip() {
        let f = |a: f64, b: f64| a / b - a * 0.1;
        let full = |shape: &[usize], seed: f64| {
            let n = shape.iter().product::<usize>();
            ArrayD::from_shape_vec(
                IxDyn(shape),
                (0..n).map(|i| (i as f64 * 0.37 + seed).sin()).collect(),
            )
            .unwrap()
        };
        let cases: [(&[usize], &[usize]); 8] = [
            (&[4, 3], &[4, 3]),
            (&[4, 3], &[3]),
            (&[4, 3], &[1, 3]),
            (&[2, 4, 3], &[4, 3]),
            (&[4, 3], &[1]),
            (&[4, 3], &[]),
            (&[4, 3], &[4, 1]), // repeats along the last axis: Zip
            (&[4, 1], &[1, 3]), // neither has the result's shape: Zip
        ];
        let mut tiled_cases = 0;
        for (sa, sb) in cases {
            let (a, b) = (full(sa, 0.3), full(sb, 1.1));
            for (x, y) in [(&a, &b), (&b, &a)] {
                let shape = broadcast_shapes("test", x.shape(), y.shape()).unwrap();
                let zip = Zip::from(&broadcast_view(x, &shape))
                    .and(&broadcast_view(y, &shape))
                    .map_collect(|&p, &q| f(p, q));
                let got = zip2(x, y, &shape, f);
                assert_eq!(got.shape(), zip.shape(), "{sa:?} with {sb:?}");
                let bits = |v: &ArrayD<f64>| v.iter().map(|e| e.to_bits()).collect::<Vec<_>>();
                assert_eq!(
                    bits(&got),
                    bits(&zip),
                    "{:?} with {:?}",
                    x.shape(),
                    y.shape()
                );
                let swapped = |q: f64, p: f64| f(p, q);
                tiled_cases += usize::from(
                    tiled(x, y, &shape, &f).is_some() || tiled(y, x, &shape, &swapped).is_some(),
                );
            }
        }
        assert_eq!(tiled_cases, 12, "the first six cases, both ways round");
        // A transposed (non-contiguous) operand is not tiled, and still right.
        let (a, b) = (full(&[3, 4], 0.3), full(&[4, 3], 1.1));
        let t = a.t().as_standard_layout().into_owned();
        assert!(tiled(&t, &b, &[4, 3], &f).is_some());
        let view = a.clone().reversed_axes();
        assert!(view.as_slice().is_none());
        assert!(tiled(&view, &b, &[4, 3], &f).is_none());
        let want = Zip::from(&t).and(&b).map_collect(|&p, &q| f(p, q));
        assert_eq!(zip2(&view, &b, &[4, 3], f), want);
    }
}
