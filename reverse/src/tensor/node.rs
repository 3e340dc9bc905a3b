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
    /// The parents, with their versions when this node was computed from them (see
    /// [`Tensor::version`]).
    pub(super) parents: Parents<T>,
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
        match &self.parents {
            Parents::None => unreachable!("a node without parents has no parent {i}"),
            Parents::One(_, v) => v[i],
            Parents::Two(_, v) => v[i],
            Parents::Many(m) => m.1[i],
        }
    }
}

/// A node's parents and the versions they had when it was computed: the usual one or two
/// inline (a `Vec` would cost an allocation per node), more boxed, so that the whole is 40
/// bytes. Kept apart, the parents and their versions took 64 bytes of every node, which then
/// took a 288-byte block instead of 256 (`tensor_memory`'s chain: 368 bytes per operation
/// against 352 together).
#[derive(Default)]
pub(super) enum Parents<T: Element> {
    #[default]
    None,
    One([Tensor<T>; 1], [u64; 1]),
    Two([Tensor<T>; 2], [u64; 2]),
    Many(Box<(Vec<Tensor<T>>, Vec<u64>)>),
}

impl<T: Element> Parents<T> {
    /// The parents, with their current versions.
    pub(super) fn of(parents: &[&Tensor<T>]) -> Self {
        match parents {
            [] => Parents::None,
            [a] => Parents::One([(*a).clone()], [a.version()]),
            [a, b] => Parents::Two([(*a).clone(), (*b).clone()], [a.version(), b.version()]),
            many => Parents::Many(Box::new((
                many.iter().map(|&p| p.clone()).collect(),
                many.iter().map(|p| p.version()).collect(),
            ))),
        }
    }

    pub(super) fn into_vec(self) -> Vec<Tensor<T>> {
        match self {
            Parents::None => Vec::new(),
            Parents::One(a, _) => a.into(),
            Parents::Two(a, _) => a.into(),
            Parents::Many(m) => m.0,
        }
    }
}

impl<T: Element> std::ops::Deref for Parents<T> {
    type Target = [Tensor<T>];
    fn deref(&self) -> &[Tensor<T>] {
        match self {
            Parents::None => &[],
            Parents::One(a, _) => a,
            Parents::Two(a, _) => a,
            Parents::Many(m) => &m.0,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The layout the memory figure of the README rests on: a node in an `Rc` fits a
    /// 256-byte malloc block.
    #[test]
    fn a_node_fits_a_256_byte_block() {
        assert_eq!(size_of::<Parents<f64>>(), 40);
        // The `Rc`'s two counts, the node, malloc's header.
        let block = 2 * size_of::<usize>() + size_of::<Node<f64>>() + 8;
        assert!(block <= 256, "{block} bytes");
    }
}
