//! The sparsity pattern of a recording: which inputs each output depends on, by a forward sweep
//! of index sets (each node's set is the union of its operands' sets).

use crate::tape::storage::{Edges, NEG, TapeData};

/// Rows of a pattern in compressed form: row `i` holds `indices[offsets[i]..offsets[i + 1]]`.
pub(crate) type Rows = (Vec<usize>, Vec<usize>);

/// The inputs (positions in `xs`) each of `ys` depends on, sorted. `xs` and `ys` are node
/// indices, `None` for constants (whose sets are empty).
///
/// The work is the sum over nodes of their operands' set sizes: linear in the edges times the
/// size of a set, never inputs × nodes. Every edge counts, whatever its partial at this point
/// (a product by a variable that is 0 now is still a dependency).
pub(crate) fn dependencies<T: Copy>(
    d: &TapeData<T>,
    xs: &[Option<u32>],
    ys: &[Option<u32>],
) -> Rows {
    let nodes = d.len();
    let mut position = vec![u32::MAX; nodes];
    for (k, x) in xs.iter().enumerate() {
        if let Some(x) = *x {
            position[x as usize] = k as u32;
        }
    }
    let (parents, units) = (d.parents(), d.units());
    // Node i's set is items[sets[i].0..sets[i].1]. A node whose set equals an operand's (one
    // operand, or one set holding the others) shares that operand's range: unary chains and
    // accumulations cost nothing per item.
    let mut sets: Vec<(usize, usize)> = Vec::with_capacity(nodes);
    let mut items: Vec<u32> = Vec::with_capacity(2 * nodes);
    let mut scratch: Vec<u32> = Vec::new();
    for (i, edges) in d.edge_ranges().into_iter().enumerate() {
        let (ops, mask) = match edges {
            Edges::Weighted(lo, hi) => (&parents[lo..hi], u32::MAX),
            Edges::Unit(lo, hi) => (&units[lo..hi], !NEG),
        };
        let range = |p: u32| {
            let (a, b) = sets[(p & mask) as usize];
            a..b
        };
        let set = match ops {
            [] if position[i] != u32::MAX => {
                items.push(position[i]);
                (items.len() - 1, items.len())
            }
            [] => (0, 0),
            [a] => sets[(a & mask) as usize],
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
                    (largest.start, largest.end)
                } else {
                    let start = items.len();
                    items.extend_from_slice(&scratch);
                    (start, items.len())
                }
            }
        };
        sets.push(set);
    }
    let mut offsets = Vec::with_capacity(ys.len() + 1);
    let mut indices = Vec::new();
    offsets.push(0);
    for y in ys {
        if let Some(y) = *y {
            let (a, b) = sets[y as usize];
            indices.extend(items[a..b].iter().map(|&k| k as usize));
        }
        offsets.push(indices.len());
    }
    (offsets, indices)
}
