//! Element buffers of large tensors, kept for reuse by the thread that freed them.
//!
//! A training loop builds the same graph every step, so it allocates and frees the same large
//! arrays every step. Handed back to malloc, an array of 128 KiB or more is returned to the
//! kernel (unmapped, or trimmed from the top of the heap), and the next step's array of that
//! size faults in fresh zeroed pages. Buffers of at least [`MIN_BYTES`] go to the thread's kept
//! buffers instead (`shared_ops::memory`, under its one cap) when a tensor node or a gradient is
//! dropped, and ops take them back by size, as PyTorch's caching allocator does for GPU memory.
//! Smaller ones go back to malloc, whose size classes serve them without system calls.

use crate::Element;
use ndarray::ArrayD;
use shared_ops::memory::{self, Reusable};

/// Smaller buffers go back to malloc.
const MIN_BYTES: usize = 16 << 10;

/// A tensor's elements while kept: emptying keeps them (plain numbers, which every taker
/// overwrites), so that a buffer taken back at its old length is not written twice.
struct Elements<T>(Vec<T>);

impl<T: Element> Reusable for Elements<T> {
    fn bytes(&self) -> usize {
        self.0.capacity() * size_of::<T>()
    }
    fn shrink(&mut self) {
        self.0.shrink_to_fit();
    }
    fn empty(&mut self) {}
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
    if len * size_of::<T>() < MIN_BYTES {
        return None;
    }
    let fits = |e: &Elements<T>| {
        let cap = e.0.capacity();
        (len..=2 * len).contains(&cap).then_some(cap)
    };
    memory::take_best(fits).map(|e| e.0)
}

/// Keeps `v`'s buffer for a later [`take`] if it is large enough; else frees it.
pub(crate) fn give<T: Element>(v: Vec<T>) {
    if v.capacity() * size_of::<T>() >= MIN_BYTES {
        memory::give(Elements(v));
    }
}

/// [`give`] for an array's elements.
pub(crate) fn give_array<T: Element>(a: ArrayD<T>) {
    give(a.into_raw_vec_and_offset().0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_come_back_by_type_and_size() {
        memory::release_memory();
        let n = 4 * MIN_BYTES / 8;
        let mut v = take::<f64>(n);
        assert_eq!(v, vec![0.0; n]);
        v.fill(7.0);
        let address = v.as_ptr();
        give(v);
        assert_eq!(memory::spare_bytes(), n * 8);
        // Another element type, or a request more than twice smaller, allocates anew.
        assert_eq!(take::<f32>(2 * n).len(), 2 * n);
        assert_eq!(take::<f64>(n / 2 - 1).len(), n / 2 - 1);
        assert_eq!(memory::spare_bytes(), n * 8);
        // The same buffer, its stale values kept, with the length asked for.
        let w = take::<f64>(n - 3);
        assert_eq!((w.as_ptr(), w.len(), w[0]), (address, n - 3, 7.0));
        assert_eq!(memory::spare_bytes(), 0);
        // Pushed onto: empty, with room.
        give(w);
        let e = take_empty::<f64>(n);
        assert_eq!((e.as_ptr(), e.len(), e.capacity()), (address, 0, n));
        // Too small to keep.
        give(vec![1.0f64; 4]);
        assert_eq!(memory::spare_bytes(), 0);
    }
}
