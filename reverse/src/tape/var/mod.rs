mod notes;

use crate::storage::append::{Append, Kept, Selecting, Unit, Weighted, With};
use crate::storage::op_code::{self, OpCode};
use crate::storage::program::{self, Form};
use crate::storage::{NEG, TapeData};
use crate::tape::live::{self, PROGRAM, mixed};
use core::fmt;
use num_traits::{One, Zero};
use shared_ops::{Binary, Op, Unary, check_dot, rules};

/// A reverse-mode variable: a small `Copy` handle to a node of a [`Tape`](crate::Tape) (its value,
/// its tape's id and its index), which records every operation it takes part in.
///
/// It is an [`Op`], so generic user code records without change, and it is `Copy + 'static`, so
/// it works as a nalgebra matrix element. A `Var` made without a tape ([`Var::constant`],
/// `zero()`, `NumCast::from`) is a constant: it is not recorded and has no adjoint.
///
/// The scalar `T` (`f64` by default) is what the tape stores: `Var<Dual<f64>>` carries a
/// tangent through the recording (forward-over-reverse), `Var<Var<f64>>` records its values and
/// partials on an outer tape (reverse-over-reverse). The levels are apart by type, so they cannot
/// be confused.
///
/// Using a `Var` after its tape was dropped, with a `Var` of another tape, or on another thread
/// panics with a message naming which of these happened. It never yields a wrong gradient.
///
/// ```
/// use reverse::{Tape, Var};
///
/// let tape = Tape::new();
/// let (a, b) = (tape.var(2.0), tape.var(3.0));
/// let d = a * b + 1.0;
/// let g = tape.gradient(d);
/// assert_eq!((g.wrt(a), g.wrt(b)), (3.0, 2.0));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Var<T = f64> {
    value: T,
    /// The tape's id; 0 for a constant.
    tape: u64,
    /// Its node.
    index: u32,
}

impl<T: Op> Var<T> {
    #[inline(always)]
    pub(crate) fn on_tape(value: T, tape: u64, index: u32) -> Var<T> {
        Var { value, tape, index }
    }

    /// A constant (not recorded; zero derivative). It lifts a number of the level below, e.g.
    /// an outer derivative's variable into an inner recording.
    ///
    /// ```
    /// let c = reverse::Var::constant(2.5);
    /// assert!(c.is_constant());
    /// ```
    #[inline(always)]
    pub const fn constant(value: T) -> Var<T> {
        Var {
            value,
            tape: 0,
            index: 0,
        }
    }

    /// The value (one level down: an `f64` for `Var<f64>`, a `Dual` for `Var<Dual<f64>>`).
    ///
    /// ```
    /// assert_eq!(reverse::Var::constant(1.5).value(), 1.5);
    /// ```
    #[inline(always)]
    pub fn value(self) -> T {
        self.value
    }

    /// True for a constant (made without a tape).
    #[inline(always)]
    pub const fn is_constant(self) -> bool {
        self.tape == 0
    }

    /// The node index on its tape (meaningless for a constant).
    ///
    /// ```
    /// let tape = reverse::Tape::new();
    /// let x = tape.var(2.0);
    /// let s = x - 1.5;
    /// assert_eq!((x.index(), s.index(), s.value()), (0, 1, 0.5));
    /// assert_eq!(tape.gradient(s * s).wrt(s), 1.0); // 2s
    /// ```
    #[inline(always)]
    pub const fn index(self) -> u32 {
        self.index
    }

    #[inline(always)]
    pub(crate) const fn tape(self) -> u64 {
        self.tape
    }

    /// A variable of value `value` whose local partials with respect to the given variables are
    /// given: one node with one edge per variable (constants are skipped). The general n-ary
    /// operation, for a function whose derivative the caller knows (a library routine, a
    /// solver's implicit derivative).
    ///
    /// # Panics
    ///
    /// If the variables belong to different tapes.
    ///
    /// ```
    /// use reverse::{Tape, Var};
    /// let tape = Tape::new();
    /// let x = tape.vars(&[1.0, 2.0, 3.0]);
    /// // f(x) = x₀·x₁·x₂, with its gradient written by hand.
    /// let f = Var::from_partials(6.0, &[(x[0], 6.0), (x[1], 3.0), (x[2], 2.0)]);
    /// assert_eq!(tape.gradient(f).wrt_all(&x), vec![6.0, 3.0, 2.0]);
    /// ```
    pub fn from_partials(value: T, edges: &[(Var<T>, T)]) -> Var<T> {
        let Some(tape) = common_tape(edges.iter().map(|e| e.0)) else {
            return Var::constant(value);
        };
        let index = live::record(
            tape,
            With(|d: &mut TapeData<T>| {
                let live = edges.iter().filter(|e| !e.0.is_constant());
                let live = live.map(|e| (e.0.index, e.1));
                let i = d.weighted_exact(edges.len(), live);
                if let Some(p) = &mut d.program {
                    p.push(OpCode::Node, Form::Opaque, [0, 0], value);
                }
                i
            }),
        );
        Var::on_tape(value, tape, index)
    }

    /// A node with one weighted edge.
    #[inline(always)]
    fn weighted1(self, partial: T) -> u32 {
        live::record(self.tape, Weighted([self.index], [partial]))
    }

    /// A node with one unit edge (`NEG` in `flag` for −1).
    #[inline(always)]
    fn unit1(self, flag: u32) -> u32 {
        live::record::<T, _>(self.tape, Unit([self.index | flag]))
    }

    /// The fused multiply-add rule (`Float::mul_add` calls it): one node with up to three edges.
    fn fused_mul_add(self, a: Var<T>, b: Var<T>) -> Var<T> {
        let (value, [da, db, dc]) = rules::mul_add(self.value, a.value, b.value);
        let args = [(self, da), (a, db), (b, dc)];
        match common_tape(args.iter().map(|e| e.0)) {
            None => Var::constant(value),
            Some(tape) => {
                let index = live::record(
                    tape,
                    With(|d: &mut TapeData<T>| {
                        let live = args.iter().filter(|e| !e.0.is_constant());
                        let live = live.map(|e| (e.0.index, e.1));
                        d.weighted_exact(3, live)
                    }),
                );
                if tape & PROGRAM != 0 {
                    Self::describe_many(tape, OpCode::MulAdd, args.map(|e| e.0), value);
                }
                Var::on_tape(value, tape, index)
            }
        }
    }

    /// `Sum` of an iterator: one node with a unit edge per variable. The items may record
    /// nodes of their own while the iterator runs, so the operands are staged on the tape first.
    fn sum_of(iter: impl Iterator<Item = Var<T>>) -> Var<T> {
        let mut value: Option<T> = None;
        let mut staged = Staged::<T>::none();
        // For a program: the terms from the first variable on, after the sum of the constants
        // before it (the same left fold, so re-evaluation adds in the same order).
        let mut terms: Vec<Var<T>> = Vec::new();
        for v in iter {
            let before = value;
            value = Some(match value {
                Some(s) => s + v.value,
                None => v.value,
            });
            // (Out of line: the loop of the user's function may be this one.)
            if v.is_constant() {
                if !terms.is_empty() {
                    Self::keep_term(&mut terms, (false, v.value), (0, 0, v.value));
                }
                continue;
            }
            if v.tape & PROGRAM != 0 {
                let before = (before.is_some(), before.unwrap_or(v.value));
                Self::keep_term(&mut terms, before, (v.tape, v.index, v.value));
            }
            if v.tape == staged.tape {
                live::record::<T, _>(v.tape, Stage(v.index));
            } else if staged.tape == 0 {
                staged.base = live::record::<T, _>(v.tape, Stage(v.index));
                staged.tape = v.tape;
            } else {
                mixed(staged.tape, v.tape);
            }
        }
        let value = value.unwrap_or_else(T::zero);
        if staged.tape == 0 {
            return Var::constant(value);
        }
        let (tape, base) = (staged.tape, staged.base);
        staged.tape = 0; // the node takes the operands: nothing to unstage
        let index = live::record(tape, With(|d: &mut TapeData<T>| d.unit_staged(base)));
        if tape & PROGRAM != 0 {
            Self::describe_many(tape, OpCode::Sum, terms, value);
        }
        Var::on_tape(value, tape, index)
    }
}

/// The operands a sum has staged on its tape from `base` on. If the sum does not finish (a
/// panic in its iterator, or a mixed-tape panic), dropping this unstages them, so that an
/// enclosing sum on the same tape does not take them for its own.
struct Staged<T: Op> {
    tape: u64,
    base: usize,
    _scalar: core::marker::PhantomData<T>,
}

impl<T: Op> Staged<T> {
    fn none() -> Staged<T> {
        Staged {
            tape: 0,
            base: 0,
            _scalar: core::marker::PhantomData,
        }
    }
}

impl<T: Op> Drop for Staged<T> {
    fn drop(&mut self) {
        if self.tape != 0 {
            let base = self.base;
            live::record_if_live(
                self.tape,
                With(|d: &mut TapeData<T>| d.staged.truncate(base)),
            );
        }
    }
}

/// Stages an operand of a sum under construction.
struct Stage(u32);

impl<T: Copy> Append<T> for Stage {
    type Out = usize;
    #[inline(always)]
    fn append(self, d: &mut TapeData<T>) -> usize {
        d.stage(self.0)
    }
}

/// The tape of the variables among `vars`, all of which must share it; `None` if all are
/// constants. Checked before anything is appended, so a panic leaves the tape intact.
fn common_tape<T: Op>(vars: impl Iterator<Item = Var<T>>) -> Option<u64> {
    let mut tape = 0;
    for v in vars.filter(|v| !v.is_constant()) {
        if tape == 0 {
            tape = v.tape;
        } else if v.tape != tape {
            mixed(tape, v.tape);
        }
    }
    (tape != 0).then_some(tape)
}

impl<T: Op> Op for Var<T> {
    #[inline(always)]
    fn constant(c: f64) -> Self {
        Var::constant(T::constant(c))
    }
    #[inline(always)]
    fn value(&self) -> f64 {
        self.value.value()
    }
    /// Only a constant zero: a recorded variable of value 0 still has an adjoint.
    #[inline(always)]
    fn is_structural_zero(&self) -> bool {
        self.is_constant() && self.value.is_structural_zero()
    }
    /// The recorded value's: the derivatives of a variable live on its tape.
    #[inline(always)]
    fn has_nan(&self) -> bool {
        self.value.has_nan()
    }
    #[inline(always)]
    fn apply1<R: Unary>(self, rule: R) -> Self {
        let (v, d) = rule.eval(self.value);
        // A piecewise-constant rule passes no adjoint: on a plain tape its result is a constant
        // (a replayable or traced tape keeps the node, to re-evaluate or show it).
        if self.is_constant() || R::FLAT && self.tape & PROGRAM == 0 {
            return Var::constant(v);
        }
        let (index, form) = if op_code::is::<R, rules::Neg>() {
            (self.unit1(NEG), Form::Value)
        } else {
            (self.weighted1(d), Form::First)
        };
        let out = Var::on_tape(v, self.tape, index);
        if self.tape & PROGRAM != 0 {
            let param = (&rule as &dyn core::any::Any)
                .downcast_ref::<rules::Powi>()
                .map(|n| n.0 as u32);
            let code = OpCode::unary::<R>();
            let keep = |node| (code == OpCode::Custom).then(|| program::unary_rule(node, rule));
            let a = (self.node(), self.value);
            Self::describe(self.tape, index, v, form, code, a, a, param, &keep);
        }
        out
    }
    #[inline(always)]
    fn apply2<R: Binary>(self, other: Self, rule: R) -> Self {
        let (v, da, db) = rule.eval(self.value, other.value);
        // A piecewise-constant rule, as in `apply1`.
        if R::FLAT && (self.tape | other.tape) & PROGRAM == 0 {
            if !self.is_constant() && !other.is_constant() && self.tape != other.tape {
                mixed(self.tape, other.tape);
            }
            return Var::constant(v);
        }
        // A constant argument is not recorded: its partial (possibly ∞ or NaN) is dropped. Sums
        // and differences become unit edges: their partials are ±1 by the rule table.
        let sub = op_code::is::<R, rules::Sub>();
        let unit = sub || op_code::is::<R, rules::Add>();
        let neg = if sub { NEG } else { 0 };
        let (tape, index, form) = match (self.is_constant(), other.is_constant()) {
            (true, true) => return Var::constant(v),
            (false, true) if unit => (self.tape, self.unit1(0), Form::Value),
            (false, true) => (self.tape, self.weighted1(da), Form::First),
            (true, false) if unit => (other.tape, other.unit1(neg), Form::Value),
            (true, false) => (other.tape, other.weighted1(db), Form::Second),
            (false, false) => {
                if self.tape != other.tape {
                    mixed(self.tape, other.tape);
                }
                let (a, b) = (self.index, other.index);
                // x·x, x + x, x − x: one edge with the summed partial (the exact 0 of x − x then
                // stops an infinite adjoint).
                let (index, form) = if a == b {
                    (
                        live::record(self.tape, Weighted([a], [da + db])),
                        Form::Same,
                    )
                } else if unit {
                    (
                        live::record::<T, _>(self.tape, Unit([a, b | neg])),
                        Form::Value,
                    )
                } else if op_code::is::<R, rules::Max>() || op_code::is::<R, rules::Min>() {
                    match live::record(self.tape, Selecting([a, b], [da, db])) {
                        (i, Kept::Both) => (i, Form::Both),
                        (i, Kept::First) => (i, Form::First),
                        (i, Kept::Second) => (i, Form::Second),
                    }
                } else {
                    (
                        live::record(self.tape, Weighted([a, b], [da, db])),
                        Form::Both,
                    )
                };
                (self.tape, index, form)
            }
        };
        let out = Var::on_tape(v, tape, index);
        if tape & PROGRAM != 0 {
            let code = OpCode::binary::<R>();
            let keep = |node| (code == OpCode::Custom).then(|| program::binary_rule(node, rule));
            let (a, b) = ((self.node(), self.value), (other.node(), other.value));
            Self::describe(tape, index, v, form, code, a, b, None, &keep);
        }
        out
    }

    /// One node with an edge per variable operand (∂/∂aᵢ = bᵢ, ∂/∂bᵢ = aᵢ).
    fn dot(a: &[Self], b: &[Self]) -> Self {
        check_dot(a.len(), b.len());
        if a.is_empty() {
            return Var::zero();
        }
        // The value in the order of every `Op::dot`; one pass for the tape (checked before
        // anything is appended) and the number of edges; one to write the edges.
        let value = shared_ops::dot_order(a.len(), |i| a[i].value * b[i].value);
        let (mut tape, mut in_a, mut in_b) = (0, 0, 0);
        for (x, y) in a.iter().zip(b) {
            for (t, count) in [(x.tape, &mut in_a), (y.tape, &mut in_b)] {
                if t != 0 {
                    *count += 1;
                    if t != tape {
                        if tape != 0 {
                            mixed(tape, t);
                        }
                        tape = t;
                    }
                }
            }
        }
        let (n, edges) = (a.len(), in_a + in_b);
        if tape == 0 {
            return Var::constant(value);
        }
        let index = live::record(
            tape,
            With(|d: &mut TapeData<T>| {
                // The common shapes without a test per term: all variables (a product of two
                // variable vectors), or one side constant (a linear combination).
                let pairs = a.iter().zip(b);
                if (in_a, in_b) == (n, n) {
                    let all = pairs.flat_map(|(x, y)| [(x.index, y.value), (y.index, x.value)]);
                    d.weighted_exact(edges, all)
                } else if (in_a, in_b) == (n, 0) {
                    let left = pairs.map(|(x, y)| (x.index, y.value));
                    d.weighted_exact(edges, left)
                } else if (in_a, in_b) == (0, n) {
                    let right = pairs.map(|(x, y)| (y.index, x.value));
                    d.weighted_exact(edges, right)
                } else {
                    let some = a.iter().zip(b).flat_map(|(x, y)| {
                        let ex = (!x.is_constant()).then_some((x.index, y.value));
                        let ey = (!y.is_constant()).then_some((y.index, x.value));
                        ex.into_iter().chain(ey)
                    });
                    d.weighted_exact(edges, some)
                }
            }),
        );
        if tape & PROGRAM != 0 {
            let pairs = a.iter().zip(b).flat_map(|(&x, &y)| [x, y]);
            Self::describe_many(tape, OpCode::Dot, pairs, value);
        }
        Var::on_tape(value, tape, index)
    }
}

impl<T: Op> From<T> for Var<T> {
    /// A constant.
    #[inline(always)]
    fn from(c: T) -> Self {
        Var::constant(c)
    }
}

shared_ops::impl_float_via_rules!(
    impl [T: Op] for Var<T>, inner T, primal |s| s.value,
    sum |iter| Var::sum_of(iter),
    compare |a, b, how| a.compare(b, how),
    test |x, name, result| x.test(name, result)
);
#[cfg(any(feature = "nalgebra", feature = "nalgebra_v0_34"))]
shared_ops::impl_real_field!(impl [T: Op] for Var<T>);

impl<T: Op> Zero for Var<T> {
    #[inline(always)]
    fn zero() -> Self {
        Var::constant(T::zero())
    }
    /// The value is zero, as for the `f64` it replaces: a decision, kept as a branch guard on
    /// a replayable tape (structural zero is [`Op::is_structural_zero`]).
    #[inline(always)]
    fn is_zero(&self) -> bool {
        self.test("is_zero", self.value.is_zero())
    }
}

impl<T: Op> One for Var<T> {
    #[inline(always)]
    fn one() -> Self {
        Var::constant(T::one())
    }
}

impl<T: Op> Default for Var<T> {
    fn default() -> Self {
        Var::zero()
    }
}

impl<T: Op> fmt::Display for Var<T> {
    /// Formats the value, as `f64` does (so user code that prints numbers works unchanged).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.value, f)
    }
}

// Arithmetic with `f64` constants (`Op` asks for it): a node with one edge, as with
// `Var::constant(c)` (the constant is not recorded).
macro_rules! with_f64 {
    ($($tr:ident $m:ident $rule:ident),*) => {$(
        impl<T: Op> core::ops::$tr<f64> for Var<T> {
            type Output = Var<T>;
            #[inline(always)]
            fn $m(self, c: f64) -> Var<T> {
                self.apply2(<Var<T> as Op>::constant(c), rules::$rule)
            }
        }
    )*};
}
with_f64!(Add add Add, Sub sub Sub, Mul mul Mul, Div div Div);
shared_ops::impl_constant_ops!(impl [T: Op] for Var<T>);
