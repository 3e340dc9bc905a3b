//! The capacity hint for a first call: `warm_up`'s buffers are the ones the next recording
//! uses.

use reverse::{Float, Tape};

/// `warm_up` leaves buffers that the next recording takes whole: while the tape lives the
/// thread keeps less, and afterwards it has them back without any having grown.
#[test]
fn a_recording_takes_the_warmed_buffers() {
    shared_ops::memory::release_memory();
    reverse::warm_up(10, 1_000);
    let warmed = shared_ops::memory::spare_bytes();
    assert!(warmed >= 1_000 * (4 + 4 + 8 + 4) + 1_000 * 8 + 10 * 16);
    {
        let tape = Tape::new();
        let xs = tape.vars(&[0.5; 10]);
        let mut y = xs[0];
        for i in 0..200 {
            y = y * xs[i % 10] + xs[(i + 3) % 10].sin();
        }
        assert!(tape.len() < 1_000);
        assert!(
            shared_ops::memory::spare_bytes() < warmed,
            "the tape took the warmed arrays"
        );
        let _ = tape.gradient(y);
    }
    assert_eq!(
        shared_ops::memory::spare_bytes(),
        warmed,
        "the same buffers came back, none grown"
    );
    shared_ops::memory::release_memory();
}
