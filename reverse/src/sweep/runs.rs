//! Runs: stretches of a loop's recording where each node (in re-evaluation) or edge (in the
//! sweep) is the one before plus a constant step, index by index. Their loops compute each
//! node's or edge's indices instead of loading them.
//!
//! A level of the sweep's schedule often holds a few such sequences interleaved (one per edge
//! of the loop's body, as on Rosenbrock); the edges of a level are independent, so the
//! schedule puts each sequence together.

/// The shortest run given a loop of its own (a loop costs a dispatch).
pub(crate) const RUN: usize = 8;

/// The longest interleaving looked for: edges of a body with up to this many edges of one kind
/// in one level.
const PERIOD: usize = 4;

/// A node's or an edge's indices, packed in words that a loop steps by adding a delta.
pub(crate) trait Stepped: Copy + PartialEq {
    /// `next − self`, word by word, wrapping: the delta that a loop adds.
    fn delta(self, next: Self) -> Self;
    /// Its indices.
    fn indices(self) -> [u32; 4];
}

/// An edge of the schedule: its nodes `v | u << 32` and its partial's index.
impl Stepped for (u64, u32) {
    fn delta(self, next: Self) -> Self {
        (next.0.wrapping_sub(self.0), next.1.wrapping_sub(self.1))
    }
    fn indices(self) -> [u32; 4] {
        [self.0 as u32, (self.0 >> 32) as u32, self.1, 0]
    }
}

/// Whether the `len` elements from `first` (`second` the next, `last` the last), whose words
/// step by one delta, step evenly index by index: each index of `last` is its first value
/// plus `len − 1` times its first step, as integers. Then no index crosses the end of its 32
/// bits, and each element is the first plus its steps index by index: each index lies between
/// its first and last values.
pub(crate) fn even<S: Stepped>(first: S, second: S, last: S, len: usize) -> bool {
    let (f, s, l) = (first.indices(), second.indices(), last.indices());
    (0..4).all(|x| {
        let step = s[x] as i128 - f[x] as i128;
        f[x] as i128 + step * (len as i128 - 1) == l[x] as i128
    })
}

/// Whether the elements `at(first), at(first + p), …` below `end` (at least two) step evenly.
fn steps_evenly<S: Stepped>(at: impl Fn(usize) -> S, first: usize, end: usize, p: usize) -> bool {
    let d = at(first).delta(at(first + p));
    let last = first + (end - 1 - first) / p * p;
    (first + p..last)
        .step_by(p)
        .all(|i| at(i).delta(at(i + p)) == d)
        && even(at(first), at(first + p), at(last), (last - first) / p + 1)
}

/// Splits the elements `lo..hi` into the longest runs of at least [`RUN`] and the stretches
/// between them, in order: `part(start, end, is_run)` for each.
pub(crate) fn longest_runs<S: Stepped>(
    at: impl Fn(usize) -> S,
    (lo, hi): (usize, usize),
    mut part: impl FnMut(usize, usize, bool),
) {
    let (mut k, mut from) = (lo, lo);
    while k + 1 < hi {
        let d = at(k).delta(at(k + 1));
        let mut j = k + 2;
        while j < hi && at(j - 1).delta(at(j)) == d {
            j += 1;
        }
        if j - k >= RUN && even(at(k), at(k + 1), at(j - 1), j - k) {
            if from < k {
                part(from, k, false);
            }
            part(k, j, true);
            (from, k) = (j, j);
        } else {
            // The run's last element may begin the next.
            k = j - 1;
        }
    }
    if from < hi {
        part(from, hi, false);
    }
}

/// A part of a level's edges of one kind, swept by one loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Segment {
    /// Weighted, weighted negated, `+1`, `−1` (the schedule's kinds).
    pub kind: u8,
    /// Its edges: `start..end` of the kind's arrays.
    pub start: u32,
    pub end: u32,
    /// If each edge is the one before plus this step (`v | u << 32`, and the partial's index):
    /// the loop adds it instead of loading the edge.
    pub step: Option<(u64, u32)>,
}

/// Appends the segments of the edges `lo..hi` of kind `kind` (`ks`: their partials' indices,
/// for the weighted kinds), reordering them within the range where `p` interleaved sequences
/// that each step evenly can be put one after the other.
pub(crate) fn split(
    kind: u8,
    (lo, hi): (usize, usize),
    edges: &mut [u64],
    mut ks: Option<&mut [u32]>,
    out: &mut Vec<Segment>,
) {
    let segment = |start: usize, end: usize, step| Segment {
        kind,
        start: start as u32,
        end: end as u32,
        step,
    };
    let len = hi - lo;
    let period = {
        let ks = ks.as_deref();
        let at = |i: usize| (edges[i], ks.map_or(0, |ks| ks[i]));
        (1..=PERIOD).find(|&p| len >= p * RUN && (lo..lo + p).all(|f| steps_evenly(at, f, hi, p)))
    };
    if let Some(p) = period
        && p > 1
    {
        // Sequence by sequence, each in its order.
        let order: Vec<usize> = (lo..lo + p).flat_map(|f| (f..hi).step_by(p)).collect();
        let moved: Vec<u64> = order.iter().map(|&i| edges[i]).collect();
        edges[lo..hi].copy_from_slice(&moved);
        if let Some(ks) = ks.as_deref_mut() {
            let moved: Vec<u32> = order.iter().map(|&i| ks[i]).collect();
            ks[lo..hi].copy_from_slice(&moved);
        }
    }
    let ks = ks.as_deref();
    let at = |i: usize| (edges[i], ks.map_or(0, |ks| ks[i]));
    let step = |start: usize| Some(at(start).delta(at(start + 1)));
    match period {
        Some(p) => {
            let mut start = lo;
            for f in 0..p {
                let end = start + (len - f).div_ceil(p);
                out.push(segment(start, end, step(start)));
                start = end;
            }
        }
        None => longest_runs(at, (lo, hi), |start, end, run| {
            out.push(segment(start, end, if run { step(start) } else { None }))
        }),
    }
}

/// Whether a run's last edge, computed from its first by `len − 1` steps, is the stored one:
/// a check of the run's construction where the sweep relies on it, before its edges are
/// computed without being loaded (a run that failed it would be swept from its stored edges).
pub(crate) fn ends_agree(edges: &[u64], ks: Option<&[u32]>, (dvu, dk): (u64, u32)) -> bool {
    let times = edges.len() as u64 - 1;
    let last = edges[0].wrapping_add(dvu.wrapping_mul(times));
    let k_ok =
        ks.is_none_or(|ks| ks[0].wrapping_add(dk.wrapping_mul(times as u32)) == ks[ks.len() - 1]);
    let agree = last == edges[edges.len() - 1] && k_ok;
    debug_assert!(
        agree,
        "a run whose last edge is not its first plus its steps"
    );
    agree
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two sequences interleaved (the two edges of a loop's body in one level), each with its
    /// own step: put one after the other, each a run; an edge that breaks the pattern leaves
    /// the longest runs one after the other.
    #[test]
    fn interleaved_sequences_are_put_together() {
        let edge = |v: u32, u: u32| v as u64 | (u as u64) << 32;
        let mut edges: Vec<u64> = (0..20u32)
            .flat_map(|t| [edge(900 - 7 * t, 5 * t), edge(900 - 7 * t, 3)])
            .collect();
        let mut ks: Vec<u32> = (0..20u32).flat_map(|t| [2 * t, 100 - t]).collect();
        let mut out = Vec::new();
        split(0, (0, 40), &mut edges, Some(&mut ks), &mut out);
        let want_step = |dv: i64, du: i64, dk: i64| {
            Some(((dv as u64).wrapping_add((du as u64) << 32), dk as u32))
        };
        assert_eq!(
            out,
            [
                Segment {
                    kind: 0,
                    start: 0,
                    end: 20,
                    step: want_step(-7, 5, 2)
                },
                Segment {
                    kind: 0,
                    start: 20,
                    end: 40,
                    step: want_step(-7, 0, -1)
                },
            ]
        );
        assert_eq!((edges[1], ks[1]), (edge(893, 5), 2));
        assert_eq!((edges[20], ks[20]), (edge(900, 3), 100));

        // One edge out of step: no period; the runs around it.
        let mut edges: Vec<u64> = (0..30u32).map(|t| edge(500 - t, t)).collect();
        edges[10] = edge(7, 1);
        let mut out = Vec::new();
        split(2, (0, 30), &mut edges, None, &mut out);
        let spans: Vec<_> = out
            .iter()
            .map(|g| (g.start, g.end, g.step.is_some()))
            .collect();
        assert_eq!(spans, [(0, 10, true), (10, 11, false), (11, 30, true)]);
        assert_eq!(out[2].step, Some((edge(0, 1).wrapping_sub(1), 0)));
    }
}
