//! The graph node behind a [`Tensor`]: its data, gradient slot, parents with the versions
//! they had, and how to map its gradient to theirs; dropped iteratively, so long chains do not
//! overflow the stack.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use ndarray::{ArrayD, ArrayRefD};

use crate::storage::{Buf, Storage};
use crate::{Element, pool};

/// An n-dimensional array of `T` (`f64` by default) that remembers how it was computed.
///
/// Cloning is cheap (it clones an `Rc`): clones are the *same* tensor and
/// share data and gradient. See the [crate docs](crate) for conventions.
///
/// ```
/// use tensor::Tensor;
///
/// let a = Tensor::from_vec(&[2], vec![1.0, 2.0]).unwrap().with_grad();
/// let b = &a * &a + 1.0; // broadcasting with a scalar
/// b.sum().backward().unwrap();
/// assert_eq!(a.grad().unwrap().as_slice().unwrap(), &[2.0, 4.0]);
/// ```
#[derive(Clone)]
pub struct Tensor<T: Element = f64>(pub(crate) Rc<Node<T>>);

/// What an op's backward closure is given.
///
/// Inputs are read from the parents when `backward` runs rather than copied
/// when the op is built, so building a graph costs no extra array copies.
pub(crate) struct BackwardArgs<'a, T> {
    /// Data of the parents, in the order they were given to the op.
    pub inputs: &'a [&'a ArrayRefD<T>],
    /// Data of the op's result (handy for `exp`, `tanh`, `sigmoid`, ...).
    pub output: &'a ArrayRefD<T>,
    /// Gradient of the loss with respect to the op's result, given to the op: an op whose
    /// input gradient has the result's shape (`+`, an elementwise rule) returns it in place
    /// of a copy.
    pub grad: ArrayD<T>,
    /// Which parents need a gradient; the others may get `None`.
    pub needs_grad: &'a [bool],
}

/// Maps the gradient of a node to one gradient per parent (`None` = skip).
pub(crate) type BackwardFn<T> = Box<dyn Fn(BackwardArgs<'_, T>) -> Vec<Option<ArrayD<T>>>>;

/// How a node's gradient becomes its parents'.
pub(crate) enum Backward<T> {
    /// A leaf: the gradient is kept.
    None,
    /// An elementwise op of one parent: its gradient is the node's times these partials,
    /// elementwise (row-major), under the structural-zero convention. Held in the node, not
    /// captured by a closure: no allocation for the closure, and none at all for one element.
    Partials(Buf<T>),
    /// Any other op.
    Closure(BackwardFn<T>),
}

/// A node, laid out so that in an `Rc` it fits a 192-byte malloc block (see the test below):
/// the data is a [`Storage`] rather than an `ArrayD`, the gradient slot a `Cell` (taken and
/// put back), versions 32 bits, and the partials of an elementwise op in a buffer rather than a
/// boxed closure (`tensor_memory` reports the bytes per operation).
pub(crate) struct Node<T: Element> {
    pub(crate) data: RefCell<Storage<T>>,
    // Boxed: most nodes never hold a gradient (only leaves and retained ones do), and an
    // `ArrayD` is 112 bytes.
    pub(crate) grad: Cell<Option<Box<ArrayD<T>>>>,
    /// The parents, with their versions when this node was computed from them (see
    /// [`Tensor::version`]).
    pub(crate) parents: Parents<T>,
    /// How many times the data was changed in place (wrapping: a change goes unnoticed only
    /// after exactly 2³² more).
    pub(crate) version: Cell<u32>,
    pub(crate) requires_grad: Cell<bool>,
    pub(crate) retain_grad: Cell<bool>,
    pub(crate) op: &'static str,
    pub(crate) backward: Backward<T>,
}

impl<T: Element> Node<T> {
    pub(crate) fn accumulate_grad(&self, g: ArrayD<T>) {
        let acc = match self.grad.take() {
            Some(mut acc) => {
                *acc += &g;
                pool::give_array(g);
                acc
            }
            None => Box::new(g),
        };
        self.grad.set(Some(acc));
    }

    /// Calls `f` with the gradient slot (taken out of its `Cell` and put back).
    pub(crate) fn with_grad<R>(&self, f: impl FnOnce(Option<&ArrayD<T>>) -> R) -> R {
        let g = self.grad.take();
        let r = f(g.as_deref());
        self.grad.set(g);
        r
    }

    /// The version of parent `i` when this node was computed.
    pub(crate) fn saved_version(&self, i: usize) -> u32 {
        match &self.parents {
            Parents::None => unreachable!("a node without parents has no parent {i}"),
            Parents::One(_, v) => v[i],
            Parents::Two(_, v) => v[i],
            Parents::Many(m) => m.1[i],
        }
    }
}

/// A node's parents and the versions they had when it was computed: the usual one or two
/// inline (a `Vec` would cost an allocation per node), more boxed, so that the whole is 32
/// bytes.
#[derive(Default)]
pub(crate) enum Parents<T: Element> {
    #[default]
    None,
    One([Tensor<T>; 1], [u32; 1]),
    Two([Tensor<T>; 2], [u32; 2]),
    Many(Box<(Vec<Tensor<T>>, Vec<u32>)>),
}

impl<T: Element> Parents<T> {
    /// The parents, with their current versions.
    pub(crate) fn of(parents: &[&Tensor<T>]) -> Self {
        match parents {
            [] => Parents::None,
            [a] => Parents::One([(*a).clone()], [version(a)]),
            [a, b] => Parents::Two([(*a).clone(), (*b).clone()], [version(a), version(b)]),
            many => Parents::Many(Box::new((
                many.iter().map(|&p| p.clone()).collect(),
                many.iter().map(|p| version(p)).collect(),
            ))),
        }
    }

    pub(crate) fn into_vec(self) -> Vec<Tensor<T>> {
        match self {
            Parents::None => Vec::new(),
            Parents::One(a, _) => a.into(),
            Parents::Two(a, _) => a.into(),
            Parents::Many(m) => m.0,
        }
    }
}

/// The version of a tensor's data (see `Tensor::version`).
fn version<T: Element>(t: &Tensor<T>) -> u32 {
    t.0.version.get()
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
// overflow the stack; unlink the parents iteratively instead. A node's large buffers go to
// the pool, for the next step's graph.
impl<T: Element> Drop for Node<T> {
    fn drop(&mut self) {
        self.data.get_mut().recycle();
        if let Backward::Partials(d) = &mut self.backward {
            d.recycle();
        }
        if let Some(g) = self.grad.get_mut().take() {
            pool::give_array(*g);
        }
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

    /// Layout as contract: a node in an `Rc` fits a 192-byte malloc block, for either element
    /// type, so that a graph of small tensors costs one block per node.
    #[test]
    fn a_node_fits_a_192_byte_block() {
        assert_eq!(size_of::<Parents<f64>>(), 32);
        assert_eq!(size_of::<Backward<f64>>(), 24);
        assert_eq!(size_of::<Storage<f64>>(), 64);
        // The `Rc`'s two counts, the node, malloc's header.
        for node in [size_of::<Node<f64>>(), size_of::<Node<f32>>()] {
            let block = 2 * size_of::<usize>() + node + 8;
            assert!(block <= 192, "{block} bytes");
        }
    }
}
