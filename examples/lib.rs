//! Runnable examples; see the `[[example]]` targets of this package:
//!
//! * `cargo run --release --example jacobians`: Jacobians of a wide and a tall function, with
//!   the plan each one chose.
//! * `cargo run --release --example seeds`: the four seed examples, in both modes.
//! * `cargo run --release --example mode_asymmetry`: forward against reverse Jacobian time over
//!   n, m = 1…512, the crossover, and a chart in `target/` (`-- --docs`: the README's copy).
//! * `cargo run --release --example tensor_seed` and `--example mlp`: the tensor autograd on the
//!   seed example, and a two-layer perceptron trained by gradient descent.
//! * `cargo run --release --example classifier`: a softmax classifier of two interleaved spirals
//!   trained with Adam, printing its loss and accuracy.
//! * `cargo run --release --example nested`: derivatives of derivatives in all four pairs of
//!   modes, on GradBench's nested problems `saddle` and `particle`.
//! * `cargo run --release --example robot_arm`: the Jacobian of a six-joint arm's hand position
//!   (nalgebra rotations on AD numbers) and damped least-squares inverse kinematics.
//! * `cargo run --release --example fitting`: a sum of two exponentials fitted to noisy data by
//!   Levenberg–Marquardt with this library's Jacobian.
//! * `cargo run --release --example solvers`: Rosenbrock of 100 variables by argmin's Newton
//!   (our Hessian) and L-BFGS (our gradient).
#![warn(missing_docs)]

pub mod chart;
pub mod lcg;
