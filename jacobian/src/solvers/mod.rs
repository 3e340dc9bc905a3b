//! The solvers users hand Jacobians to, fed by this library: each behind a cargo feature of
//! `jacobian`, so the default build stays lean.
//!
//! | feature | crate | what it gets |
//! |---|---|---|
//! | `levenberg-marquardt` | [levenberg-marquardt] 0.15 | `LeastSquares`: a residual [`Function`](crate::Function) as its problem |
//! | `argmin` | [argmin] 0.11 | `Problem`: cost, gradient, Hessian, Jacobian and residuals of a `Function` |
//!
//! Both crates use nalgebra 0.34, while this library speaks nalgebra 0.35: the adapters take and
//! give the solvers' 0.34 vectors and matrices, converting at the boundary (a copy of the
//! Jacobian per call). The solver crates and their nalgebra are re-exported here
//! (`jacobian::solvers::argmin`, `jacobian::solvers::levenberg_marquardt`,
//! `jacobian::solvers::nalgebra`), so that a user needs no second version pin: write the
//! solver's side with `jacobian::solvers::nalgebra::DVector`.
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
#[cfg(any(feature = "levenberg-marquardt", feature = "argmin"))]
pub use nalgebra_v0_34 as nalgebra;
#[cfg(feature = "argmin")]
pub use optimise::Problem;
#[cfg(feature = "argmin")]
pub use {argmin, argmin_math};

/// A matrix of this library's nalgebra as one of the solvers' nalgebra (column-major both).
#[cfg(any(feature = "levenberg-marquardt", feature = "argmin"))]
fn to_solver(m: ::nalgebra::DMatrix<f64>) -> nalgebra_v0_34::DMatrix<f64> {
    let (rows, cols) = m.shape();
    nalgebra_v0_34::DMatrix::from_vec(rows, cols, m.data.into())
}
