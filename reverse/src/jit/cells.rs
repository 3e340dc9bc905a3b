//! The adjoint cells a loop carries in registers (see [`Cells`]).

use super::nodes::{Nodes, Reverse};
use super::shape::{Points, Region};

/// The adjoints before a loop that its turns add to (through memory, as `Points::Memory`
/// parents): grouped in *classes*, each edge's cell `first + k · step` in turn `k`, summed in a
/// register within a turn; and where class `c + step` (its successor) adds to the cell of `c`
/// one turn later, as a loop's neighbours do (Rosenbrock's `xᵢ₊₁` and `xᵢ`), carried in a
/// register to that turn instead of stored and loaded. The terms are added in the plain
/// sweep's order still: a cell's terms of turn `k + 1` before those of turn `k`.
pub(super) struct Cells {
    pub step: Vec<i64>,
    pub first: Vec<i64>,
    /// Per class, its successor and predecessor, if the body has them (a class of step 0 is
    /// both of itself).
    pub next: Vec<Option<usize>>,
    pub prev: Vec<Option<usize>>,
    /// The classes with a successor, in the order the loop carries them.
    pub carried: Vec<usize>,
    /// Per body node and parent index, its class.
    pub of: std::collections::HashMap<(usize, usize), usize>,
}

impl Cells {
    /// The cells of region `r`, if every memory parent of its body is before the region, no
    /// call sweeps in it, and classes of different chains never reach one cell.
    pub fn of(nodes: &Nodes, n: usize, r: &Region) -> Option<Cells> {
        let (s, last) = (r.start as i64, r.turns as i64 - 1);
        let mut c = Cells {
            step: Vec::new(),
            first: Vec::new(),
            next: Vec::new(),
            prev: Vec::new(),
            carried: Vec::new(),
            of: Default::default(),
        };
        for j in 0..r.period {
            let nd = nodes.get(r.start + j);
            if matches!(nd.reverse, Reverse::Call { .. }) {
                return None;
            }
            for x in nd.parents() {
                if r.points(nodes, j, x, n) != Some(Points::Memory) {
                    continue;
                }
                let (first, step) = (nd.at(x), r.step[j][x]);
                if first >= s || first + last * step >= s {
                    return None; // a node of the loop itself
                }
                let class = (0..c.step.len())
                    .find(|&i| (c.step[i], c.first[i]) == (step, first))
                    .unwrap_or_else(|| {
                        c.step.push(step);
                        c.first.push(first);
                        c.step.len() - 1
                    });
                c.of.insert((j, x), class);
            }
        }
        let find = |step: i64, first: i64| {
            (0..c.step.len()).find(|&i| (c.step[i], c.first[i]) == (step, first))
        };
        c.next = (0..c.step.len())
            .map(|i| find(c.step[i], c.first[i] + c.step[i]))
            .collect();
        c.prev = (0..c.step.len())
            .map(|i| find(c.step[i], c.first[i] - c.step[i]))
            .collect();
        c.carried = (0..c.step.len()).filter(|&i| c.next[i].is_some()).collect();
        // Chains (classes joined by successors) must reach disjoint cells: their ranges apart.
        let mut chain: Vec<usize> = (0..c.step.len()).collect();
        for i in 0..c.step.len() {
            if let Some(n) = c.next[i] {
                let (a, b) = (chain[i], chain[n]);
                chain.iter_mut().filter(|x| **x == b).for_each(|x| *x = a);
            }
        }
        let mut ranges: std::collections::HashMap<usize, (i64, i64)> = Default::default();
        for (i, &whose) in chain.iter().enumerate() {
            let end = c.first[i] + last * c.step[i];
            let (lo, hi) = (c.first[i].min(end), c.first[i].max(end));
            let e = ranges.entry(whose).or_insert((lo, hi));
            *e = (e.0.min(lo), e.1.max(hi));
        }
        let mut spans: Vec<(i64, i64)> = ranges.into_values().collect();
        spans.sort();
        if spans.windows(2).any(|w| w[1].0 <= w[0].1) {
            return None;
        }
        Some(c)
    }
}
