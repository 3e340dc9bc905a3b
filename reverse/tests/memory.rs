//! What a thread keeps between recordings is capped, and `release_memory` gives it back: the
//! resident memory (VmRSS) after a gradient of more than 10⁷ nodes returns to within the spare
//! limit of where it started, and to the start after `release_memory`.
//!
//! One test in this file, so that no other test allocates while it measures.
//!
//! The allocator is pinned first (glibc): by default, freeing a large mmapped buffer raises
//! glibc's mmap threshold (up to 32 MiB) and trim threshold (up to 64 MiB), so later buffers of
//! tens of MiB come from the thread's malloc arena, whose free top is then neither trimmed by
//! `free` nor by `malloc_trim`. Measured here without pinning, about 46 MiB of *free* arena
//! memory stayed resident after `release_memory` (glibc 2.36). A fixed mmap threshold turns
//! that adjustment off, so that resident memory shows what the program holds.
#![cfg(target_os = "linux")]

use reverse::{Op, Tape, Var};
use shared_ops::memory::{SPARE_FLOOR, default_spare_limit};
use std::time::Instant;

const MIB: usize = 1 << 20;
/// Slack for the allocator's bookkeeping and the small buffers of the test itself.
const SLACK: usize = 32 * MIB;

/// Resident memory of this process, in bytes, from /proc/self/status.
fn rss() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").expect("read /proc/self/status");
    let line = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .expect("a VmRSS line");
    let kib: usize = line
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .expect("VmRSS in kB");
    kib * 1024
}

/// Fixes glibc's mmap threshold at 1 MiB (which also turns off its dynamic adjustment), so that
/// every large buffer is its own mapping, returned to the system when freed.
#[cfg(target_env = "gnu")]
fn pin_allocator() {
    const M_MMAP_THRESHOLD: i32 = -3;
    unsafe extern "C" {
        fn mallopt(param: i32, value: i32) -> i32;
    }
    // SAFETY: mallopt takes no pointer; it sets an allocation policy of glibc's malloc.
    let ok = unsafe { mallopt(M_MMAP_THRESHOLD, 1 << 20) };
    assert_eq!(ok, 1, "mallopt(M_MMAP_THRESHOLD)");
}

#[cfg(not(target_env = "gnu"))]
fn pin_allocator() {}

/// Whether resident memory follows what the program holds: not under valgrind (`.ci/deep`), whose
/// allocator keeps freed memory mapped; there the pool's own accounting is still checked.
fn resident_follows_the_program() -> bool {
    !std::env::var("LD_PRELOAD").is_ok_and(|p| p.contains("vgpreload"))
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / MIB as f64
}

fn rosenbrock<T: Op>(x: &[T]) -> T {
    let hundred = T::constant(100.0);
    x.windows(2)
        .map(|w| {
            let a = T::one() - w[0];
            let b = w[1] - w[0] * w[0];
            a * a + hundred * b * b
        })
        .sum()
}

/// The hand-written gradient of [`rosenbrock`] at index i.
fn rosenbrock_grad(x: &[f64], i: usize) -> f64 {
    let mut g = 0.0;
    if i + 1 < x.len() {
        g += -2.0 * (1.0 - x[i]) - 400.0 * x[i] * (x[i + 1] - x[i] * x[i]);
    }
    if i > 0 {
        g += 200.0 * (x[i] - x[i - 1] * x[i - 1]);
    }
    g
}

fn check_gradient(x: &[f64], g: &[f64]) {
    assert_eq!(g.len(), x.len());
    for i in [0, 1, 2, 99, 100, x.len() / 2, x.len() - 2, x.len() - 1] {
        let want = rosenbrock_grad(x, i);
        assert!(
            (g[i] - want).abs() <= 1e-12 * want.abs().max(1.0),
            "g[{i}] = {}, want {want}",
            g[i]
        );
    }
}

/// Restores the default spare limit even if an assertion fails.
struct RestoreLimit;
impl Drop for RestoreLimit {
    fn drop(&mut self) {
        shared_ops::memory::set_spare_limit(default_spare_limit());
    }
}

/// Measures and prints resident memory against the baseline.
fn show(what: &str, baseline: usize) -> usize {
    let m = rss();
    eprintln!(
        "{what:<24} VmRSS {:6.1} MiB ({:+6.1} MiB over the baseline), kept for reuse {:5.1} MiB",
        mib(m),
        mib(m) - mib(baseline),
        mib(shared_ops::memory::spare_bytes())
    );
    m
}

#[test]
fn spare_buffers_are_capped_and_released() {
    let start = Instant::now();
    pin_allocator();
    let _restore = RestoreLimit;
    shared_ops::memory::set_spare_limit(default_spare_limit());
    assert_eq!(shared_ops::memory::spare_limit(), default_spare_limit());
    // The cap under test: the floor, below the recordings made here.
    shared_ops::memory::set_spare_limit(SPARE_FLOOR);
    shared_ops::memory::release_memory();
    assert_eq!(shared_ops::memory::spare_bytes(), 0);
    let limit = shared_ops::memory::spare_limit();

    let n = 1_500_000;
    let x: Vec<f64> = (0..n).map(|i| 0.5 + 0.01 * (i % 100) as f64).collect();
    let baseline = rss();
    show("baseline", baseline);

    // 1. A recording of more than 10⁷ nodes on a tape, swept with the pooled adjoint buffer.
    let (nodes, peak) = {
        let tape = Tape::new();
        let xs = tape.vars(&x);
        let y = rosenbrock(&xs);
        let stats = tape.stats();
        assert!(stats.nodes >= 10_000_000, "{stats:?}");
        let g = tape.sweep_wrt(&[(y, 1.0)], &xs);
        check_gradient(&x, &g);
        eprintln!(
            "tape: {} nodes, {} weighted and {} unit edges, {:.1} MiB recorded",
            stats.nodes,
            stats.edges,
            stats.unit_edges,
            mib(stats.bytes)
        );
        (stats.nodes, show("peak (tape live)", baseline))
    };
    // The recording held far more than the cap, so the cap is what is being tested.
    let measured = resident_follows_the_program();
    assert!(
        !measured || peak > baseline + limit,
        "peak {peak} vs baseline {baseline}"
    );
    let after_tape = show("after the tape", baseline);
    let kept_tape = shared_ops::memory::spare_bytes();

    // 2. The same gradient through the driver (its input and adjoint vectors are pooled too).
    let (value, g) = reverse::gradient(|v: &[Var]| rosenbrock(v), &x);
    assert!(value.is_finite());
    check_gradient(&x, &g);
    drop(g);
    let after_driver = show("after the driver", baseline);
    let kept = shared_ops::memory::spare_bytes();

    assert!(kept_tape <= limit && kept <= limit, "{kept_tape}, {kept}");
    assert!(
        kept > 0,
        "an adjoint vector of {nodes} nodes fits under the cap and is kept"
    );
    for (what, m) in [("the tape", after_tape), ("the driver", after_driver)] {
        assert!(
            !measured || m <= baseline + limit + SLACK,
            "after {what}: {:.1} MiB above the baseline, over the {:.0} MiB cap + {:.0} MiB",
            mib(m - baseline),
            mib(limit),
            mib(SLACK)
        );
        // What is resident beyond the baseline is what the pool keeps, give or take the slack.
        assert!(
            !measured || m + SLACK >= baseline + kept.min(kept_tape),
            "{m} {baseline} {kept}"
        );
    }

    // 3. release_memory frees what was kept, and says how much.
    let released = shared_ops::memory::release_memory();
    eprintln!("release_memory() = {:.1} MiB", mib(released));
    let after_release = show("after release_memory", baseline);
    assert_eq!(released, kept);
    assert_eq!(shared_ops::memory::spare_bytes(), 0);
    assert_eq!(shared_ops::memory::release_memory(), 0);
    assert!(
        !measured || after_release <= baseline + SLACK,
        "after release_memory: {:.1} MiB above the baseline",
        mib(after_release.saturating_sub(baseline))
    );

    // 4. A limit of 0 keeps nothing, whatever the size of the recording.
    shared_ops::memory::set_spare_limit(0);
    assert_eq!(shared_ops::memory::spare_limit(), 0);
    let small = &x[..1000];
    let (_, g) = reverse::gradient(|v: &[Var]| rosenbrock(v), small);
    check_gradient(small, &g);
    assert_eq!(
        shared_ops::memory::spare_bytes(),
        0,
        "limit 0: a small gradient keeps nothing"
    );
    {
        let tape = Tape::new();
        let xs = tape.vars(&x[..200_000]);
        let y = rosenbrock(&xs);
        let g = tape.sweep_wrt(&[(y, 1.0)], &xs);
        check_gradient(&x[..200_000], &g);
    }
    assert_eq!(
        shared_ops::memory::spare_bytes(),
        0,
        "limit 0: a dropped tape keeps nothing"
    );
    let after_zero = show("limit 0, after two more", baseline);
    assert!(!measured || after_zero <= baseline + SLACK);

    // 5. Back to the default: a small recording is kept again, and so is the large one, whole,
    // where the machine's default holds it (repeated gradients then fault no fresh pages).
    shared_ops::memory::set_spare_limit(default_spare_limit());
    let _ = reverse::gradient(|v: &[Var]| rosenbrock(v), small);
    assert!(shared_ops::memory::spare_bytes() > 0);
    assert!(shared_ops::memory::release_memory() > 0);
    let tape = Tape::new();
    let xs = tape.vars(&x);
    let _ = rosenbrock(&xs);
    let bytes = tape.stats().bytes;
    drop(tape);
    if bytes <= default_spare_limit() {
        assert!(
            shared_ops::memory::spare_bytes() >= bytes,
            "the default keeps a {bytes}-byte tape"
        );
    }
    assert!(shared_ops::memory::release_memory() > 0);
    eprintln!("memory test took {:.2?}", start.elapsed());
}
