//! A live tape re-evaluated at a new point records no more (its `Var`s carry the recorded
//! point's values, so a new operation would mix two points), and the adjoint of a shift by a
//! constant is its own.

use reverse::{Float, Tape, Var};

/// The case of the report: after re-evaluating at x = 3, `y * x` would read y = 4 and x = 2
/// from the `Var`s while the program holds 9 and 3.
#[test]
#[should_panic(expected = "re-evaluated at a new point")]
fn recording_after_a_live_reevaluation_panics() {
    let mut t = Tape::replayable();
    let x = t.var(2.0);
    let y = x * x;
    t.reevaluate(&[3.0]).unwrap();
    let _ = y * x;
}

/// Every way of recording on it: a new input, a constant operand, a comparison's guard, a sum,
/// a node of given partials. Reading and sweeping it stay right; `clear` records afresh.
#[test]
fn every_way_of_recording_after_a_live_reevaluation_is_refused() {
    type Step = fn(&Tape, Var, Var);
    let ways: [(&str, Step); 6] = [
        ("an input", |t, _, _| {
            t.var(1.0);
        }),
        ("a product", |_, x, y| {
            let _ = x * y;
        }),
        ("a constant operand", |_, _, y| {
            let _ = y.sin() * 2.0;
        }),
        ("a comparison", |_, x, y| {
            let _ = x < y;
        }),
        ("a sum", |_, x, y| {
            let _ = [x, y].into_iter().sum::<Var>();
        }),
        ("a node of given partials", |_, x, y| {
            let _ = Var::from_partials(1.0, &[(x, 1.0), (y, 2.0)]);
        }),
    ];
    for (what, step) in ways {
        let mut t = Tape::replayable();
        let x = t.var(2.0);
        let y = x * x;
        t.reevaluate(&[3.0]).unwrap();
        assert_eq!((t.value(y), t.gradient(y).wrt(x)), (9.0, 6.0), "{what}");
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| step(&t, x, y)));
        let message = caught
            .err()
            .and_then(|p| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| panic!("{what} was recorded after a re-evaluation"));
        assert!(
            message.contains("re-evaluated at a new point"),
            "{what}: {message}"
        );
        assert_eq!(
            (t.value(y), t.gradient(y).wrt(x)),
            (9.0, 6.0),
            "{what}: intact"
        );
        t.clear();
        let x = t.var(3.0);
        assert_eq!(t.gradient(x * x).wrt(x), 6.0, "{what}: cleared, it records");
    }
}

/// The trace of a re-evaluation re-evaluates the live traced tape: the same refusal after it.
#[test]
#[should_panic(expected = "re-evaluated at a new point")]
fn recording_after_a_traced_reevaluation_panics() {
    let mut t = Tape::traced();
    let x = t.var(2.0);
    let y = x * x;
    t.trace_reevaluation(&[3.0]).unwrap();
    let _ = y + x;
}

/// The adjoint of a shift (`z = w + 3`) is ∂y/∂z, not its operand's, on every kind of tape;
/// y = z·w gives ∂y/∂z = w = 4 and ∂y/∂w = z + w = 11 at x = 2.
#[test]
fn the_adjoint_of_a_shift_is_its_own() {
    for tape in [Tape::new(), Tape::replayable(), Tape::traced()] {
        let x = tape.var(2.0);
        let w = x * x;
        let z = w + 3.0;
        let y = z * w;
        let g = tape.gradient(y);
        assert_eq!((g.wrt(z), g.wrt(w), g.wrt(x)), (4.0, 11.0, 44.0));
        assert_eq!(tape.gradient(z).wrt(z), 1.0);
        let s = 1.0 - x; // c − x too
        assert_eq!(tape.gradient(s * s).wrt(s), 2.0 * s.value());
    }
}

mod interleavings {
    use proptest::prelude::*;
    use reverse::{Recording, Tape, Var};
    use test_support::{Binary, Outputs, Program, Shape, Unary, cases, input, programs};

    /// Programs of 1–3 inputs over the tape's palette (sums and dot products too), a point to
    /// record at, a point to re-evaluate at, and where to stop recording.
    fn setting() -> impl Strategy<Value = (Program, Vec<f64>, Vec<f64>, usize)> {
        let shape = Shape {
            inputs: 1..=3,
            instrs: 2..10,
            unary: Unary::TAPE,
            binary: Binary::TAPE,
            nary: true,
            recent: true,
            outputs: Outputs::Last,
        };
        programs(shape).prop_flat_map(|p| {
            let (n, len) = (p.n, p.instrs.len());
            (
                Just(p),
                prop::collection::vec(input(), n),
                prop::collection::vec(input(), n),
                1..len,
            )
        })
    }

    /// The value and gradient of the last of `values`, read from a recording.
    fn read(rec: &Recording, xs: &[Var], y: Var) -> (f64, Vec<f64>) {
        (rec.value(y), rec.gradient(y).wrt_all(xs))
    }

    /// A fresh recording of the program's first `k` instructions at `x`, finished.
    fn fresh(p: &Program, k: usize, x: &[f64]) -> (f64, Vec<f64>) {
        let tape = Tape::new();
        let xs = tape.vars(x);
        let y = p.prefix(k).last(&xs);
        let rec = tape.finish();
        read(&rec, &xs, y)
    }

    fn same(a: &(f64, Vec<f64>), b: &(f64, Vec<f64>)) -> bool {
        let eq = |u: f64, v: f64| u == v || (u.is_nan() && v.is_nan());
        eq(a.0, b.0) && a.1.len() == b.1.len() && a.1.iter().zip(&b.1).all(|(&u, &v)| eq(u, v))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(cases(256)))]

        /// Record k instructions on a live replayable tape, re-evaluate it at a new point, try
        /// to record the next one: the re-evaluated tape gives what a fresh recording at the new
        /// point gives, bit for bit, and recording on it is refused; where a guard refuses the
        /// new point, the tape is unchanged and records on as a fresh one at the first point.
        /// Cleared, it records the whole program as a fresh tape does.
        #[test]
        fn record_reevaluate_record((p, x0, x1, k) in setting()) {
            let mut tape = Tape::replayable();
            let xs = tape.vars(&x0);
            let values = p.prefix(k).values(&xs);
            let y = *values.last().unwrap();
            match tape.reevaluate(&x1) {
                Ok(()) => {
                    let here = (tape.value(y), tape.gradient(y).wrt_all(&xs));
                    let want = fresh(&p, k, &x1);
                    prop_assert!(same(&here, &want), "{here:?} vs {want:?}");
                    let next = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        p.instrs[k].apply(&values)
                    }));
                    let message = next
                        .err()
                        .and_then(|m| m.downcast_ref::<String>().cloned())
                        .unwrap_or_default();
                    prop_assert!(message.contains("re-evaluated at a new point"), "{message:?}");
                }
                // Refused: nothing changed, so the tape records on at the first point.
                Err(e) => {
                    prop_assert!(e.to_string().contains("guard"), "{e}");
                    let mut values = values;
                    values.push(p.instrs[k].apply(&values));
                    let y = *values.last().unwrap();
                    let here = (y.value(), tape.gradient(y).wrt_all(&xs));
                    let want = fresh(&p, k + 1, &x0);
                    prop_assert!(same(&here, &want), "refused: {here:?} vs {want:?}");
                }
            }
            tape.clear();
            let xs = tape.vars(&x1);
            let y = p.last(&xs);
            let here = (y.value(), tape.gradient(y).wrt_all(&xs));
            let want = fresh(&p, p.instrs.len(), &x1);
            prop_assert!(same(&here, &want), "cleared: {here:?} vs {want:?}");
        }

        /// A finished recording re-evaluated at a new point gives what a fresh recording there
        /// gives, bit for bit, or refuses where a guard fails and stays at its previous point.
        #[test]
        fn finish_then_reevaluate((p, x0, x1, _k) in setting()) {
            let tape = Tape::replayable();
            let xs = tape.vars(&x0);
            let y = p.last(&xs);
            let mut rec = tape.finish();
            let before = read(&rec, &xs, y);
            match rec.reevaluate(&x1) {
                Ok(()) => {
                    let want = fresh(&p, p.instrs.len(), &x1);
                    prop_assert!(same(&read(&rec, &xs, y), &want));
                }
                Err(_) => prop_assert!(same(&read(&rec, &xs, y), &before)),
            }
        }
    }
}

/// Every `ReplayError`'s message, word for word: what was recorded, what was given, what to do.
#[test]
fn every_replay_error_says_what_happened() {
    let plain = Tape::new();
    let x = plain.var(1.0);
    let _ = x * x;
    let mut rec = plain.finish();
    assert_eq!(
        rec.reevaluate(&[2.0]).unwrap_err().to_string(),
        "re-evaluation at a new point: the recording keeps no program; record on \
         Tape::replayable() (or Tape::traced()) instead of Tape::new()"
    );
    let tape = Tape::replayable();
    let x = tape.vars(&[1.0, 2.0]);
    let _ = Var::from_partials(3.0, &[(x[0], 1.0), (x[1], 1.0)]);
    let mut rec = tape.finish();
    assert_eq!(
        rec.reevaluate(&[1.0]).unwrap_err().to_string(),
        "re-evaluation at a new point: the recording has 2 inputs, but the new point has 1"
    );
    assert_eq!(
        rec.reevaluate(&[1.0, 5.0]).unwrap_err().to_string(),
        "re-evaluation at a new point: node 2 was made by Var::from_partials, whose partials \
         cannot be computed again; record afresh"
    );
}
