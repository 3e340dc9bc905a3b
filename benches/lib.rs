//! The criterion benchmarks live in `benches/benches/`; what they time is the `workloads` crate.
//!
//! This library is empty on purpose: a package needs a library or a binary, and keeping the
//! criterion targets in a package of their own means `cargo test --workspace` never compiles
//! criterion (see the README's benchmark commands, `cargo bench -p benches`).
#![forbid(unsafe_code)]
