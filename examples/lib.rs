//! Runnable, teaching-first examples, one concept each: every `[[example]]` target of this
//! package is one file that holds all it needs, its module docs saying what it teaches. Each
//! also runs under the test command (`cargo test --workspace`), at a small size where the
//! unoptimised test profile would be slow.
//!
//! * `cargo run --release --example graph`: the computation graph of two small recordings drawn
//!   with every node's value, adjoint and local partials (`-- --docs`: the guide's pictures).
//! * `cargo run --release --example jacobians`: Jacobians of a wide and a tall function, with
//!   the plan each one chose, and why reverse mode suits the one and forward mode the other.
//! * `cargo run --release --example seeds`: the four seed examples (a square plus a constant, a
//!   product, a tanh layer, a user-defined sigmoid), each in forward and in reverse mode.
//! * `cargo run --release --example crossover`: the sweeps each mode runs, and the chart of the
//!   mode the plan chooses over n and m, from the cost model (`-- --docs`: the guide's copy).
//! * `cargo run --release --example mode_asymmetry`: forward against reverse Jacobian time over
//!   n, m = 1…512, the crossover, and a chart in `target/` (`-- --results`: the results page's copy).
//! * `cargo run --release --example second_order`: a second derivative traced node by node in
//!   forward over reverse, then the Hessian of a dense function timed in the four mode pairs,
//!   with a chart in `target/` (`-- --results`: the results page's copy).
//! * `cargo run --release --example replay`: a recording evaluated again at new points, the
//!   branch guards that refuse a flipped branch, and a long loop's gradient by checkpointing.
//! * `cargo run --release --example sparse`: sparse Jacobians and Hessians by detection and
//!   colouring, where a few sweeps give the whole matrix, and the picture of a colouring
//!   (`-- --docs`: the guide's copy).
//! * `cargo run --release --example nested`: derivatives of derivatives in all four pairs of
//!   modes, on GradBench's nested problems `saddle` and `particle`.
//! * `cargo run --release --example tensor_seed`: the tensor autograd on the seed example, against
//!   the scalar tape and the gradient by hand.
//! * `cargo run --release --example mlp`: a two-layer perceptron fitted by plain gradient
//!   descent on tensors.
//! * `cargo run --release --example classifier`: a softmax classifier of two interleaved spirals
//!   trained with Adam, printing its loss and accuracy.
//! * `cargo run --release --example robot_arm`: the Jacobian of a six-joint arm's hand position
//!   (nalgebra rotations on AD numbers) and damped least-squares inverse kinematics.
//! * `cargo run --release --example fitting`: a sum of two exponentials fitted to noisy data by
//!   Levenberg–Marquardt with this library's Jacobian.
//! * `cargo run --release --example solvers`: Rosenbrock of 100 variables minimised by argmin's
//!   Newton method (our Hessian) and L-BFGS (our gradient).
//!
//! This library holds only what several examples share: [`lcg`], the seeded random numbers,
//! [`chart`], the plotting both timing charts use, and [`picture`], the guide's pictures
//! (hand-written SVG, and the check that the guide's copies are what the code draws).
#![warn(missing_docs)]

pub mod chart;
pub mod lcg;
pub mod picture;
