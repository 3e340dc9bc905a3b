//! Lifting a number into a number type built on it, without naming `From`.

use crate::Op;

/// `x.lift::<U>()`: the number `x` as a constant of a number type `U` built on its type (a dual
/// of it, a tape variable of it), by `U`'s `From`. Nested differentiation needs it where data of
/// the level outside meet the variables of the level inside.
///
/// Writing `U::from(x)` for `U: Op + From<T>` does not compile (E0034): `Op` brings
/// `num_traits::NumCast::from` too, and the two `from`s are ambiguous. `lift` names the one.
///
/// ```
/// use shared_ops::{Lift, Op};
///
/// /// w·x², with `w` a number of the level outside `x`'s: with `T = f64` and
/// /// `U = forward::Dual<f64>`, the weight is a constant of the dual's sweep.
/// fn weighted<T: Op, U: Op + From<T>>(w: T, x: U) -> U {
///     w.lift::<U>() * x * x // `U::from(w)` here is E0034
/// }
/// assert_eq!(weighted(2.0, 3.0), 18.0);
/// ```
pub trait Lift: Op {
    /// This number as a `U` (`U::from(self)`).
    #[inline(always)]
    fn lift<U: From<Self>>(self) -> U {
        U::from(self)
    }
}

impl<T: Op> Lift for T {}
