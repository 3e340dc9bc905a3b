//! Reading the tape back: each node, last first, with the range of its edges.

use super::{TapeData, UNIT};

/// The edges of one node: a range of `parent`/`partial`, or of `unit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Edges {
    Weighted(usize, usize),
    Unit(usize, usize),
}

impl<T: Copy> TapeData<T> {
    /// The edges of every node, in recording order (for views).
    pub fn edge_ranges(&self) -> Vec<Edges> {
        let mut out: Vec<Edges> = self.walk_back(self.len()).map(|(_, e)| e).collect();
        out.reverse();
        out
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
