use crate::tape::{NO_PARENT, Node, active_id, misuse, push};
use core::fmt;
use num_traits::{One, Zero};
use shared_ops::{Binary, Op, OpCode, Unary, rules};

/// A reverse-mode variable: a small `Copy` handle to a node of the active [`Tape`](crate::Tape)
/// (index and value), which records every operation it takes part in.
///
/// It is an [`Op`], so generic user code records without change, and it is `Copy + 'static`, so
/// it works as a nalgebra matrix element. A `Var` made without a tape ([`Var::constant`],
/// `zero()`, `NumCast::from`) is a constant: it is not recorded and has no adjoint.
///
/// Using a `Var` after its tape was dropped, while an inner tape records, with another tape, or
/// on another thread panics with a message naming which of these happened. It never yields a
/// wrong gradient.
///
/// ```
/// use reverse::{Tape, Var};
/// use shared_ops::Op;
///
/// let tape = Tape::new();
/// let (a, b) = (tape.var(2.0), tape.var(3.0));
/// let d = a * b + Var::constant(1.0);
/// let g = tape.gradient(d);
/// assert_eq!((g.wrt(a), g.wrt(b)), (3.0, 2.0));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Var {
    value: f64,
    /// The tape's id; 0 for a constant.
    tape: u64,
    index: u32,
}

impl Var {
    pub(crate) fn on_tape(value: f64, tape: u64, index: u32) -> Var {
        Var { value, tape, index }
    }

    /// A constant (not recorded; zero derivative).
    ///
    /// ```
    /// let c = reverse::Var::constant(2.5);
    /// assert!(c.is_constant());
    /// ```
    #[inline(always)]
    pub const fn constant(value: f64) -> Var {
        Var {
            value,
            tape: 0,
            index: 0,
        }
    }

    /// The primal value.
    #[inline(always)]
    pub const fn value(self) -> f64 {
        self.value
    }

    /// True for a constant (made without a tape).
    #[inline(always)]
    pub const fn is_constant(self) -> bool {
        self.tape == 0
    }

    /// The node index on its tape (meaningless for a constant).
    #[inline(always)]
    pub const fn index(self) -> u32 {
        self.index
    }

    #[inline(always)]
    pub(crate) const fn tape(self) -> u64 {
        self.tape
    }

    /// Records a node with up to two (parent, partial) pairs on `tape`.
    #[inline(always)]
    fn record(tape: u64, value: f64, op: OpCode, parent: [u32; 2], partial: [f64; 2]) -> Var {
        let index = push(
            tape,
            Node {
                value,
                partial,
                parent,
                op,
            },
        );
        Var { value, tape, index }
    }

    /// Records a node of a user-defined rule, keeping its name for traces.
    #[cold]
    fn record_custom(
        tape: u64,
        value: f64,
        name: &'static str,
        parent: [u32; 2],
        partial: [f64; 2],
    ) -> Var {
        let v = Self::record(tape, value, OpCode::Custom, parent, partial);
        crate::tape::with_tape_mut(tape, |t| t.custom.push((v.index, name)));
        v
    }

    /// The fused multiply-add rule (`Float::mul_add` calls it): one node, or two when all three
    /// arguments are variables (a node has at most two parents).
    fn fused_mul_add(self, a: Var, b: Var) -> Var {
        let (value, [da, db, dc]) = rules::mul_add(self.value, a.value, b.value);
        let args = [(self, da), (a, db), (b, dc)];
        let mut live = args.iter().filter(|(v, _)| !v.is_constant());
        match (live.next(), live.next(), live.next()) {
            (None, _, _) => Var::constant(value),
            (Some(&(u, du)), None, _) => Self::record(
                u.tape,
                value,
                OpCode::MulAdd,
                [u.index, NO_PARENT],
                [du, 0.0],
            ),
            (Some(&(u, du)), Some(&(w, dw)), None) => {
                same_tape(u, w);
                Self::record(u.tape, value, OpCode::MulAdd, [u.index, w.index], [du, dw])
            }
            _ => {
                same_tape(self, a);
                let t = Self::record(
                    self.tape,
                    self.value * a.value,
                    OpCode::Mul,
                    [self.index, a.index],
                    [da, db],
                );
                same_tape(t, b);
                Self::record(t.tape, value, OpCode::MulAdd, [t.index, b.index], [1.0, dc])
            }
        }
    }
}

/// Two variables of one operation must share a tape.
#[inline(always)]
fn same_tape(a: Var, b: Var) {
    if a.tape != b.tape {
        mixed(a, b);
    }
}

#[cold]
#[inline(never)]
fn mixed(a: Var, b: Var) -> ! {
    // Blame the one that is not the recording tape.
    misuse(if a.tape == active_id() {
        b.tape
    } else {
        a.tape
    })
}

impl Op for Var {
    #[inline(always)]
    fn constant(c: f64) -> Self {
        Var::constant(c)
    }
    #[inline(always)]
    fn value(&self) -> f64 {
        self.value
    }
    #[inline(always)]
    fn apply1<R: Unary>(self, rule: R) -> Self {
        let (v, d) = rule.eval(self.value);
        if self.is_constant() {
            return Var::constant(v);
        }
        let (parent, partial) = ([self.index, NO_PARENT], [d, 0.0]);
        if R::CODE == OpCode::Custom {
            Self::record_custom(self.tape, v, R::NAME, parent, partial)
        } else {
            Self::record(self.tape, v, R::CODE, parent, partial)
        }
    }
    #[inline(always)]
    fn apply2<R: Binary>(self, other: Self, rule: R) -> Self {
        let (v, da, db) = rule.eval(self.value, other.value);
        // A constant argument is not recorded: its partial (possibly ∞ or NaN) is dropped.
        let (tape, parent, partial) = match (self.is_constant(), other.is_constant()) {
            (true, true) => return Var::constant(v),
            (false, true) => (self.tape, [self.index, NO_PARENT], [da, 0.0]),
            (true, false) => (other.tape, [other.index, NO_PARENT], [db, 0.0]),
            (false, false) => {
                same_tape(self, other);
                if self.index == other.index {
                    // x·x, x + x: one parent, one partial (half the adjoint updates).
                    (self.tape, [self.index, self.index], [da + db, 0.0])
                } else {
                    (self.tape, [self.index, other.index], [da, db])
                }
            }
        };
        if R::CODE == OpCode::Custom {
            Self::record_custom(tape, v, R::NAME, parent, partial)
        } else {
            Self::record(tape, v, R::CODE, parent, partial)
        }
    }
}

impl From<f64> for Var {
    /// A constant.
    #[inline(always)]
    fn from(c: f64) -> Self {
        Var::constant(c)
    }
}

shared_ops::impl_float_via_rules!(impl [] for Var, inner f64, primal |s| s.value);

impl Zero for Var {
    #[inline(always)]
    fn zero() -> Self {
        Var::constant(0.0)
    }
    /// Structural: only a constant zero, never a recorded variable whose value is 0.
    #[inline(always)]
    fn is_zero(&self) -> bool {
        self.is_constant() && self.value == 0.0
    }
}

impl One for Var {
    #[inline(always)]
    fn one() -> Self {
        Var::constant(1.0)
    }
}

impl Default for Var {
    fn default() -> Self {
        Var::zero()
    }
}

impl fmt::Display for Var {
    /// Formats the value, as `f64` does (so user code that prints numbers works unchanged).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.value, f)
    }
}

// Mixed arithmetic with plain f64 constants, for hand-written (non-generic) code.
macro_rules! with_f64 {
    ($($tr:ident $m:ident $rule:ident),*) => {$(
        impl core::ops::$tr<f64> for Var {
            type Output = Var;
            #[inline(always)]
            fn $m(self, c: f64) -> Var {
                self.apply2(Var::constant(c), rules::$rule)
            }
        }
        impl core::ops::$tr<Var> for f64 {
            type Output = Var;
            #[inline(always)]
            fn $m(self, v: Var) -> Var {
                Var::constant(self).apply2(v, rules::$rule)
            }
        }
    )*};
}
with_f64!(Add add Add, Sub sub Sub, Mul mul Mul, Div div Div);
