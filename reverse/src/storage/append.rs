//! What one operation appends to a recording: a node and its edges, as plain data.

use super::TapeData;

/// Something appended to a tape's storage (by the tape's `live::record`): plain data, no user
/// code.
pub(crate) trait Append<T> {
    type Out;
    fn append(self, data: &mut TapeData<T>) -> Self::Out;
}

/// A closure that appends (for the n-ary operations, off the hottest path).
pub(crate) struct With<F>(pub F);

impl<T, R, F: FnOnce(&mut TapeData<T>) -> R> Append<T> for With<F> {
    type Out = R;
    #[inline(always)]
    fn append(self, data: &mut TapeData<T>) -> R {
        (self.0)(data)
    }
}

/// A node with `K` weighted edges: operands and partials.
pub(crate) struct Weighted<T, const K: usize>(pub [u32; K], pub [T; K]);

impl<T: Copy, const K: usize> Append<T> for Weighted<T, K> {
    type Out = u32;
    #[inline(always)]
    fn append(self, d: &mut TapeData<T>) -> u32 {
        d.weighted(self.0, self.1)
    }
}

/// A node with two weighted edges, of which an exactly zero one is left out (unless the tape is
/// traced, whose views show every operand): for `max` and `min`, whose loser's partial is 0.
/// Returns the node and which edges it kept.
pub(crate) struct Selecting<T>(pub [u32; 2], pub [T; 2]);

/// The edges a [`Selecting`] node kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kept {
    Both,
    First,
    Second,
}

impl<T: shared_ops::Op> Append<T> for Selecting<T> {
    type Out = (u32, Kept);
    #[inline(always)]
    fn append(self, d: &mut TapeData<T>) -> (u32, Kept) {
        let Selecting([a, b], [da, db]) = self;
        if !d.traced {
            if da.is_structural_zero() {
                return (d.weighted([b], [db]), Kept::Second);
            }
            if db.is_structural_zero() {
                return (d.weighted([a], [da]), Kept::First);
            }
        }
        (d.weighted([a, b], [da, db]), Kept::Both)
    }
}

/// A node with `K` unit edges: operands (with `NEG` for −1).
pub(crate) struct Unit<const K: usize>(pub [u32; K]);

impl<T: Copy, const K: usize> Append<T> for Unit<K> {
    type Out = u32;
    #[inline(always)]
    fn append(self, d: &mut TapeData<T>) -> u32 {
        d.unit(self.0)
    }
}
