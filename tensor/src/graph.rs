//! `backward`: the graph in reverse topological order, each node's backward called once.

use super::ops::chain;
use super::storage::Storage;
use crate::element::WIDE;
use crate::node::{Backward, BackwardArgs, Node, Tensor};
use crate::{Element, TensorError};
use ndarray::{Array, ArrayD, ArrayRefD, ArrayViewD, Dimension, IxDyn, Zip};
use std::cell::Ref;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::rc::Rc;

impl<T: Element> Tensor<T> {
    /// Backpropagates from a one-element tensor, seeding its gradient with 1.
    ///
    /// Gradients are **added** to the leaves' existing gradients; call
    /// [`zero_grad`](Tensor::zero_grad) between steps. The graph is kept, so
    /// `backward` may be called again.
    ///
    /// Errors: [`TensorError::NotScalar`] if the tensor has more than one
    /// element, [`TensorError::NoGraph`] if it does not require a gradient.
    /// A [`CustomOp`](super::CustomOp) whose backward returns gradients of the wrong number or
    /// shape stops the pass with [`TensorError::GradientCount`] or
    /// [`TensorError::ShapeMismatch`]; gradients already added to leaves by
    /// then are kept.
    ///
    /// ```
    /// use tensor::Tensor;
    /// use ndarray::array;
    ///
    /// let x = Tensor::new(array![1.0, 2.0], true);
    /// x.powi(2).sum().backward().unwrap();
    /// assert_eq!(x.grad().unwrap(), array![2.0, 4.0].into_dyn());
    /// assert!(x.powi(2).backward().is_err()); // not a scalar
    /// ```
    pub fn backward(&self) -> Result<(), TensorError> {
        if self.numel() != 1 {
            return Err(TensorError::NotScalar {
                op: "backward",
                shape: self.shape(),
            });
        }
        self.run_backward(ArrayD::ones(IxDyn(&self.shape())))
    }

    /// Backpropagates an explicit gradient of this tensor's shape (a
    /// vector-Jacobian product), e.g. for a non-scalar output.
    ///
    /// Errors: [`TensorError::ShapeMismatch`] if `grad` has the wrong shape,
    /// [`TensorError::NoGraph`] if the tensor does not require a gradient.
    ///
    /// ```
    /// use tensor::Tensor;
    /// use ndarray::array;
    ///
    /// let x = Tensor::new(array![1.0, 2.0], true);
    /// let y = &x * 3.0;
    /// y.backward_with(array![1.0, 10.0]).unwrap();
    /// assert_eq!(x.grad().unwrap(), array![3.0, 30.0].into_dyn());
    /// assert!(y.backward_with(array![1.0]).is_err());
    /// ```
    pub fn backward_with<D: Dimension>(&self, grad: Array<T, D>) -> Result<(), TensorError> {
        if grad.shape() != self.read().shape() {
            return Err(TensorError::ShapeMismatch {
                op: "backward_with".into(),
                expected: self.shape(),
                got: grad.shape().to_vec(),
            });
        }
        self.run_backward(grad.into_dyn())
    }

    /// Tensors that require a gradient and reach `self`, parents before children (so `self`
    /// is last), and each one's position in that order. Iterative DFS: no recursion depth
    /// limit.
    fn topo_order(&self) -> (Vec<Tensor<T>>, Positions<T>) {
        let mut order = Vec::new();
        // Visited nodes, with their position once emitted (`usize::MAX` until then).
        let mut position = Positions::default();
        // `true` = all parents already emitted, emit the node itself.
        let mut stack = vec![(self.clone(), false)];
        while let Some((t, parents_done)) = stack.pop() {
            if parents_done {
                position.insert(Rc::as_ptr(&t.0), order.len());
                order.push(t);
                continue;
            }
            if position.contains_key(&Rc::as_ptr(&t.0)) {
                continue;
            }
            position.insert(Rc::as_ptr(&t.0), usize::MAX);
            stack.push((t.clone(), true));
            for p in t.parents() {
                if p.requires_grad() && !position.contains_key(&Rc::as_ptr(&p.0)) {
                    stack.push((p.clone(), false));
                }
            }
        }
        (order, position)
    }

    /// Whether this node's inputs and result are still the data it was computed from.
    fn check_versions(&self) -> Result<(), TensorError> {
        let node = &self.0;
        if self.is_leaf() {
            return Ok(());
        }
        let input =
            (0..node.parents.len()).find(|&i| node.parents[i].version() != node.saved_version(i));
        let (which, t, saved) = match input {
            Some(i) => (
                format!("input {i}"),
                &node.parents[i],
                node.saved_version(i),
            ),
            None if self.version() != 0 => ("the result".to_string(), self, 0),
            None => return Ok(()),
        };
        Err(TensorError::Modified {
            op: node.op.to_string(),
            which,
            tensor: format!("{} of shape {:?}", t.op_name(), t.shape()),
            saved,
            version: t.version(),
        })
    }

    fn run_backward(&self, seed: ArrayD<T>) -> Result<(), TensorError> {
        if !self.requires_grad() {
            return Err(TensorError::NoGraph {
                shape: self.shape(),
            });
        }
        let (order, index) = self.topo_order();
        // Every check before the first gradient is added: an error leaves the leaves as they were.
        for t in &order {
            t.check_versions()?;
        }
        // Gradients of this pass live here, not in the nodes, so that a
        // second `backward` does not re-add stale intermediate gradients.
        let mut grads: Vec<Option<ArrayD<T>>> = vec![None; order.len()];
        grads[order.len() - 1] = Some(seed);

        for (i, tensor) in order.iter().enumerate().rev() {
            let Some(g) = grads[i].take() else { continue };
            let node = &tensor.0;
            if tensor.is_leaf() {
                node.accumulate_grad(g); // store (move, no copy)
                continue;
            }
            if node.retain_grad.get() {
                node.accumulate_grad(g.clone());
            }
            let parent_grads = match &node.backward {
                Backward::Partials(d) => vec![Some(through_partials(g, d.as_slice()))],
                Backward::Closure(backward) => with_inputs(&node.parents, |inputs, needs_grad| {
                    backward(BackwardArgs {
                        inputs,
                        output: &node.data.borrow().view(),
                        grad: g,
                        needs_grad,
                    })
                }),
                Backward::None => unreachable!("leaves were handled above"),
            };
            if parent_grads.len() != node.parents.len() {
                return Err(TensorError::GradientCount {
                    op: node.op.to_string(),
                    expected: node.parents.len(),
                    got: parent_grads.len(),
                });
            }
            for (parent, pg) in node.parents.iter().zip(parent_grads) {
                let Some(pg) = pg else { continue };
                if !parent.requires_grad() {
                    continue;
                }
                // Built-in ops always get this right; custom ops may not.
                if pg.shape() != parent.read().shape() {
                    return Err(TensorError::ShapeMismatch {
                        op: format!("backward of {}", node.op),
                        expected: parent.shape(),
                        got: pg.shape().to_vec(),
                    });
                }
                let slot = &mut grads[index[&Rc::as_ptr(&parent.0)]];
                match slot {
                    Some(acc) => *acc += &pg,
                    None => *slot = Some(pg),
                }
            }
        }
        Ok(())
    }
}

/// Calls `f` with the parents' data and which of them need a gradient. One or two parents
/// (nearly every node) are lent from the stack: three small vectors per node would be a large
/// share of the allocations of a backward pass through one-element tensors.
fn with_inputs<T: Element, R>(
    parents: &[Tensor<T>],
    f: impl FnOnce(&[&ArrayRefD<T>], &[bool]) -> R,
) -> R {
    match parents {
        [a] => f(&[&a.read().view()], &[a.requires_grad()]),
        [a, b] => f(
            &[&a.read().view(), &b.read().view()],
            &[a.requires_grad(), b.requires_grad()],
        ),
        _ => {
            let datas: Vec<Ref<'_, Storage<T>>> = parents.iter().map(|p| p.read()).collect();
            let views: Vec<ArrayViewD<'_, T>> = datas.iter().map(|d| d.view()).collect();
            let inputs: Vec<&ArrayRefD<T>> = views.iter().map(|v| &**v).collect();
            let needs_grad: Vec<bool> = parents.iter().map(Tensor::requires_grad).collect();
            f(&inputs, &needs_grad)
        }
    }
}

/// The gradient of an elementwise op's input: the result's gradient (which has its shape, and
/// is overwritten) times the partials `d`, in row-major order, under the structural-zero
/// convention.
fn through_partials<T: Element>(mut g: ArrayD<T>, d: &[T]) -> ArrayD<T> {
    // Row-major (nearly always): a loop over two slices. `Zip` over views spends many
    // instructions on layouts per call, which for small tensors is most of a backward pass
    // (`tensor_memory`'s chain of one-element tensors).
    if let Some(gs) = g.as_slice_mut() {
        let wide = gs.len() >= WIDE;
        let mut run = move || {
            for (g, &d) in gs.iter_mut().zip(d) {
                *g = chain(*g, d);
            }
        };
        if wide {
            pulp::Arch::new().dispatch(run);
        } else {
            run();
        }
    } else {
        let d = ArrayViewD::from_shape(g.raw_dim(), d).expect("one partial per element");
        Zip::from(&mut g)
            .and(&d)
            .for_each(|g, &d| *g = chain(*g, d));
    }
    g
}

/// Node addresses to positions, hashed by the address itself: one map in place of a visited set
/// and a position map under SipHash, which shortens the backward of one-element tensors
/// (`tensor_memory`'s chain).
type Positions<T> = HashMap<*const Node<T>, usize, BuildHasherDefault<AddressHasher>>;

/// A hasher for addresses: a multiplication (Fibonacci hashing) of the address. Nodes are
/// distinct allocations, so their addresses are distinct and spread once multiplied.
#[derive(Default)]
struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}
