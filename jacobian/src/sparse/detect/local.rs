//! Local detection: the sparsity pattern of a recording, by a forward sweep of index sets over
//! its graph ([`Recording::for_each_node`]): each node's set is the union of its operands'.

use super::union::union_of_sorted;
use crate::sparse::Pattern;
use reverse::{Recording, Var};
use shared_ops::{Op, memory};

/// No input: the position of a node that is not one.
const NONE: u32 = u32::MAX;

/// Makes `items` hold at least `len` entries past `end`, growing it by doubling: a set is
/// merged straight into the room past the last one, and zeroing the room a set at a time (a
/// call of `memset` per node) would cost more than the merges.
fn room(items: &mut Vec<u32>, end: usize, len: usize) {
    if items.len() < end + len {
        items.resize((2 * items.len()).max(end + len).max(1 << 12), 0);
    }
}

/// The pattern of the Jacobian of `ys` with respect to `xs` in `rec`, *at the recorded point*:
/// row `i` holds the positions in `xs` of the inputs that `ys[i]` depends on. Constants in `xs`
/// or `ys` have empty sets.
///
/// Every recorded edge counts, whatever its partial (so `x·y` at `y = 0` still depends on
/// `x`): the pattern is a superset of the nonzeros at this point. It holds at another point as
/// long as the recording would be the same there: the same branches of the function, the same
/// winners of `max`/`min` (whose loser the tape leaves out).
///
/// The work is the sum over nodes of their operands' set sizes: linear in the edges times the
/// size of a set, never inputs × nodes. Every edge counts, whatever its partial at this point
/// (a product by a variable that is 0 now is still a dependency). A binary node, nearly every
/// node, merges its two sets; a node of more operands (a sum of many terms) sorts them.
///
/// # Panics
///
/// If the sets hold 2³² entries or more (16 GiB of them), or a `Var` belongs to another
/// recording.
///
/// ```
/// use jacobian::sparse::recording_pattern;
/// use reverse::Tape;
///
/// let tape = Tape::new();
/// let x = tape.vars(&[0.0, 2.0, 3.0]);
/// let ys = [x[0] * x[1], x[2] * x[2] + x[2], reverse::Var::constant(1.0)];
/// let p = recording_pattern(&tape.finish(), &x, &ys);
/// assert_eq!((p.row(0), p.row(1), p.row(2)), (&[0, 1][..], &[2][..], &[][..]));
/// ```
pub fn recording_pattern<T: Op>(rec: &Recording<T>, xs: &[Var<T>], ys: &[Var<T>]) -> Pattern {
    let xs: Vec<Option<usize>> = xs.iter().map(|&v| rec.node(v)).collect();
    let ys: Vec<Option<usize>> = ys.iter().map(|&v| rec.node(v)).collect();
    // Inputs are recorded before they are used: `position` ends at the last of them.
    let top = xs.iter().flatten().max().map_or(0, |&x| x + 1);
    let mut position: Vec<u32> = memory::take();
    position.resize(top, NONE);
    for (k, x) in xs.iter().enumerate() {
        if let Some(x) = *x {
            position[x] = k as u32;
        }
    }
    // Node i's set is items[sets[i][0]..sets[i][1]]. A node whose set equals an operand's (one
    // operand, or one set holding the others) shares that operand's range: unary chains and
    // accumulations cost nothing per item. The arrays come from the thread's kept buffers:
    // fresh, their pages cost more than the sweep (a bundle adjustment's 2·10⁶ nodes).
    let mut sets: Vec<[u32; 2]> = memory::take();
    sets.reserve(rec.len());
    // The sets fill `items[..end]`; past `end` is room for the next one (see `room`).
    let (mut items, mut end): (Vec<u32>, usize) = (memory::take(), 0);
    let mut scratch: Vec<u32> = Vec::new();
    let at = |k: usize| u32::try_from(k).expect("fewer than 2³² entries in the index sets");
    rec.for_each_node(|i, ops| {
        let range = |p: usize| {
            let [a, b] = sets[p];
            a as usize..b as usize
        };
        let set = match ops.len() {
            0 => match position.get(i) {
                Some(&k) if k != NONE => {
                    room(&mut items, end, 1);
                    items[end] = k;
                    end += 1;
                    [at(end - 1), at(end)]
                }
                _ => [0, 0],
            },
            1 => sets[ops.get(0)],
            2 => {
                let (ra, rb) = (range(ops.get(0)), range(ops.get(1)));
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
                let mut largest = range(ops.get(0));
                for p in ops.iter() {
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
    let row = |y: &Option<usize>| y.map_or(0..0, |y| sets[y][0]..sets[y][1]);
    let mut indices = Vec::with_capacity(ys.iter().map(|y| row(y).len()).sum());
    offsets.push(0);
    for y in &ys {
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
    Pattern::from_csr(xs.len(), offsets, indices)
}
