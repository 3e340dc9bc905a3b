//! Buffers kept between recordings, up to a cap, and the call that releases them.
//!
//! A dropped tape (or recording) leaves its arrays to the next tape of the same scalar type on
//! the same thread, and the drivers leave their adjoint and input vectors likewise, so that the
//! next gradient records and sweeps without allocating or faulting in fresh pages (on the
//! machine the benchmarks ran on, a page fault costs about 2 µs per 4 KiB: as much as writing
//! the page forty times). What is kept is capped per thread, at [`DEFAULT_SPARE_LIMIT`] unless
//! [`set_spare_limit`] says otherwise: a buffer is first shrunk to its length, one still larger
//! than the cap is freed at once, and older ones make room for newer ones. [`release_memory`]
//! frees everything kept.

use super::storage::{Keeps, TapeData};
use crate::{Op, Var};
use core::any::Any;
use core::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The most bytes of buffers each thread keeps for its next recordings, unless
/// [`set_spare_limit`] changes it: 128 MiB, the tape and adjoints of about six million operations
/// of cheap arithmetic (a log-sum-exp of 640 000 terms fits). Larger buffers are freed as soon as
/// their tape or driver is done with them.
///
/// ```
/// assert_eq!(reverse::DEFAULT_SPARE_LIMIT, 128 << 20);
/// ```
pub const DEFAULT_SPARE_LIMIT: usize = 128 << 20;

static LIMIT: AtomicUsize = AtomicUsize::new(DEFAULT_SPARE_LIMIT);

/// Sets how many bytes of buffers each thread may keep between recordings (0 keeps nothing:
/// every recording allocates afresh). Takes effect the next time a buffer is given back; use
/// [`release_memory`] to free what a thread already keeps.
///
/// ```
/// reverse::set_spare_limit(1 << 20);
/// assert_eq!(reverse::spare_limit(), 1 << 20);
/// reverse::set_spare_limit(reverse::DEFAULT_SPARE_LIMIT);
/// ```
pub fn set_spare_limit(bytes: usize) {
    LIMIT.store(bytes, Ordering::Relaxed);
}

/// The current limit of [`set_spare_limit`].
pub fn spare_limit() -> usize {
    LIMIT.load(Ordering::Relaxed)
}

/// A buffer that can wait in the pool: it knows its bytes, and can shrink and empty itself.
pub(crate) trait Reusable: Any {
    /// Bytes held (capacity).
    fn bytes(&self) -> usize;
    /// Frees the capacity beyond the length.
    fn shrink(&mut self);
    /// Forgets the contents, keeping the capacity.
    fn empty(&mut self);
}

impl<X: 'static> Reusable for Vec<X> {
    fn bytes(&self) -> usize {
        self.capacity() * size_of::<X>()
    }
    fn shrink(&mut self) {
        self.shrink_to_fit();
    }
    fn empty(&mut self) {
        self.clear();
    }
}

impl<T: Copy + 'static> Reusable for TapeData<T> {
    fn bytes(&self) -> usize {
        self.capacity_bytes()
    }
    fn shrink(&mut self) {
        self.shrink_to_fit();
    }
    fn empty(&mut self) {
        self.reset(Keeps::Sweeps);
    }
}

struct Spare {
    /// Buffers of any type, oldest first, with the bytes each holds.
    kept: Vec<(Box<dyn Any>, usize)>,
    bytes: usize,
}

thread_local! {
    static SPARE: RefCell<Spare> = const { RefCell::new(Spare { kept: Vec::new(), bytes: 0 }) };
}

/// A kept buffer of type `X` (the most recent), or a new empty one.
pub(crate) fn take<X: Reusable + Default>() -> X {
    SPARE
        .try_with(|s| {
            let mut s = s.borrow_mut();
            let k = s.kept.iter().rposition(|(d, _)| d.is::<X>())?;
            let (data, bytes) = s.kept.remove(k);
            s.bytes -= bytes;
            data.downcast::<X>().ok().map(|d| *d)
        })
        .ok()
        .flatten()
        .unwrap_or_default()
}

/// Keeps a buffer for later, emptied, within the [spare limit](spare_limit).
pub(crate) fn give<X: Reusable>(mut data: X) {
    let limit = spare_limit();
    if data.bytes() > limit {
        data.shrink();
    }
    let bytes = data.bytes();
    if bytes == 0 || bytes > limit {
        return;
    }
    data.empty();
    // During thread exit the slot may be gone: then the buffer is simply freed.
    let _ = SPARE.try_with(|s| {
        let mut s = s.borrow_mut();
        while s.bytes + bytes > limit {
            let (_, b) = s.kept.remove(0);
            s.bytes -= b;
        }
        s.kept.push((Box::new(data), bytes));
        s.bytes += bytes;
    });
}

/// Frees every buffer this thread keeps for later recordings, and returns how many bytes that
/// was. Live tapes and recordings are not touched.
///
/// ```
/// {
///     let tape = reverse::Tape::new();
///     let x = tape.var(1.0);
///     let _ = x * x;
/// } // the tape's buffers are kept for the next recording
/// assert!(reverse::release_memory() > 0);
/// assert_eq!(reverse::release_memory(), 0);
/// ```
pub fn release_memory() -> usize {
    SPARE
        .try_with(|s| {
            let mut s = s.borrow_mut();
            s.kept.clear();
            core::mem::take(&mut s.bytes)
        })
        .unwrap_or(0)
}

/// Readies this thread's kept buffers for a recording of `inputs` inputs and about `nodes`
/// nodes on a tape of `f64`, and its reverse sweep: a capacity hint for the first call.
///
/// The buffers are allocated and every page of them written once, outside the call that needs
/// them; the next driver call of up to `inputs` inputs and `nodes` nodes (with as many edges of
/// each kind) then grows no array and meets no fresh page. Measured (`cargo bench -p benches
/// --bench first_call`, a Rosenbrock gradient of n = 10⁵, one thread): with the kept buffers
/// released a call took 6.67 ms, 1.80× a later call (3.71 ms); released and then warmed up,
/// 3.85 ms (1.04×). The buffers stay within the [spare limit](spare_limit);
/// [`TapeStats::nodes`](crate::TapeStats) of an earlier recording is a good hint.
///
/// ```
/// reverse::release_memory();
/// reverse::warm_up(1_000, 100_000);
/// assert!(reverse::spare_bytes() >= 100_000 * (4 + 12 + 4 + 8) + 1_000 * 16);
/// let (_, g) = reverse::gradient(|x: &[reverse::Var]| x[0] * x[1], &[2.0, 3.0]);
/// assert_eq!(g, vec![3.0, 2.0]);
/// ```
pub fn warm_up(inputs: usize, nodes: usize) {
    warm_up_for::<f64>(inputs, nodes);
}

/// [`warm_up`] for a tape of another scalar type `T` (a `Tape<f32>`, a `Tape<Dual<f64>>`).
///
/// ```
/// reverse::release_memory();
/// reverse::warm_up_for::<f32>(10, 1_000);
/// assert!(reverse::spare_bytes() >= 1_000 * (4 + 8 + 4 + 4));
/// ```
pub fn warm_up_for<T: Op>(inputs: usize, nodes: usize) {
    let mut data = take::<TapeData<T>>();
    data.prefault(nodes);
    give(data);
    prefaulted::<T>(nodes);
    prefaulted::<Var<T>>(inputs);
}

/// A kept `Vec<X>` with room for `len` items, every page written once, given back.
fn prefaulted<X: Copy + Default + 'static>(len: usize) {
    let mut v = take::<Vec<X>>();
    v.clear();
    v.resize(len, X::default());
    give(v);
}

/// Bytes this thread keeps for later recordings (at most the [spare limit](spare_limit)).
///
/// ```
/// reverse::release_memory();
/// assert_eq!(reverse::spare_bytes(), 0);
/// ```
pub fn spare_bytes() -> usize {
    SPARE.try_with(|s| s.borrow().bytes).unwrap_or(0)
}
