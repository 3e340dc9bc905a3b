//! Checkpointing: the gradient of a long loop in the memory of a few of its steps.
//!
//! A loop `sᵢ₊₁ = stepᵢ(p, sᵢ)` for `i < N`, then `y = output(p, s_N)`, recorded whole
//! ([`recorded_gradient`]) keeps a tape as long as the loop. [`checkpointed_gradient`] keeps
//! instead at most `slots` states (the *checkpoints*) and reverses the loop one step at a time:
//! it advances from a checkpoint in plain `f64` to the state a step starts from, records that one
//! step on a tape, and sweeps it. Which states to keep is Griewank's binomial schedule
//! (*revolve*): with `s` slots, no step is advanced more than `r` times for a loop of up to
//! `β(s, r) = C(s + r, s)` steps, and the total number of advances, [`advances`], is the least
//! any schedule with `s` slots needs. Memory drops from N steps of tape to one step of tape and
//! `s` states; time grows by the advances, about `r − 1` evaluations of the loop in `f64`.
//!
//! The gradient is **bit for bit** the one a whole recording gives, not merely close. A plain
//! sweep sums the adjoint of a node as `0 + c₁ + c₂ + …`, its contributions in decreasing node
//! order, that is from the last step back to the first. Reversing one step, the checkpointed
//! sweep seeds the step's outputs with the adjoints the later steps gave them, and its parameter
//! inputs with their running totals, so every sum starts where the plain one would be at that
//! point and goes on in the same order. This holds as long as no step returns the same variable
//! in two places of its next state or returns a parameter there (a plain recording then sums
//! what reaches the shared node from both places interleaved, which single-step tapes cannot
//! see): the gradient is still right in that case, up to the order of its sums.
//!
//! ```
//! use reverse::Op;
//! use reverse::checkpoint::{Recurrence, checkpointed_gradient, recorded_gradient};
//!
//! /// Explicit Euler steps of y' = −k·y, the quantity of interest y(T).
//! struct Decay {
//!     h: f64,
//! }
//!
//! impl Recurrence for Decay {
//!     fn sizes(&self) -> (usize, usize) {
//!         (1, 1) // one state component, one parameter
//!     }
//!     fn step<T: Op>(&self, _i: usize, k: &[T], y: &[T], next: &mut [T]) {
//!         next[0] = y[0] - k[0] * y[0] * self.h;
//!     }
//!     fn output<T: Op>(&self, _k: &[T], y: &[T]) -> T {
//!         y[0]
//!     }
//! }
//!
//! let f = Decay { h: 1e-3 };
//! let saved = checkpointed_gradient(&f, &[2.0], &[1.0], 1000, 10)?;
//! let whole = recorded_gradient(&f, &[2.0], &[1.0], 1000)?;
//! assert_eq!(saved.value, whole.value);
//! assert_eq!(saved.wrt_params, whole.wrt_params); // bit for bit
//! assert_eq!(saved.wrt_state, whole.wrt_state);
//! assert!(saved.stats.peak_tape_bytes * 100 < whole.stats.peak_tape_bytes);
//! # Ok::<(), reverse::Error>(())
//! ```

mod schedule;

use crate::{Adjoints, Tape, Var};
use shared_ops::{Error, Op};

pub use schedule::advances;

/// A loop to differentiate: a state of fixed length, updated by a step that may read
/// parameters, and a scalar output of the final state.
///
/// Written once over `T: Op`, as a [`Function`](shared_ops::Function) is, so that the same code
/// advances the loop in `f64` and records a step on a tape. The struct holds the loop's constant
/// data as plain `f64`; whatever the gradient is taken with respect to (initial state and
/// parameters) comes in through the slices.
///
/// ```
/// use reverse::Op;
/// use reverse::checkpoint::{Recurrence, run};
///
/// /// The Fibonacci recurrence, scaled: (a, b) ← (b, c·(a + b)).
/// struct Fib;
///
/// impl Recurrence for Fib {
///     fn sizes(&self) -> (usize, usize) {
///         (2, 1)
///     }
///     fn step<T: Op>(&self, _i: usize, c: &[T], s: &[T], next: &mut [T]) {
///         next[0] = s[1];
///         next[1] = c[0] * (s[0] + s[1]);
///     }
///     fn output<T: Op>(&self, _c: &[T], s: &[T]) -> T {
///         s[1]
///     }
/// }
///
/// assert_eq!(run(&Fib, &[1.0], &[0.0, 1.0], 10), 89.0);
/// ```
pub trait Recurrence {
    /// `(state length, number of parameters)`.
    fn sizes(&self) -> (usize, usize);

    /// Step `i` (counted from 0): writes the next state from the current one. `next` starts as
    /// a copy of `state`, so a component the step leaves alone is carried over unchanged.
    fn step<T: Op>(&self, i: usize, params: &[T], state: &[T], next: &mut [T]);

    /// The scalar whose gradient is taken, from the final state.
    fn output<T: Op>(&self, params: &[T], state: &[T]) -> T;
}

/// The value of a loop's output and its gradient with respect to the initial state and the
/// parameters, with what computing it cost.
///
/// ```
/// # use reverse::Op;
/// # use reverse::checkpoint::{Recurrence, recorded_gradient};
/// # struct Fib;
/// # impl Recurrence for Fib {
/// #     fn sizes(&self) -> (usize, usize) { (2, 1) }
/// #     fn step<T: Op>(&self, _i: usize, c: &[T], s: &[T], next: &mut [T]) {
/// #         next[0] = s[1];
/// #         next[1] = c[0] * (s[0] + s[1]);
/// #     }
/// #     fn output<T: Op>(&self, _c: &[T], s: &[T]) -> T { s[1] }
/// # }
/// let g = recorded_gradient(&Fib, &[1.0], &[0.0, 1.0], 3)?;
/// assert_eq!(g.value, 3.0);
/// // y = c²a + 2c²b + c³(a + b), at (a, b) = (0, 1) and c = 1
/// assert_eq!(g.wrt_state, vec![2.0, 3.0]);
/// assert_eq!(g.wrt_params, vec![7.0]);
/// # Ok::<(), reverse::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct LoopGradient {
    /// The output `y` of the final state.
    pub value: f64,
    /// `∂y/∂s₀`, one entry per component of the initial state.
    pub wrt_state: Vec<f64>,
    /// `∂y/∂p`, one entry per parameter.
    pub wrt_params: Vec<f64>,
    /// What the gradient cost in memory and steps.
    pub stats: LoopStats,
}

/// What a loop's gradient cost: steps recorded and advanced, tape and checkpoint memory.
///
/// ```
/// let s = reverse::checkpoint::LoopStats::default();
/// assert_eq!((s.steps, s.advances, s.peak_tape_bytes), (0, 0, 0));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoopStats {
    /// Steps recorded on a tape (each step exactly once).
    pub steps: usize,
    /// Steps evaluated in `f64` to reach, from a checkpoint, the state a step is recorded from
    /// (0 for a whole recording; [`advances`] for the binomial schedule).
    pub advances: usize,
    /// The most checkpoints held at once, the initial state included.
    pub slots_used: usize,
    /// The largest tape: [`TapeStats::bytes`](crate::TapeStats::bytes) of the whole recording,
    /// or of the largest one-step recording.
    pub peak_tape_bytes: usize,
    /// The checkpoints' bytes at their peak: `slots_used` states of `f64`.
    pub checkpoint_bytes: usize,
}

/// The loop's output after `steps` steps, with any number type: the plain function in `f64`,
/// a recording with [`Var`]s. The lengths are the caller's to get right.
///
/// ```
/// # use reverse::Op;
/// # use reverse::checkpoint::{Recurrence, run};
/// # struct Fib;
/// # impl Recurrence for Fib {
/// #     fn sizes(&self) -> (usize, usize) { (2, 1) }
/// #     fn step<T: Op>(&self, _i: usize, c: &[T], s: &[T], next: &mut [T]) {
/// #         next[0] = s[1];
/// #         next[1] = c[0] * (s[0] + s[1]);
/// #     }
/// #     fn output<T: Op>(&self, _c: &[T], s: &[T]) -> T { s[1] }
/// # }
/// assert_eq!(run(&Fib, &[2.0], &[0.0, 1.0], 0), 1.0);
/// assert_eq!(run(&Fib, &[2.0], &[0.0, 1.0], 2), 2.0 * (1.0 + 2.0));
/// ```
pub fn run<F: Recurrence, T: Op>(f: &F, params: &[T], state0: &[T], steps: usize) -> T {
    let mut state = state0.to_vec();
    let mut next = state0.to_vec();
    for i in 0..steps {
        next.copy_from_slice(&state);
        f.step(i, params, &state, &mut next);
        core::mem::swap(&mut state, &mut next);
    }
    f.output(params, &state)
}

/// The gradient by one recording of the whole loop and one sweep: the fastest way while the
/// tape fits in memory, and the reference [`checkpointed_gradient`] reproduces bit for bit.
///
/// Errors if `params` or `state0` do not have the lengths of [`Recurrence::sizes`].
///
/// ```
/// # use reverse::Op;
/// # use reverse::checkpoint::{Recurrence, recorded_gradient};
/// # struct Fib;
/// # impl Recurrence for Fib {
/// #     fn sizes(&self) -> (usize, usize) { (2, 1) }
/// #     fn step<T: Op>(&self, _i: usize, c: &[T], s: &[T], next: &mut [T]) {
/// #         next[0] = s[1];
/// #         next[1] = c[0] * (s[0] + s[1]);
/// #     }
/// #     fn output<T: Op>(&self, _c: &[T], s: &[T]) -> T { s[1] }
/// # }
/// let g = recorded_gradient(&Fib, &[1.0], &[0.0, 1.0], 1)?;
/// assert_eq!((g.value, g.wrt_state, g.wrt_params), (1.0, vec![1.0, 1.0], vec![1.0]));
/// assert!(recorded_gradient(&Fib, &[1.0], &[0.0], 1).is_err());
/// # Ok::<(), reverse::Error>(())
/// ```
pub fn recorded_gradient<F: Recurrence>(
    f: &F,
    params: &[f64],
    state0: &[f64],
    steps: usize,
) -> Result<LoopGradient, Error> {
    check_sizes(f, params, state0)?;
    let tape = Tape::new();
    let inputs = tape.vars(&[params, state0].concat());
    let (p, s) = inputs.split_at(params.len());
    let y = run(f, p, s, steps);
    let peak_tape_bytes = tape.stats().bytes;
    // The adjoints of every node in the thread's kept buffer: no fresh pages for them.
    let mut wrt_params = tape.sweep_wrt(&[(y, 1.0)], &inputs);
    let wrt_state = wrt_params.split_off(params.len());
    Ok(LoopGradient {
        value: y.value(),
        wrt_state,
        wrt_params,
        stats: LoopStats {
            steps,
            peak_tape_bytes,
            ..LoopStats::default()
        },
    })
}

/// The gradient of a loop of `steps` steps keeping at most `slots` states (the initial one
/// included) and one step's tape, by the binomial schedule (see the [module](self)). The result
/// is bit for bit that of [`recorded_gradient`] (but for a step that returns one variable twice
/// or returns a parameter, where it is equal up to the order of sums); its stats count
/// [`advances`]`(steps, slots)` steps advanced in `f64`.
///
/// Errors if `params` or `state0` do not have the lengths of [`Recurrence::sizes`], or if
/// `slots` is 0.
///
/// ```
/// # use reverse::Op;
/// # use reverse::checkpoint::{Recurrence, advances, checkpointed_gradient, recorded_gradient};
/// # struct Fib;
/// # impl Recurrence for Fib {
/// #     fn sizes(&self) -> (usize, usize) { (2, 1) }
/// #     fn step<T: Op>(&self, _i: usize, c: &[T], s: &[T], next: &mut [T]) {
/// #         next[0] = s[1];
/// #         next[1] = c[0] * (s[0] + s[1]);
/// #     }
/// #     fn output<T: Op>(&self, _c: &[T], s: &[T]) -> T { s[1] }
/// # }
/// let (c, s0) = ([0.9], [0.0, 1.0]);
/// let g = checkpointed_gradient(&Fib, &c, &s0, 100, 3)?;
/// assert_eq!(g.wrt_params, recorded_gradient(&Fib, &c, &s0, 100)?.wrt_params);
/// assert_eq!((g.stats.slots_used, g.stats.advances), (3, advances(100, 3)));
/// assert!(checkpointed_gradient(&Fib, &c, &s0, 100, 0).is_err());
/// # Ok::<(), reverse::Error>(())
/// ```
pub fn checkpointed_gradient<F: Recurrence>(
    f: &F,
    params: &[f64],
    state0: &[f64],
    steps: usize,
    slots: usize,
) -> Result<LoopGradient, Error> {
    check_sizes(f, params, state0)?;
    if slots == 0 {
        return Err(Error::NoCheckpointSlots { steps });
    }
    if steps == 0 {
        // Nothing to reverse: the recording is the output alone.
        return recorded_gradient(f, params, state0, 0);
    }
    let mut r = Reversal::new(f, params, state0, steps);
    r.reverse(slots);
    Ok(LoopGradient {
        value: r.value,
        wrt_state: r.adj_state,
        wrt_params: r.adj_params,
        stats: r.stats,
    })
}

fn check_sizes<F: Recurrence>(f: &F, params: &[f64], state0: &[f64]) -> Result<(), Error> {
    let (n, k) = f.sizes();
    for (argument, expected, found) in [
        ("the initial state", n, state0.len()),
        ("the parameter vector", k, params.len()),
    ] {
        if expected != found {
            return Err(Error::ArgumentLength {
                argument,
                expected,
                found,
            });
        }
    }
    Ok(())
}

/// The work of one checkpointed gradient: the checkpoints, the state being advanced, the one
/// tape every step is recorded on, and the adjoints carried from step to step.
struct Reversal<'a, F> {
    f: &'a F,
    params: &'a [f64],
    steps: usize,
    /// The checkpoints, a stack of states (the schedule frees them last in, first out).
    stack: Vec<f64>,
    /// How many states `stack` holds (the state may be empty).
    held: usize,
    /// The state being advanced, and the buffer of its successor.
    state: Vec<f64>,
    next: Vec<f64>,
    tape: Tape,
    /// The parameters, state and next state of the step on the tape.
    p: Vec<Var>,
    s: Vec<Var>,
    out: Vec<Var>,
    seeds: Vec<(Var, f64)>,
    adj: Adjoints,
    /// `∂y/∂s` for the state after the step to reverse next (before it, once reversed).
    adj_state: Vec<f64>,
    /// `∂y/∂p` summed over the steps reversed so far: the plain sweep's partial sums.
    adj_params: Vec<f64>,
    value: f64,
    stats: LoopStats,
}

impl<'a, F: Recurrence> Reversal<'a, F> {
    fn new(f: &'a F, params: &'a [f64], state0: &[f64], steps: usize) -> Self {
        Reversal {
            f,
            params,
            steps,
            stack: state0.to_vec(),
            held: 1,
            state: state0.to_vec(),
            next: state0.to_vec(),
            tape: Tape::new(),
            p: Vec::new(),
            s: Vec::new(),
            out: Vec::new(),
            seeds: Vec::new(),
            adj: Adjoints::default(),
            adj_state: vec![0.0; state0.len()],
            adj_params: vec![0.0; params.len()],
            value: 0.0,
            stats: LoopStats {
                steps,
                slots_used: 1,
                ..LoopStats::default()
            },
        }
    }

    /// Reverses steps `steps − 1` down to 0 with at most `slots` checkpoints.
    ///
    /// The schedule's recursion, "advance to the split, keep a checkpoint there, reverse the
    /// right part with one slot fewer, then the left part with the same slots", runs on a list
    /// of pending left parts, not on the call stack: with many slots it nests as deep as the
    /// loop is long.
    fn reverse(&mut self, slots: usize) {
        let n = self.state.len();
        // Pending parts: (first step, end, slots, checkpoints held), reversed from the top
        // checkpoint, which is the state their first step starts from.
        let mut todo = vec![(0, self.steps, slots, 1)];
        while let Some((mut a, b, mut s, held)) = todo.pop() {
            // The right part done, its checkpoints are free.
            self.held = held;
            self.stack.truncate(held * n);
            while b - a > 1 && s > 1 {
                let l = schedule::split(b - a, s);
                self.advance(a, l);
                todo.push((a, a + l, s, self.held));
                self.stack.extend_from_slice(&self.state);
                self.held += 1;
                self.stats.slots_used = self.stats.slots_used.max(self.held);
                (a, s) = (a + l, s - 1);
            }
            // One slot (or one step) left: each step from the checkpoint afresh.
            for i in (a..b).rev() {
                self.advance(a, i - a);
                self.reverse_step(i);
            }
        }
        self.stats.checkpoint_bytes = self.stats.slots_used * n * size_of::<f64>();
    }

    /// Sets `state` to the top checkpoint, the state step `a` starts from, advanced `k` steps.
    fn advance(&mut self, a: usize, k: usize) {
        let n = self.state.len();
        self.state
            .copy_from_slice(&self.stack[self.stack.len() - n..]);
        for i in a..a + k {
            self.next.copy_from_slice(&self.state);
            self.f.step(i, self.params, &self.state, &mut self.next);
            core::mem::swap(&mut self.state, &mut self.next);
        }
        self.stats.advances += k;
    }

    /// Records step `i` from `state` (and the output after the last step) and sweeps it:
    /// `adj_state` and `adj_params` move from after the step to before it.
    fn reverse_step(&mut self, i: usize) {
        self.tape.clear();
        self.tape.vars_into(self.params, &mut self.p);
        self.tape.vars_into(&self.state, &mut self.s);
        self.out.clear();
        self.out.extend_from_slice(&self.s);
        self.f.step(i, &self.p, &self.s, &mut self.out);
        // The parameters' running totals first: the plain sweep has summed the later steps'
        // contributions before it reaches this step's.
        self.seeds.clear();
        let running = self.p.iter().copied().zip(self.adj_params.iter().copied());
        self.seeds.extend(running);
        if i + 1 == self.steps {
            // The output on the same tape, after the step, as in a whole recording.
            let y = self.f.output(&self.p, &self.out);
            self.value = y.value();
            self.seeds.push((y, 1.0));
        } else {
            // A component passed through (`out[j]` is an input of this tape) gets its later
            // adjoint here, before this step's contributions: the plain order again.
            let later = self.out.iter().copied().zip(self.adj_state.iter().copied());
            self.seeds.extend(later);
        }
        self.tape.sweep_into(&self.seeds, &mut self.adj);
        let bytes = self.tape.stats().bytes;
        self.stats.peak_tape_bytes = self.stats.peak_tape_bytes.max(bytes);
        for (a, &v) in self.adj_params.iter_mut().zip(&self.p) {
            *a = self.adj.wrt(v);
        }
        for (a, &v) in self.adj_state.iter_mut().zip(&self.s) {
            *a = self.adj.wrt(v);
        }
    }
}
