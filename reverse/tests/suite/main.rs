//! The `reverse` crate's integration tests, one module per topic, in one test binary, so that
//! what they share (nalgebra over `Real<Var>`, tapes of duals, proptest) is compiled once. Run
//! one topic with `cargo test -p reverse --test suite trace::`. The memory and warm-up tests
//! stay binaries of their own: they measure the process.
//!
//! proptest keeps the failures it found in `tests/proptest-regressions/<module path>.txt` and
//! replays them before new cases.

mod basics;
mod checkpoint;
mod dual_tape;
#[cfg(feature = "jit")]
mod jit;
mod nary;
mod nested;
mod never_wrong;
mod real_field;
mod resweep;
mod trace;
