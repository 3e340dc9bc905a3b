//! The loops that the recording unrolled, found again in its [`Nodes`].
//!
//! A recording of a loop repeats its body: node `s + k·P + j` (turn `k`, body node `j`) has the
//! operation of node `s + j`, and each of its indices (operands, edges, the nodes its edges
//! reach) is node `s + j`'s plus `k` times a step of its own. Such a stretch is compiled as a
//! loop over `k` whose body is the `P` nodes, so that the code grows with the number of
//! distinct bodies, not with the number of nodes. A stretch that repeats nothing is compiled
//! node by node.
//!
//! Within a turn, an operand that is a node of the same turn is the body node's register, not
//! a load; so is the adjoint of a node of the turn while the sweep adds its terms. That needs
//! each such index to step exactly by `P` (it is the same body node in every turn); an index
//! that lies in an earlier turn or before the loop in every turn is read from memory. A stretch
//! whose indices mix the two is not taken as a loop.

use super::nodes::{Index, MAX_EDGES, Nodes, PARENT};
use super::pages;
use rustc_hash::FxHashMap as HashMap;

/// The longest body looked for (in nodes, and in regions for a loop of loops), and how many
/// candidate periods are tried per node. A longer body is found as a loop of loops.
const LONGEST_BODY: usize = 128;
const CANDIDATES: usize = 16;

/// The fewest turns, and the fewest nodes, of a stretch compiled as a loop.
const FEWEST_TURNS: usize = 3;
const FEWEST_NODES: usize = 12;

/// Where an index of a body node points, in every turn of its loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Points {
    /// Body node `j` of the same turn.
    Turn(usize),
    /// A node before the turn, or a constant: read from memory.
    Memory,
}

/// A stretch of the recording compiled as one piece.
#[derive(Clone, Debug)]
pub(super) struct Region {
    /// Its first node, its body's length `period` and its number of turns (1 for a node
    /// compiled on its own).
    pub start: usize,
    pub period: usize,
    pub turns: usize,
    /// Per body node, what its indices add per turn.
    pub step: Vec<Index>,
    /// The loop around this one, where loops are nested (see [`nest`]).
    pub outer: Option<Outer>,
    /// `(j, sum)`: body node `j`'s values over the turns are the operands, in order, of the
    /// sum node `sum` after the loop, their only reader. The loop adds them up in a register
    /// (in that order) and hands the sum's adjoint to each turn, so they never go through
    /// memory.
    pub fold: Option<(usize, usize)>,
}

/// A region's place in the loop around it: the loop's turns, and per turn what the region's
/// first node and each body node's indices add.
#[derive(Clone, Debug)]
pub(super) struct Outer {
    pub turns: usize,
    pub nodes: i64,
    pub step: Vec<Index>,
}

impl Region {
    pub fn nodes(&self) -> core::ops::Range<usize> {
        self.start..self.start + self.period * self.turns
    }

    /// What index `x` of body node `j` adds per turn of the loop around (0 if none).
    pub fn outer_step(&self, j: usize, x: usize) -> i64 {
        self.outer.as_ref().map_or(0, |o| o.step[j][x])
    }

    /// The nodes of one turn of the loop around (0 if none).
    pub fn outer_nodes(&self) -> i64 {
        self.outer.as_ref().map_or(0, |o| o.nodes)
    }

    /// Where index `x` of body node `j` points (`None`: in some turns into the turn, in
    /// others not, which the compiled code cannot follow). `n`: the number of nodes (the
    /// constants follow them).
    pub fn points(&self, nodes: &Nodes, j: usize, x: usize, n: usize) -> Option<Points> {
        let (s, p, last) = (self.start as i64, self.period as i64, self.turns as i64 - 1);
        let (first, step) = (nodes.get(self.start + j).at(x), self.step[j][x]);
        let end = first + last * step;
        if first >= n as i64 && end >= n as i64 {
            return Some(Points::Memory); // a constant in every turn
        }
        if (s..s + j as i64).contains(&first) && (step == p || last == 0) {
            return Some(Points::Turn((first - s) as usize));
        }
        // Before the turn in the first and the last turn, so in every one (both lines).
        (first < s && end < s + last * p).then_some(Points::Memory)
    }
}

/// The recording cut into regions: loops where it repeats a body, single nodes elsewhere.
pub(super) fn regions(nodes: &Nodes) -> Vec<Region> {
    let n = nodes.len();
    // The next node of the same kind, for the candidate periods.
    const NONE: u32 = u32::MAX;
    let mut next = pages::filled(n, NONE);
    let mut seen = vec![NONE; nodes.distinct().len()];
    for (i, &k) in nodes.kinds().iter().enumerate().rev() {
        next[i] = seen[k as usize];
        seen[k as usize] = i as u32;
    }
    let mut out = Vec::new();
    let mut s = 0;
    while s < n {
        let mut best: Option<Region> = None;
        let (mut j, mut tried) = (next[s] as usize, 0);
        while j != NONE as usize && j - s <= LONGEST_BODY && tried < CANDIDATES {
            tried += 1;
            // A multiple of a period found repeats within that loop's stretch: skipped (it
            // would cover no more, and checking it costs a pass over the stretch).
            let multiple = best.as_ref().is_some_and(|b| (j - s) % b.period == 0);
            if !multiple
                && let Some(r) = repeats(nodes, s, j - s)
                && best
                    .as_ref()
                    .is_none_or(|b| r.turns * r.period > b.turns * b.period)
            {
                best = Some(r);
            }
            j = next[j] as usize;
        }
        let r = best.unwrap_or_else(|| Region {
            start: s,
            period: 1,
            turns: 1,
            step: vec![[0; PARENT + MAX_EDGES]],
            outer: None,
            fold: None,
        });
        s = r.nodes().end;
        out.push(r);
    }
    out
}

/// The loop of body length `p` from node `s`, if the recording repeats that body at least
/// [`FEWEST_TURNS`] times there, its indices stepping evenly and pointing where the compiled
/// code can follow.
fn repeats(nodes: &Nodes, s: usize, p: usize) -> Option<Region> {
    let (n, kinds) = (nodes.len(), nodes.kinds());
    if s + FEWEST_TURNS * p > n {
        return None;
    }
    let same = |i: usize, j: usize| kinds[i] == kinds[j];
    // The fewest turns of the same kinds, before anything is built (most candidates fail
    // here).
    if (1..FEWEST_TURNS).any(|t| kinds[s..s + p] != kinds[s + t * p..s + (t + 1) * p]) {
        return None;
    }
    // The first turn's indices, and what each adds per turn.
    let first: Vec<Index> = (0..p)
        .map(|j| {
            let u = nodes.get(s + j);
            core::array::from_fn(|x| u.at(x))
        })
        .collect();
    let step: Vec<Index> = (first.iter().enumerate())
        .map(|(j, u)| {
            let v = nodes.get(s + p + j);
            core::array::from_fn(|x| v.at(x) - u[x])
        })
        .collect();
    let mut turns = 2;
    'turns: while s + (turns + 1) * p <= n {
        let k = turns as i64;
        for (j, (u, d)) in first.iter().zip(&step).enumerate() {
            let i = s + turns * p + j;
            if !same(s + j, i) {
                break 'turns;
            }
            let v = nodes.get(i);
            if (0..d.len()).any(|x| v.at(x) != u[x] + k * d[x]) {
                break 'turns;
            }
        }
        turns += 1;
    }
    if turns < FEWEST_TURNS || turns * p < FEWEST_NODES {
        return None;
    }
    let r = Region {
        start: s,
        period: p,
        turns,
        step,
        outer: None,
        fold: None,
    };
    let follows = (0..p).all(|j| {
        let node = nodes.get(s + j);
        let indices = node.operands().iter().copied().chain(node.parents());
        indices
            .into_iter()
            .all(|x| r.points(nodes, j, x, n).is_some())
    });
    follows.then_some(r)
}

/// Regions of one loop of loops: `regions` (each with its [`Outer`]) repeated `turns` times.
/// A region that repeats nothing is a nest of itself, of one turn.
#[derive(Clone, Debug)]
pub(super) struct Nest {
    pub regions: Vec<Region>,
    pub turns: usize,
}

/// Whether two regions run the same code: the same body (kinds and steps) and turns.
fn same_shape(kinds: &[u32], a: &Region, b: &Region) -> bool {
    a.period == b.period
        && a.turns == b.turns
        && kinds[a.start..a.start + a.period] == kinds[b.start..b.start + b.period]
        && a.step == b.step
}

/// The regions in loops of loops where their sequence repeats (a mixture's components, a
/// layer's units: a loop whose turns each hold loops), found as loops are found in the nodes:
/// each region the one a period before plus a step per index.
pub(super) fn nest(nodes: &Nodes, regions: &[Region]) -> Vec<Nest> {
    let kinds = nodes.kinds();
    // The next region of the same period, turns and first kind: the candidate bodies' ends
    // (a region of another is not of the same shape).
    let mut next = vec![usize::MAX; regions.len()];
    let mut seen: HashMap<(usize, usize, u32), usize> = HashMap::default();
    for (i, r) in regions.iter().enumerate().rev() {
        let key = (r.period, r.turns, kinds[r.start]);
        next[i] = seen.insert(key, i).unwrap_or(usize::MAX);
    }
    drop(seen);
    let mut out = Vec::new();
    let mut i = 0;
    while i < regions.len() {
        let mut best: Option<(usize, usize, Vec<Outer>)> = None;
        let (mut j, mut tried) = (next[i], 0);
        while j != usize::MAX
            && i + 2 * (j - i) <= regions.len()
            && j - i <= LONGEST_BODY
            && tried < CANDIDATES
        {
            let q = j - i;
            j = next[j];
            if same_shape(kinds, &regions[i], &regions[i + q])
                && best.as_ref().is_none_or(|b| q % b.0 != 0)
            {
                tried += 1;
                if let Some((t, outer)) = repeats_regions(nodes, &regions[i..], q) {
                    let cover = |t: usize, q: usize| {
                        t * (0..q).map(|m| regions[i + m].nodes().len()).sum::<usize>()
                    };
                    if best.as_ref().is_none_or(|b| cover(t, q) > cover(b.1, b.0)) {
                        best = Some((q, t, outer));
                    }
                }
            }
        }
        match best {
            Some((q, t, outer)) => {
                let inner = regions[i..i + q]
                    .iter()
                    .zip(outer)
                    .map(|(r, o)| Region {
                        outer: Some(o),
                        ..r.clone()
                    })
                    .collect();
                out.push(Nest {
                    regions: inner,
                    turns: t,
                });
                i += q * t;
            }
            None => {
                out.push(Nest {
                    regions: vec![regions[i].clone()],
                    turns: 1,
                });
                i += 1;
            }
        }
    }
    out
}

/// The outer turns of `rs[..q]` repeated, and their steps, if at least [`FEWEST_TURNS`]:
/// every region of turn `t` has the shape of its first, its indices the first's plus `t` times
/// a step, and each index points where it pointed in the first turn (a body register, or
/// memory) in the last turn too (so in every turn: the indices move linearly).
fn repeats_regions(nodes: &Nodes, rs: &[Region], q: usize) -> Option<(usize, Vec<Outer>)> {
    let (n, kinds) = (nodes.len(), nodes.kinds());
    let shift = (rs[q].start - rs[0].start) as i64;
    // The fewest turns of the same shapes, each `shift` nodes on, before anything is built
    // (most candidates fail here).
    let shaped = |t: usize| {
        (0..q).all(|m| {
            let (a, b) = (&rs[m], &rs[t * q + m]);
            same_shape(kinds, a, b) && (b.start - a.start) as i64 == t as i64 * shift
        })
    };
    if FEWEST_TURNS * q > rs.len() || !(1..FEWEST_TURNS).all(shaped) {
        return None;
    }
    let mut outer: Vec<Outer> = (0..q)
        .map(|m| {
            let (a, b) = (&rs[m], &rs[q + m]);
            let step = (0..a.period)
                .map(|j| {
                    let (u, v) = (nodes.get(a.start + j), nodes.get(b.start + j));
                    core::array::from_fn(|x| v.at(x) - u.at(x))
                })
                .collect();
            Outer {
                turns: 0,
                nodes: shift,
                step,
            }
        })
        .collect();
    let mut turns = 2;
    'turns: while (turns + 1) * q <= rs.len() {
        let t = turns as i64;
        for (m, o) in outer.iter().enumerate() {
            let (a, b) = (&rs[m], &rs[turns * q + m]);
            if !same_shape(kinds, a, b) || (b.start - a.start) as i64 != t * shift {
                break 'turns;
            }
            for j in 0..a.period {
                let (u, v) = (nodes.get(a.start + j), nodes.get(b.start + j));
                if (0..PARENT + MAX_EDGES).any(|x| v.at(x) != u.at(x) + t * o.step[j][x]) {
                    break 'turns;
                }
            }
        }
        turns += 1;
    }
    if turns < FEWEST_TURNS {
        return None;
    }
    let last = &rs[(turns - 1) * q..turns * q];
    for (m, o) in outer.iter_mut().enumerate() {
        o.turns = turns;
        let (a, z) = (&rs[m], &last[m]);
        for j in 0..a.period {
            let nd = nodes.get(a.start + j);
            let follows = nd
                .operands()
                .iter()
                .copied()
                .chain(nd.parents())
                .all(|x| a.points(nodes, j, x, n) == z.points(nodes, j, x, n));
            if !follows {
                return None;
            }
        }
    }
    Some((turns, outer))
}
