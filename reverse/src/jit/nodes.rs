//! The nodes of a recording as the compiler reads them: per node what re-evaluation computes
//! (its [`Forward`]), what the sweep adds ([`Reverse`]), the two as its kind, and its indices.

use super::pages;
use crate::replay::compile::Kernel;
use crate::storage::op_code::OpCode;
use crate::storage::program::{Form, Program};
use crate::storage::{Edges, NEG, TapeData};
use rustc_hash::FxHashMap as HashMap;

/// The most edges of a node whose sweep is compiled inline; a node with more (a sum, a dot
/// product of many terms) is swept by a call.
pub(super) const MAX_EDGES: usize = 4;

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
    /// it goes (see [`Region::fold`](super::shape::Region::fold)): nothing to do here.
    Folded,
}

impl Forward {
    /// The rule of a node whose code calls its built-in one-argument function directly (see
    /// [`unary_c`]), its operand in a register where its turn computed it (an input's is
    /// loaded, as are operands from outside the turn): no call reads that operand from memory.
    ///
    /// [`unary_c`]: crate::storage::op_code::unary_c
    pub fn direct(self) -> Option<OpCode> {
        use crate::storage::op_code::{UNARY, unary_c};
        match self {
            Forward::Call {
                op,
                form: Form::First,
                ..
            } if UNARY.contains(&op) && unary_c(op).is_some() => Some(op),
            _ => None,
        }
    }

    /// Whether its partial is its value, bit for bit (`exp`, whose rule returns `(y, y)`):
    /// a gradient's code then stores no partial, and its sweep multiplies by the value.
    pub fn partial_is_value(self) -> bool {
        self.direct() == Some(OpCode::Exp)
    }
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
    let (parent, unit) = (d.parents(), d.units());
    let mut at = pages::with_capacity(n);
    d.walk_forward(|i, e| {
        let (op, form) = (p.ops[i], p.forms[i]);
        let (a, mut b) = p.slots(i, n);
        let (lo, end, is_unit) = match e {
            Edges::Weighted(lo, end) => (lo, end, false),
            Edges::Unit(lo, end) => (lo, end, true),
        };
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
        let count = end - lo;
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
        let mut here = [0; PARENT + MAX_EDGES - 1];
        (here[A], here[B], here[E]) = (a, b, lo as u32);
        let first = kept(PARENT);
        let edges = lo..end;
        let reverse = if count > MAX_EDGES || winner {
            Reverse::Call {
                unit: is_unit,
                count: count as u32,
            }
        } else if is_unit {
            let mut neg = 0u8;
            for (k, &q) in unit[edges].iter().enumerate() {
                here[first + k] = q & !NEG;
                neg |= u8::from(q & NEG != 0) << k;
            }
            Reverse::Unit(count as u8, neg)
        } else {
            here[first..first + count].copy_from_slice(&parent[edges]);
            Reverse::Weighted(count as u8)
        };
        let id = *ids.entry((forward, reverse)).or_insert_with(|| {
            distinct.push((forward, reverse));
            distinct.len() as u32 - 1
        });
        kinds.push(id);
        at.push(here);
    });
    Nodes {
        kinds,
        distinct,
        at,
    }
}
