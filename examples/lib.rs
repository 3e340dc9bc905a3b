//! Runnable examples; see the `[[example]]` targets of this package:
//!
//! * `cargo run --release --example jacobians`: Jacobians of a wide and a tall function, with
//!   the plan each one chose.
//! * `cargo run --release --example seeds`: the four seed examples, in both modes.
