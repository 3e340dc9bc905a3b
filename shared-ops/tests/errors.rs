//! Every error's message, word for word: each names what was declared or expected, what was
//! found, and where.

use shared_ops::Error;

#[test]
fn every_message_names_the_sizes_and_what_happened() {
    let cases = [
        (
            Error::InputLength {
                expected: 3,
                found: 2,
            },
            "input has length 2, but the function takes 3 inputs",
        ),
        (
            Error::OutputLength {
                declared: 3,
                found: 2,
                during: "the reverse recording".into(),
            },
            "the function declares 3 outputs (Function::sizes), but returned 2 during the \
             reverse recording",
        ),
        (
            Error::OutputChanged {
                first: 3,
                found: 4,
                during: "forward sweep 2".into(),
            },
            "the function returned 4 outputs during forward sweep 2, but 3 before: its output \
             length must not change",
        ),
        (
            Error::NotScalar { outputs: 2 },
            "a gradient needs a function with 1 output, but this one returned 2: use a Jacobian \
             or a vector-Jacobian product",
        ),
        (
            Error::SeedLength {
                seed: "tangent",
                expected: 3,
                found: 1,
            },
            "tangent seed has length 1, but must have length 3",
        ),
        (
            Error::ArgumentLength {
                argument: "the initial state",
                expected: 2,
                found: 3,
            },
            "the initial state has length 3, but the function declares 2",
        ),
        (
            Error::NoCheckpointSlots { steps: 10 },
            "checkpointing a loop of 10 steps needs at least 1 slot (it holds the initial \
             state), but 0 were given",
        ),
        (
            Error::NotSymmetric {
                rows: 3,
                cols: 3,
                missing: Some((0, 2)),
            },
            "the 3×3 pattern is not symmetric: (0, 2) is a nonzero but (2, 0) is not",
        ),
        (
            Error::NotSymmetric {
                rows: 2,
                cols: 3,
                missing: None,
            },
            "the pattern is 2×3, not square",
        ),
        (
            Error::IndexOutOfRange {
                what: "a column of row 1".into(),
                index: 5,
                len: 4,
            },
            "a column of row 1 is 5, outside 0..4",
        ),
        (
            Error::NeedsValues {
                what: "a comparison of values".into(),
            },
            "global sparsity detection met a comparison of values, which needs values it does \
             not carry: use local detection (Detection::Local), whose pattern holds at this x",
        ),
        (
            Error::Lanes { requested: 5 },
            "5 tangents per sweep: a forward sweep carries 1, 2, 3, 4, 8, 16 or 32",
        ),
    ];
    for (e, text) in cases {
        assert_eq!(e.to_string(), text);
    }
}
