//! The operations on [`Tensor`](crate::tensor::Tensor), one family per file
//! (in the style of dfdx). Each op computes its result eagerly and records a
//! backward closure that maps the result's gradient to its inputs' gradients.

pub(crate) mod binary;
pub(crate) mod custom;
pub(crate) mod matmul;
pub(crate) mod reduce;
pub(crate) mod shape;
pub(crate) mod unary;
