//! The sparsity pattern of a recording: which inputs each output depends on, by a forward sweep
//! of index sets (each node's set is the union of its operands' sets).

use crate::tape::memory;
use crate::tape::storage::{Edges, NEG, TapeData};

/// Rows of a pattern in compressed form: row `i` holds `indices[offsets[i]..offsets[i + 1]]`.
pub(crate) type Rows = (Vec<usize>, Vec<usize>);

/// No input: the position of a node that is not one.
const NONE: u32 = u32::MAX;

/// The union of two sorted sets without repeats, written to the front of `out` (at least as
/// long as both together); returns its length. Both kinds of sparsity detection merge with it:
/// this sweep of a recording, and the tracers of the `jacobian` crate.
///
/// ```
/// let mut out = [0; 5];
/// let k = reverse::union_of_sorted(&[1, 4, 7], &[4, 5], &mut out);
/// assert_eq!(&out[..k], &[1, 4, 5, 7]);
/// ```
///
/// # Panics
///
/// If `out` is shorter than the union.
#[inline(always)]
pub fn union_of_sorted(a: &[u32], b: &[u32], out: &mut [u32]) -> usize {
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

/// Makes `items` hold at least `len` entries past `end`, growing it by doubling: a set is
/// merged straight into the room past the last one, and zeroing the room a set at a time (a
/// call of `memset` per node) cost more than the merges.
fn room(items: &mut Vec<u32>, end: usize, len: usize) {
    if items.len() < end + len {
        items.resize((2 * items.len()).max(end + len).max(1 << 12), 0);
    }
}

/// The inputs (positions in `xs`) each of `ys` depends on, sorted. `xs` and `ys` are node
/// indices, `None` for constants (whose sets are empty).
///
/// The work is the sum over nodes of their operands' set sizes: linear in the edges times the
/// size of a set, never inputs × nodes. Every edge counts, whatever its partial at this point
/// (a product by a variable that is 0 now is still a dependency). A binary node, nearly every
/// node, merges its two sets; a node of more operands (a sum of many terms) sorts them.
///
/// # Panics
///
/// If the sets hold 2³² entries or more (16 GiB of them).
pub(crate) fn dependencies<T: Copy>(
    d: &TapeData<T>,
    xs: &[Option<u32>],
    ys: &[Option<u32>],
) -> Rows {
    // Inputs are recorded before they are used: `position` ends at the last of them.
    let top = xs.iter().flatten().max().map_or(0, |&x| x as usize + 1);
    let mut position: Vec<u32> = memory::take();
    position.resize(top, NONE);
    for (k, x) in xs.iter().enumerate() {
        if let Some(x) = *x {
            position[x as usize] = k as u32;
        }
    }
    let (parents, units) = (d.parents(), d.units());
    // Node i's set is items[sets[i][0]..sets[i][1]]. A node whose set equals an operand's (one
    // operand, or one set holding the others) shares that operand's range: unary chains and
    // accumulations cost nothing per item. The arrays come from the thread's kept buffers:
    // fresh, their pages cost more than the sweep (a bundle adjustment's 2·10⁶ nodes).
    let mut sets: Vec<[u32; 2]> = memory::take();
    sets.reserve(d.len());
    // The sets fill `items[..end]`; past `end` is room for the next one (see `room`).
    let (mut items, mut end): (Vec<u32>, usize) = (memory::take(), 0);
    let mut scratch: Vec<u32> = Vec::new();
    let at = |k: usize| u32::try_from(k).expect("fewer than 2³² entries in the index sets");
    d.walk_forward(|i, edges| {
        let (ops, mask) = match edges {
            Edges::Weighted(lo, hi) => (&parents[lo..hi], u32::MAX),
            Edges::Unit(lo, hi) => (&units[lo..hi], !NEG),
        };
        let range = |p: u32| {
            let [a, b] = sets[(p & mask) as usize];
            a as usize..b as usize
        };
        let set = match *ops {
            [] => match position.get(i) {
                Some(&k) if k != NONE => {
                    room(&mut items, end, 1);
                    items[end] = k;
                    end += 1;
                    [at(end - 1), at(end)]
                }
                _ => [0, 0],
            },
            [a] => sets[(a & mask) as usize],
            [a, b] => {
                let (ra, rb) = (range(a), range(b));
                let larger = if ra.len() >= rb.len() { &ra } else { &rb };
                if ra == rb || ra.is_empty() || rb.is_empty() {
                    [at(larger.start), at(larger.end)]
                } else {
                    room(&mut items, end, ra.len() + rb.len());
                    let (old, out) = items.split_at_mut(end);
                    let len = union_of_sorted(&old[ra.clone()], &old[rb.clone()], out);
                    // The union is one operand's set: share it (what was written is room again).
                    if len == larger.len() {
                        [at(larger.start), at(larger.end)]
                    } else {
                        end += len;
                        [at(end - len), at(end)]
                    }
                }
            }
            _ => {
                scratch.clear();
                let mut largest = range(ops[0]);
                for &p in ops {
                    let r = range(p);
                    if r.len() > largest.len() {
                        largest = r.clone();
                    }
                    scratch.extend_from_slice(&items[r]);
                }
                scratch.sort_unstable();
                scratch.dedup();
                if scratch.len() == largest.len() {
                    [at(largest.start), at(largest.end)]
                } else {
                    room(&mut items, end, scratch.len());
                    items[end..end + scratch.len()].copy_from_slice(&scratch);
                    end += scratch.len();
                    [at(end - scratch.len()), at(end)]
                }
            }
        };
        sets.push(set);
    });
    let mut offsets = Vec::with_capacity(ys.len() + 1);
    let row = |y: &Option<u32>| y.map_or(0..0, |y| sets[y as usize][0]..sets[y as usize][1]);
    let mut indices = Vec::with_capacity(ys.iter().map(|y| row(y).len()).sum());
    offsets.push(0);
    for y in ys {
        let r = row(y);
        indices.extend(
            items[r.start as usize..r.end as usize]
                .iter()
                .map(|&k| k as usize),
        );
        offsets.push(indices.len());
    }
    memory::give(position);
    memory::give(sets);
    memory::give(items);
    (offsets, indices)
}
