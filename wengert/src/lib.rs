//! Automatic differentiation for Rust: forward mode (dual numbers), reverse mode (a
//! Wengert-list tape), full Jacobians by whichever of the two is cheaper, Hessians, sparse
//! derivatives and, with the `tensor` feature, array-valued reverse mode in the style of a
//! small PyTorch.
//!
//! Write a function once over [`Op`], then ask for any derivative of it:
//!
//! ```
//! use wengert::{Function, Op, gradient, jacobian};
//!
//! /// f(x) = [x₀·x₁, sin x₀, x₁²]
//! struct F;
//! impl Function for F {
//!     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
//!         vec![x[0] * x[1], x[0].sin(), x[1] * x[1]]
//!     }
//! }
//!
//! let j = jacobian(&F, &[1.0, 2.0])?;
//! assert_eq!(j.matrix[(2, 1)], 4.0); // ∂(x₁²)/∂x₁ at x₁ = 2
//! println!("{}", j.plan); // which mode, and why
//! # Ok::<(), wengert::Error>(())
//! ```
//!
//! The modes are also here as the crates they are written in, so that every example in their
//! documentation reads the same through this one dependency (`use wengert::{forward, reverse}`):
//! [`forward`] (tangent numbers), [`reverse`] (the tape), [`jacobian`](mod@jacobian) (the drivers, whose items
//! are also at this crate's root), [`ops`] (the number interface and the rule table), and
//! [`tensor`] behind the `tensor` feature. The [`guide`] teaches the library chapter by chapter.
//!
//! # Features
//!
//! | feature | adds |
//! |---|---|
//! | `tensor` | [`tensor`]: ndarray tensors with `backward()` and optimisers, and [`Tensor`] and [`ndarray`] at the root |
//! | `levenberg-marquardt` | [`solvers::LeastSquares`]: a residual `Function` as a `levenberg-marquardt` problem |
//! | `argmin` | [`solvers::Problem`]: a `Function`'s cost, gradient, Hessian and Jacobian for `argmin`'s solvers |
//! | `jit` | recordings compiled to machine code with Cranelift (`reverse::jit`, `Recording::compile_gradient`), and [`Preparation::Compile`] |
//! | `nalgebra_v0_34` | nalgebra 0.33 and 0.34's `RealField` for every AD number, beside 0.35's |
#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub use forward::{self, Dual, DualVec, Taylor};
pub use jacobian::{self, *};
pub use nalgebra;
pub use reverse::{self, Recording, Tape, Var};
pub use shared_ops as ops;
pub use shared_ops::num_traits::Float;
#[cfg(feature = "tensor")]
pub use tensor::{self, Tensor, ndarray};

pub mod guide;

/// The README's code blocks, compiled and run as tests: each is a whole program.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
