//! The graph node behind a [`Tensor`]: its data, gradient slot, parents with the versions
//! they had, and the backward closure; dropped iteratively, so long chains do not overflow
//! the stack.

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

use ndarray::ArrayD;

use super::{Element, Tensor};

/// What an op's backward closure is given.
///
/// Inputs are read from the parents when `backward` runs rather than copied
/// when the op is built, so building a graph costs no extra array copies.
pub(crate) struct BackwardArgs<'a, T> {
    /// Data of the parents, in the order they were given to the op.
    pub inputs: &'a [&'a ArrayD<T>],
    /// Data of the op's result (handy for `exp`, `tanh`, `sigmoid`, ...).
    pub output: &'a ArrayD<T>,
    /// Gradient of the loss with respect to the op's result, given to the op: an op whose
    /// input gradient has the result's shape (`+`, an elementwise rule) returns it in place
    /// of a copy.
    pub grad: ArrayD<T>,
    /// Which parents need a gradient; the others may get `None`.
    pub needs_grad: &'a [bool],
}

/// Maps the gradient of a node to one gradient per parent (`None` = skip).
pub(crate) type BackwardFn<T> = Box<dyn Fn(BackwardArgs<'_, T>) -> Vec<Option<ArrayD<T>>>>;

pub(super) struct Node<T: Element> {
    pub(super) data: RefCell<ArrayD<T>>,
    // Boxed: most nodes never hold a gradient (only leaves and retained ones do), and an
    // `ArrayD` is 112 bytes.
    pub(super) grad: RefCell<Option<Box<ArrayD<T>>>>,
    pub(super) requires_grad: Cell<bool>,
    pub(super) retain_grad: Cell<bool>,
    pub(super) parents: Parents<T>,
    /// The parents' versions when this node was computed from them (see [`Tensor::version`]):
    /// the first two inline, any others boxed (an empty box does not allocate).
    pub(super) saved_versions: ([u64; 2], Box<[u64]>),
    /// How many times the data was changed in place.
    pub(super) version: Cell<u64>,
    pub(super) op: Cow<'static, str>,
    pub(super) backward: Option<BackwardFn<T>>,
}

impl<T: Element> Node<T> {
    pub(super) fn accumulate_grad(&self, g: ArrayD<T>) {
        let mut slot = self.grad.borrow_mut();
        match slot.as_mut() {
            Some(acc) => **acc += &g,
            None => *slot = Some(Box::new(g)),
        }
    }

    /// The version of parent `i` when this node was computed.
    pub(super) fn saved_version(&self, i: usize) -> u64 {
        match i {
            0 | 1 => self.saved_versions.0[i],
            _ => self.saved_versions.1[i - 2],
        }
    }
}

/// A node's parents, the usual one or two inline (a `Vec` would cost an allocation per node).
#[derive(Default)]
pub(super) enum Parents<T: Element> {
    #[default]
    None,
    One([Tensor<T>; 1]),
    Two([Tensor<T>; 2]),
    Many(Vec<Tensor<T>>),
}

impl<T: Element> Parents<T> {
    pub(super) fn of(parents: &[&Tensor<T>]) -> Self {
        match parents {
            [] => Parents::None,
            [a] => Parents::One([(*a).clone()]),
            [a, b] => Parents::Two([(*a).clone(), (*b).clone()]),
            many => Parents::Many(many.iter().map(|&p| p.clone()).collect()),
        }
    }

    pub(super) fn into_vec(self) -> Vec<Tensor<T>> {
        match self {
            Parents::None => Vec::new(),
            Parents::One(a) => a.into(),
            Parents::Two(a) => a.into(),
            Parents::Many(v) => v,
        }
    }
}

impl<T: Element> std::ops::Deref for Parents<T> {
    type Target = [Tensor<T>];
    fn deref(&self) -> &[Tensor<T>] {
        match self {
            Parents::None => &[],
            Parents::One(a) => a,
            Parents::Two(a) => a,
            Parents::Many(v) => v,
        }
    }
}

// Dropping a long chain node by node would recurse once per node and can
// overflow the stack; unlink the parents iteratively instead.
impl<T: Element> Drop for Node<T> {
    fn drop(&mut self) {
        let mut stack = std::mem::take(&mut self.parents).into_vec();
        while let Some(t) = stack.pop() {
            if let Ok(mut node) = Rc::try_unwrap(t.0) {
                stack.extend(std::mem::take(&mut node.parents).into_vec());
            }
        }
    }
}
