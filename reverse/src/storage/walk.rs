//! Reading the tape back: each node, last first, with the range of its edges.

use super::{NEG, TapeData, UNIT};

/// The edges of one node: a range of `parent`/`partial`, or of `unit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Edges {
    Weighted(usize, usize),
    Unit(usize, usize),
}

impl<T: Copy> TapeData<T> {
    /// The edges of every node, in recording order (for views).
    pub fn edge_ranges(&self) -> Vec<Edges> {
        let mut out = Vec::with_capacity(self.len());
        self.walk_forward(|_, e| out.push(e));
        out
    }

    /// Every node's edges, first node first, handed to `visit`: the walk of forward passes
    /// over the tape (index sets). A node's edges end where the next node of its kind begins,
    /// which a forward walk cannot see; so the nodes go by in blocks, each first walked back
    /// (as [`walk_back`](Self::walk_back) does) to find where each node's edges end, into a
    /// small buffer. A lookahead per kind finds where the block's last nodes end; it only
    /// moves forward.
    pub fn walk_forward(&self, mut visit: impl FnMut(usize, Edges)) {
        const BLOCK: usize = 4096;
        let n = self.len();
        let mut ends = vec![0usize; BLOCK.min(n)];
        // Per kind (weighted, unit): a node of that kind at or after the block's end, if any.
        let mut ahead = [0usize; 2];
        let totals = [self.parent.len(), self.unit.len()];
        let mut from = 0;
        while from < n {
            let to = (from + BLOCK).min(n);
            let [mut w, mut u] = [0, 1].map(|kind| {
                let mut c = ahead[kind].max(to);
                while c < n && usize::from(self.start[c] & UNIT != 0) != kind {
                    c += 1;
                }
                ahead[kind] = c;
                self.start
                    .get(c)
                    .map_or(totals[kind], |&s| (s & !UNIT) as usize)
            });
            let ends = &mut ends[..to - from];
            for (i, end) in (from..to).zip(ends.iter_mut()).rev() {
                let s = self.start[i];
                let (lo, unit) = ((s & !UNIT) as usize, s & UNIT != 0);
                *end = if unit { u } else { w };
                (w, u) = if unit { (w, lo) } else { (lo, u) };
            }
            for (i, &end) in (from..to).zip(ends.iter()) {
                let s = self.start[i];
                let lo = (s & !UNIT) as usize;
                visit(
                    i,
                    if s & UNIT == 0 {
                        Edges::Weighted(lo, end)
                    } else {
                        Edges::Unit(lo, end)
                    },
                );
            }
            from = to;
        }
    }

    /// The nodes before `end`, last first, each with the range of its edges: the walk of every
    /// sweep. A node's edges end where the next node of its kind (the one walked before it)
    /// began, so the walk carries two cursors and reads one `start` per node.
    #[inline(always)]
    pub fn walk_back(&self, end: usize) -> WalkBack<'_> {
        let (w_end, u_end) = self.ends_before(end);
        WalkBack {
            starts: &self.start[..end],
            w_end,
            u_end,
        }
    }

    /// Where the weighted and the unit edges of the nodes before `end` end: the first edge of
    /// the first node of each kind from `end` on (usually a few nodes away).
    pub fn ends_before(&self, end: usize) -> (usize, usize) {
        let (mut w, mut u) = (None, None);
        for &s in &self.start[end..] {
            if s & UNIT == 0 {
                w.get_or_insert(s as usize);
            } else {
                u.get_or_insert((s & !UNIT) as usize);
            }
            if w.is_some() && u.is_some() {
                break;
            }
        }
        (w.unwrap_or(self.parent.len()), u.unwrap_or(self.unit.len()))
    }
}

/// The operands of one node of a recording: the nodes it reads, one per edge (a node that reads
/// one operand twice, as `x·x`, has one edge). An input reads none.
///
/// ```
/// use reverse::Tape;
/// let tape = Tape::new();
/// let x = tape.vars(&[1.0, 2.0]);
/// let _ = x[0] * x[1] - x[1];
/// let mut read = Vec::new();
/// tape.finish().for_each_node(|node, operands| read.push((node, operands.iter().collect())));
/// assert_eq!(read, vec![(0, vec![]), (1, vec![]), (2, vec![0, 1]), (3, vec![2, 1])]);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Operands<'a> {
    nodes: &'a [u32],
    /// Clears the flag bits that unit edges keep beside the node.
    mask: u32,
}

impl<'a> Operands<'a> {
    /// The operands of a node whose edges are `edges`, in `d`.
    pub(crate) fn of<T>(d: &'a TapeData<T>, edges: Edges) -> Operands<'a> {
        match edges {
            Edges::Weighted(lo, hi) => Operands {
                nodes: &d.parent[lo..hi],
                mask: u32::MAX,
            },
            Edges::Unit(lo, hi) => Operands {
                nodes: &d.unit[lo..hi],
                mask: !NEG,
            },
        }
    }

    /// How many operands the node reads.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// True for an input (or a node of no variable operand).
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The `k`th operand's node. Panics unless `k < len()`.
    #[inline(always)]
    pub fn get(&self, k: usize) -> usize {
        (self.nodes[k] & self.mask) as usize
    }

    /// The operands' nodes, in the order of the node's edges.
    #[inline(always)]
    pub fn iter(&self) -> impl Iterator<Item = usize> + 'a {
        let mask = self.mask;
        self.nodes.iter().map(move |&p| (p & mask) as usize)
    }
}

/// The walk of [`TapeData::walk_back`]: `(node, its edges)`, from the last node to the first.
pub(crate) struct WalkBack<'a> {
    starts: &'a [u32],
    w_end: usize,
    u_end: usize,
}

impl Iterator for WalkBack<'_> {
    type Item = (usize, Edges);

    #[inline(always)]
    fn next(&mut self) -> Option<(usize, Edges)> {
        let (&s, rest) = self.starts.split_last()?;
        self.starts = rest;
        let lo = (s & !UNIT) as usize;
        let edges = if s & UNIT == 0 {
            let e = Edges::Weighted(lo, self.w_end);
            self.w_end = lo;
            e
        } else {
            let e = Edges::Unit(lo, self.u_end);
            self.u_end = lo;
            e
        };
        Some((rest.len(), edges))
    }
}
