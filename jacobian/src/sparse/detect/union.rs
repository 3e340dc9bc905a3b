//! The merge of two index sets, which both kinds of detection are made of.

/// The union of two sorted sets without repeats, written to the front of `out` (at least as
/// long as both together); returns its length. Both kinds of detection merge with it: local
/// detection's sweep of a recording, and global detection's tracers.
///
/// # Panics
///
/// If `out` is shorter than the union.
#[inline(always)]
pub(super) fn union_of_sorted(a: &[u32], b: &[u32], out: &mut [u32]) -> usize {
    let (mut i, mut j, mut k) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        if x < y {
            out[k] = x;
            i += 1;
        } else if y < x {
            out[k] = y;
            j += 1;
        } else {
            out[k] = x;
            i += 1;
            j += 1;
        }
        k += 1;
    }
    for &x in a[i..].iter().chain(&b[j..]) {
        out[k] = x;
        k += 1;
    }
    k
}
