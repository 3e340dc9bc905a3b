//! Record once, evaluate anywhere: a recording evaluated again at new points, the branch guards
//! that keep it honest, and checkpointing, which differentiates a long loop in the memory of a
//! few of its states.
//!
//! 1. A function recorded once on a replayable tape is evaluated again at new points without
//!    running the function; the gradient there equals, bit for bit, a fresh recording's.
//! 2. A function with a branch: where the branch goes the other way, re-evaluation is refused
//!    and names the guard that failed; a traced tape shows the failing guard in the primal pass;
//!    a prepared gradient records afresh there and says so.
//! 3. A damped pendulum stepped 10 000 times (1 000 under test), differentiated with respect to
//!    its parameters and initial state by one whole recording and by checkpointing with a few
//!    slots: the same gradient, bit for bit, from a tape of one step (bytes counted by the
//!    library).
//!
//! Run: `cargo run --release --example replay`

use wengert::reverse::checkpoint::{
    Recurrence, advances, checkpointed_gradient, recorded_gradient,
};
use wengert::reverse::{ReplayError, gradient};
use wengert::{Function, Op, PreparedGradient, Tape, Var};

/// f(x) = Σ sin(xᵢ)·xᵢ₊₁ + x₀²: smooth, no branch.
fn smooth<T: Op>(x: &[T]) -> T {
    let ring: T = x.windows(2).map(|w| w[0].sin() * w[1]).sum();
    ring + x[0] * x[0]
}

/// x₀² where x₀ > x₁, else sin x₁: a branch on the inputs, which the tape keeps as a guard.
fn kink<T: Op>(x: &[T]) -> T {
    if x[0] > x[1] { x[0] * x[0] } else { x[1].sin() }
}

/// [`kink`] as a [`Function`], for the prepared gradient.
struct Kink;

impl Function for Kink {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        vec![kink(x)]
    }
}

/// 1. One recording, re-evaluated at three points, against a fresh recording at each.
fn reevaluate() -> Result<(), ReplayError> {
    println!("1. f(x) = Σ sin(xᵢ)·xᵢ₊₁ + x₀², recorded once at x = (1, 1, 1, 1)");
    let tape = Tape::replayable();
    let x = tape.vars(&[1.0; 4]);
    let y = smooth(&x);
    let mut rec = tape.finish();
    for point in [
        [0.5, -1.0, 2.0, 0.0],
        [3.0, 0.1, 0.2, 0.3],
        [1.0, 2.0, 3.0, 4.0],
    ] {
        rec.reevaluate(&point)?;
        let replayed = rec.gradient(y).wrt_all(&x);
        let (_, fresh) = gradient(|v: &[Var]| smooth(v), &point);
        assert_eq!(
            replayed, fresh,
            "a re-evaluation gives a fresh recording's bits"
        );
        println!(
            "   at {point:?}: f = {:.6}, ∇f = {replayed:.6?} (the same bits as a fresh recording)",
            rec.value(y)
        );
    }
    println!();
    Ok(())
}

/// 2. A branch: the guard refuses a point where it flips; a prepared gradient records afresh.
fn guards() -> Result<(), Box<dyn std::error::Error>> {
    println!("2. f(x) = x₀² if x₀ > x₁, else sin x₁; recorded at (2, 1)");
    let tape = Tape::replayable();
    let x = tape.vars(&[2.0, 1.0]);
    let y = kink(&x);
    let mut rec = tape.finish();
    for point in [[3.0, 0.0], [0.0, 3.0]] {
        match rec.reevaluate(&point) {
            Ok(()) => println!(
                "   at {point:?}: re-evaluated, ∇f = {:?}",
                rec.gradient(y).wrt_all(&x)
            ),
            Err(e) => println!("   at {point:?}: {e}"),
        }
    }

    let mut traced = Tape::traced();
    let x = [traced.named_var("a", 2.0), traced.named_var("b", 1.0)];
    let _ = kink(&x);
    let refused = traced.trace_reevaluation(&[0.0, 3.0])?;
    println!("\n   the primal pass at (0, 3) on a traced tape:\n{refused}");

    let mut prepared = PreparedGradient::new(Kink, &[2.0, 1.0])?;
    for point in [[3.0, 0.0], [0.0, 3.0], [0.5, 2.0]] {
        let (value, g) = prepared.gradient(&point)?;
        println!(
            "   prepared, at {point:?}: f = {value:.6}, ∇f = {g:.6?}; {}",
            prepared.last()
        );
    }
    println!("   recorded afresh {} time(s)\n", prepared.rerecords());
    Ok(())
}

/// A damped pendulum, θ'' = −k sin θ − c θ', by explicit Euler steps of size `h`; the output is
/// θ at the end. Parameters (k, c), state (θ, ω).
struct Pendulum {
    h: f64,
}

impl Recurrence for Pendulum {
    fn sizes(&self) -> (usize, usize) {
        (2, 2)
    }
    fn step<T: Op>(&self, _i: usize, p: &[T], s: &[T], next: &mut [T]) {
        next[0] = s[0] + s[1] * self.h;
        next[1] = s[1] - (p[0] * s[0].sin() + p[1] * s[1]) * self.h;
    }
    fn output<T: Op>(&self, _p: &[T], s: &[T]) -> T {
        s[0]
    }
}

/// The loop's length: long in a release run, shorter in the unoptimised test profile.
const STEPS: usize = if cfg!(test) { 1_000 } else { 10_000 };

/// 3. The pendulum's gradient, recorded whole and checkpointed with a few slots.
fn checkpoints() -> Result<(), wengert::Error> {
    let f = Pendulum { h: 1e-3 };
    let (params, state0) = ([9.81, 0.5], [1.0, 0.0]);
    println!("3. A damped pendulum, {STEPS} Euler steps; the gradient of θ at the end");
    let whole = recorded_gradient(&f, &params, &state0, STEPS)?;
    println!(
        "   whole recording: ∂θ/∂(k, c) = {:.6?}, ∂θ/∂(θ₀, ω₀) = {:.6?}, tape {} bytes",
        whole.wrt_params, whole.wrt_state, whole.stats.peak_tape_bytes
    );
    println!(
        "   {:>5} {:>12} {:>12} {:>18}",
        "slots", "advances", "tape bytes", "checkpoint bytes"
    );
    for slots in [2, 4, 8, 16] {
        let g = checkpointed_gradient(&f, &params, &state0, STEPS, slots)?;
        assert_eq!(
            (g.wrt_params, g.wrt_state),
            (whole.wrt_params.clone(), whole.wrt_state.clone())
        );
        assert_eq!(g.stats.advances, advances(STEPS, slots));
        println!(
            "   {slots:>5} {:>12} {:>12} {:>18}",
            g.stats.advances, g.stats.peak_tape_bytes, g.stats.checkpoint_bytes
        );
    }
    println!("   every checkpointed gradient equals the whole recording's, bit for bit");
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    reevaluate()?;
    guards()?;
    checkpoints()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs() {
        super::main().unwrap();
    }

    #[test]
    fn a_flipped_branch_is_refused() {
        let tape = Tape::replayable();
        let x = tape.vars(&[2.0, 1.0]);
        let _ = kink(&x);
        let mut rec = tape.finish();
        assert!(rec.reevaluate(&[3.0, 0.0]).is_ok());
        assert!(matches!(
            rec.reevaluate(&[0.0, 3.0]),
            Err(ReplayError::Guard(_))
        ));
    }
}
