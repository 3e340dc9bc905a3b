//! Where a compiled gradient keeps its values and adjoints: in slots, one per node that passes
//! through memory, not one per node.
//!
//! A gradient's code holds most values and adjoints in registers (see
//! [`Mode::Gradient`](super::emit::Mode::Gradient)): of the nodes of an ODE's Runge–Kutta
//! steps, a quarter go through memory. Indexed by node, the arrays are as long as the
//! recording, and each turn of a loop writes a few numbers apart in a stretch of each, so
//! every cache line of both is read and written, used or not. Slots number the nodes that go
//! through memory (a value kept, an adjoint outside registers, a call's value, an input, the
//! output) and the constants follow them.
//!
//! A loop's turns take their slots one after the other, the same body nodes in each (the
//! flags are a body node's in every turn), so a slot steps evenly from turn to turn as its node
//! does: each index the code computes, linear in the turns, is linear in them as a slot too.
//! Straight code is ordered freely: a loop's first turn often reads what the straight code
//! before it computed as if it were the turn before (the first step of a recurrence, peeled),
//! and its last turn what the code after it computes as if it were the turn after; those nodes
//! take the slots of a turn before and a turn after the loop. [`Slots::line`] checks every
//! index the code maps; where one does not map, the gradient is compiled by node instead.

use super::flags::body;
use super::nodes::{Forward, Nodes};
use super::shape::{Nest, Region};
use core::cell::{Cell, RefCell};
use rustc_hash::FxHashMap as HashMap;

/// An index and its steps per turn of its loop and of the loop around it.
pub(super) type Line = (i64, (i64, i64));

/// The slot of a node that has none.
pub(super) const NONE: u32 = u32::MAX;

/// While the slots are given, a node of straight code that goes through memory, one that a
/// loop takes for its turn before the first, and an input (which keeps its place: inputs are
/// read as runs). No slot is as large as any of them.
const WAITING: u32 = u32::MAX - 1;
const BEFORE: u32 = u32::MAX - 2;
const INPUT: u32 = u32::MAX - 3;
const MARKS: u32 = INPUT;

/// Nodes `start..start + len`, and how their slots are found.
#[derive(Clone, Copy, Debug)]
struct Stretch {
    start: usize,
    len: usize,
    kind: Kind,
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    /// The turns of a loop: node `start + k · period + j` has slot `first + k · count +
    /// ranks[at + j]` (none where that is `NONE`).
    Loop {
        period: usize,
        first: u32,
        count: u32,
        at: usize,
    },
    /// Straight code: node `start + x` has slot `table[at + x]`.
    Straight { at: usize },
}

/// The slots of a gradient's nodes, and of constant `c` (value index `n + c`), `count + c`.
pub(super) struct Slots {
    /// In node order, covering every node.
    stretches: Vec<Stretch>,
    ranks: Vec<u32>,
    table: Vec<u32>,
    count: usize,
    n: usize,
    values: usize,
    /// The stretch last found, and how far it was from the one found before: most lookups
    /// are of nodes near the last, or as far on from it (the same body node a turn of the
    /// loop of loops on).
    hint: Cell<(usize, isize)>,
    /// The lines mapped so far, by the line and the turns it spans.
    lines: RefCell<HashMap<(Line, usize, usize), Option<Line>>>,
    /// Whether a line did not map (the code is then compiled by node).
    failed: Cell<bool>,
}

impl Slots {
    /// The slots of the nodes of `nests` that go through memory in a gradient whose flags are
    /// `keep` and `outside` (a body node's, at its first turn), `values` values in all.
    pub fn of(
        nodes: &Nodes,
        nests: &[Nest],
        (keep, outside): (&[bool], &[bool]),
        values: usize,
    ) -> Slots {
        // Inline arithmetic not flagged lives in registers; every other node's value is
        // stored (a call's, an input's) or its adjoint read (a folded sum's).
        let memory = |r: &Region, j: usize| {
            !matches!(nodes.get(r.start + j).forward, Forward::Inline(_))
                || body(keep, r, j)
                || body(outside, r, j)
        };
        // The stretches in node order: each loop in each turn of the loop around, and the
        // straight code between.
        let (mut stretches, mut ranks, mut table) = (Vec::new(), Vec::new(), Vec::new());
        for nest in nests {
            let bodies: Vec<Vec<u32>> = (nest.regions.iter())
                .map(|r| {
                    let mut rank = 0;
                    (0..r.period)
                        .map(|j| {
                            if memory(r, j) {
                                rank += 1;
                                rank - 1
                            } else {
                                NONE
                            }
                        })
                        .collect()
                })
                .collect();
            // Each loop's ranks, once for all turns of the loop around.
            let ats: Vec<usize> = (nest.regions.iter().zip(&bodies))
                .map(|(r, body)| {
                    let at = ranks.len();
                    if r.turns > 1 {
                        ranks.extend_from_slice(body);
                    }
                    at
                })
                .collect();
            for o in 0..nest.turns {
                for ((r, body), &at) in nest.regions.iter().zip(&bodies).zip(&ats) {
                    let start = r.start + o * r.outer.as_ref().map_or(0, |o| o.nodes as usize);
                    if r.turns > 1 {
                        let count = body.iter().filter(|&&s| s != NONE).count() as u32;
                        let (period, first) = (r.period, 0);
                        stretches.push(Stretch {
                            start,
                            len: r.period * r.turns,
                            kind: Kind::Loop {
                                period,
                                first,
                                count,
                                at,
                            },
                        });
                        continue;
                    }
                    let waiting = body.iter().enumerate().map(|(j, &s)| {
                        match (s, nodes.get(r.start + j).forward) {
                            (NONE, _) => NONE,
                            (_, Forward::Input) => INPUT,
                            _ => WAITING,
                        }
                    });
                    match stretches.last_mut() {
                        Some(Stretch {
                            start: s,
                            len,
                            kind: Kind::Straight { .. },
                        }) if *s + *len == start => *len += r.period,
                        _ => stretches.push(Stretch {
                            start,
                            len: r.period,
                            kind: Kind::Straight { at: table.len() },
                        }),
                    }
                    table.extend(waiting);
                }
            }
        }
        let mut slots = Slots {
            stretches,
            ranks,
            table,
            count: 0,
            n: nodes.len(),
            values,
            hint: Cell::new((0, 0)),
            lines: RefCell::default(),
            failed: Cell::new(false),
        };
        slots.take();
        slots
    }

    /// Gives the slots: each stretch of straight code waits until the loop after it took the
    /// nodes of its turn before the first (which come last, in the loop's body order); a loop
    /// then takes its turns, and the nodes of a turn after the last that are straight code
    /// waiting. (Where a node is both, the turn before wins: a peeled first step is the common
    /// case.) A node that is not waiting leaves its slot in a turn before or after unused.
    fn take(&mut self) {
        // Where node `i` is straight code in stretch `x` (the one before or after a loop), its
        // entry in the table.
        let entry = |s: &Slots, x: Option<usize>, i: usize| match x.and_then(|x| s.stretches.get(x))
        {
            Some(&Stretch {
                start,
                len,
                kind: Kind::Straight { at },
            }) if (start..start + len).contains(&i) => Some(at + i - start),
            _ => None,
        };
        for x in 0..self.stretches.len() {
            if let Stretch {
                start,
                kind: Kind::Loop { period, at, .. },
                ..
            } = self.stretches[x]
            {
                for j in (0..period).filter(|&j| self.ranks[at + j] != NONE) {
                    let t = (start + j).checked_sub(period);
                    if let Some(t) = t.and_then(|i| entry(self, x.checked_sub(1), i))
                        && self.table[t] == WAITING
                    {
                        self.table[t] = BEFORE;
                    }
                }
            }
        }
        let mut next = 0u32;
        let mut waiting: Vec<usize> = Vec::new();
        for x in 0..self.stretches.len() {
            let s = self.stretches[x];
            let (period, count, at) = match s.kind {
                Kind::Loop {
                    period, count, at, ..
                } => (period, count, at),
                Kind::Straight { at } => {
                    waiting.extend((at..at + s.len).filter(|&t| self.table[t] != NONE));
                    continue;
                }
            };
            for t in waiting.drain(..) {
                if matches!(self.table[t], WAITING | INPUT) {
                    self.table[t] = next;
                    next += 1;
                }
            }
            // The nodes of the turns before and after, each at its body node's rank in the
            // turn (a turn with none takes no slots).
            let body: Vec<usize> = (0..period)
                .filter(|&j| self.ranks[at + j] != NONE)
                .collect();
            let before: Vec<Option<usize>> = (body.iter())
                .map(|&j| {
                    let t = (s.start + j).checked_sub(period);
                    let t = t.and_then(|i| entry(self, x.checked_sub(1), i));
                    t.filter(|&t| self.table[t] == BEFORE)
                })
                .collect();
            turn(&mut self.table, &before, &mut next);
            if let Kind::Loop { first, .. } = &mut self.stretches[x].kind {
                *first = next;
            }
            next += count * (s.len / period) as u32;
            let after: Vec<Option<usize>> = (body.iter())
                .map(|&j| {
                    let t = entry(self, Some(x + 1), s.start + s.len + j);
                    t.filter(|&t| self.table[t] == WAITING)
                })
                .collect();
            turn(&mut self.table, &after, &mut next);
        }
        for t in waiting {
            if matches!(self.table[t], WAITING | INPUT) {
                self.table[t] = next;
                next += 1;
            }
        }
        self.count = next as usize;
    }

    /// The stretch holding node `i`.
    fn find(&self, i: usize) -> Option<usize> {
        let (h, jump) = self.hint.get();
        let holds = |x: usize| {
            let s = &self.stretches[x];
            (s.start..s.start + s.len).contains(&i)
        };
        if h < self.stretches.len() && holds(h) {
            return Some(h);
        }
        let x = h
            .checked_add_signed(jump)
            .filter(|&x| x < self.stretches.len() && holds(x))
            .or_else(|| {
                let x = self.stretches.partition_point(|s| s.start + s.len <= i);
                (x < self.stretches.len() && holds(x)).then_some(x)
            })?;
        self.hint.set((x, x as isize - h as isize));
        Some(x)
    }

    /// The number of slots: the length of the adjoints, and where the constants start in the
    /// values.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The length of the values: the slots, then the constants.
    pub fn values(&self) -> usize {
        self.count + (self.values - self.n)
    }

    /// The slot of value index `i` (a node, or a constant after them), if it has one.
    pub fn slot(&self, i: i64) -> Option<i64> {
        let i = usize::try_from(i).ok().filter(|&i| i < self.values)?;
        if i >= self.n {
            return Some((self.count + i - self.n) as i64);
        }
        let s = self.stretches[self.find(i)?];
        let slot = match s.kind {
            Kind::Loop {
                period,
                first,
                count,
                at,
            } => {
                let (k, j) = ((i - s.start) / period, (i - s.start) % period);
                let rank = self.ranks[at + j];
                (rank != NONE).then(|| first as usize + k * count as usize + rank as usize)?
            }
            Kind::Straight { at } => {
                let t = self.table[at + i - s.start];
                (t < MARKS).then_some(t as usize)?
            }
        };
        Some(slot as i64)
    }

    /// [`slot`](Self::slot) of an index the recording's arrays hold (`NONE` for none).
    pub fn of_u32(&self, i: u32) -> u32 {
        self.slot(i64::from(i)).map_or(NONE, |s| s as u32)
    }

    /// Nodes `i + k · step` for `turns` turns as slots, `(first, step)`, where they step
    /// evenly. Checked a loop at a time where the nodes pass through one at a body node (a
    /// few arithmetic steps each), else node by node.
    fn row(&self, i: i64, step: i64, turns: i64) -> Option<(i64, i64)> {
        let first = self.slot(i)?;
        if turns == 1 || step == 0 {
            return Some((first, 0));
        }
        // Constants keep their order after the slots.
        let (n, last) = (self.n as i64, i + (turns - 1) * step);
        if i >= n && last >= n {
            return self.slot(last).map(|_| (first, step));
        }
        let s = self.slot(i + step)? - first;
        let mut k = 1;
        while k < turns {
            let at = i + k * step;
            let x = self.find(usize::try_from(at).ok()?);
            let run = x.map(|x| self.stretches[x]).and_then(|st| match st.kind {
                Kind::Loop { period, count, .. } if step % period as i64 == 0 => {
                    let p = period as i64;
                    (step / p * i64::from(count) == s).then(|| {
                        // The turns still within the loop.
                        let end = if step > 0 {
                            (st.start + st.len) as i64 - 1 - at
                        } else {
                            at - st.start as i64
                        };
                        end / step.abs()
                    })
                }
                _ => None,
            });
            if self.slot(at)? != first + k * s {
                return None;
            }
            k += 1 + run.unwrap_or(0);
        }
        Some((first, s))
    }

    /// Line `(i, (step, outer))` over `turns` turns of its loop and `outers` of the loop
    /// around it, as slots: `None` where some index of it has no slot or the slots do not
    /// step evenly.
    fn map(&self, (i, (step, outer)): Line, turns: usize, outers: usize) -> Option<Line> {
        let outers = if outer == 0 { 1 } else { outers as i64 };
        let (first, s) = self.row(i, step, turns as i64)?;
        if outers == 1 {
            return Some((first, (s, 0)));
        }
        let so = self.slot(i + outer)? - first;
        (1..outers)
            .all(|o| self.row(i + o * outer, step, turns as i64) == Some((first + o * so, s)))
            .then_some((first, (s, so)))
    }

    /// [`map`](Self::map), each line once.
    pub fn over(&self, line: Line, turns: usize, outers: usize) -> Option<Line> {
        *self
            .lines
            .borrow_mut()
            .entry((line, turns, outers))
            .or_insert_with(|| self.map(line, turns, outers))
    }

    /// Line `line` of the code of region `r` (over its turns and those of the loop around),
    /// as slots, or `None`.
    pub fn try_line(&self, r: &Region, line: Line) -> Option<Line> {
        self.over(line, r.turns, r.outer.as_ref().map_or(1, |o| o.turns))
    }

    /// [`try_line`](Self::try_line); where the line does not map, [`failed`](Self::failed)
    /// is set and the first slot returned (the code is then dropped).
    pub fn line(&self, r: &Region, line: Line) -> Line {
        self.try_line(r, line).unwrap_or_else(|| {
            self.failed.set(true);
            (0, (0, 0))
        })
    }

    /// Whether some line did not map.
    pub fn failed(&self) -> bool {
        self.failed.get()
    }

    /// `values` (by node, the constants after the nodes) as the code reads them by slot: the
    /// constants after the slots. What the slots hold before the code runs is never read:
    /// the code computes each value before any reads it (the inputs are written before it
    /// runs).
    pub fn gather(&self, values: &mut Vec<f64>) {
        let constants = self.values - self.n;
        if self.count <= self.n {
            values.copy_within(self.n..self.values, self.count);
            values.truncate(self.count + constants);
            values.shrink_to_fit();
        } else {
            let mut kept = vec![0.0; self.count + constants];
            kept[self.count..].copy_from_slice(&values[self.n..self.values]);
            *values = kept;
        }
    }
}

/// Gives `nodes` (entries of the table of straight code, or none) the next slots, one each in
/// order, where one of them is a node: the turn before or after a loop.
fn turn(table: &mut [u32], nodes: &[Option<usize>], next: &mut u32) {
    if nodes.iter().any(Option::is_some) {
        for (&t, slot) in nodes.iter().zip(*next..) {
            if let Some(t) = t {
                table[t] = slot;
            }
        }
        *next += nodes.len() as u32;
    }
}
