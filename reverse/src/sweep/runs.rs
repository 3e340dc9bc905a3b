//! Runs of a schedule's edges with one step: a level of a loop's recording (Rosenbrock's terms
//! side by side) holds edges whose nodes and partials are each the last edge's plus a constant
//! step, often two or three such sequences interleaved (one per edge of the loop's body). The
//! edges of a level are independent, so the schedule may put each sequence together, and the
//! sweep then computes each edge instead of loading it.

/// The shortest run given a loop of its own (a segment costs a dispatch).
const RUN: usize = 8;

/// The longest interleaving looked for: edges of a body with up to this many edges of one kind
/// in one level.
const PERIOD: usize = 4;

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

/// An edge's parts: `v`, `u` and the partial's index.
fn parts(vu: u64, k: u32) -> [i64; 3] {
    [vu as u32 as i64, (vu >> 32) as i64, k as i64]
}

/// What each part adds from edge `i` to edge `j`.
fn step(edges: &[u64], ks: Option<&[u32]>, i: usize, j: usize) -> [i64; 3] {
    let k = |x: usize| ks.map_or(0, |ks| ks[x]);
    let (p, q) = (parts(edges[i], k(i)), parts(edges[j], k(j)));
    [q[0] - p[0], q[1] - p[1], q[2] - p[2]]
}

/// A step as the sweep adds it (each part staying within its 32 bits, the packed sum is exact).
fn packed([v, u, k]: [i64; 3]) -> (u64, u32) {
    ((v as u64).wrapping_add((u as u64) << 32), k as u32)
}

/// Whether the edges `first, first + p, first + 2p, …` below `end` step evenly.
fn even(edges: &[u64], ks: Option<&[u32]>, first: usize, end: usize, p: usize) -> bool {
    let s = step(edges, ks, first, first + p);
    (first + p..end - p)
        .step_by(p)
        .all(|i| step(edges, ks, i, i + p) == s)
}

/// Appends the segments of the edges `lo..hi` of kind `kind` (`ks`: their partials' indices,
/// for the weighted kinds), reordering them within the range where `p` interleaved sequences
/// that each step evenly can be put one after the other.
pub(crate) fn split(
    kind: u8,
    lo: usize,
    hi: usize,
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
    let period = (1..=PERIOD)
        .find(|&p| len >= p * RUN && (lo..lo + p).all(|f| even(edges, ks.as_deref(), f, hi, p)));
    if let Some(p) = period {
        if p > 1 {
            // Sequence by sequence, each in its order.
            let order: Vec<usize> = (lo..lo + p).flat_map(|f| (f..hi).step_by(p)).collect();
            let moved: Vec<u64> = order.iter().map(|&i| edges[i]).collect();
            edges[lo..hi].copy_from_slice(&moved);
            if let Some(ks) = ks.as_deref_mut() {
                let moved: Vec<u32> = order.iter().map(|&i| ks[i]).collect();
                ks[lo..hi].copy_from_slice(&moved);
            }
        }
        let mut start = lo;
        for f in 0..p {
            let end = start + (len - f).div_ceil(p);
            out.push(segment(
                start,
                end,
                Some(packed(step(edges, ks.as_deref(), start, start + 1))),
            ));
            start = end;
        }
        return;
    }
    // No interleaving: the longest runs one after the other.
    let (mut k, mut loose) = (lo, lo);
    while k + 1 < hi {
        let s = step(edges, ks.as_deref(), k, k + 1);
        let mut j = k + 2;
        while j < hi && step(edges, ks.as_deref(), j - 1, j) == s {
            j += 1;
        }
        if j - k >= RUN {
            if loose < k {
                out.push(segment(loose, k, None));
            }
            out.push(segment(k, j, Some(packed(s))));
            (loose, k) = (j, j);
        } else {
            k = j - 1;
        }
    }
    if loose < hi {
        out.push(segment(loose, hi, None));
    }
}

/// Whether a run's last edge, computed from its first by `len − 1` steps, is the stored one:
/// a check of the run's construction before its edges are computed without being loaded (a
/// run that failed it would be swept from its stored edges).
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
        split(0, 0, 40, &mut edges, Some(&mut ks), &mut out);
        let want_step = |dv: i64, du: i64, dk: i64| Some(packed([dv, du, dk]));
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
        split(2, 0, 30, &mut edges, None, &mut out);
        let spans: Vec<_> = out
            .iter()
            .map(|g| (g.start, g.end, g.step.is_some()))
            .collect();
        assert_eq!(spans, [(0, 10, true), (10, 11, false), (11, 30, true)]);
        assert_eq!(out[2].step, Some((edge(0, 1).wrapping_sub(1), 0)));
    }
}
