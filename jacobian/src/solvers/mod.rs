//! The solvers users hand Jacobians to, fed by this library: each behind a cargo feature of
//! `jacobian`, so the default build stays lean.
//!
//! | feature | crate | what it gets |
//! |---|---|---|
//! | `levenberg-marquardt` | [levenberg-marquardt] 0.15 | `LeastSquares`: a residual [`Function`](crate::Function) as its problem |
//! | `argmin` | [argmin] 0.11 | `Problem`: cost, gradient, Hessian, Jacobian and residuals of a `Function` |
//!
//! Both crates use nalgebra 0.34, as this library does, and are re-exported here
//! (`jacobian::solvers::argmin`, `jacobian::solvers::levenberg_marquardt`), so that a user
//! needs no second version pin: the vectors and matrices they exchange are the same types.
//!
//! [levenberg-marquardt]: https://docs.rs/levenberg-marquardt
//! [argmin]: https://docs.rs/argmin

#[cfg(feature = "levenberg-marquardt")]
mod least_squares;
#[cfg(feature = "argmin")]
mod optimise;

#[cfg(feature = "levenberg-marquardt")]
pub use least_squares::LeastSquares;
#[cfg(feature = "levenberg-marquardt")]
pub use levenberg_marquardt;
#[cfg(feature = "argmin")]
pub use optimise::Problem;
#[cfg(feature = "argmin")]
pub use {argmin, argmin_math};
