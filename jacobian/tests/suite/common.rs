//! The generated programs and finite differences of `test-support`, as the drivers' tests use
//! them.
#![allow(unused_imports)]

use proptest::prelude::*;
pub use test_support::{
    Binary, Instr, Program, Shape, Unary, UserSigmoid as Sigmoid, cases, central, fd_column, input,
    rel_close,
};

/// Programs of the drivers' shape ([`Shape::drivers`]) and a point: 1–4 inputs, 1–13
/// instructions, 1–3 outputs.
pub fn program() -> impl Strategy<Value = (Program, Vec<f64>)> {
    test_support::program_at(Shape::drivers())
}

/// Calls `call` (a prepared object's call, returning its plan's compilation) until `Auto` has
/// compiled: the compilation and the calls it took, checked to be reported as compiled after
/// the calls before it, with code kept or dropped as not faster. `None` without the feature
/// `jit` (after 100 calls that compile nothing).
pub fn until_compiled(
    mut call: impl FnMut() -> Option<jacobian::Compilation>,
) -> Option<jacobian::Compilation> {
    let (mut calls, start) = (0, std::time::Instant::now());
    let compiled = loop {
        calls += 1;
        if let Some(c) = call() {
            break c;
        }
        assert!(
            !cfg!(feature = "jit") || start.elapsed().as_secs() < 60,
            "not compiled after {calls} calls"
        );
        if !cfg!(feature = "jit") && calls == 100 {
            return None; // Nothing to compile without the feature: the plan says nothing of it.
        }
    };
    // Compiled during the call that passed the budget, after the calls before it.
    assert_eq!(compiled.after_calls, calls, "{compiled:?}");
    assert!(
        compiled.code_bytes > 0
            || compiled.declined.as_deref() == Some("compiled calls were not faster"),
        "{compiled:?}"
    );
    let said = format!("after {calls} calls");
    assert!(compiled.to_string().contains(&said), "{compiled}");
    Some(compiled)
}
