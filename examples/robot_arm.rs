//! The Jacobian of a robot arm's hand position with respect to its joint angles, and inverse
//! kinematics by damped least squares.
//!
//! The arm is a chain of revolute joints. Joint i turns about its axis by the angle qᵢ, then
//! link i carries the next joint (or the hand) along a fixed offset. The hand's position
//! p(q) ∈ R³ is a product of rotations applied to the offsets, written once with nalgebra's
//! `UnitQuaternion<Real<T>>`, so one definition serves `f64`, forward duals and tape variables:
//! the same code gives the position, its Jacobian by forward sweeps (six joints, three
//! coordinates) and, checked here, the geometric Jacobian zᵢ × (p − oᵢ) that a robotics text
//! derives by hand.
//!
//! Inverse kinematics asks for q with p(q) = target. The damped least-squares step
//! (Wampler; Nakamura and Hanafusa) is
//!
//! Δq = Jᵀ (J Jᵀ + λ² I)⁻¹ (target − p(q)),
//!
//! which stays bounded near singular poses where the plain pseudo-inverse blows up. J is the
//! 3×n Jacobian ∂p/∂q, from a [`PreparedJacobian`] kept across the iterations. The error e is
//! clamped to [`MAX_MOVE`] per step (Buss and Kim's clamping): a linear model of p only holds
//! nearby, and unclamped steps towards a far target throw the arm around, with steps of several
//! radians and no progress.
//!
//! Run: `cargo run --release --example robot_arm`

use jacobian::{Function, Op, PreparedJacobian, Real};
use nalgebra::{Matrix3, Unit, UnitQuaternion, Vector3};

/// A serial arm of revolute joints.
#[derive(Clone, Debug)]
struct Arm {
    /// The axis of each joint, a unit vector in the frame of the link before it.
    axes: Vec<Unit<Vector3<f64>>>,
    /// The offset each link carries, from its joint to the next joint (the last: to the hand).
    links: Vec<Vector3<f64>>,
}

impl Arm {
    /// An arm of the given joint axes (normalised here) and link offsets.
    ///
    /// # Panics
    ///
    /// If the two lists differ in length, or an axis is zero.
    fn new(axes: &[Vector3<f64>], links: &[Vector3<f64>]) -> Arm {
        assert_eq!(axes.len(), links.len(), "an arm has one axis per link");
        let axes = axes
            .iter()
            .map(|a| Unit::try_new(*a, 1e-12).expect("a joint axis is not zero"));
        Arm {
            axes: axes.collect(),
            links: links.to_vec(),
        }
    }

    /// A six-joint arm in the shape of an industrial one: a base turning about z, a shoulder and
    /// an elbow about y, then a wrist of three joints (z, y, z).
    fn six_joints() -> Arm {
        let (y, z) = (Vector3::y(), Vector3::z());
        let links = [
            (0.0, 0.0, 0.3),
            (0.0, 0.0, 0.4),
            (0.35, 0.0, 0.0),
            (0.0, 0.0, 0.0),
            (0.1, 0.0, 0.0),
            (0.05, 0.0, 0.0),
        ];
        let links: Vec<Vector3<f64>> = links
            .iter()
            .map(|&(a, b, c)| Vector3::new(a, b, c))
            .collect();
        Arm::new(&[z, y, y, z, y, z], &links)
    }

    /// The number of joints.
    fn joints(&self) -> usize {
        self.axes.len()
    }

    /// The world frame of every joint at q, and the hand's position. The geometric Jacobian is
    /// built from them.
    fn frames(&self, q: &[f64]) -> (Vec<Frame>, Vector3<f64>) {
        let mut rotation = UnitQuaternion::identity();
        let mut origin = Vector3::zeros();
        let mut frames = Vec::with_capacity(self.joints());
        for ((axis, link), &angle) in self.axes.iter().zip(&self.links).zip(q) {
            frames.push(Frame {
                axis: rotation * axis.into_inner(),
                origin,
            });
            rotation *= UnitQuaternion::from_axis_angle(axis, angle);
            origin += rotation * link;
        }
        (frames, origin)
    }

    /// The Jacobian by geometry, for checking: column i is zᵢ × (p − oᵢ), the velocity of the
    /// hand when joint i alone turns at unit speed.
    fn geometric_jacobian(&self, q: &[f64]) -> nalgebra::DMatrix<f64> {
        let (frames, hand) = self.frames(q);
        let mut j = nalgebra::DMatrix::zeros(3, self.joints());
        for (i, f) in frames.iter().enumerate() {
            j.set_column(i, &f.axis.cross(&(hand - f.origin)));
        }
        j
    }
}

/// A joint's frame in the world: the axis it turns about, and its position.
#[derive(Clone, Copy, Debug)]
struct Frame {
    /// The joint's axis zᵢ, a unit vector.
    axis: Vector3<f64>,
    /// The joint's position oᵢ.
    origin: Vector3<f64>,
}

/// The hand's position p(q), for any number type.
impl Function for Arm {
    fn eval<T: Op>(&self, q: &[T]) -> Vec<T> {
        let lift = |v: &Vector3<f64>| v.map(|c| Real(T::constant(c)));
        let mut rotation = UnitQuaternion::<Real<T>>::identity();
        let mut hand = Vector3::<Real<T>>::zeros();
        for ((axis, link), &angle) in self.axes.iter().zip(&self.links).zip(q) {
            // A constant unit axis: already normalised in f64, so no recorded normalisation.
            let axis = Unit::new_unchecked(lift(axis));
            rotation *= UnitQuaternion::from_axis_angle(&axis, Real(angle));
            hand += rotation * lift(link);
        }
        hand.iter().map(|c| c.0).collect()
    }

    fn sizes(&self) -> Option<(usize, usize)> {
        Some((self.joints(), 3))
    }
}

/// The largest move of the hand asked of one step, in metres.
const MAX_MOVE: f64 = 0.1;

/// One iteration of [`solve_ik`], as the example prints it.
#[derive(Clone, Debug)]
struct Step {
    /// The iteration, from 0.
    iteration: usize,
    /// ‖target − p(q)‖ before the step.
    error: f64,
    /// ‖Δq‖.
    step: f64,
}

/// What [`solve_ik`] found.
#[derive(Clone, Debug)]
struct Solution {
    /// The joint angles.
    q: Vec<f64>,
    /// ‖target − p(q)‖ at them.
    error: f64,
    /// Every iteration.
    steps: Vec<Step>,
    /// The Jacobian's plan at the last step (mode, sweeps, why).
    plan: String,
}

/// The damped least-squares step Δq = Jᵀ (J Jᵀ + λ² I)⁻¹ e.
fn dls_step(j: &nalgebra::DMatrix<f64>, e: &Vector3<f64>, damping: f64) -> Vec<f64> {
    let jjt = Matrix3::from_iterator((j * j.transpose()).iter().copied());
    let damped = jjt + Matrix3::identity() * (damping * damping);
    let y = damped
        .cholesky()
        .expect("J Jᵀ + λ² I is positive definite for λ > 0")
        .solve(e);
    (j.transpose() * y).iter().copied().collect()
}

/// Joint angles that bring the hand to `target`, from `q0`, by damped least-squares steps until
/// the error is below 10⁻¹² or `iterations` have run.
///
/// # Errors
///
/// As [`PreparedJacobian::new`]: a `q0` of another length than the arm has joints.
fn solve_ik(
    arm: &Arm,
    q0: &[f64],
    target: [f64; 3],
    damping: f64,
    iterations: usize,
) -> Result<Solution, jacobian::Error> {
    let target = Vector3::from(target);
    let mut q = q0.to_vec();
    let mut prepared = PreparedJacobian::new(arm, &q)?;
    let mut steps = Vec::new();
    let mut plan = String::new();
    for iteration in 0..iterations {
        let j = prepared.jacobian(&q)?;
        let e = target - Vector3::from_column_slice(&j.value);
        if e.norm() < 1e-12 {
            break;
        }
        let asked = e * (MAX_MOVE / e.norm()).min(1.0);
        let dq = dls_step(&j.matrix, &asked, damping);
        let step = dq.iter().map(|v| v * v).sum::<f64>().sqrt();
        steps.push(Step {
            iteration,
            error: e.norm(),
            step,
        });
        for (qi, d) in q.iter_mut().zip(dq) {
            *qi += d;
        }
        plan = j.plan.to_string();
    }
    let hand = Vector3::from_column_slice(&arm.eval(&q));
    Ok(Solution {
        error: (target - hand).norm(),
        q,
        steps,
        plan,
    })
}

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

#[cfg(test)]
mod tests {
    use super::{Arm, solve_ik};
    use jacobian::{Function, Mode, jacobian_with};

    #[test]
    fn runs() {
        super::main();
    }

    /// ∂p/∂q by either mode equals zᵢ × (p − oᵢ), column by column, at poses of all kinds.
    #[test]
    fn arm_jacobian_is_the_geometric_jacobian() {
        let arm = Arm::six_joints();
        for q in [
            [0.0; 6],
            [0.3, -0.4, 0.9, 0.2, -0.5, 0.1],
            [3.0, 1.5, -2.5, 0.7, 2.9, -1.1],
        ] {
            let geometric = arm.geometric_jacobian(&q);
            let (_, hand) = arm.frames(&q);
            for mode in [Mode::Forward, Mode::Reverse] {
                let j = jacobian_with(&arm, &q, mode).unwrap();
                assert_eq!(j.value, arm.eval::<f64>(&q));
                assert!((j.value[0] - hand[0]).abs() < 1e-15);
                let gap = (&j.matrix - &geometric).abs().max();
                assert!(
                    gap < 1e-14,
                    "{mode:?} at {q:?}: {gap:e}\n{}\n{geometric}",
                    j.matrix
                );
            }
        }
    }

    #[test]
    fn inverse_kinematics_reaches_the_target() {
        let arm = Arm::six_joints();
        let target = [0.4, 0.3, 0.5];
        let ik = solve_ik(&arm, &[0.0; 6], target, 0.05, 100).unwrap();
        assert!(
            ik.error < 1e-10,
            "error {:e} after {} steps",
            ik.error,
            ik.steps.len()
        );
        let hand = arm.eval::<f64>(&ik.q);
        for k in 0..3 {
            assert!((hand[k] - target[k]).abs() < 1e-10);
        }
        // Damped steps shrink the error at every step here.
        assert!(
            ik.steps.windows(2).all(|w| w[1].error < w[0].error),
            "{:?}",
            ik.steps
        );
    }

    /// A target out of reach, 3 m from the shoulder (which the base's 0.3 m link holds at
    /// (0, 0, 0.3)) for 0.9 m of links beyond it: the damped steps stay bounded, and the hand ends
    /// stretched towards the target, 2.1 m short.
    #[test]
    fn inverse_kinematics_out_of_reach_stays_bounded() {
        let arm = Arm::six_joints();
        let ik = solve_ik(&arm, &[0.1; 6], [3.0, 0.0, 0.3], 0.05, 200).unwrap();
        assert!(ik.steps.iter().all(|s| s.step < 10.0), "{:?}", ik.steps);
        let reach: f64 = arm.links[1..].iter().map(|l| l.norm()).sum();
        // Never nearer than the stretched arm can be, and within 1% of it.
        assert!(
            ik.error >= 3.0 - reach - 1e-12,
            "error {} with reach {reach}",
            ik.error
        );
        assert!(
            ik.error < (3.0 - reach) * 1.01,
            "error {} with reach {reach}",
            ik.error
        );
    }
}
