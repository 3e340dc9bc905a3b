//! What the workspace's tests share: the generator of random programs that every crate's tests
//! run in every mode ([`programs`]), and finite differences ([`differences`]). Not published.

pub mod differences;
pub mod programs;

pub use differences::{central, fd_column, rel_close};
pub use programs::{
    Binary, Instr, Outputs, Program, Shape, Unary, UserSigmoid, cases, input, program_at, programs,
};
