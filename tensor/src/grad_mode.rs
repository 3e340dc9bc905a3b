//! Gradient mode: `no_grad` turns recording off for a scope, restored even on a panic.

use std::cell::Cell;

thread_local! {
    static GRAD_ENABLED: Cell<bool> = const { Cell::new(true) };
}

/// Whether new operations currently record a graph (false inside
/// [`no_grad`]).
///
/// ```
/// use tensor::{is_grad_enabled, no_grad};
///
/// assert!(is_grad_enabled());
/// no_grad(|| assert!(!is_grad_enabled()));
/// assert!(is_grad_enabled());
/// ```
pub fn is_grad_enabled() -> bool {
    GRAD_ENABLED.with(Cell::get)
}

/// Restores the previous gradient mode when dropped, even on panic.
struct GradModeGuard(bool);

impl Drop for GradModeGuard {
    fn drop(&mut self) {
        GRAD_ENABLED.with(|g| g.set(self.0));
    }
}

/// Runs `f` with graph recording switched off, like `torch.no_grad()`.
///
/// Tensors created inside are plain constants: they do not require a
/// gradient and keep no parents, which makes inference cheaper. Scopes nest.
///
/// ```
/// use tensor::{no_grad, Tensor};
///
/// let w = Tensor::ones(&[3]).with_grad();
/// let y = no_grad(|| &w * 2.0);
/// assert!(!y.requires_grad());
/// assert!(y.parents().is_empty());
/// ```
pub fn no_grad<R>(f: impl FnOnce() -> R) -> R {
    let _guard = GradModeGuard(GRAD_ENABLED.with(|g| g.replace(false)));
    f()
}
