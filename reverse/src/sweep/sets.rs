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
    // Node i's set is items[bounds[i]..bounds[i + 1]].
    let mut bounds: Vec<usize> = Vec::with_capacity(nodes + 1);
    bounds.push(0);
    let mut items: Vec<u32> = Vec::with_capacity(2 * nodes);
    let mut scratch: Vec<u32> = Vec::new();
    for (i, edges) in d.edge_ranges().into_iter().enumerate() {
        let (ops, mask) = match edges {
            Edges::Weighted(lo, hi) => (&parents[lo..hi], u32::MAX),
            Edges::Unit(lo, hi) => (&units[lo..hi], !NEG),
        };
        let set = |p: u32| {
            let p = (p & mask) as usize;
            bounds[p]..bounds[p + 1]
        };
        match ops {
            [] if position[i] != u32::MAX => items.push(position[i]),
            [] => {}
            [a] => items.extend_from_within(set(*a)),
            _ => {
                scratch.clear();
                for &p in ops {
                    scratch.extend_from_slice(&items[set(p)]);
                }
                scratch.sort_unstable();
                scratch.dedup();
                items.extend_from_slice(&scratch);
            }
        }
        bounds.push(items.len());
    }
    let mut offsets = Vec::with_capacity(ys.len() + 1);
    let mut indices = Vec::new();
    offsets.push(0);
    for y in ys {
        if let Some(y) = *y {
            let y = y as usize;
            indices.extend(items[bounds[y]..bounds[y + 1]].iter().map(|&k| k as usize));
        }
        offsets.push(indices.len());
    }
    (offsets, indices)
}
