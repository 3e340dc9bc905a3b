//! How a [`Dual`](crate::Dual) applies the structural-zero convention of
//! [`shared_ops::rules`]: [`Checked`] (the default) or [`Unchecked`].

/// The structural-zero convention of a dual: [`Checked`] or [`Unchecked`].
pub trait Convention: Copy + Default + core::fmt::Debug + Send + Sync + 'static {
    /// Whether each operation tests its tangent for a NaN and then takes its products one by
    /// one, a zero factor contributing zero.
    const CHECK: bool;
}

/// Each operation keeps the convention: after it, a NaN in the tangent sends its products
/// through one by one, a zero factor contributing zero, so `0·∞` gives 0. The default.
///
/// ```
/// use forward::{Checked, Convention};
/// assert!(Checked::CHECK);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Checked;

/// The same arithmetic without the test: the same bits wherever no tangent of the evaluation
/// is NaN, but a `0·∞` product leaves a NaN instead of a zero. For drivers that test the
/// outputs instead and evaluate again with [`Checked`] duals when an output's tangent is NaN (a
/// NaN reaches every output that depends on it); `jacobian::jvp` does so.
///
/// ```
/// use forward::{Convention, Unchecked};
/// assert!(!Unchecked::CHECK);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Unchecked;

impl Convention for Checked {
    const CHECK: bool = true;
}

impl Convention for Unchecked {
    const CHECK: bool = false;
}
