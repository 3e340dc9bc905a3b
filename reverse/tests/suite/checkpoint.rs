//! Checkpointing: the gradient equals a whole recording's bit for bit, the schedule advances as
//! few steps as the binomial bound says, and wrong arguments are errors that name the sizes.
//! (The GradBench ODE and an RNN over 10⁵ steps are checked in `workloads/tests/checkpoint.rs`,
//! beside those workloads.)

use core::any::TypeId;
use core::cell::Cell;
use proptest::prelude::*;
use reverse::checkpoint::{Recurrence, advances, checkpointed_gradient, recorded_gradient};
use reverse::{Error, Op, Var};

/// A loop that exercises what a step may do: n-ary nodes (a dot product, a sum), a parameter
/// read by several operations, a step that depends on its index, a component passed through
/// unchanged and a permutation of components.
struct Mixer;

impl Recurrence for Mixer {
    fn sizes(&self) -> (usize, usize) {
        (3, 3)
    }
    fn step<T: Op>(&self, i: usize, p: &[T], s: &[T], next: &mut [T]) {
        if i % 5 == 4 {
            // A permutation: both outputs are inputs of the step.
            next[0] = s[1];
            next[1] = s[0];
            return;
        }
        next[0] = T::dot(s, p).tanh();
        next[1] = s[1] * T::constant(0.9) + s[0].sin() * p[0];
        if !i.is_multiple_of(3) {
            // Otherwise next[2] stays s[2]: a pass-through.
            next[2] = [
                s[2],
                s[0] * s[1] * T::constant(0.1),
                p[2] * T::constant(1e-2),
            ]
            .into_iter()
            .sum();
        }
    }
    fn output<T: Op>(&self, p: &[T], s: &[T]) -> T {
        s[0] * s[1] + s[2].exp() * p[1]
    }
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Asserts that a checkpointed gradient equals the whole recording's, bit for bit.
#[track_caller]
fn assert_same_bits<F: Recurrence>(f: &F, p: &[f64], s0: &[f64], steps: usize, slots: usize) {
    let whole = recorded_gradient(f, p, s0, steps).unwrap();
    let saved = checkpointed_gradient(f, p, s0, steps, slots).unwrap();
    let at = format!("{steps} steps, {slots} slots");
    assert_eq!(saved.value.to_bits(), whole.value.to_bits(), "value, {at}");
    assert_eq!(
        bits(&saved.wrt_state),
        bits(&whole.wrt_state),
        "∂/∂s₀, {at}"
    );
    assert_eq!(
        bits(&saved.wrt_params),
        bits(&whole.wrt_params),
        "∂/∂p, {at}"
    );
}

const P: [f64; 3] = [0.7, -0.4, 1.3];
const S0: [f64; 3] = [0.2, -0.5, 0.1];

#[test]
fn equals_the_whole_recording_bit_for_bit() {
    for steps in [0, 1, 2, 3, 7, 50, 333] {
        for slots in [1, 2, 3, 5, 20, 400] {
            assert_same_bits(&Mixer, &P, &S0, steps, slots);
        }
    }
}

#[test]
fn keeps_one_step_of_tape() {
    let whole = recorded_gradient(&Mixer, &P, &S0, 2000).unwrap();
    let saved = checkpointed_gradient(&Mixer, &P, &S0, 2000, 10).unwrap();
    let s = saved.stats;
    assert!(
        s.peak_tape_bytes * 1000 <= whole.stats.peak_tape_bytes,
        "{} bytes of tape, against {}",
        s.peak_tape_bytes,
        whole.stats.peak_tape_bytes
    );
    assert_eq!((s.steps, s.slots_used), (2000, 10));
    assert_eq!(s.checkpoint_bytes, 10 * 3 * 8);
    assert_eq!(s.advances, advances(2000, 10));
    assert_eq!((whole.stats.advances, whole.stats.slots_used), (0, 0));
}

/// Counts the evaluations of its step, by number type, to check the stats against what ran.
struct Counted {
    plain: Cell<usize>,
    recorded: Cell<usize>,
}

impl Recurrence for Counted {
    fn sizes(&self) -> (usize, usize) {
        (2, 1)
    }
    fn step<T: Op>(&self, _i: usize, p: &[T], s: &[T], next: &mut [T]) {
        let counter = if TypeId::of::<T>() == TypeId::of::<f64>() {
            &self.plain
        } else {
            assert_eq!(TypeId::of::<T>(), TypeId::of::<Var>());
            &self.recorded
        };
        counter.set(counter.get() + 1);
        next[0] = s[1];
        next[1] = (s[0] * p[0]).sin() + s[1];
    }
    fn output<T: Op>(&self, _p: &[T], s: &[T]) -> T {
        s[1]
    }
}

#[test]
fn stats_count_what_ran() {
    for (steps, slots) in [(1, 1), (12, 1), (100, 4), (1000, 30), (50, 60)] {
        let f = Counted {
            plain: Cell::new(0),
            recorded: Cell::new(0),
        };
        let g = checkpointed_gradient(&f, &[0.3], &[1.0, 2.0], steps, slots).unwrap();
        assert_eq!(
            f.plain.get(),
            g.stats.advances,
            "{steps} steps, {slots} slots"
        );
        assert_eq!(f.recorded.get(), steps, "each step recorded once");
        assert!(g.stats.slots_used <= slots.min(steps));
    }
}

#[test]
fn slots_for_every_step_advance_each_step_once() {
    let g = checkpointed_gradient(&Mixer, &P, &S0, 40, 40).unwrap();
    assert_eq!((g.stats.advances, g.stats.slots_used), (39, 40));
    let g = checkpointed_gradient(&Mixer, &P, &S0, 40, 1).unwrap();
    assert_eq!((g.stats.advances, g.stats.slots_used), (40 * 39 / 2, 1));
}

/// The fewest advances of any schedule, by trying every first checkpoint: reversing `m` steps
/// with `s` slots is advancing `l` steps to a checkpoint, reversing the `m − l` on the right
/// with `s − 1` slots and the `l` on the left with `s`; one slot restarts every step from the
/// first state.
fn fewest_advances(m: usize, s: usize, memo: &mut Vec<Vec<Option<usize>>>) -> usize {
    if m <= 1 {
        return 0;
    }
    if s == 1 {
        return m * (m - 1) / 2;
    }
    if let Some(t) = memo[m][s] {
        return t;
    }
    let t = (1..m)
        .map(|l| l + fewest_advances(m - l, s - 1, memo) + fewest_advances(l, s, memo))
        .min()
        .unwrap();
    memo[m][s] = Some(t);
    t
}

#[test]
fn advances_is_the_least_any_schedule_needs() {
    let mut memo = vec![vec![None; 16]; 120];
    for m in 0..120 {
        for s in 1..16 {
            assert_eq!(
                advances(m, s),
                fewest_advances(m, s, &mut memo),
                "{m} steps, {s} slots"
            );
        }
    }
    assert_eq!(advances(5, 0), usize::MAX);
}

#[test]
fn wrong_arguments_are_errors_naming_the_sizes() {
    let e = checkpointed_gradient(&Mixer, &P, &[1.0, 2.0], 10, 3).unwrap_err();
    assert_eq!(
        e,
        Error::ArgumentLength {
            argument: "the initial state",
            expected: 3,
            found: 2
        }
    );
    assert_eq!(
        e.to_string(),
        "the initial state has length 2, but the function declares 3"
    );
    let e = recorded_gradient(&Mixer, &[1.0; 4], &S0, 10).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the parameter vector has length 4, but the function declares 3"
    );
    let e = checkpointed_gradient(&Mixer, &P, &S0, 10, 0).unwrap_err();
    assert_eq!(e, Error::NoCheckpointSlots { steps: 10 });
    assert_eq!(
        e.to_string(),
        "checkpointing a loop of 10 steps needs at least 1 slot (it holds the initial state), but 0 were given"
    );
}

/// A step that returns one variable in two places and a parameter in a third: a whole recording
/// then sums into one node what two tapes of one step keep apart, so only the order of sums
/// differs.
struct Aliasing;

impl Recurrence for Aliasing {
    fn sizes(&self) -> (usize, usize) {
        (3, 1)
    }
    fn step<T: Op>(&self, _i: usize, p: &[T], s: &[T], next: &mut [T]) {
        let a = (s[0] * s[1]).sin() + s[1] * T::constant(0.9) + s[2] * p[0];
        next[0] = a;
        next[1] = a;
        next[2] = p[0];
    }
    fn output<T: Op>(&self, _p: &[T], s: &[T]) -> T {
        s[0] * s[1] + s[2]
    }
}

#[test]
fn aliased_outputs_give_the_gradient_up_to_rounding() {
    let (p, s0) = ([0.8], [0.3, 0.4, 0.5]);
    let whole = recorded_gradient(&Aliasing, &p, &s0, 20).unwrap();
    let saved = checkpointed_gradient(&Aliasing, &p, &s0, 20, 4).unwrap();
    assert_eq!(saved.value.to_bits(), whole.value.to_bits());
    let got = [saved.wrt_state, saved.wrt_params].concat();
    let want = [whole.wrt_state, whole.wrt_params].concat();
    for (g, w) in got.iter().zip(&want) {
        assert!(w.abs() > 1e-6, "a gradient that could be wrong: {w}");
        assert!((g - w).abs() <= 1e-14 * w.abs(), "{g} vs {w}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Any number of steps and slots (one slot, more slots than steps): the whole recording's
    /// bits, the binomial bound's advances, never more checkpoints than slots.
    #[test]
    fn any_steps_and_slots(
        steps in 0usize..60,
        slots in 1usize..70,
        p in prop::array::uniform3(-1.5f64..1.5),
        s0 in prop::array::uniform3(-1.0f64..1.0),
    ) {
        let whole = recorded_gradient(&Mixer, &p, &s0, steps).unwrap();
        let saved = checkpointed_gradient(&Mixer, &p, &s0, steps, slots).unwrap();
        prop_assert_eq!(saved.value.to_bits(), whole.value.to_bits());
        prop_assert_eq!(bits(&saved.wrt_state), bits(&whole.wrt_state));
        prop_assert_eq!(bits(&saved.wrt_params), bits(&whole.wrt_params));
        prop_assert_eq!(saved.stats.advances, advances(steps, slots));
        prop_assert!(saved.stats.slots_used <= slots);
        prop_assert_eq!(saved.stats.steps, steps);
    }
}
