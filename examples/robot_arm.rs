//! The Jacobian of a robot arm's hand position with respect to its joint angles, and inverse
//! kinematics by damped least squares.
//!
//! The forward kinematics is written once, as a product of nalgebra `UnitQuaternion`s of
//! `Real<T>` (see `examples::arm`): the same code gives the position in `f64`, its Jacobian by
//! forward sweeps (six joints, three coordinates) and, checked here, the geometric Jacobian
//! zᵢ × (p − oᵢ) that a robotics text derives by hand.
//!
//! Run: `cargo run --release --example robot_arm`

use examples::arm::{Arm, solve_ik};

fn main() {
    let arm = Arm::six_joints();
    let q = [0.3, -0.4, 0.9, 0.2, -0.5, 0.1];
    let j = jacobian::jacobian(&arm, &q).expect("six joint angles");
    println!("hand at q = {q:?}: {:.6?}", j.value);
    println!("∂p/∂q by {}:{:.6}", j.plan, j.matrix);
    let gap = (&j.matrix - arm.geometric_jacobian(&q)).abs().max();
    println!("largest difference from the geometric Jacobian zᵢ × (p − oᵢ): {gap:.1e}\n");

    let target = [0.4, 0.3, 0.5];
    println!("inverse kinematics to {target:?} from q = 0, damping λ = 0.05:");
    let ik = solve_ik(&arm, &[0.0; 6], target, 0.05, 100).expect("six joint angles");
    println!("{:>9} {:>12} {:>12}", "iteration", "‖error‖", "‖Δq‖");
    for s in &ik.steps {
        println!("{:>9} {:>12.3e} {:>12.3e}", s.iteration, s.error, s.step);
    }
    println!("q = {:.6?}, final error {:.1e}", ik.q, ik.error);
    println!("Jacobian plan at the last step: {}", ik.plan);
}
