//! What a replayable tape keeps to evaluate itself again: per node its operation, how its
//! operands map onto its edges, the operands themselves (nodes or constants) and its value;
//! the constants; user rules; and the guards.
//!
//! Appended by `Var` arithmetic right after the node it describes, so the arrays stay in step
//! with the tape's nodes.

use super::derived::{Derived, Forms, derived_any};
use super::guard::{Guard, Kind, piece};
use super::op_code::OpCode;
use shared_ops::rules::mul_add;
use shared_ops::{Binary, Op, Unary};

/// In an operand: the rest is an index into [`Program::consts`], not a node.
pub(crate) const CONST: u32 = 1 << 31;

/// How a node's operands map onto its edges (what re-evaluation writes where).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub(crate) enum Form {
    /// An input; operand 0 is its position among the inputs.
    Input,
    /// No weighted edge (sums, differences, negation: unit edges): the value only.
    Value,
    /// One weighted edge: ∂/∂a.
    First,
    /// One weighted edge: ∂/∂b.
    Second,
    /// One weighted edge: ∂/∂a + ∂/∂b (both operands are the same node, as in `x·x`).
    Same,
    /// Two weighted edges: ∂/∂a, ∂/∂b.
    Both,
    /// Operands `args[a..a + b]` (sum, dot product, fused multiply-add): an edge per variable.
    Many,
    /// A node whose partials the caller gave ([`Var::from_partials`](crate::Var::from_partials)):
    /// no rule to evaluate again.
    Opaque,
}

/// A user's rule, kept to evaluate it again (built-in rules are found by their code).
pub(crate) enum RuleFn<T> {
    Unary(Box<dyn Fn(T) -> (T, T) + Send + Sync>),
    Binary(Box<dyn Fn(T, T) -> (T, T, T) + Send + Sync>),
}

/// A user-defined rule applied at `node`.
pub(crate) struct Rule<T> {
    pub node: u32,
    pub name: &'static str,
    pub eval: RuleFn<T>,
}

/// The program of a recording, node by node (structure of arrays).
pub(crate) struct Program<T> {
    /// Per node: its operation.
    pub ops: Vec<OpCode>,
    /// Per node: how its operands map onto its edges.
    pub forms: Vec<Form>,
    /// Per node: its operands (a node index, or [`CONST`] and a constant's index); for
    /// [`Form::Many`] the range of `args`, for `powi` the exponent in the second.
    pub operands: Vec<[u32; 2]>,
    /// Per node: its value (at the point of the last evaluation). A derived form may extend it
    /// past the nodes (the replay keeps the constants there, so that an operand is one index).
    pub values: Vec<T>,
    /// Operands of n-ary nodes.
    pub args: Vec<u32>,
    /// Constant operands.
    pub consts: Vec<T>,
    /// User-defined rules, in node order.
    pub rules: Vec<Rule<T>>,
    /// Every decision the recording depended on, in the order taken.
    pub guards: Vec<Guard>,
    /// Number of inputs.
    pub inputs: u32,
    /// Forms derived from the program by the layers above (see `derived`), while no node is
    /// added.
    pub derived: Forms,
}

impl<T> Default for Program<T> {
    fn default() -> Self {
        Program {
            ops: Vec::new(),
            forms: Vec::new(),
            operands: Vec::new(),
            values: Vec::new(),
            args: Vec::new(),
            consts: Vec::new(),
            rules: Vec::new(),
            guards: Vec::new(),
            inputs: 0,
            derived: Forms::default(),
        }
    }
}

impl<T> core::fmt::Debug for Program<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Program")
            .field("nodes", &self.ops.len())
            .field("constants", &self.consts.len())
            .field("rules", &self.rules.len())
            .field("guards", &self.guards.len())
            .finish()
    }
}

impl<T: Copy> Program<T> {
    /// Forgets everything, keeping the capacity.
    pub fn clear(&mut self) {
        self.ops.clear();
        self.forms.clear();
        self.operands.clear();
        self.values.clear();
        self.args.clear();
        self.consts.clear();
        self.rules.clear();
        self.guards.clear();
        self.inputs = 0;
        self.derived.recycle();
    }

    /// Number of nodes described.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Drops the derived forms before the program grows (and what they kept past the nodes'
    /// values).
    #[inline]
    fn grow(&mut self) {
        if !self.derived.is_empty() {
            self.derived.recycle();
            self.values.truncate(self.ops.len());
        }
    }

    /// Describes the next node.
    #[inline]
    pub fn push(&mut self, op: OpCode, form: Form, operands: [u32; 2], value: T) {
        self.grow();
        self.ops.push(op);
        self.forms.push(form);
        self.operands.push(operands);
        self.values.push(value);
    }

    /// Describes an input (the next one).
    pub fn input(&mut self, x: T) {
        self.push(OpCode::Input, Form::Input, [self.inputs, 0], x);
        self.inputs += 1;
    }
}

impl<T: Copy> Program<T> {
    /// An operand: the node's index, or a constant (kept).
    #[inline]
    pub fn operand(&mut self, var: Option<u32>, value: T) -> u32 {
        match var {
            Some(i) => i,
            None => {
                self.consts.push(value);
                CONST | (self.consts.len() - 1) as u32
            }
        }
    }

    /// The value of an operand at the last evaluation.
    pub fn operand_value(&self, r: u32) -> T {
        if r & CONST != 0 {
            self.consts[(r & !CONST) as usize]
        } else {
            self.values[r as usize]
        }
    }

    /// Bytes of what is kept (lengths).
    pub fn bytes(&self) -> usize {
        self.ops.len() * (2 + 8 + size_of::<T>())
            + self.args.len() * 4
            + self.consts.len() * size_of::<T>()
            + self.guards.len() * size_of::<Guard>()
    }

    /// Bytes held (capacities).
    pub fn capacity_bytes(&self) -> usize {
        self.ops.capacity()
            + self.forms.capacity()
            + self.operands.capacity() * 8
            + self.values.capacity() * size_of::<T>()
            + self.args.capacity() * 4
            + self.consts.capacity() * size_of::<T>()
            + self.guards.capacity() * size_of::<Guard>()
            + self.derived.capacity_bytes()
    }
}

/// Machine code compiled from a recording of `f64` (by the `jit` layer, above the replay):
/// it runs the re-evaluation and the adjoint sweep in place of the interpreter's loops, with
/// the same bits. Kept with the program as a derived form ([`Native`]), so that the layers
/// below the compiler find it without knowing it.
pub(crate) trait Machine: Send + Sync + 'static {
    /// Every node's value and partials but the inputs', whose values `values` holds already
    /// (the constants follow the nodes in it); `args` are the n-ary nodes' operands as indices
    /// into `values`; `forms` and `rules` the program's.
    fn forward(
        &self,
        values: &mut [f64],
        partials: &mut [f64],
        args: &[u32],
        forms: &[Form],
        rules: &[Rule<f64>],
    );
    /// The adjoint sweep of every node: `adj`, one per node, holds the seeds (none `−0`), all
    /// of them before node `end` (the code may skip the nodes from `end` on, whose adjoints
    /// are zero).
    fn reverse(
        &self,
        partials: &[f64],
        parents: &[u32],
        units: &[u32],
        adj: &mut [f64],
        end: usize,
    );
    /// Whether every guard the code checks holds at `values` (after [`forward`](Self::forward)).
    fn guards_hold(&self, values: &[f64]) -> bool;
    /// The guards the code does not check (their indices): the caller checks them.
    fn unchecked(&self) -> &[u32];
    /// Bytes kept: the code's, and what it keeps to run (the guards' outcomes).
    fn kept_bytes(&self) -> usize;
}

/// The compiled program of a recording, if it has one.
pub(crate) struct Native(pub Box<dyn Machine>);

impl Derived for Native {
    fn capacity_bytes(&self) -> usize {
        self.0.kept_bytes()
    }
    derived_any!();
}

/// Machine code of the vector sweep of a recording of `f64`: `lanes` adjoints per node,
/// each lane the scalar sweep's bits (see [`Machine::reverse`]). Kept apart from [`Native`]
/// ([`NativeLanes`]), one per lane count compiled.
pub(crate) trait LaneMachine: Send + Sync + 'static {
    /// The adjoints per node.
    fn lanes(&self) -> usize;
    /// The sweep of every node: `adj` holds [`lanes`](Self::lanes) adjoints per node, node by
    /// node, with the seeds (none `−0`), as [`Machine::reverse`].
    fn reverse(
        &self,
        partials: &[f64],
        parents: &[u32],
        units: &[u32],
        adj: &mut [f64],
        end: usize,
    );
    /// Bytes kept.
    fn kept_bytes(&self) -> usize;
}

/// The compiled vector sweeps of a recording, one per lane count.
pub(crate) struct NativeLanes(pub Vec<Box<dyn LaneMachine>>);

impl Derived for NativeLanes {
    fn capacity_bytes(&self) -> usize {
        self.0.iter().map(|m| m.kept_bytes()).sum()
    }
    derived_any!();
}

/// Writes a node's partials where its form says.
#[inline(always)]
pub(crate) fn write<T: Op>(partial: &mut [T], e: usize, form: Form, da: T, db: T) {
    match form {
        Form::First => partial[e] = da,
        Form::Second => partial[e] = db,
        Form::Same => partial[e] = da + db,
        Form::Both => {
            partial[e] = da;
            partial[e + 1] = db;
        }
        _ => {}
    }
}

/// The value of a sum node of operands `args` (indices into `values`).
#[inline(always)]
pub(crate) fn sum<T: Op>(values: &[T], args: &[u32]) -> T {
    let mut s = values[args[0] as usize];
    for &r in &args[1..] {
        s += values[r as usize];
    }
    s
}

/// The value of a dot-product node of operand pairs `args`, its partials written from edge `e`
/// on: one per operand that is a node (below `n`; the constants follow the nodes in `values`).
#[inline(always)]
pub(crate) fn dot<T: Op>(values: &[T], args: &[u32], n: usize, partial: &mut [T], e: usize) -> T {
    let mut e = e;
    for pair in args.chunks_exact(2) {
        let (u, w) = (values[pair[0] as usize], values[pair[1] as usize]);
        for (r, partial_value) in [(pair[0], w), (pair[1], u)] {
            if (r as usize) < n {
                partial[e] = partial_value;
                e += 1;
            }
        }
    }
    dot_value(values, args)
}

/// The value of a dot-product node of operand pairs `args`, in the order of every `Op::dot`,
/// as the recording added it.
#[inline(always)]
pub(crate) fn dot_value<T: Op>(values: &[T], args: &[u32]) -> T {
    let value = |j: usize| values[args[2 * j] as usize] * values[args[2 * j + 1] as usize];
    shared_ops::dot_order(args.len() / 2, value)
}

/// The value of a fused multiply-add node of operands `args` (`a · b + c`), its partials
/// written as [`dot`]'s.
#[inline(always)]
pub(crate) fn fused<T: Op>(values: &[T], args: &[u32], n: usize, partial: &mut [T], e: usize) -> T {
    let [p, q, r] = [args[0], args[1], args[2]];
    let (v, ds) = mul_add(values[p as usize], values[q as usize], values[r as usize]);
    let mut e = e;
    for (r, dr) in [p, q, r].into_iter().zip(ds) {
        if (r as usize) < n {
            partial[e] = dr;
            e += 1;
        }
    }
    v
}

/// Keeps a user's one-argument rule.
pub(crate) fn unary_rule<T: Op, R: Unary>(node: u32, rule: R) -> Rule<T> {
    Rule {
        node,
        name: R::NAME,
        eval: RuleFn::Unary(Box::new(move |x| rule.eval(x))),
    }
}

/// Keeps a user's two-argument rule.
pub(crate) fn binary_rule<T: Op, R: Binary>(node: u32, rule: R) -> Rule<T> {
    Rule {
        node,
        name: R::NAME,
        eval: RuleFn::Binary(Box::new(move |a, b| rule.eval(a, b))),
    }
}

/// A guard's outcome is read from the program's values (the program keeps the guards).
impl Guard {
    /// The decision at the program's current values.
    pub fn outcome<T: Op>(&self, p: &Program<T>) -> u64 {
        self.outcome_at(p, &p.values)
    }

    /// The decision at `values` (one per node, as the program's, and the constants after).
    pub fn outcome_at<T: Op>(&self, p: &Program<T>, values: &[T]) -> u64 {
        let value = |r: u32| {
            if r & CONST != 0 {
                p.consts[(r & !CONST) as usize]
            } else {
                values[r as usize]
            }
        };
        self.outcome_with(value, |i| (p.ops[i as usize], p.operands[i as usize]))
    }

    /// The decision, given the value of an operand (a node, or [`CONST`] and a constant's
    /// index) and the operation and operands of a node (that of a piece).
    pub fn outcome_with<T: Op>(
        &self,
        value: impl Fn(u32) -> T,
        node: impl Fn(u32) -> (OpCode, [u32; 2]),
    ) -> u64 {
        match self.kind {
            Kind::Compare { a, b, how } => how.answer(value(a).partial_cmp(&value(b))),
            Kind::Test { a, test } => u64::from(test.of(value(a).value())),
            Kind::Piece { node: i } => {
                let (op, [a, b]) = node(i);
                piece(op, value(a).value(), value(b).value(), value(i).value())
            }
        }
    }
}
