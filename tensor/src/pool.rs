//! Element buffers of large tensors, kept for reuse by the thread that freed them.
//!
//! A training loop builds the same graph every step, so it allocates and frees the same large
//! arrays every step. Handed back to malloc, an array of 128 KiB or more is returned to the
//! kernel (unmapped, or trimmed from the top of the heap), and the next step's array of that
//! size faults in fresh zeroed pages: 3 s of the MLP bench's loss and gradient (batch 64, 256
//! wide, `f64`) took 688 000 page faults, and 866 with this cache (`perf stat`). Buffers of at
//! least [`MIN_BYTES`] go here instead when a tensor node or a gradient is dropped, and ops
//! take them back by size, as PyTorch's caching allocator does for GPU memory. Measured
//! (`benches/mlp.rs`, one thread, three rounds alternated with the code before): the loss
//! alone 346–365 → 266–269 µs, the same as telling glibc never to give memory back
//! (`GLIBC_TUNABLES`, 269–277 µs); the loss and gradient unchanged within the noise (576–606 µs
//! before, 569–607 after).
//!
//! The cache is per thread (tensors are not `Send`), holds at most [`MAX_BUFFERS`] buffers and
//! [`MAX_BYTES`] bytes, and [`release_buffers`] empties it.

use std::any::{Any, TypeId};
use std::cell::RefCell;

use ndarray::ArrayD;

use crate::Element;

/// Smaller buffers go back to malloc, whose size classes serve them without system calls.
pub const MIN_BYTES: usize = 16 << 10;
/// At most this many buffers are kept per thread.
pub const MAX_BUFFERS: usize = 32;
/// At most this many bytes are kept per thread.
pub const MAX_BYTES: usize = 64 << 20;

struct Entry {
    ty: TypeId,
    bytes: usize,
    /// A `Vec<T>` of the element type `ty`.
    buf: Box<dyn Any>,
}

#[derive(Default)]
struct Cache {
    bytes: usize,
    /// Oldest first.
    entries: Vec<Entry>,
}

thread_local! {
    static CACHE: RefCell<Cache> = RefCell::default();
}

/// A vector of `len` elements with unspecified values (zeros, or what an earlier tensor
/// left): for callers that overwrite every element.
pub(crate) fn take<T: Element>(len: usize) -> Vec<T> {
    match kept(len) {
        Some(mut v) => {
            // A kept vector keeps its length, so only a longer request writes anything.
            v.truncate(len);
            v.resize(len, T::zero());
            v
        }
        None => vec![T::zero(); len],
    }
}

/// An empty vector with room for `len` elements, for callers that push them.
pub(crate) fn take_empty<T: Element>(len: usize) -> Vec<T> {
    match kept(len) {
        Some(mut v) => {
            v.clear();
            v
        }
        None => Vec::with_capacity(len),
    }
}

/// A kept buffer of at least `len` and at most twice `len` elements, the smallest there is.
fn kept<T: Element>(len: usize) -> Option<Vec<T>> {
    let bytes = len * size_of::<T>();
    if bytes < MIN_BYTES {
        return None;
    }
    CACHE
        .try_with(|c| {
            let mut c = c.borrow_mut();
            let ty = TypeId::of::<T>();
            let best = c
                .entries
                .iter()
                .enumerate()
                .filter(|(_, e)| e.ty == ty && e.bytes >= bytes && e.bytes <= 2 * bytes)
                .min_by_key(|(_, e)| e.bytes)
                .map(|(i, _)| i)?;
            let e = c.entries.remove(best);
            c.bytes -= e.bytes;
            e.buf.downcast::<Vec<T>>().ok().map(|b| *b)
        })
        .ok()
        .flatten()
}

/// Keeps `v`'s buffer for a later [`take`] if it is large enough and the cache has room
/// (evicting the oldest buffers for it); else frees it.
pub(crate) fn give<T: Element>(v: Vec<T>) {
    let bytes = v.capacity() * size_of::<T>();
    if !(MIN_BYTES..=MAX_BYTES).contains(&bytes) {
        return;
    }
    // During the thread's exit the cache may be gone: then `v` is simply freed.
    let _ = CACHE.try_with(|c| {
        let mut c = c.borrow_mut();
        while c.entries.len() >= MAX_BUFFERS || c.bytes + bytes > MAX_BYTES {
            let old = c.entries.remove(0);
            c.bytes -= old.bytes;
        }
        c.bytes += bytes;
        c.entries.push(Entry {
            ty: TypeId::of::<T>(),
            bytes,
            buf: Box::new(v),
        });
    });
}

/// [`give`] for an array's elements.
pub(crate) fn give_array<T: Element>(a: ArrayD<T>) {
    give(a.into_raw_vec_and_offset().0);
}

/// Frees the element buffers this thread keeps for reuse (at most [`MAX_BYTES`]; see the
/// module's documentation). Tensors keep working; the next large arrays are allocated afresh.
///
/// ```
/// use tensor::{pool, Tensor};
///
/// let x: Tensor = Tensor::zeros(&[128, 128]);
/// drop(x.tanh()); // its 128 KiB of elements are kept for the next array of that size
/// assert!(pool::kept_bytes() >= 128 * 128 * 8);
/// pool::release_buffers();
/// assert_eq!(pool::kept_bytes(), 0);
/// ```
pub fn release_buffers() {
    let _ = CACHE.try_with(|c| std::mem::take(&mut *c.borrow_mut()));
}

/// The bytes of element buffers this thread keeps for reuse (see [`release_buffers`]).
///
/// ```
/// use tensor::pool;
///
/// pool::release_buffers();
/// assert_eq!(pool::kept_bytes(), 0);
/// ```
pub fn kept_bytes() -> usize {
    CACHE.try_with(|c| c.borrow().bytes).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_come_back_by_type_and_size() {
        release_buffers();
        let n = 4 * MIN_BYTES / 8;
        let mut v = take::<f64>(n);
        assert_eq!(v, vec![0.0; n]);
        v.fill(7.0);
        let address = v.as_ptr();
        give(v);
        assert_eq!(kept_bytes(), n * 8);
        // Another element type, or a request more than twice smaller, allocates anew.
        assert_eq!(take::<f32>(2 * n).len(), 2 * n);
        assert_eq!(take::<f64>(n / 2 - 1).len(), n / 2 - 1);
        assert_eq!(kept_bytes(), n * 8);
        // The same buffer, its stale values kept, with the length asked for.
        let w = take::<f64>(n - 3);
        assert_eq!((w.as_ptr(), w.len(), w[0]), (address, n - 3, 7.0));
        assert_eq!(kept_bytes(), 0);
        // Pushed onto: empty, with room.
        give(w);
        let e = take_empty::<f64>(n);
        assert_eq!((e.as_ptr(), e.len(), e.capacity()), (address, 0, n));
        // Too small to keep.
        give(vec![1.0f64; 4]);
        assert_eq!(kept_bytes(), 0);
    }

    #[test]
    fn the_cache_is_bounded() {
        release_buffers();
        let n = MIN_BYTES / 8;
        for _ in 0..2 * MAX_BUFFERS {
            give(vec![0.0f64; n]);
        }
        assert_eq!(kept_bytes(), MAX_BUFFERS * n * 8);
        give(vec![0.0f64; MAX_BYTES / 8]);
        assert_eq!(kept_bytes(), MAX_BYTES);
        give(vec![0.0f64; MAX_BYTES / 8 + 1]); // larger than the whole cache: freed
        assert_eq!(kept_bytes(), MAX_BYTES);
        release_buffers();
        assert_eq!(kept_bytes(), 0);
    }
}
