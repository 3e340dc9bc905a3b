//! Buffers kept between recordings, up to a cap, and the call that releases them.
//!
//! A dropped tape (or recording) leaves its buffers to the next tape of the same scalar type on
//! the same thread, which then records without allocating or faulting in fresh pages. What is
//! kept is capped at [`SPARE_BYTES`] per thread: a larger buffer set is freed at once, and older
//! ones make room for newer ones. [`release_memory`] frees everything kept.

use super::storage::TapeData;
use core::any::Any;
use core::cell::RefCell;

/// The most bytes of tape buffers a thread keeps for its next recordings: 64 MiB (about four
/// million nodes of cheap arithmetic). Recordings larger than this are freed when they end.
///
/// ```
/// assert_eq!(reverse::SPARE_BYTES, 64 << 20);
/// ```
pub const SPARE_BYTES: usize = 64 << 20;

struct Spare {
    /// `TapeData<T>` of any `T`, oldest first, with the bytes each holds.
    kept: Vec<(Box<dyn Any>, usize)>,
    bytes: usize,
}

thread_local! {
    static SPARE: RefCell<Spare> = const { RefCell::new(Spare { kept: Vec::new(), bytes: 0 }) };
}

/// Storage for a new tape: a kept one of the same scalar type, or a fresh one.
pub(crate) fn take<T: 'static>() -> TapeData<T> {
    SPARE
        .try_with(|s| {
            let mut s = s.borrow_mut();
            let k = s.kept.iter().rposition(|(d, _)| d.is::<TapeData<T>>())?;
            let (data, bytes) = s.kept.remove(k);
            s.bytes -= bytes;
            data.downcast::<TapeData<T>>().ok().map(|d| *d)
        })
        .ok()
        .flatten()
        .unwrap_or_default()
}

/// Keeps the buffers of a finished tape for the next one, within [`SPARE_BYTES`].
pub(crate) fn give<T: Copy + 'static>(mut data: TapeData<T>) {
    let bytes = data.capacity_bytes();
    if bytes == 0 || bytes > SPARE_BYTES {
        return;
    }
    data.reset(false);
    // During thread exit the slot may be gone: then the buffers are simply freed.
    let _ = SPARE.try_with(|s| {
        let mut s = s.borrow_mut();
        while s.bytes + bytes > SPARE_BYTES {
            let (_, b) = s.kept.remove(0);
            s.bytes -= b;
        }
        s.kept.push((Box::new(data), bytes));
        s.bytes += bytes;
    });
}

/// Frees every tape buffer this thread keeps for later recordings, and returns how many bytes
/// that was. Live tapes and recordings are not touched.
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

/// Bytes this thread keeps for later recordings (at most [`SPARE_BYTES`]).
///
/// ```
/// reverse::release_memory();
/// assert_eq!(reverse::spare_bytes(), 0);
/// ```
pub fn spare_bytes() -> usize {
    SPARE.try_with(|s| s.borrow().bytes).unwrap_or(0)
}
