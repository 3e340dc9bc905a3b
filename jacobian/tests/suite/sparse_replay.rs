//! Prepared sparse Jacobians by rows keep a replayable recording: re-evaluated at each new
//! point, recorded afresh where a branch flips, and (feature `jit`) compiled; every matrix is
//! the one a fresh recording gives, bit for bit.

use crate::common::{cases, until_compiled};
use crate::replay::{bits, branchy};
use jacobian::sparse::{PreparedSparseJacobian, SparseOptions, Strategy};
use jacobian::{Function, Mode, Op, Preparation, Replay, jacobian_with};
use proptest::prelude::*;

/// A ring of n outputs, each reading five neighbours, with a branch on the first:
/// yᵢ = (xᵢ > 0 ? xᵢ·xᵢ₊₁ : exp xᵢ₊₁) + sin xᵢ₊₂ + xᵢ₊₃·xᵢ₊₄. Rows i and j share a column
/// where |i − j| ≤ 4 (around the ring): for n = 15, five row colours, so one sweep of eight
/// adjoints.
struct Ring;

impl Function for Ring {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let n = x.len();
        (0..n)
            .map(|i| {
                let [a, b, c, d, e] = [0, 1, 2, 3, 4].map(|k| x[(i + k) % n]);
                let first = if a > T::zero() { a * b } else { b.exp() };
                first + c.sin() + d * e
            })
            .collect()
    }
}

fn by_rows() -> SparseOptions {
    SparseOptions {
        mode: Mode::Reverse,
        ..SparseOptions::default()
    }
}

/// Compiled on request: each call's matrix is the dense reverse Jacobian's, bit for bit, where
/// the branches hold (re-evaluated) and where they flip (recorded afresh and compiled again);
/// the plan says which, and what the code is.
#[test]
fn a_compiled_prepared_sparse_jacobian_equals_the_dense_one() {
    let n = 15;
    let x0: Vec<f64> = (0..n).map(|i| 0.2 + 0.1 * i as f64).collect();
    let mut p =
        PreparedSparseJacobian::with_preparation(Ring, &x0, by_rows(), Preparation::Compile)
            .unwrap();
    let shifted = |k: usize, by: f64| {
        let mut x = x0.clone();
        x[k] += by;
        x
    };
    let calls = [
        (shifted(0, 0.05), "re-evaluated"),
        (shifted(3, -1.0), "flipped"),
        (shifted(3, -1.5), "re-evaluated"),
        (x0.clone(), "flipped"),
        (shifted(7, 0.3), "re-evaluated"),
    ];
    for (x, expect) in &calls {
        let got = p.jacobian(x).unwrap();
        let want = jacobian_with(&Ring, x, Mode::Reverse).unwrap();
        assert_eq!(
            bits(got.to_dense().as_slice()),
            bits(want.matrix.as_slice()),
            "{expect} at {x:?}"
        );
        assert_eq!(bits(&got.value), bits(&want.value));
        let plan = &got.plan;
        assert_eq!(plan.strategy, Strategy::Rows);
        assert_eq!((plan.row_colours, plan.sweeps, plan.lanes), (Some(5), 1, 8));
        let replay_ok = match *expect {
            "flipped" => matches!(plan.replay, Replay::Rerecorded(_)),
            _ => plan.replay == Replay::Reevaluated,
        };
        assert!(replay_ok, "{expect}: {plan}");
        let c = plan.compiled.as_ref().expect("compiled on request");
        assert_eq!(c.code_bytes > 0, cfg!(feature = "jit"), "{plan}");
        if cfg!(feature = "jit") {
            assert!(c.compiled_call > 0.0 && c.after_calls == 0, "{c:?}");
            assert!(plan.to_string().contains("KiB of machine code"), "{plan}");
        } else {
            assert_eq!(c.declined.as_deref(), Some("the feature `jit` is off"));
        }
        if *expect == "flipped" {
            assert!(plan.to_string().contains("; recorded afresh: "), "{plan}");
        }
    }
    // Exact entries: ∂y₀/∂xₖ for k = 0…4 is x₁, x₀, cos x₂, x₄, x₃; where x₃ < 0, y₃ takes
    // exp x₄ instead of x₃·x₄, so ∂y₃/∂x₃ = 0 and ∂y₃/∂x₄ = exp x₄.
    let x = &calls[2].0;
    let j = p.jacobian(x).unwrap().to_dense();
    assert_eq!([j[(3, 3)], j[(3, 4)]], [0.0, x[4].exp()]);
    let x = &calls[4].0;
    let j = p.jacobian(x).unwrap().to_dense();
    let row: Vec<f64> = (0..5).map(|k| j[(0, k)]).collect();
    assert_eq!(row, [x[1], x[0], x[2].cos(), x[4], x[3]]);
}

/// `Auto` compiles once the calls by rows have taken `COMPILE_AFTER`, keeps the code where the
/// compiled calls are faster, and says after how many calls; the matrices stay those of a
/// prepared Jacobian that records afresh at every call.
#[test]
fn auto_compiles_a_prepared_sparse_jacobian_called_often() {
    let x: Vec<f64> = (0..64).map(|i| 0.5 + 0.01 * i as f64).collect();
    let mut p = PreparedSparseJacobian::new_with(&x, Preparation::Auto);
    let mut recorded = PreparedSparseJacobian::new_with(&x, Preparation::Record);
    let want = recorded.jacobian(&x).unwrap();
    assert_eq!(want.plan.replay, Replay::Recorded);
    assert_eq!(want.plan.compiled, None);
    let call = || {
        let j = p.jacobian(&x).unwrap();
        assert_eq!(bits(j.matrix.values()), bits(want.matrix.values()));
        j.plan.compiled
    };
    let Some(compiled) = until_compiled(call) else {
        return;
    };
    let j = p.jacobian(&x).unwrap();
    assert_eq!(j.plan.compiled.as_ref(), Some(&compiled));
    assert_eq!(j.plan.replay, Replay::Reevaluated);
    assert_eq!(bits(j.matrix.values()), bits(want.matrix.values()));
}

/// The constructor of the tests above.
trait NewWith {
    fn new_with(x: &[f64], preparation: Preparation) -> Self;
}

impl NewWith for PreparedSparseJacobian<Ring> {
    fn new_with(x: &[f64], preparation: Preparation) -> Self {
        PreparedSparseJacobian::with_preparation(Ring, x, by_rows(), preparation).unwrap()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(200)))]

    /// Prepared sparse Jacobians by rows, re-evaluated, compiled or left to `Auto`, equal one
    /// that records afresh at each call, bit for bit, on branchy programs at points where the
    /// branches hold and where they flip (and detect their pattern again where it misses).
    #[test]
    fn prepared_sparse_jacobians_by_rows_equal_recorded_ones((f, x0, x1) in branchy()) {
        let (x0, x1) = (&x0[..f.base.n], &x1[..f.base.n]);
        let prepare = |preparation| {
            PreparedSparseJacobian::with_preparation(&f, x0, by_rows(), preparation).unwrap()
        };
        let mut recorded = prepare(Preparation::Record);
        let mut others = [Preparation::Auto, Preparation::Reevaluate, Preparation::Compile]
            .map(|preparation| (preparation, prepare(preparation)));
        for x in [x1, x0, x1] {
            let want = recorded.jacobian(x).unwrap();
            prop_assert_eq!(&want.plan.replay, &Replay::Recorded);
            for (preparation, p) in &mut others {
                let got = p.jacobian(x).unwrap();
                prop_assert_eq!(got.triplets().len(), want.triplets().len());
                for (a, b) in got.triplets().iter().zip(want.triplets()) {
                    prop_assert_eq!((a.0, a.1), (b.0, b.1));
                    prop_assert_eq!(bits(&[a.2]), bits(&[b.2]), "{:?}: {}", preparation, got.plan);
                }
                prop_assert_eq!(bits(&got.value), bits(&want.value));
                prop_assert_eq!(p.redetections(), recorded.redetections());
                // Compiled where asked for (Auto has not run long enough to compile).
                let code = got.plan.compiled.as_ref().map(|c| c.code_bytes > 0);
                let expected = (*preparation == Preparation::Compile).then_some(cfg!(feature = "jit"));
                prop_assert_eq!(code, expected, "{}", got.plan);
            }
        }
    }
}
