//! The recording as the compiler sees it: per node what re-evaluation computes and what the
//! sweep adds, and the loops that the recording unrolled, found again.
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

use super::pages;
use crate::replay::compile::Kernel;
use crate::storage::op_code::OpCode;
use crate::storage::program::{Form, Program};
use crate::storage::{Edges, NEG, TapeData};
use rustc_hash::FxHashMap as HashMap;

/// The most edges of a node whose sweep is compiled inline; a node with more (a sum, a dot
/// product of many terms) is swept by a call.
pub(super) const MAX_EDGES: usize = 4;

/// The longest body looked for (in nodes, and in regions for a loop of loops), and how many
/// candidate periods are tried per node. A longer body is found as a loop of loops.
const LONGEST_BODY: usize = 128;
const CANDIDATES: usize = 16;

/// The fewest turns, and the fewest nodes, of a stretch compiled as a loop.
const FEWEST_TURNS: usize = 3;
const FEWEST_NODES: usize = 12;

/// What re-evaluation does at a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Forward {
    /// An input: its value is written before the pass.
    Input,
    /// Arithmetic compiled inline.
    Inline(Kernel),
    /// A rule evaluated by a call (`param`: the operands of an n-ary node, or `powi`'s
    /// exponent; else 0).
    Call { op: OpCode, form: Form, param: u32 },
    /// A sum of one body node over every turn of a loop before it, which that loop adds up as
    /// it goes (see [`Region::fold`]): nothing to do here.
    Folded,
}

/// What the sweep adds at a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Reverse {
    /// This many weighted edges (at most [`MAX_EDGES`]).
    Weighted(u8),
    /// This many unit edges, bit `i` of the mask set where edge `i` is `−1`.
    Unit(u8, u8),
    /// The edges swept by a call.
    Call { unit: bool, count: u32 },
}

/// The indices of a node (`Index`): its operands `a`, `b` (indices into the values, constants
/// after the nodes), its first partial `e`, its first edge `lo` and the nodes its edges reach.
pub(super) const A: usize = 0;
pub(super) const B: usize = 1;
pub(super) const E: usize = 2;
pub(super) const LO: usize = 3;
pub(super) const PARENT: usize = 4;
pub(super) type Index = [i64; PARENT + MAX_EDGES];

/// One node: its kind (which two nodes of one body share) and its indices, as
/// [`Nodes::get`] reads them.
#[derive(Clone, Copy, Debug)]
pub(super) struct Node {
    pub forward: Forward,
    pub reverse: Reverse,
    /// Its indices (`u32`, as the recording keeps them: a recording holds millions of nodes).
    at: [u32; PARENT + MAX_EDGES],
}

impl Node {
    /// Index `x` of [`Index`].
    pub fn at(&self, x: usize) -> i64 {
        self.at[x] as i64
    }

    /// Which of its operand indices the compiled code reads (a call reads its own).
    pub fn operands(&self) -> &'static [usize] {
        match self.forward {
            Forward::Inline(Kernel::Neg) => &[A],
            Forward::Inline(_) => &[A, B],
            _ => &[],
        }
    }

    /// Which of its indices are nodes its compiled sweep adds to.
    pub fn parents(&self) -> core::ops::Range<usize> {
        let count = match self.reverse {
            Reverse::Weighted(c) | Reverse::Unit(c, _) => c as usize,
            Reverse::Call { .. } => 0,
        };
        PARENT..PARENT + count
    }
}

/// The nodes of a recording as the compiler reads them: each node's kind (an index into the
/// distinct kinds: loops are found by comparing these) and its indices, its first partial
/// and its first edge being one. That is 32 bytes a node, not a whole [`Node`]: the analysis
/// touches every node of recordings of millions, and each page of the memory it allocates
/// faults as it is first written.
pub(super) struct Nodes {
    /// Each node's kind, an index into `distinct`.
    kinds: Vec<u32>,
    /// The kinds in the order they first appear.
    distinct: Vec<(Forward, Reverse)>,
    /// Per node: `a`, `b`, its first edge, and the nodes its edges reach.
    at: Vec<[u32; PARENT + MAX_EDGES - 1]>,
}

/// Where [`Nodes`] keeps index `x` of [`Index`] (`E` and `LO` are one).
const fn kept(x: usize) -> usize {
    if x > E { x - 1 } else { x }
}

impl Nodes {
    pub fn len(&self) -> usize {
        self.kinds.len()
    }

    /// Node `i`.
    #[inline]
    pub fn get(&self, i: usize) -> Node {
        let (forward, reverse) = self.distinct[self.kinds[i] as usize];
        let at = core::array::from_fn(|x| self.at[i][kept(x)]);
        Node {
            forward,
            reverse,
            at,
        }
    }

    /// Each node's kind.
    pub fn kinds(&self) -> &[u32] {
        &self.kinds
    }

    /// The kinds, in the order they first appear.
    pub fn distinct(&self) -> &[(Forward, Reverse)] {
        &self.distinct
    }

    /// Makes node `i` of kind `(forward, reverse)`.
    pub fn set_kind(&mut self, i: usize, kind: (Forward, Reverse)) {
        let id = match self.distinct.iter().position(|&k| k == kind) {
            Some(id) => id,
            None => {
                self.distinct.push(kind);
                self.distinct.len() - 1
            }
        };
        self.kinds[i] = id as u32;
    }

    /// Points node `i`'s first partial and its first edge at `lo` (see
    /// [`layout`](super::layout)).
    pub fn set_edges(&mut self, i: usize, lo: u32) {
        self.at[i][kept(E)] = lo;
    }
}

/// The nodes of `d`, whose program is `p` (prepared: the constants follow the nodes).
pub(super) fn nodes(d: &TapeData<f64>, p: &Program<f64>) -> Nodes {
    let n = d.len();
    let mut kinds = pages::with_capacity(n);
    let mut distinct = Vec::new();
    let mut ids: HashMap<(Forward, Reverse), u32> = HashMap::default();
    // Where each node's edges end (they start where `starts` says).
    let mut ends = pages::filled(n, 0u32);
    for (i, e) in d.walk_back(n) {
        ends[i] = match e {
            Edges::Weighted(_, hi) | Edges::Unit(_, hi) => hi as u32,
        };
    }
    let (parent, unit) = (d.parents(), d.units());
    let mut at = pages::with_capacity(n);
    at.extend((0..n).map(|i| {
        let (op, form) = (p.ops[i], p.forms[i]);
        let (a, mut b) = p.slots(i, n);
        let start = d.starts()[i];
        let lo = start & !crate::storage::UNIT;
        let forward = match Kernel::of(op, form) {
            Kernel::Input => Forward::Input,
            k @ (Kernel::Add
            | Kernel::Sub
            | Kernel::AddSame
            | Kernel::SubSame
            | Kernel::Neg
            | Kernel::MulFirst
            | Kernel::MulSecond
            | Kernel::MulSame
            | Kernel::MulBoth
            | Kernel::DivFirst
            | Kernel::DivSecond
            | Kernel::DivBoth) => Forward::Inline(k),
            _ => {
                // A count of operands or an exponent is part of the kind, not an index.
                let param = if form == Form::Many || op == OpCode::Powi {
                    core::mem::replace(&mut b, 0)
                } else {
                    0
                };
                Forward::Call { op, form, param }
            }
        };
        let is_unit = start & crate::storage::UNIT != 0;
        let count = (ends[i] - lo) as usize;
        // The winner of `max` and `min` may change from turn to turn of a loop: one kind
        // for both, whose call reads the node's form and whose edge the sweep's call
        // finds.
        let winner =
            matches!(op, OpCode::Max | OpCode::Min) && matches!(form, Form::First | Form::Second);
        let forward = match forward {
            Forward::Call { op, param, .. } if winner => Forward::Call {
                op,
                form: Form::First,
                param,
            },
            other => other,
        };
        let mut at = [0; PARENT + MAX_EDGES - 1];
        (at[A], at[B], at[E]) = (a, b, lo);
        let first = kept(PARENT);
        let edges = lo as usize..lo as usize + count;
        let reverse = if count > MAX_EDGES || winner {
            Reverse::Call {
                unit: is_unit,
                count: count as u32,
            }
        } else if is_unit {
            let mut neg = 0u8;
            for (k, &q) in unit[edges].iter().enumerate() {
                at[first + k] = q & !NEG;
                neg |= u8::from(q & NEG != 0) << k;
            }
            Reverse::Unit(count as u8, neg)
        } else {
            at[first..first + count].copy_from_slice(&parent[edges]);
            Reverse::Weighted(count as u8)
        };
        let id = *ids.entry((forward, reverse)).or_insert_with(|| {
            distinct.push((forward, reverse));
            distinct.len() as u32 - 1
        });
        kinds.push(id);
        at
    }));
    Nodes {
        kinds,
        distinct,
        at,
    }
}

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
    let step: Vec<Index> = (0..p)
        .map(|j| {
            let (u, v) = (nodes.get(s + j), nodes.get(s + p + j));
            core::array::from_fn(|x| v.at(x) - u.at(x))
        })
        .collect();
    let mut turns = 2;
    'turns: while s + (turns + 1) * p <= n {
        let k = turns as i64;
        for (j, d) in step.iter().enumerate() {
            let (u, v) = (nodes.get(s + j), nodes.get(s + turns * p + j));
            if !same(s + j, s + turns * p + j)
                || (0..d.len()).any(|x| v.at(x) != u.at(x) + k * d[x])
            {
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
