//! The `jacobian` crate's integration tests, one module per topic, in one test binary: the
//! generated programs of `common` and the drivers they run through are compiled once, not once
//! per file (the cold `cargo test` pays for every instantiation of nalgebra and of the four
//! Hessian pairs per binary). Run one topic with `cargo test -p jacobian --test suite hessian::`.
//!
//! proptest keeps the failures it found in `tests/proptest-regressions/<module>.txt` (beside the
//! folder that holds `main.rs`) and replays them before new cases.

mod common;
mod cross_mode;
mod dependencies;
mod empty_input;
mod errors;
mod hessian;
mod linalg;
mod memory;
mod mode_pairs;
mod never_wrong;
mod plan;
mod prepared_hessian;
mod prepared_hvp;
mod prepared_sparse_hessian;
mod replay;
mod report;
mod seed_matrices;
mod seeds;
mod sparse;
mod sparse_drivers;
mod sparse_replay;
mod sparse_sweeps;
mod structural;
