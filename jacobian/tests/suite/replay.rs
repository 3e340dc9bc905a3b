//! Re-evaluation of recordings at new points: bit for bit what a fresh recording gives, on
//! generated programs with branches; guards that fail where a branch flips; the errors.

use crate::common::{Program, cases, program, until_compiled};
use forward::Dual;
use jacobian::{Function, Op, Preparation, PreparedGradient, Replay};
use proptest::prelude::*;
use reverse::{Float, ReplayError, Tape, Var};

/// A program with decisions: the generated straight-line `base`, then steps that branch on
/// comparisons of its values, and the rules with pieces (`max`, `floor`, `%`, …), a dot
/// product and a sum with constants among the terms.
#[derive(Clone, Debug)]
pub(crate) struct Branchy {
    pub(crate) base: Program,
    steps: Vec<(u8, usize, usize)>,
}

impl Function for Branchy {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let mut v = self.base.eval(x);
        v.extend_from_slice(x);
        for &(op, a, b) in &self.steps {
            let (p, q) = (v[a % v.len()], v[b % v.len()]);
            let y = match op % 10 {
                0 => {
                    if p < q {
                        p * q
                    } else {
                        p.sin() - q
                    }
                }
                1 => {
                    if p > T::constant(0.25) {
                        p.exp().min(T::constant(5.0))
                    } else {
                        q.cos()
                    }
                }
                2 => {
                    let m = p.max(q) + p.min(q) * T::constant(0.5);
                    if (p * q - T::constant(0.25)).is_sign_negative() {
                        m
                    } else {
                        m * q
                    }
                }
                3 => p.floor() + q.round() * p + q.signum() * q + p.trunc() + q.ceil(),
                4 => (p * T::constant(3.0)) % (T::constant(0.75) + q * q) + p.fract() * q,
                5 => p.abs() * q + p.hypot(q) + (p - q).apply1(shared_ops::rules::Relu),
                6 => T::dot(&[p, q, T::constant(2.0)], &[q, T::constant(-1.0), p]),
                7 => [T::constant(1.5), p, T::constant(-0.5), q, p * q]
                    .into_iter()
                    .sum(),
                8 => p.powi(3) - q.mul_add(p, T::constant(0.5)),
                _ => {
                    if p == q {
                        p
                    } else {
                        (p - q) / (T::one() + (p - q).abs())
                    }
                }
            };
            v.push(y);
        }
        vec![v[v.len() - 1], v[v.len() / 2]]
    }
}

/// Branchy programs with a recording point and a new point.
pub(crate) fn branchy() -> impl Strategy<Value = (Branchy, Vec<f64>, Vec<f64>)> {
    (
        program(),
        prop::collection::vec((any::<u8>(), any::<usize>(), any::<usize>()), 0..8),
        prop::collection::vec(crate::common::input(), 4),
        0..3usize,
    )
        .prop_map(|((base, x0), steps, far, near)| {
            // The new point: often close (branches tend to agree), sometimes far (they flip).
            let x1 = x0
                .iter()
                .zip(&far)
                .map(|(a, b)| match near {
                    0 => *b,
                    _ => a + 1e-3 * b,
                })
                .collect();
            (Branchy { base, steps }, x0, x1)
        })
}

/// Values and gradients of every output, recorded afresh at `x`.
fn fresh(f: &impl Function, x: &[f64]) -> (Vec<f64>, Vec<Vec<f64>>) {
    let tape = Tape::new();
    let xs = tape.vars(x);
    let ys = f.eval(&xs);
    let values = ys.iter().map(|y| y.value()).collect();
    let grads = ys.iter().map(|&y| tape.gradient(y).wrt_all(&xs)).collect();
    (values, grads)
}

/// The bits of each number, every NaN as one: Rust leaves the sign and payload of a NaN that
/// arithmetic makes unspecified (a sweep that subtracts and one that adds a negation may
/// differ there).
pub(crate) fn bits(v: &[f64]) -> Vec<u64> {
    v.iter()
        .map(|x| if x.is_nan() { f64::NAN } else { *x }.to_bits())
        .collect()
}

fn same(a: &(Vec<f64>, Vec<Vec<f64>>), b: &(Vec<f64>, Vec<Vec<f64>>)) -> bool {
    bits(&a.0) == bits(&b.0) && a.1.iter().zip(&b.1).all(|(p, q)| bits(p) == bits(q))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(400)))]

    /// Re-evaluated at a new point, a recording gives bit for bit the values and gradients of a
    /// fresh recording there, or refuses with a guard and stays at the point it was at.
    #[test]
    fn replay_equals_fresh_recording((f, x0, x1) in branchy()) {
        replay_agrees(&f, &x0[..f.base.n], &x1[..f.base.n])?;
    }
}

/// Records `f` at `x0` on a replayable tape and re-evaluates it at `x1`: its values and
/// gradients are bit for bit a fresh recording's at `x1`, or a guard refuses and they stay
/// those at `x0`; back at `x0` every guard holds again.
fn replay_agrees(f: &impl Function, x0: &[f64], x1: &[f64]) -> Result<(), TestCaseError> {
    let tape = Tape::replayable();
    let xs = tape.vars(x0);
    let ys = f.eval(&xs);
    let mut rec = tape.finish();
    let read = |rec: &reverse::Recording| {
        let values = ys.iter().map(|&y| rec.value(y)).collect();
        let grads = ys.iter().map(|&y| rec.gradient(y).wrt_all(&xs)).collect();
        (values, grads)
    };
    match rec.reevaluate(x1) {
        Ok(()) => prop_assert!(same(&read(&rec), &fresh(f, x1)), "replayed at {x1:?}"),
        Err(ReplayError::Guard(g)) => {
            prop_assert!(same(&read(&rec), &fresh(f, x0)), "left at x0 after {g}");
        }
        Err(e) => prop_assert!(false, "unexpected error {e}"),
    }
    prop_assert!(rec.reevaluate(x0).is_ok());
    prop_assert!(same(&read(&rec), &fresh(f, x0)));
    Ok(())
}

/// A loop over the inputs, as Rosenbrock's terms are: a generated `body` run on each window of
/// `body.n` inputs (with `carry`, the first replaced by the last turn's first result), the
/// turns' results summed. Without a carry the recording repeats one block of nodes at constant
/// strides, which re-evaluation runs as loops that compute each node's operands instead of
/// loading them; with one, each turn waits for the turn before.
#[derive(Clone, Debug)]
struct Looped {
    body: Program,
    carry: bool,
}

impl Function for Looped {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let mut turns: Vec<T> = Vec::new();
        let mut last: Option<T> = None;
        for w in x.windows(self.body.n) {
            let mut w = w.to_vec();
            if let (true, Some(l)) = (self.carry, last) {
                w[0] = l;
            }
            let out = self.body.eval(&w);
            last = Some(out[0]);
            turns.extend(out);
        }
        vec![turns.iter().copied().sum(), turns[turns.len() / 2]]
    }
}

/// Loops of 8 to 40 turns with a recording point and a new point.
fn looped() -> impl Strategy<Value = (Looped, Vec<f64>, Vec<f64>)> {
    (program(), 8..40usize, any::<bool>(), 0..3usize)
        .prop_flat_map(|((body, _), turns, carry, near)| {
            let n = body.n + turns - 1;
            let points = prop::collection::vec(crate::common::input(), 2 * n);
            (Just(Looped { body, carry }), points, Just(near))
        })
        .prop_map(|(f, points, near)| {
            let n = points.len() / 2;
            let x0 = points[..n].to_vec();
            let x1 = (x0.iter().zip(&points[n..]))
                .map(|(a, b)| if near == 0 { *b } else { a + 1e-3 * b })
                .collect();
            (f, x0, x1)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(300)))]

    /// Re-evaluated at a new point, a loop's recording gives bit for bit the values and
    /// gradients of a fresh recording there (or refuses with a guard, staying where it was).
    #[test]
    fn replayed_loops_equal_fresh_recordings((f, x0, x1) in looped()) {
        replay_agrees(&f, &x0, &x1)?;
    }
}

/// Replays at many points near the recording: nearly all succeed and match.
#[test]
fn replays_many_points_of_one_recording() {
    let f = |x: &[Var]| (x[0] * x[1]).sin() + x[1].exp() / (x[0] * x[0] + 1.0);
    let tape = Tape::replayable();
    let xs = tape.vars(&[0.3, -0.7]);
    let y = f(&xs);
    let mut rec = tape.finish();
    for k in 0..50 {
        let x = [0.1 * k as f64 - 2.0, (k as f64).sin()];
        rec.reevaluate(&x).unwrap();
        let t = Tape::new();
        let v = t.vars(&x);
        let z = f(&v);
        assert_eq!(rec.value(y).to_bits(), z.value().to_bits());
        let (g1, g2) = (rec.gradient(y).wrt_all(&xs), t.gradient(z).wrt_all(&v));
        assert_eq!(bits(&g1), bits(&g2));
    }
}

/// A branch that flips: the error names the guard, the node and both outcomes, and the
/// recording is left where it was.
#[test]
fn a_flipped_branch_is_an_error_naming_the_comparison() {
    fn f<T: Op>(x: &[T]) -> T {
        if x[0] < x[1] {
            x[0] * x[1]
        } else {
            x[0] - x[1]
        }
    }
    let tape = Tape::replayable();
    let xs = tape.vars(&[1.0, 2.0]);
    let y = f(&xs);
    let mut rec = tape.finish();
    rec.reevaluate(&[1.5, 2.5]).unwrap();
    assert_eq!(rec.gradient(y).wrt_all(&xs), vec![2.5, 1.5]);
    let err = rec.reevaluate(&[3.0, 2.0]).unwrap_err();
    let ReplayError::Guard(g) = &err else {
        panic!("{err}")
    };
    assert_eq!((g.guard, g.node), (0, 0));
    assert_eq!(
        err.to_string(),
        "re-evaluation at a new point: guard 0 failed: the comparison node 0 (x₀ = 3) < node 1 \
         (x₁ = 2) was true when recorded and is false now; record afresh"
    );
    // Still at (1.5, 2.5).
    assert_eq!(rec.value(y), 3.75);
    assert_eq!(rec.gradient(y).wrt_all(&xs), vec![2.5, 1.5]);
}

/// `max` keeps only the winner's edge: when the winner changes, a guard says so.
#[test]
fn a_new_winner_of_max_is_an_error() {
    let tape = Tape::replayable();
    let xs = tape.vars(&[1.0, 2.0]);
    let y = xs[0].max(xs[1]) * xs[0];
    let mut rec = tape.finish();
    rec.reevaluate(&[1.0, 3.0]).unwrap();
    assert_eq!(rec.gradient(y).wrt_all(&xs), vec![3.0, 1.0]);
    let err = rec.reevaluate(&[4.0, 3.0]).unwrap_err().to_string();
    assert!(
        err.contains("the piece of max at node 2 was first < second"),
        "{err}"
    );
    assert!(err.contains("is first > second now"), "{err}");
}

/// `floor` is guarded by its value: the integer may steer the caller's code.
#[test]
fn a_new_integer_part_is_an_error() {
    let tape = Tape::replayable();
    let x = tape.var(1.25);
    let y = x.floor() + x * x;
    let mut rec = tape.finish();
    rec.reevaluate(&[1.75]).unwrap();
    assert_eq!(
        (rec.value(y), rec.gradient(y).wrt(x)),
        (1.0 + 1.75 * 1.75, 3.5)
    );
    let err = rec.reevaluate(&[2.5]).unwrap_err().to_string();
    assert!(
        err.contains("the piece of floor at node 1 was value 1"),
        "{err}"
    );
    assert!(err.contains("is value 2 now"), "{err}");
}

/// A user's rule (with a parameter) is evaluated again by its own `eval`.
#[test]
fn user_rules_with_parameters_are_replayed() {
    #[derive(Clone, Copy)]
    struct Scaled(f64);
    impl shared_ops::Unary for Scaled {
        const NAME: &'static str = "scaled_tanh";
        fn eval<T: Op>(self, x: T) -> (T, T) {
            let y = (x * T::constant(self.0)).tanh();
            (y, T::constant(self.0) * (T::one() - y * y))
        }
    }
    let f = |x: &[Var]| x[0].apply1(Scaled(3.0)) * x[0].powi(4);
    let tape = Tape::replayable();
    let xs = tape.vars(&[0.2]);
    let y = f(&xs);
    let mut rec = tape.finish();
    rec.reevaluate(&[-0.4]).unwrap();
    let t = Tape::new();
    let v = t.vars(&[-0.4]);
    let z = f(&v);
    assert_eq!(rec.value(y), z.value());
    assert_eq!(rec.gradient(y).wrt(xs[0]), t.gradient(z).wrt(v[0]));
}

/// Forward over reverse: a replayable tape of duals re-evaluated at a new dual point.
#[test]
fn a_tape_of_duals_is_replayed() {
    fn f<T: Op>(x: &[T]) -> T {
        (x[0] * x[1]).sin() * x[0]
    }
    let at = |a: f64, b: f64| [Dual::new(a, 1.0), Dual::new(b, 0.0)];
    let tape = Tape::<Dual<f64>>::replayable();
    let xs = tape.vars(&at(0.5, 1.5));
    let y = f(&xs);
    let mut rec = tape.finish();
    rec.reevaluate(&at(-1.0, 0.25)).unwrap();
    let t = Tape::<Dual<f64>>::new();
    let v = t.vars(&at(-1.0, 0.25));
    let z = f(&v);
    assert_eq!(rec.gradient(y).wrt_all(&xs), t.gradient(z).wrt_all(&v));
}

#[test]
fn errors_name_the_problem() {
    let tape = Tape::new();
    let x = tape.var(1.0);
    let _ = x * x;
    let mut rec = tape.finish();
    assert_eq!(rec.reevaluate(&[2.0]), Err(ReplayError::NotReplayable));
    assert!(!rec.is_replayable());

    let tape = Tape::replayable();
    let x = tape.vars(&[1.0, 2.0]);
    let y = Var::from_partials(3.0, &[(x[0], 1.0), (x[1], 1.0)]) * x[0];
    let mut rec = tape.finish();
    let err = rec.reevaluate(&[1.0, 1.0]).unwrap_err();
    assert_eq!(err, ReplayError::Opaque { node: 2 });
    assert!(err.to_string().contains("Var::from_partials"));
    assert_eq!(
        rec.reevaluate(&[1.0, 2.0, 3.0]),
        Err(ReplayError::InputLength {
            expected: 2,
            found: 3
        })
    );
    assert_eq!(rec.value(y), 3.0);
}

/// A live tape can be re-evaluated too, as often as asked; recording on it afterwards is
/// refused (reverse's `never_wrong` tests each way), since its `Var`s carry the recorded point.
#[test]
fn a_live_tape_is_replayed_in_place() {
    let mut tape = Tape::replayable();
    let x = tape.var(2.0);
    let y = x * x + 1.0;
    let z = y * 2.0;
    tape.reevaluate(&[3.0]).unwrap();
    assert_eq!((tape.value(y), tape.gradient(y).wrt(x)), (10.0, 6.0));
    tape.reevaluate(&[4.0]).unwrap();
    assert_eq!((tape.value(z), tape.gradient(z).wrt(x)), (34.0, 16.0));
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| y * 2.0));
    assert!(caught.is_err(), "recorded after a re-evaluation");
}

/// The first output of a function.
pub(crate) struct First<F>(pub(crate) F);
impl<F: Function> Function for First<F> {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        self.0.eval(x)[..1].to_vec()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(200)))]

    /// A prepared Jacobian (reverse: interpreted, compiled, recorded at each call) and a
    /// prepared gradient (likewise) equal the one-shot drivers at a new point bit for bit,
    /// re-evaluating where the guards hold and recording afresh (and compiling again) where
    /// they do not.
    #[test]
    fn prepared_drivers_equal_one_shot_drivers((f, x0, x1) in branchy()) {
        let (x0, x1) = (&x0[..f.base.n], &x1[..f.base.n]);
        use Preparation::*;
        for preparation in [Auto, Reevaluate, Record, Compile] {
            let mut p = jacobian::PreparedJacobian::with_preparation(
                &f, x0, jacobian::Mode::Reverse, preparation,
            ).unwrap();
            for x in [x1, x0, x1] {
                let got = p.jacobian(x).unwrap();
                let want = jacobian::jacobian_with(&f, x, jacobian::Mode::Reverse).unwrap();
                prop_assert_eq!(bits(&got.value), bits(&want.value));
                prop_assert_eq!(bits(got.matrix.as_slice()), bits(want.matrix.as_slice()));
                let replayed = matches!(
                    got.plan.replay,
                    jacobian::Replay::Reevaluated | jacobian::Replay::Rerecorded(_)
                );
                prop_assert_eq!(replayed, preparation != Record, "{}", got.plan);
                // Compiled where asked for (Auto has not run long enough to compile).
                let code = got.plan.compiled.as_ref().map(|c| c.code_bytes > 0);
                let want = match preparation {
                    Compile => Some(cfg!(feature = "jit")),
                    _ => None,
                };
                prop_assert_eq!(code, want, "{}", got.plan);
            }
        }
        let g = First(&f);
        for preparation in [Auto, Reevaluate, Record, Compile] {
            let mut p = PreparedGradient::with(&g, x0, preparation).unwrap();
            // Compiled where asked for, and where Auto found it faster (feature `jit`).
            let compiled = if cfg!(feature = "jit") { Compile } else { Reevaluate };
            let want: &[Preparation] = match preparation {
                Auto => &[Reevaluate, compiled],
                Compile => &[compiled],
                other => &[other],
            };
            prop_assert!(want.contains(&p.plan().strategy), "{}", p.plan());
            let code = p.plan().compilation.as_ref().map_or(0, |c| c.code_bytes);
            prop_assert_eq!(code > 0, p.plan().strategy == Compile);
            for x in [x1, x0] {
                let (y, grad) = p.gradient(x).unwrap();
                let (y2, grad2) = jacobian::gradient(&g, x).unwrap();
                prop_assert_eq!(y.to_bits(), y2.to_bits());
                prop_assert_eq!(bits(&grad), bits(&grad2));
            }
        }
    }
}

/// Σ xᵢ·xᵢ₊₁ over a ring of 8 inputs, `terms` times: a recording of chosen size.
struct Ring {
    terms: usize,
}
impl Function for Ring {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let n = x.len();
        vec![(0..self.terms).fold(T::zero(), |s, i| s + x[i % n] * x[(i + 1) % n])]
    }
}

/// A recording whose program would pass the budget is recorded afresh at each call in buffers
/// of its own size: the memory of one recording, and the one-shot driver's bits; `Auto` does
/// so unless (feature `jit`) its compiled gradient is faster and keeps less than the budget
/// beyond one recording.
#[test]
fn a_large_recording_is_recorded_again_in_its_own_buffers() {
    let f = Ring { terms: 1 << 20 };
    let x: Vec<f64> = (0..8).map(|i| 0.5 + 0.1 * i as f64).collect();
    let y: Vec<f64> = x.iter().map(|v| -v).collect();
    let mut auto = PreparedGradient::new(&f, &x).unwrap();
    let plan = auto.plan().clone();
    assert!(plan.reason.contains("would pass 64 MiB"), "{plan}");
    assert!(
        Preparation::PROGRAM_FACTOR * plan.recording_bytes > Preparation::EXTRA_BYTES,
        "{plan}"
    );
    if cfg!(feature = "jit") {
        // One loop: compiled, faster than recording at each call, and small.
        assert_eq!(plan.strategy, Preparation::Compile, "{plan}");
        assert!(plan.reason.contains("its calls were faster"), "{plan}");
        for point in [&y, &x] {
            let got = auto.gradient(point).unwrap();
            assert_eq!(got, jacobian::gradient(&f, point).unwrap());
            assert_eq!(auto.last(), &Replay::Reevaluated);
        }
    } else {
        assert_eq!(plan.strategy, Preparation::Record, "{plan}");
    }
    drop(auto);
    let mut p = PreparedGradient::with(&f, &x, Preparation::Record).unwrap();
    let auto = plan;
    let plan = p.plan().clone();
    assert_eq!(plan.strategy, Preparation::Record, "{plan}");
    // Compiled, it keeps at most the budget beyond what recording afresh keeps.
    assert!(
        auto.kept_bytes <= plan.kept_bytes + Preparation::EXTRA_BYTES,
        "{auto}\n{plan}"
    );
    assert!(
        plan.kept_bytes as f64 <= 1.5 * plan.recording_bytes as f64,
        "{plan}"
    );
    for point in [&y, &x] {
        let got = p.gradient(point).unwrap();
        assert_eq!(got, jacobian::gradient(&f, point).unwrap());
        assert_eq!(p.last(), &Replay::Recorded);
    }
    // Calls of the same size record into the buffers kept, without growing them.
    assert_eq!(p.plan().kept_bytes, plan.kept_bytes);
    assert_eq!(
        p.gradient(&x[..3]),
        Err(jacobian::Error::InputLength {
            expected: 8,
            found: 3
        })
    );
    // And the small one re-evaluates (compiled, where that was faster).
    let small = PreparedGradient::new(Ring { terms: 64 }, &x).unwrap();
    let kept = [Preparation::Reevaluate, Preparation::Compile];
    assert!(kept.contains(&small.plan().strategy), "{}", small.plan());
    assert!(small.plan().reason.contains("fits in 64 MiB"));
}

/// Recorded at each call, a function follows its branches at each point, with no guard.
#[test]
fn a_recorded_again_function_follows_its_branches() {
    struct Kink;
    impl Function for Kink {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            vec![if x[0] > T::zero() { x[0] * x[0] } else { -x[0] }]
        }
    }
    let mut p = PreparedGradient::with(Kink, &[1.0], Preparation::Record).unwrap();
    assert_eq!(p.gradient(&[3.0]).unwrap(), (9.0, vec![6.0]));
    assert_eq!(p.gradient(&[-2.0]).unwrap(), (2.0, vec![-1.0]));
    assert_eq!((p.rerecords(), p.last()), (0, &Replay::Recorded));
}

/// Where the branch flips, the prepared Jacobian records afresh and its plan says why; the next
/// call re-uses the new recording.
#[test]
fn a_prepared_jacobian_falls_back_and_says_so() {
    struct Piecewise;
    impl Function for Piecewise {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            let s = if x[0] < x[1] {
                x[0] * x[1]
            } else {
                x[0] + x[1]
            };
            vec![s, x[0].exp(), x[1].sin(), x[0] - x[1]]
        }
    }
    let mut p =
        jacobian::PreparedJacobian::with_mode(Piecewise, &[1.0, 2.0], jacobian::Mode::Reverse)
            .unwrap();
    let j = p.jacobian(&[0.5, 3.0]).unwrap();
    assert_eq!(j.plan.replay, jacobian::Replay::Reevaluated);
    assert_eq!((j.matrix[(0, 0)], j.matrix[(0, 1)]), (3.0, 0.5));
    let j = p.jacobian(&[3.0, 0.5]).unwrap();
    assert_eq!((j.matrix[(0, 0)], j.matrix[(0, 1)]), (1.0, 1.0));
    let text = j.plan.to_string();
    assert!(
        text.contains("recorded afresh: re-evaluation at a new point: guard 0 failed"),
        "{text}"
    );
    assert_eq!(p.rerecords(), 1);
    let j = p.jacobian(&[4.0, 1.0]).unwrap();
    assert_eq!(j.plan.replay, jacobian::Replay::Reevaluated);
    assert!(j.plan.to_string().contains("nodes re-evaluated"));
    assert!(p.jacobian(&[1.0]).is_err());
}

/// A compiled prepared gradient whose branch flips to a constant output: the recording made
/// afresh has no gradient to compile, and the calls run it interpreted (a zero gradient), here
/// and at the next point; back on the first branch, they compile again.
#[test]
fn a_compiled_prepared_gradient_runs_interpreted_where_its_output_is_constant() {
    struct Clamped;
    impl Function for Clamped {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            vec![if x[0] > T::zero() {
                x[0] * x[0]
            } else {
                T::constant(0.0)
            }]
        }
    }
    let mut p = PreparedGradient::with(Clamped, &[1.0], Preparation::Compile).unwrap();
    assert_eq!(p.gradient(&[3.0]).unwrap(), (9.0, vec![6.0]));
    assert_eq!(p.gradient(&[-1.0]).unwrap(), (0.0, vec![0.0]));
    assert!(matches!(p.last(), Replay::Rerecorded(why) if why.contains("guard 0 failed")));
    // The failed guard named as re-evaluation names it.
    let mut q = PreparedGradient::with(Clamped, &[1.0], Preparation::Reevaluate).unwrap();
    q.gradient(&[3.0]).unwrap();
    q.gradient(&[-1.0]).unwrap();
    assert_eq!(p.last(), q.last());
    assert_eq!(p.gradient(&[-2.0]).unwrap(), (0.0, vec![0.0]));
    assert_eq!(p.last(), &Replay::Reevaluated);
    assert_eq!(p.gradient(&[2.0]).unwrap(), (4.0, vec![4.0]));
    assert_eq!(p.gradient(&[5.0]).unwrap(), (25.0, vec![10.0]));
    assert_eq!(p.rerecords(), 2);
}

/// Eleven outputs of three inputs with a branch: reverse mode sweeps them as a block of eight
/// lanes and one of three (four lanes, the last one empty).
struct Eleven;
impl Function for Eleven {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let s = if x[0] < x[1] {
            x[0] * x[2]
        } else {
            x[1] - x[2]
        };
        (0..11)
            .map(|i| {
                let c = T::constant(0.5 + i as f64);
                (x[i % 3] * c).sin() * x[(i + 1) % 3] + s * c
            })
            .collect()
    }
}

/// Compiled on request, a prepared Jacobian of eight lanes per sweep equals the one-shot
/// driver bit for bit, re-evaluated and recorded afresh (and compiled again) where the branch
/// flips; its `Wᵀ·J` too; its plan reports the code.
#[test]
fn a_compiled_prepared_jacobian_equals_the_one_shot_driver() {
    use jacobian::nalgebra::DMatrix;
    let x0 = [0.3, 0.9, -0.4];
    let mut p = jacobian::PreparedJacobian::with_preparation(
        Eleven,
        &x0,
        jacobian::Mode::Reverse,
        Preparation::Compile,
    )
    .unwrap();
    let w = DMatrix::from_fn(11, 3, |i, j| (i as f64 - 2.0 * j as f64) * 0.25);
    let mut out = jacobian::Products::new();
    for x in [
        [0.5, 0.7, 1.1],
        [1.5, 0.2, -0.3],
        [0.1, 0.2, 0.3],
        [2.0, 1.0, 0.0],
    ] {
        let got = p.jacobian(&x).unwrap();
        let want = jacobian::jacobian_with(&Eleven, &x, jacobian::Mode::Reverse).unwrap();
        assert_eq!(
            bits(got.matrix.as_slice()),
            bits(want.matrix.as_slice()),
            "at {x:?}"
        );
        assert_eq!(bits(&got.value), bits(&want.value));
        assert_eq!((got.plan.sweeps, got.plan.lanes), (2, 8));
        let c = got.plan.compiled.clone().expect("compiled on request");
        assert_eq!(c.code_bytes > 0, cfg!(feature = "jit"), "{}", got.plan);
        if cfg!(feature = "jit") {
            assert!(
                c.compiled_call > 0.0 && c.seconds > 0.0 && c.after_calls == 0,
                "{c:?}"
            );
            assert!(
                got.plan.to_string().contains("KiB of machine code"),
                "{}",
                got.plan
            );
        }
        p.vjp_matrix_into(&x, &w, &mut out).unwrap();
        let want = jacobian::vjp_matrix(&Eleven, &x, &w).unwrap();
        assert_eq!(bits(out.matrix.as_slice()), bits(want.matrix.as_slice()));
    }
    // The branch flipped three times: recorded afresh (and compiled again) each time.
    assert_eq!(p.rerecords(), 3);
}

/// `Auto` compiles a prepared Jacobian once its calls have taken `COMPILE_AFTER`, keeps the
/// code where the compiled calls are faster, and says after how many calls; the matrices stay
/// the one-shot driver's.
#[test]
fn auto_compiles_a_prepared_jacobian_called_often() {
    let x0 = [0.3, 0.9, -0.4];
    let mut p =
        jacobian::PreparedJacobian::with_mode(Eleven, &x0, jacobian::Mode::Reverse).unwrap();
    let call = || p.jacobian(&[0.3, 0.9, -0.4]).unwrap().plan.compiled;
    let Some(compiled) = until_compiled(call) else {
        return;
    };
    for x in [[0.5, 0.7, 1.1], [1.5, 0.2, -0.3]] {
        let got = p.jacobian(&x).unwrap();
        let want = jacobian::jacobian_with(&Eleven, &x, jacobian::Mode::Reverse).unwrap();
        assert_eq!(bits(got.matrix.as_slice()), bits(want.matrix.as_slice()));
        assert_eq!(
            got.plan.compiled.as_ref(),
            Some(&compiled),
            "reported at every call"
        );
    }
}

/// The tests of `Float` are decisions too: `is_sign_negative` is guarded.
#[test]
fn a_flipped_float_test_is_an_error() {
    let tape = Tape::replayable();
    let x = tape.var(-1.5);
    let y = if x.is_sign_negative() {
        x * x
    } else {
        x.sqrt()
    };
    let mut rec = tape.finish();
    rec.reevaluate(&[-2.0]).unwrap();
    assert_eq!(rec.gradient(y).wrt(x), -4.0);
    let err = rec.reevaluate(&[4.0]).unwrap_err().to_string();
    assert!(
        err.contains("is_sign_negative of node 0 (x₀ = 4) was true when recorded and is false now"),
        "{err}"
    );
}

/// A shift by a constant used twice, with a direct use of its operand between the two: the
/// adjoint of `x₀` is a sum of three terms, whose rounding depends on the order the tape adds
/// them in. The prepared gradient (a replayable recording) and the one-shot gradient (a plain
/// one) must add them in the same order: equal bit for bit at every point, and equal to the
/// analytic gradient to rounding. (A tape that skipped the shift's node on plain recordings
/// only, so that its uses pointed at `x₀` directly, would fail the first check.)
#[test]
fn a_shift_used_twice_gives_the_same_bits_prepared_and_one_shot() {
    struct Shifted;
    impl Function for Shifted {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            let s = x[0] - T::constant(1.5);
            vec![s * x[1] + x[0] * x[2] + s * x[3]]
        }
    }
    let point = |k: u64| -> Vec<f64> {
        (0..4)
            .map(|i| {
                let h = (k * 4 + i).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11;
                (h as f64 / (1u64 << 53) as f64) * 20.0 - 10.0
            })
            .collect()
    };
    let mut p = jacobian::PreparedGradient::new(&Shifted, &point(0)).unwrap();
    for k in 0..200 {
        let x = point(k);
        let (_, prepared) = p.gradient(&x).unwrap();
        let (_, one_shot) = jacobian::gradient(&Shifted, &x).unwrap();
        assert_eq!(bits(&prepared), bits(&one_shot), "at {x:?}");
        let want = [x[1] + x[2] + x[3], x[0] - 1.5, x[0], x[0] - 1.5];
        assert_near(&one_shot, &want);
    }
}

fn assert_near(got: &[f64], want: &[f64]) {
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= 1e-14 * w.abs().max(1.0), "{g} against {w}");
    }
}
