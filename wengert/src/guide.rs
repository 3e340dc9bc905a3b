//! The guide: chapters in a teacher's order, each compiled here so that every snippet in it runs
//! as a test (`cargo test -p wengert`). The chapters are the markdown files of `docs/guide/`; the
//! pictures they show are in `docs/guide/img/`, drawn by the examples they name.
//!
//! 1. [First derivatives in five minutes](crate::guide::ch01_first_derivatives)
//! 2. [How automatic differentiation works](crate::guide::ch02_how_it_works)
//! 3. [Forward and reverse mode](crate::guide::ch03_forward_and_reverse)
//! 4. [Jacobians and the plan](crate::guide::ch04_jacobians_and_the_plan)
//! 5. [Higher order](crate::guide::ch05_higher_order)
//! 6. [Recordings, branch guards and checkpoints](crate::guide::ch06_recordings)
//! 7. [Sparse Jacobians and Hessians](crate::guide::ch07_sparsity)
//! 8. [Linear algebra and solvers](crate::guide::ch08_linear_algebra_and_solvers)
//! 9. [Tensors, for PyTorch users](crate::guide::ch09_tensors)
//! 10. [Conventions and accuracy](crate::guide::ch10_conventions_and_accuracy)
//! 11. [Benchmarking forward against reverse](crate::guide::ch11_benchmarking)
//! 12. [The design](crate::guide::ch12_design)
//!
//! The guide in two lines, the first example of chapter 1: f(x) = x² + 3 at x = 2 has the value
//! 7 and the derivative 4.
//!
//! ```
//! let (y, dy) = wengert::forward::derivative(|x| x * x + 3.0, 2.0);
//! assert_eq!((y, dy), (7.0, 4.0));
//! ```

#[doc = include_str!("../guide/01-first-derivatives.md")]
pub mod ch01_first_derivatives {}

#[doc = include_str!("../guide/02-how-it-works.md")]
pub mod ch02_how_it_works {}

#[doc = include_str!("../guide/03-forward-and-reverse.md")]
pub mod ch03_forward_and_reverse {}

#[doc = include_str!("../guide/04-jacobians-and-the-plan.md")]
pub mod ch04_jacobians_and_the_plan {}

#[doc = include_str!("../guide/05-higher-order.md")]
pub mod ch05_higher_order {}

#[doc = include_str!("../guide/06-recordings.md")]
pub mod ch06_recordings {}

#[doc = include_str!("../guide/07-sparsity.md")]
pub mod ch07_sparsity {}

#[doc = include_str!("../guide/08-linear-algebra-and-solvers.md")]
pub mod ch08_linear_algebra_and_solvers {}

#[doc = include_str!("../guide/09-tensors.md")]
pub mod ch09_tensors {}

#[doc = include_str!("../guide/10-conventions-and-accuracy.md")]
pub mod ch10_conventions_and_accuracy {}

#[doc = include_str!("../guide/11-benchmarking.md")]
pub mod ch11_benchmarking {}

#[doc = include_str!("../guide/12-design.md")]
pub mod ch12_design {}
