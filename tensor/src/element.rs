//! The element type of a tensor: `f64` or `f32`, and how the rule table applies to it.

use core::fmt::{Debug, Display};
use core::iter::{Product, Sum};
use ndarray::{LinalgScalar, ScalarOperand};
use num_traits::{Float, NumAssign};
#[allow(unused_imports)] // named by the docs
use shared_ops::Op;
use shared_ops::{Binary, Unary};

/// What a [`Tensor`](super::Tensor) may hold: `f64` (the default) or `f32`, a float that
/// ndarray can use in matrix products and with scalars, and to which every rule of
/// [`shared_ops::rules`] applies elementwise. `f64` is an [`Op`] and takes the rules as they
/// are; `f32` is none (it cannot carry an `f64` constant exactly), and takes each rule in
/// `f64`, rounded, or a row's kernel for `f32` slices ([`Unary::eval_slice_f32`]).
///
/// ```
/// use tensor::Tensor;
///
/// let x = Tensor::<f32>::from_vec(&[2], vec![1.0, 2.0]).unwrap().with_grad();
/// (&x * &x).sum().backward().unwrap();
/// assert_eq!(x.grad().unwrap().as_slice().unwrap(), &[2.0_f32, 4.0]);
/// ```
pub trait Element:
    Float
    + NumAssign
    + Sum
    + Product
    + Debug
    + Display
    + Default
    + Send
    + Sync
    + 'static
    + LinalgScalar
    + ScalarOperand
{
    /// An `f64` constant as an element (rounded to the nearest `f32`).
    fn from_f64(c: f64) -> Self;
    /// The element as an `f64` (exactly).
    fn to_f64(self) -> f64;
    /// A one-argument rule at `x`: value and partial.
    fn unary<R: Unary>(rule: R, x: Self) -> (Self, Self);
    /// A two-argument rule at `(a, b)`: value and both partials.
    fn binary<R: Binary>(rule: R, a: Self, b: Self) -> (Self, Self, Self);
    /// A one-argument rule over a slice ([`Unary::eval_slice`]).
    fn unary_slice<R: Unary>(rule: R, x: &[Self], y: &mut [Self], d: Option<&mut [Self]>);
}

impl Element for f64 {
    #[inline(always)]
    fn from_f64(c: f64) -> f64 {
        c
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn unary<R: Unary>(rule: R, x: f64) -> (f64, f64) {
        rule.eval(x)
    }
    #[inline(always)]
    fn binary<R: Binary>(rule: R, a: f64, b: f64) -> (f64, f64, f64) {
        rule.eval(a, b)
    }
    #[inline(always)]
    fn unary_slice<R: Unary>(rule: R, x: &[f64], y: &mut [f64], d: Option<&mut [f64]>) {
        rule.eval_slice(x, y, d);
    }
}

/// Each rule in `f64`, rounded: for `+ − · /` and `√` the same bits as `f32` arithmetic (`f64`
/// holds more than twice `f32`'s digits), for the rest within an `f32` ulp.
impl Element for f32 {
    #[inline(always)]
    fn from_f64(c: f64) -> f32 {
        c as f32
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    #[inline(always)]
    fn unary<R: Unary>(rule: R, x: f32) -> (f32, f32) {
        let (v, d) = rule.eval(f64::from(x));
        (v as f32, d as f32)
    }
    #[inline(always)]
    fn binary<R: Binary>(rule: R, a: f32, b: f32) -> (f32, f32, f32) {
        let (v, da, db) = rule.eval(f64::from(a), f64::from(b));
        (v as f32, da as f32, db as f32)
    }
    #[inline(always)]
    fn unary_slice<R: Unary>(rule: R, x: &[f32], y: &mut [f32], d: Option<&mut [f32]>) {
        rule.eval_slice_f32(x, y, d);
    }
}

/// Elements from which a loop of the backward pass (gradients through partials, a bias's
/// row sums) runs through `pulp`'s dispatch, compiled for the CPU's widest vectors: the
/// baseline build's SSE2 takes two elements per instruction, AVX-512 eight. Below it (a
/// one-element tensor's backward, say) the loop runs inline, without the dispatch's call.
pub(crate) const WIDE: usize = 256;
