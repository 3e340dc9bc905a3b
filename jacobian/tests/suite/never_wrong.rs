//! Derivatives that are exact or refused, never silently wrong: branches on values in sparsity
//! detection, guards that keep the outcome the code used, errors that say what happened.

use jacobian::sparse::{
    Detection, hessian_pattern, jacobian_pattern, sparse_hessian, sparse_jacobian,
};
use jacobian::{Error, Function, Mode, Op, jacobian_with};
use reverse::Tape;

/// A branch on the value of a number that depends on the inputs.
struct ValueBranch;
impl Function for ValueBranch {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        vec![if x[0].value() > 0.0 {
            x[0] * x[1]
        } else {
            x[0]
        }]
    }
}

/// Global detection carries no values: reading one (`Op::value`) refuses it, as a comparison
/// does, so a pattern never misses a dependency of the branch taken at x.
#[test]
fn a_branch_on_a_value_refuses_global_detection() {
    let x = [1.0, 2.0];
    let e = jacobian_pattern(&ValueBranch, &x, Detection::Global).unwrap_err();
    assert!(matches!(e, Error::NeedsValues { .. }), "{e}");
    assert!(e.to_string().contains("the value of a number"), "{e}");
    assert_eq!(
        jacobian_pattern(&ValueBranch, &x, Detection::Auto)
            .unwrap()
            .row(0),
        &[0, 1]
    );
    let j = sparse_jacobian(&ValueBranch, &x).unwrap();
    assert_eq!(j.triplets(), vec![(0, 0, 2.0), (0, 1, 1.0)]);
    assert_eq!(j.plan.detection, Detection::Local);
    assert!(
        j.plan.fallback.as_deref().unwrap_or("").contains("value"),
        "{}",
        j.plan
    );
    assert!(hessian_pattern(&ValueBranch, &x, Detection::Global).is_err());
    let h = sparse_hessian(&ValueBranch, &x).unwrap();
    assert_eq!(h.triplets(), vec![(0, 1, 1.0), (1, 0, 1.0)]);
}

/// The same branch on `to_f64` (`num_traits::ToPrimitive`), another way to read a value.
#[test]
fn a_branch_on_to_f64_refuses_global_detection() {
    struct ToF64Branch;
    impl Function for ToF64Branch {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            vec![if x[0].to_f64().unwrap() > 0.0 {
                x[0] * x[1]
            } else {
                x[0]
            }]
        }
    }
    let e = jacobian_pattern(&ToF64Branch, &[1.0, 2.0], Detection::Global).unwrap_err();
    assert!(e.to_string().contains("the value of a number"), "{e}");
    let j = sparse_jacobian(&ToF64Branch, &[1.0, 2.0]).unwrap();
    assert_eq!(j.triplets(), vec![(0, 0, 2.0), (0, 1, 1.0)]);
}

/// A comparison guard keeps the outcome the code branched on: `==` false when recorded and
/// false at the new point re-evaluates, though the ordering changed (< then >); it refuses
/// where `==` turns true.
#[test]
fn an_equality_guard_refuses_only_when_equality_changes() {
    let tape = Tape::replayable();
    let x = tape.vars(&[1.0, 2.0]);
    let y = if x[0] == x[1] { x[0] } else { x[0] * x[1] };
    let mut rec = tape.finish();
    rec.reevaluate(&[3.0, 2.0]).unwrap();
    assert_eq!(rec.gradient(y).wrt_all(&x), vec![2.0, 3.0]);
    assert!(rec.reevaluate(&[2.0, 2.0]).is_err());
}

/// `a > b` recorded where a < b is still false at a tie: re-evaluated; true at a > b: refused.
#[test]
fn an_order_guard_refuses_only_when_its_answer_changes() {
    let tape = Tape::replayable();
    let x = tape.vars(&[1.0, 2.0]);
    let y = if x[0] > x[1] { x[0] } else { x[1] * x[1] };
    let mut rec = tape.finish();
    rec.reevaluate(&[2.0, 2.0]).unwrap();
    assert_eq!(rec.gradient(y).wrt_all(&x), vec![0.0, 4.0]);
    assert!(rec.reevaluate(&[3.0, 2.0]).is_err());
    // `partial_cmp` itself keeps the whole ordering: a tie is another answer.
    let tape = Tape::replayable();
    let x = tape.vars(&[1.0, 2.0]);
    let y = match x[0].partial_cmp(&x[1]) {
        Some(core::cmp::Ordering::Less) => x[1],
        _ => x[0],
    };
    let mut rec = tape.finish();
    rec.reevaluate(&[0.0, 2.0]).unwrap();
    assert!(rec.reevaluate(&[2.0, 2.0]).is_err());
    let _ = y;
}

/// Declares 3 outputs and returns 2.
struct Declares3;
impl Function for Declares3 {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        vec![x[0], x[0] * x[0]]
    }
    fn sizes(&self) -> Option<(usize, usize)> {
        Some((1, 3))
    }
}

/// The message names what was declared and what was returned: the function never returned 3.
#[test]
fn a_declared_output_length_is_named_as_declared() {
    for mode in [Mode::Forward, Mode::Reverse, Mode::Auto] {
        let e = jacobian_with(&Declares3, &[1.0], mode).unwrap_err();
        let text = e.to_string();
        assert!(
            text.starts_with("the function declares 3 outputs (Function::sizes), but returned 2 "),
            "{mode:?}: {text}"
        );
        assert!(!text.contains("before"), "{mode:?}: {text}");
    }
}

mod value_branches {
    use jacobian::sparse::{Detection, SparseOptions, jacobian_pattern, sparse_jacobian_with};
    use jacobian::{Error, Function, Op, jacobian};
    use proptest::prelude::*;
    use test_support::{Program, Shape, cases, program_at, rel_close};

    /// A generated program whose outputs depend on a branch on the value of one of its values:
    /// the program's outputs where it is positive, else `k`'s input alone.
    #[derive(Debug)]
    struct Branching {
        p: Program,
        on: usize,
        k: usize,
    }

    impl Function for Branching {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            let v = self.p.values(x);
            if v[self.on].value() > 0.0 {
                self.p.outputs.iter().map(|&i| v[i]).collect()
            } else {
                self.p.outputs.iter().map(|_| x[self.k] * 2.0).collect()
            }
        }
    }

    fn branching() -> impl Strategy<Value = (Branching, Vec<f64>)> {
        program_at(Shape::drivers()).prop_flat_map(|(p, x)| {
            let (n, len) = (p.n, p.n + p.instrs.len());
            (0..len, 0..n).prop_map(move |(on, k)| {
                (
                    Branching {
                        p: p.clone(),
                        on,
                        k,
                    },
                    x.clone(),
                )
            })
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(cases(256)))]

        /// Under every detection: a pattern holds every nonzero of the Jacobian at x (global
        /// detection may instead refuse, naming the read of a value), and the sparse Jacobian
        /// equals the dense one.
        #[test]
        fn value_reading_branches_under_every_detection((f, x) in branching()) {
            let dense = jacobian(&f, &x).unwrap();
            prop_assume!(dense.matrix.iter().all(|v| v.is_finite()));
            for detection in [Detection::Global, Detection::Local, Detection::Auto] {
                match jacobian_pattern(&f, &x, detection) {
                    Err(Error::NeedsValues { what }) => {
                        prop_assert_eq!(detection, Detection::Global, "{}", what);
                        continue;
                    }
                    Err(e) => return Err(TestCaseError::fail(e.to_string())),
                    Ok(p) => {
                        for ((i, j), v) in dense.matrix.row_iter().enumerate().flat_map(|(i, row)| {
                            row.iter().copied().enumerate().map(move |(j, v)| ((i, j), v)).collect::<Vec<_>>()
                        }) {
                            prop_assert!(
                                v == 0.0 || p.row(i).contains(&j),
                                "{:?}: ({}, {}) = {} missing from {:?}", detection, i, j, v, p
                            );
                        }
                    }
                }
                let options = SparseOptions { detection, ..SparseOptions::default() };
                let s = sparse_jacobian_with(&f, &x, options).unwrap();
                let got = s.to_dense();
                for (a, b) in got.iter().zip(dense.matrix.iter()) {
                    prop_assert!(rel_close(*a, *b, 1e-12), "{:?}: {} vs {}", detection, a, b);
                }
            }
        }
    }
}
