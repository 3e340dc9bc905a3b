//! Buffers kept between calls: one pool per thread, one cap, one call that frees them.
//!
//! Every crate of the library keeps the large buffers of a finished call here for the next call
//! on the same thread: the tape's arrays and its adjoints, the dense and compressed sweeps'
//! inputs, the sparsity tracers' sets, the tensors' element arrays. A fresh buffer costs a page
//! fault per 4 KiB the first time it is written, which for the arrays of a large recording is as
//! much as the work done on them; a kept one is already mapped.
//!
//! The policy, for every buffer alike:
//!
//! * each thread keeps at most [`spare_limit`] bytes ([`default_spare_limit`], an eighth of
//!   physical memory, unless [`set_spare_limit`] says otherwise) in at most [`MAX_KEPT`]
//!   buffers: enough that repeated gradients of one large function re-use the last call's
//!   pages instead of faulting in fresh ones;
//! * a buffer given back is emptied (its contents dropped, its capacity kept) and shrunk to
//!   its length if it alone is larger than the limit; one still larger is freed at once;
//! * the oldest buffers make room for newer ones;
//! * [`release_memory`] frees everything the thread keeps.
//!
//! Prepared objects of the drivers own their buffers instead, for as long as they live; what
//! is kept here serves one-shot calls.
//!
//! ```
//! use shared_ops::memory;
//!
//! memory::release_memory();
//! let mut v: Vec<f64> = memory::take();
//! v.resize(1 << 16, 0.0);
//! memory::give(v); // kept, emptied, for the next `take` of a `Vec<f64>`
//! assert_eq!(memory::spare_bytes(), 8 << 16);
//! let v: Vec<f64> = memory::take();
//! assert!(v.is_empty() && v.capacity() == 1 << 16);
//! assert_eq!(memory::release_memory(), 0); // taken back out: nothing kept
//! ```

use core::any::Any;
use core::cell::RefCell;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The most bytes of buffers each thread keeps between calls, unless [`set_spare_limit`]
/// changes it: an eighth of the machine's physical memory (Linux's `/proc/meminfo`; 1 GiB where
/// it cannot be read), and never less than [`SPARE_FLOOR`].
///
/// Large enough that a program computing gradients of one large function again and again keeps
/// the tape of the last call and writes into pages already mapped, instead of faulting in every
/// page of a fresh tape at every call; bounded so that a process that made one large recording
/// does not hold most of the machine afterwards. [`release_memory`] frees what a thread keeps.
///
/// ```
/// use shared_ops::memory;
/// assert!(memory::default_spare_limit() >= memory::SPARE_FLOOR);
/// ```
pub fn default_spare_limit() -> usize {
    static DEFAULT: OnceLock<usize> = OnceLock::new();
    *DEFAULT.get_or_init(|| (physical_memory().unwrap_or(8 << 30) / 8).max(SPARE_FLOOR))
}

/// The least [`default_spare_limit`]: 128 MiB, the tape and adjoints of about six million
/// operations of cheap arithmetic.
///
/// ```
/// assert_eq!(shared_ops::memory::SPARE_FLOOR, 128 << 20);
/// ```
pub const SPARE_FLOOR: usize = 128 << 20;

/// Bytes of physical memory, where the system says.
fn physical_memory() -> Option<usize> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The most buffers each thread keeps: a `take` looks through them.
///
/// ```
/// assert_eq!(shared_ops::memory::MAX_KEPT, 64);
/// ```
pub const MAX_KEPT: usize = 64;

/// The limit set by [`set_spare_limit`], or [`UNSET`] for the default.
static LIMIT: AtomicUsize = AtomicUsize::new(UNSET);
const UNSET: usize = usize::MAX;

/// Sets how many bytes of buffers each thread may keep between calls (0 keeps nothing: every
/// call allocates afresh). Takes effect the next time a buffer is given back; use
/// [`release_memory`] to free what a thread already keeps.
///
/// ```
/// use shared_ops::memory;
/// memory::set_spare_limit(1 << 20);
/// assert_eq!(memory::spare_limit(), 1 << 20);
/// memory::set_spare_limit(memory::default_spare_limit());
/// ```
pub fn set_spare_limit(bytes: usize) {
    LIMIT.store(bytes.min(UNSET - 1), Ordering::Relaxed);
}

/// The current limit of [`set_spare_limit`].
///
/// ```
/// assert!(shared_ops::memory::spare_limit() > 0);
/// ```
pub fn spare_limit() -> usize {
    match LIMIT.load(Ordering::Relaxed) {
        UNSET => default_spare_limit(),
        set => set,
    }
}

/// A buffer that can wait in the pool: it knows its bytes, and can shrink and empty itself.
///
/// ```
/// use shared_ops::memory::Reusable;
/// let mut v = vec![1.0_f64; 4];
/// v.empty();
/// assert_eq!((v.len(), v.bytes()), (0, 32));
/// ```
pub trait Reusable: Any {
    /// Bytes held (capacity).
    fn bytes(&self) -> usize;
    /// Frees the capacity beyond the length.
    fn shrink(&mut self);
    /// Drops the contents that must not outlive their call, keeping the capacity.
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

struct Spare {
    /// Buffers of any type, oldest first, with the bytes each holds.
    kept: Vec<(Box<dyn Any>, usize)>,
    bytes: usize,
}

thread_local! {
    static SPARE: RefCell<Spare> = const { RefCell::new(Spare { kept: Vec::new(), bytes: 0 }) };
}

/// A kept buffer of type `X` (the one given back last), or a new empty one.
///
/// ```
/// let v: Vec<u32> = shared_ops::memory::take();
/// assert!(v.is_empty());
/// ```
pub fn take<X: Reusable + Default>() -> X {
    take_best::<X>(|_| Some(0)).unwrap_or_default()
}

/// The kept buffer of type `X` that `score` ranks lowest among those it accepts (`None`
/// refuses one; ties go to the one given back last), as it was emptied.
///
/// ```
/// use shared_ops::memory;
/// memory::release_memory();
/// memory::give(Vec::<f64>::with_capacity(4096));
/// // The smallest kept vector with room for 1000 elements.
/// let v = memory::take_best(|v: &Vec<f64>| (v.capacity() >= 1000).then_some(v.capacity()));
/// assert_eq!(v.map(|v| v.capacity()), Some(4096));
/// ```
pub fn take_best<X: Reusable>(score: impl Fn(&X) -> Option<usize>) -> Option<X> {
    SPARE
        .try_with(|s| {
            let mut s = s.borrow_mut();
            let mut best: Option<(usize, usize)> = None;
            for (k, (data, _)) in s.kept.iter().enumerate().rev() {
                if let Some(x) = data.downcast_ref::<X>()
                    && let Some(rank) = score(x)
                    && best.is_none_or(|(r, _)| rank < r)
                {
                    best = Some((rank, k));
                }
            }
            let (data, bytes) = s.kept.remove(best?.1);
            s.bytes -= bytes;
            data.downcast::<X>().ok().map(|d| *d)
        })
        .ok()
        .flatten()
}

/// Keeps a buffer for a later [`take`], emptied, within the policy of this module.
///
/// ```
/// use shared_ops::memory;
/// memory::release_memory();
/// memory::give(vec![0u8; 100]);
/// assert_eq!(memory::spare_bytes(), 100);
/// memory::give(Vec::<u8>::new()); // nothing to keep
/// assert_eq!(memory::release_memory(), 100);
/// ```
pub fn give<X: Reusable>(mut data: X) {
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
        while s.bytes + bytes > limit || s.kept.len() >= MAX_KEPT {
            let (_, b) = s.kept.remove(0);
            s.bytes -= b;
        }
        s.kept.push((Box::new(data), bytes));
        s.bytes += bytes;
    });
}

/// Frees every buffer this thread keeps, and returns how many bytes that was. Live tapes,
/// recordings, tensors and prepared objects are not touched.
///
/// ```
/// use shared_ops::memory;
/// memory::give(vec![1.0_f64; 10]);
/// assert!(memory::release_memory() >= 80);
/// assert_eq!(memory::release_memory(), 0);
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

/// Bytes this thread keeps (at most the [spare limit](spare_limit)).
///
/// ```
/// shared_ops::memory::release_memory();
/// assert_eq!(shared_ops::memory::spare_bytes(), 0);
/// ```
pub fn spare_bytes() -> usize {
    SPARE.try_with(|s| s.borrow().bytes).unwrap_or(0)
}
