//! Runnable examples; see the `[[example]]` targets of this package:
//!
//! * `cargo run --release --example jacobians`: Jacobians of a wide and a tall function, with
//!   the plan each one chose.
//! * `cargo run --release --example seeds`: the four seed examples, in both modes.
//! * `cargo run --release --example mode_asymmetry`: forward against reverse Jacobian time over
//!   n, m = 1…512, the crossover, and the chart `docs/mode_asymmetry.svg`.
//! * `cargo run --release --example tensor_seed` and `--example mlp`: the tensor autograd on the
//!   seed example, and a two-layer perceptron trained by gradient descent.
