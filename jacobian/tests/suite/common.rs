//! The generated programs and finite differences of `test-support`, as the drivers' tests use
//! them.
#![allow(unused_imports)]

use proptest::prelude::*;
pub use test_support::{
    Binary, Instr, Program, Shape, Unary, UserSigmoid as Sigmoid, cases, central, fd_column, input,
    rel_close,
};

/// Programs of the drivers' shape ([`Shape::drivers`]) and a point: 1–4 inputs, 1–13
/// instructions, 1–3 outputs.
pub fn program() -> impl Strategy<Value = (Program, Vec<f64>)> {
    test_support::program_at(Shape::drivers())
}
