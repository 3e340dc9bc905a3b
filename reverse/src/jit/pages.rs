//! Memory for the compiler's analysis: arrays of a few bytes per node, filled as it goes over
//! recordings of millions of nodes.

/// An empty vector with room for `n` elements, whose memory the kernel is asked to back with
/// huge pages (2 MiB where pages are 4 KiB) where it is large. The compiler's analysis fills
/// arrays of a few bytes per node, and each page faults as it is first written: over the
/// millions of nodes of a large recording, those faults are a large part of its time, and a
/// huge page faults once for 512 of them. The advice changes no byte of the memory (a kernel
/// without transparent huge pages ignores it); it stays with the pages after the vector is
/// dropped, which only tells the kernel how to back what the allocator hands out there next.
pub(super) fn with_capacity<T>(n: usize) -> Vec<T> {
    let v = Vec::with_capacity(n);
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        const MADV_HUGEPAGE: i32 = 14;
        #[allow(unsafe_code)]
        unsafe extern "C" {
            fn madvise(addr: *mut core::ffi::c_void, len: usize, advice: i32) -> i32;
        }
        let at = v.as_ptr() as usize;
        let start = at.checked_next_multiple_of(HUGE);
        let end = (at + n * size_of::<T>()) / HUGE * HUGE;
        if let Some(start) = start
            && end > start
        {
            // SAFETY: the range is whole huge pages within the vector's own allocation, and the
            // advice only asks the kernel how to back it; no memory is read or written.
            #[allow(unsafe_code)]
            let _ = unsafe { madvise(start as *mut core::ffi::c_void, end - start, MADV_HUGEPAGE) };
        }
    }
    v
}

/// `n` copies of `value`, in memory from [`with_capacity`].
pub(super) fn filled<T: Copy>(n: usize, value: T) -> Vec<T> {
    let mut v = with_capacity(n);
    v.resize(n, value);
    v
}
