//! Optimisers over tensors that require a gradient: SGD with momentum, and Adam, with the
//! update rules and defaults of PyTorch's `torch.optim`.
//!
//! An optimiser holds the parameters (clones of the handles: the same tensors) and its state.
//! A training step is: compute the loss, [`zero_grad`](Sgd::zero_grad), `loss.backward()`,
//! [`step`](Sgd::step). A step changes each parameter's data, so it counts a new
//! [`version`](super::Tensor::version): the graph of that loss cannot be swept again.
//!
//! ```
//! use tensor::{optim::Adam, Tensor};
//!
//! // Minimise (w − 3)² from w = 0.
//! let w: Tensor = Tensor::scalar(0.0).with_grad();
//! let mut opt = Adam::new([w.clone()], 0.1);
//! for _ in 0..300 {
//!     let loss = (&w - 3.0).powi(2).sum();
//!     opt.zero_grad();
//!     loss.backward().unwrap();
//!     opt.step();
//! }
//! assert!((w.item().unwrap() - 3.0).abs() < 1e-3);
//! ```

use ndarray::{ArrayD, Zip};

use super::{Element, Tensor};

/// Stochastic gradient descent, optionally with momentum (PyTorch's `SGD` without dampening
/// or Nesterov): `v ← μ·v + g`, `p ← p − lr·v`; with μ = 0 simply `p ← p − lr·g`.
/// A parameter without a gradient (unreached by the last backward) is left as it is, its
/// version unchanged.
///
/// ```
/// use tensor::{optim::Sgd, Tensor};
///
/// let w = Tensor::scalar(1.0).with_grad();
/// let mut opt = Sgd::new([w.clone()], 0.25).momentum(0.5);
/// for _ in 0..2 {
///     opt.zero_grad();
///     (&w * &w).sum().backward().unwrap(); // g = 2w
///     opt.step();
/// }
/// // v₁ = 2, w₁ = 0.5; v₂ = 0.5·2 + 1 = 2, w₂ = 0.5 − 0.5 = 0.
/// assert_eq!(w.item().unwrap(), 0.0);
/// ```
pub struct Sgd<T: Element = f64> {
    params: Vec<Tensor<T>>,
    lr: T,
    momentum: T,
    velocity: Vec<Option<ArrayD<T>>>,
}

impl<T: Element> Sgd<T> {
    /// Plain SGD over `params` (handles of the tensors to train) with learning rate `lr`.
    pub fn new(params: impl IntoIterator<Item = Tensor<T>>, lr: f64) -> Self {
        let params: Vec<_> = params.into_iter().collect();
        Sgd {
            velocity: vec![None; params.len()],
            params,
            lr: T::from_f64(lr),
            momentum: T::zero(),
        }
    }

    /// With momentum `mu` (0.9 is usual).
    pub fn momentum(mut self, mu: f64) -> Self {
        self.momentum = T::from_f64(mu);
        self
    }

    /// One update of every parameter from its current gradient.
    pub fn step(&mut self) {
        let (lr, mu) = (self.lr, self.momentum);
        for (p, v) in self.params.iter().zip(&mut self.velocity) {
            // Untouched, a parameter keeps its version: graphs built from it stay valid.
            if p.0.with_grad(|g| g.is_none()) {
                continue;
            }
            p.update(|mut data, grad| {
                let Some(g) = grad else { return };
                if mu.is_zero() {
                    data.scaled_add(-lr, g);
                    return;
                }
                let v = match v {
                    Some(v) => {
                        Zip::from(&mut *v).and(g).for_each(|v, &g| *v = mu * *v + g);
                        v
                    }
                    None => v.insert(g.clone()),
                };
                data.scaled_add(-lr, v);
            });
        }
    }

    /// Forgets every parameter's gradient (before the next `backward`).
    pub fn zero_grad(&self) {
        self.params.iter().for_each(Tensor::zero_grad);
    }
}

/// Adam (Kingma & Ba), as PyTorch's `Adam`: `m ← β₁m + (1 − β₁)g`, `v ← β₂v + (1 − β₂)g²`,
/// `p ← p − lr·m̂ / (√v̂ + ε)` with the bias corrections `m̂ = m/(1 − β₁ᵗ)`,
/// `v̂ = v/(1 − β₂ᵗ)`. Defaults β₁ = 0.9, β₂ = 0.999, ε = 1e-8.
///
/// ```
/// use tensor::{optim::Adam, Tensor};
///
/// // The first step moves every parameter by about lr, against its gradient's sign.
/// let w: Tensor = Tensor::from_vec(&[2], vec![1.0, -1.0]).unwrap().with_grad();
/// let mut opt = Adam::new([w.clone()], 0.01);
/// (&w * &w).sum().backward().unwrap();
/// opt.step();
/// let d = w.data();
/// assert!((d[0] - 0.99).abs() < 1e-9 && (d[1] + 0.99).abs() < 1e-9);
/// ```
pub struct Adam<T: Element = f64> {
    params: Vec<Tensor<T>>,
    lr: T,
    betas: (T, T),
    eps: T,
    steps: i32,
    moments: Vec<Option<(ArrayD<T>, ArrayD<T>)>>,
}

impl<T: Element> Adam<T> {
    /// Adam over `params` with learning rate `lr` and the default β₁, β₂ and ε.
    pub fn new(params: impl IntoIterator<Item = Tensor<T>>, lr: f64) -> Self {
        let params: Vec<_> = params.into_iter().collect();
        Adam {
            moments: vec![None; params.len()],
            params,
            lr: T::from_f64(lr),
            betas: (T::from_f64(0.9), T::from_f64(0.999)),
            eps: T::from_f64(1e-8),
            steps: 0,
        }
    }

    /// Other decay rates of the two moments.
    pub fn betas(mut self, beta1: f64, beta2: f64) -> Self {
        self.betas = (T::from_f64(beta1), T::from_f64(beta2));
        self
    }

    /// Another ε (added to √v̂ so that the step stays bounded).
    pub fn eps(mut self, eps: f64) -> Self {
        self.eps = T::from_f64(eps);
        self
    }

    /// One update of every parameter from its current gradient.
    pub fn step(&mut self) {
        self.steps += 1;
        let ((b1, b2), eps, lr) = (self.betas, self.eps, self.lr);
        let one = T::one();
        let (c1, c2) = (one - b1.powi(self.steps), one - b2.powi(self.steps));
        for (p, state) in self.params.iter().zip(&mut self.moments) {
            if p.0.with_grad(|g| g.is_none()) {
                continue;
            }
            p.update(|mut data, grad| {
                let Some(g) = grad else { return };
                let (m, v) = state.get_or_insert_with(|| {
                    (ArrayD::zeros(g.raw_dim()), ArrayD::zeros(g.raw_dim()))
                });
                Zip::from(&mut data)
                    .and(m)
                    .and(v)
                    .and(g)
                    .for_each(|p, m, v, &g| {
                        *m = b1 * *m + (one - b1) * g;
                        *v = b2 * *v + (one - b2) * g * g;
                        let (mh, vh) = (*m / c1, *v / c2);
                        *p -= lr * mh / (vh.sqrt() + eps);
                    });
            });
        }
    }

    /// Forgets every parameter's gradient (before the next `backward`).
    pub fn zero_grad(&self) {
        self.params.iter().for_each(Tensor::zero_grad);
    }
}
