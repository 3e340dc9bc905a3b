//! Bad input is an `Err` whose message names the sizes, never a panic.

use jacobian::{Error, Function, Mode, Op, gradient, jacobian_with, jvp, vjp};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Declared;
impl Function for Declared {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        vec![x[0] * x[1], x[2]]
    }
    fn sizes(&self) -> Option<(usize, usize)> {
        Some((3, 2))
    }
}

/// Returns one more output each time it runs.
struct Growing(AtomicUsize);
impl Function for Growing {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        vec![x[0]; self.0.fetch_add(1, Ordering::Relaxed) + 1]
    }
}

/// Declares 2 outputs but returns 1.
struct Liar;
impl Function for Liar {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        vec![x[0]]
    }
    fn sizes(&self) -> Option<(usize, usize)> {
        Some((1, 2))
    }
}

#[test]
fn wrong_input_length_before_f_runs() {
    // `Declared` would index out of bounds with 2 inputs: the size check runs first.
    for mode in [Mode::Forward, Mode::Reverse, Mode::Auto] {
        let e = jacobian_with(&Declared, &[1.0, 2.0], mode).unwrap_err();
        assert_eq!(
            e.to_string(),
            "input has length 2, but the function takes 3 inputs"
        );
    }
    assert!(gradient(&Declared, &[1.0]).is_err());
    assert!(jvp(&Declared, &[1.0], &[1.0]).is_err());
    assert!(vjp(&Declared, &[1.0], &[1.0, 1.0]).is_err());
}

#[test]
fn output_length_changing_between_calls() {
    for mode in [Mode::Forward, Mode::Auto] {
        let e = jacobian_with(&Growing(AtomicUsize::new(0)), &[1.0; 20], mode).unwrap_err();
        match &e {
            Error::OutputChanged { first, found, .. } => assert!(found > first, "{e}"),
            other => panic!("wrong error {other}"),
        }
        assert!(e.to_string().contains("must not change"), "{e}");
    }
}

#[test]
fn output_length_differing_from_declared() {
    for mode in [Mode::Forward, Mode::Reverse, Mode::Auto] {
        let e = jacobian_with(&Liar, &[1.0], mode).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("the function declares 2 outputs (Function::sizes), but returned 1 "),
            "{mode:?}: {e}"
        );
    }
}

#[test]
fn seed_lengths() {
    let e = jvp(&Declared, &[1.0, 2.0, 3.0], &[1.0]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "tangent seed has length 1, but must have length 3"
    );
    let e = vjp(&Declared, &[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "adjoint seed has length 3, but must have length 2"
    );
}

#[test]
fn gradient_needs_one_output() {
    let e = gradient(&Declared, &[1.0, 2.0, 3.0]).unwrap_err();
    assert_eq!(e, Error::NotScalar { outputs: 2 });
    assert!(e.to_string().contains("returned 2"));
}

#[test]
fn good_input_still_works() {
    let (y, jv) = jvp(&Declared, &[1.0, 2.0, 3.0], &[1.0, 0.0, 1.0]).unwrap();
    assert_eq!((y, jv), (vec![2.0, 3.0], vec![2.0, 1.0]));
    let (_, wj) = vjp(&Declared, &[1.0, 2.0, 3.0], &[1.0, 1.0]).unwrap();
    assert_eq!(wj, vec![2.0, 1.0, 1.0]);
}

/// A transform cannot return an error: it panics with the driver's message, which names the
/// sweep and both lengths.
#[test]
#[should_panic(expected = "JacFwd: ")]
fn jacfwd_of_a_function_whose_length_changes_panics_with_the_lengths() {
    let _ = jacobian::JacFwd(&Growing(AtomicUsize::new(0))).eval(&[1.0, 2.0]);
}

#[test]
fn jacfwd_length_message_names_both_lengths() {
    let caught = std::panic::catch_unwind(|| {
        jacobian::JacFwd(&Growing(AtomicUsize::new(0))).eval(&[1.0, 2.0])
    })
    .unwrap_err();
    let message = caught.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        message.contains("2 outputs") && message.contains("1 before"),
        "{message}"
    );
    assert!(message.contains("forward sweep 2"), "{message}");
}
