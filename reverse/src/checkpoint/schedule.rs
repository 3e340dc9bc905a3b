//! The binomial schedule's arithmetic (Griewank 1992; Griewank & Walther, *Algorithm 799:
//! revolve*, 2000).
//!
//! With `s` checkpoint slots (the initial state in one of them) and no step advanced more than
//! `r` times, a loop of at most `β(s, r) = C(s + r, s)` steps can be reversed, and no longer one:
//! the first checkpoint goes after at most `β(s, r − 1)` steps (each of which is then advanced
//! once more, so at most `r − 1` times in the left part), and the right part, with one slot
//! fewer, holds at most `β(s − 1, r)`; Pascal's rule `β(s, r) = β(s, r − 1) + β(s − 1, r)` adds
//! them up.

/// `β(s, r) = C(s + r, s)`, saturating at `u128::MAX`.
fn beta(s: usize, r: usize) -> u128 {
    let mut b: u128 = 1;
    for i in 1..=r as u128 {
        // C(s + i, i) = C(s + i − 1, i − 1)·(s + i)/i, exact at every i.
        match b.checked_mul(s as u128 + i) {
            Some(p) => b = p / i,
            None => return u128::MAX,
        }
    }
    b
}

/// The fewest repetitions `r` with `β(s, r) ≥ m`, for `s ≥ 1`.
fn repetitions(m: usize, s: usize) -> usize {
    debug_assert!(s >= 1);
    let (mut r, mut b) = (0, 1u128);
    while b < m as u128 {
        r += 1;
        b = b.saturating_mul(s as u128 + r as u128) / r as u128;
    }
    r
}

/// Where the first checkpoint of `m ≥ 2` steps with `s ≥ 2` slots goes: after `l` steps, so that
/// the total number of advances is the least possible.
///
/// A step costs one advance more on the left (the advance to the checkpoint crosses it), and
/// each side costs per step its number of repetitions. So the left part takes the `β(s, r − 2)`
/// steps it reverses with `r − 2` repetitions (they cost `r − 1` there, `r` on the right), and
/// no more unless the right part, with one slot fewer, could not reverse the rest with `r`
/// repetitions.
pub(super) fn split(m: usize, s: usize) -> usize {
    debug_assert!(m >= 2 && s >= 2);
    let r = repetitions(m, s);
    let left = if r >= 2 { beta(s, r - 2) } else { 0 };
    let right_fits = (m as u128).saturating_sub(beta(s - 1, r));
    left.max(right_fits).clamp(1, m as u128 - 1) as usize
}

/// The number of steps the binomial schedule advances in `f64` to reverse a loop of `steps`
/// steps with `slots` checkpoint slots: `r·m − β(s + 1, r − 1)` for `m` steps, `s` slots and
/// `r` the fewest repetitions with `β(s, r) ≥ m`, the least any schedule achieves (Griewank &
/// Walther). It is `m − 1` when `s ≥ m − 1` (one checkpoint per step), `m(m − 1)/2` for one
/// slot, and about `(r − 1)·m` in between. Saturates at `usize::MAX`, which it also returns for
/// 0 slots (nothing can be reversed but a single step).
///
/// ```
/// use reverse::checkpoint::advances;
/// assert_eq!(advances(10, 9), 9); // a checkpoint at every step
/// assert_eq!(advances(10, 1), 45); // every step from the start
/// assert_eq!(advances(100_000, 50), 375_196); // r = 4: less than 4 loops in f64
/// assert_eq!(advances(1, 0), 0);
/// ```
pub fn advances(steps: usize, slots: usize) -> usize {
    if steps <= 1 {
        return 0;
    }
    if slots == 0 {
        return usize::MAX;
    }
    let r = repetitions(steps, slots);
    let total = (r as u128 * steps as u128).saturating_sub(beta(slots + 1, r - 1));
    total.min(usize::MAX as u128) as usize
}
