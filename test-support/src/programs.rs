//! Generated programs: random Wengert lists over the rules of the table, run in any mode.
//!
//! A [`Program`] is `n` inputs and a list of instructions, each applying one rule to earlier
//! values, and the values it returns. Written once over [`Op`], it runs on `f64`, on duals of
//! any nesting, on tape variables and on Taylor numbers, so the tests of every crate compare
//! modes on the same programs. Arguments that would leave a rule's domain, or come near a
//! singularity where modes lose digits differently, are first squashed into it through `sin`;
//! kinks and jumps (`abs`, `max`, `floor`, `%`, …) are not, so the conventions there are
//! exercised too, and [`Program::kink_at`] tells where finite differences cannot follow.
//!
//! A test picks its *palette* (the rules it draws from) and its [`Shape`] (inputs, length,
//! outputs).

use proptest::prelude::*;
use shared_ops::{Function, Op, Unary as Rule};
use std::ops::{Range, RangeInclusive};

/// A user's rule (the logistic function, with its derivative written by hand), so that
/// generated programs apply a rule the library does not know.
#[derive(Clone, Copy, Debug)]
pub struct UserSigmoid;

impl Rule for UserSigmoid {
    const NAME: &'static str = "sigmoid";
    fn eval<T: Op>(self, x: T) -> (T, T) {
        let s = T::one() / (T::one() + (-x).exp());
        (s, s * (T::one() - s))
    }
}

fn k<T: Op>(c: f64) -> T {
    T::constant(c)
}

macro_rules! unary {
    ($($(#[$doc:meta])* $name:ident |$u:ident, $s:ident| $body:expr,)*) => {
        /// A one-argument instruction: a rule of the table applied to a value, its argument
        /// squashed where the rule needs it (`s` is `sin u`, in [−1, 1]).
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Unary {
            $($(#[$doc])* $name,)*
        }

        impl Unary {
            /// The instruction at `x`.
            pub fn apply<T: Op>(self, x: T) -> T {
                let sx = x.sin();
                match self {
                    $(Unary::$name => {
                        let ($u, $s) = (x, sx);
                        let _ = (&$u, &$s);
                        $body
                    })*
                }
            }
        }
    };
}

unary! {
    /// −u
    Neg |u, s| -u,
    /// 1/(1.5 + s)
    Recip |u, s| (k::<T>(1.5) + s).recip(),
    /// √(1.2 + s)
    Sqrt |u, s| (k::<T>(1.2) + s).sqrt(),
    /// ∛(s − 2)
    Cbrt |u, s| (s - k::<T>(2.0)).cbrt(),
    /// ∛(2 + s)
    CbrtShifted |u, s| (k::<T>(2.0) + s).cbrt(),
    /// ∛u · 0 + ∛(2 + s): an infinite slope at u = 0 times a constant zero.
    CbrtTimesZero |u, s| u.cbrt() * k::<T>(0.0) + (k::<T>(2.0) + s).cbrt(),
    /// eˢ
    Exp |u, s| s.exp(),
    /// e²ˢ
    ExpTwice |u, s| (s + s).exp(),
    /// 2ˢ
    Exp2 |u, s| s.exp2(),
    /// 2²ˢ
    Exp2Twice |u, s| (s + s).exp2(),
    /// eˢ − 1
    ExpM1 |u, s| s.exp_m1(),
    /// e²ˢ − 1
    ExpM1Twice |u, s| (s + s).exp_m1(),
    /// ln(1.5 + s)
    Ln |u, s| (k::<T>(1.5) + s).ln(),
    /// log₂(1.5 + s)
    Log2 |u, s| (k::<T>(1.5) + s).log2(),
    /// log₁₀(1.5 + s)
    Log10 |u, s| (k::<T>(1.5) + s).log10(),
    /// ln(1 + s/2)
    Ln1p |u, s| (k::<T>(0.5) * s).ln_1p(),
    /// sin u
    Sin |u, s| u.sin(),
    /// cos u
    Cos |u, s| u.cos(),
    /// tan s
    Tan |u, s| s.tan(),
    /// asin(0.9 s)
    Asin |u, s| (k::<T>(0.9) * s).asin(),
    /// acos(0.9 s)
    Acos |u, s| (k::<T>(0.9) * s).acos(),
    /// atan u
    Atan |u, s| u.atan(),
    /// sinh s
    Sinh |u, s| s.sinh(),
    /// sinh 2s
    SinhTwice |u, s| (s + s).sinh(),
    /// cosh s
    Cosh |u, s| s.cosh(),
    /// cosh 2s
    CoshTwice |u, s| (s + s).cosh(),
    /// tanh u
    Tanh |u, s| u.tanh(),
    /// tanh 2s: short of saturation, where 1 − y² cancels.
    TanhTwice |u, s| (s + s).tanh(),
    /// asinh u
    Asinh |u, s| u.asinh(),
    /// acosh(2.5 + s)
    Acosh |u, s| (k::<T>(2.5) + s).acosh(),
    /// acosh(2 + s), nearer the edge at 1
    AcoshNear |u, s| (k::<T>(2.0) + s).acosh(),
    /// atanh(0.9 s)
    Atanh |u, s| (k::<T>(0.9) * s).atanh(),
    /// |u|
    Abs |u, s| u.abs(),
    /// ⌊u⌋
    Floor |u, s| u.floor(),
    /// ⌈u⌉
    Ceil |u, s| u.ceil(),
    /// round u
    Round |u, s| u.round(),
    /// trunc u
    Trunc |u, s| u.trunc(),
    /// sign u
    Signum |u, s| u.signum(),
    /// u − trunc u
    Fract |u, s| u.fract(),
    /// The table's sigmoid of 2s, short of saturation.
    Sigmoid |u, s| (s + s).apply1(shared_ops::rules::Sigmoid),
    /// A user's sigmoid rule ([`UserSigmoid`]) of u.
    UserSigmoid |u, s| u.apply1(UserSigmoid),
    /// max(u, 0) by the table's rule
    Relu |u, s| u.apply1(shared_ops::rules::Relu),
    /// u²
    Square |u, s| u.powi(2),
    /// u³
    Cube |u, s| u.powi(3),
    /// (1.5 + s)⁻²
    InverseSquare |u, s| (k::<T>(1.5) + s).powi(-2),
    /// u⁰
    Powi0 |u, s| u.powi(0),
    /// u¹
    Powi1 |u, s| u.powi(1),
    /// u² − fract(u) · 0: a jump times a constant zero.
    SquareMinusFract |u, s| u * u - u.fract() * k::<T>(0.0),
}

impl Unary {
    /// Every rule of one argument, kinks and jumps included: Taylor mode against nested duals.
    pub const TAYLOR: &[Unary] = &[
        Unary::Neg,
        Unary::Recip,
        Unary::Sqrt,
        Unary::Cbrt,
        Unary::Exp,
        Unary::Exp2,
        Unary::ExpM1,
        Unary::Ln,
        Unary::Log2,
        Unary::Log10,
        Unary::Ln1p,
        Unary::Sin,
        Unary::Cos,
        Unary::Tan,
        Unary::Asin,
        Unary::Acos,
        Unary::Atan,
        Unary::Sinh,
        Unary::Cosh,
        Unary::TanhTwice,
        Unary::Asinh,
        Unary::Acosh,
        Unary::Atanh,
        Unary::Abs,
        Unary::Floor,
        Unary::Ceil,
        Unary::Round,
        Unary::Trunc,
        Unary::Signum,
        Unary::Fract,
        Unary::Sigmoid,
        Unary::Relu,
        Unary::Square,
        Unary::Cube,
        Unary::InverseSquare,
        Unary::Powi0,
        Unary::Powi1,
    ];

    /// The smooth rules, `abs`, a user's rule and the constant-zero products: the drivers
    /// against each other and against finite differences.
    pub const DRIVERS: &[Unary] = &[
        Unary::Neg,
        Unary::Recip,
        Unary::Cube,
        Unary::InverseSquare,
        Unary::Sqrt,
        Unary::CbrtTimesZero,
        Unary::ExpTwice,
        Unary::Exp2Twice,
        Unary::ExpM1Twice,
        Unary::Ln,
        Unary::Log2,
        Unary::Log10,
        Unary::Ln1p,
        Unary::Sin,
        Unary::Cos,
        Unary::Tan,
        Unary::Asin,
        Unary::Acos,
        Unary::Atan,
        Unary::SinhTwice,
        Unary::CoshTwice,
        Unary::Tanh,
        Unary::Asinh,
        Unary::AcoshNear,
        Unary::Atanh,
        Unary::Abs,
        Unary::UserSigmoid,
        Unary::SquareMinusFract,
    ];

    /// A smaller smooth set and `abs`: tapes of duals against nested duals.
    pub const TAPE: &[Unary] = &[
        Unary::Neg,
        Unary::Recip,
        Unary::Cube,
        Unary::Sqrt,
        Unary::ExpTwice,
        Unary::Ln,
        Unary::Sin,
        Unary::Cos,
        Unary::Tan,
        Unary::Asin,
        Unary::Atan,
        Unary::Tanh,
        Unary::Abs,
        Unary::CbrtShifted,
    ];
}

/// A two-argument instruction, its arguments squashed where the rule needs it (`sp`, `sq` are
/// their sines).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binary {
    /// p + q
    Add,
    /// p − q
    Sub,
    /// p · q
    Mul,
    /// p / (1.5 + sin q)
    Div,
    /// (1.5 + sin p)^(sin q)
    Powf,
    /// log of (1.5 + sin p) to the base (2.5 + sin q)
    Log,
    /// atan2(p, 1.5 + sin q)
    Atan2,
    /// hypot(p, 1 + q²): away from the kink at the origin
    Hypot,
    /// max(p, q)
    Max,
    /// min(p, q)
    Min,
    /// (2 + sin p) % (0.5 + sin² q)
    Rem,
}

impl Binary {
    /// The instruction at `(p, q)`.
    pub fn apply<T: Op>(self, p: T, q: T) -> T {
        let (sp, sq) = (p.sin(), q.sin());
        match self {
            Binary::Add => p + q,
            Binary::Sub => p - q,
            Binary::Mul => p * q,
            Binary::Div => p / (k::<T>(1.5) + sq),
            Binary::Powf => (k::<T>(1.5) + sp).powf(sq),
            Binary::Log => (k::<T>(1.5) + sp).log(k::<T>(2.5) + sq),
            Binary::Atan2 => p.atan2(k::<T>(1.5) + sq),
            Binary::Hypot => p.hypot(k::<T>(1.0) + q * q),
            Binary::Max => p.max(q),
            Binary::Min => p.min(q),
            Binary::Rem => (k::<T>(2.0) + sp) % (k::<T>(0.5) + sq * sq),
        }
    }

    /// Every rule of two arguments.
    pub const ALL: &[Binary] = &[
        Binary::Add,
        Binary::Sub,
        Binary::Mul,
        Binary::Div,
        Binary::Powf,
        Binary::Log,
        Binary::Atan2,
        Binary::Hypot,
        Binary::Max,
        Binary::Min,
        Binary::Rem,
    ];

    /// All but `log` and `%`: tapes of duals against nested duals.
    pub const TAPE: &[Binary] = &[
        Binary::Add,
        Binary::Sub,
        Binary::Mul,
        Binary::Div,
        Binary::Atan2,
        Binary::Hypot,
        Binary::Max,
        Binary::Min,
        Binary::Powf,
    ];
}

/// One instruction; operands index earlier values (the inputs first).
#[derive(Clone, Debug, PartialEq)]
pub enum Instr {
    Unary(Unary, usize),
    Binary(Binary, usize, usize),
    /// `a·b + c` by `mul_add`.
    MulAdd(usize, usize, usize),
    /// The sum of several values (one node on a tape).
    Sum(Vec<usize>),
    /// The dot product of two lists of values (one node on a tape).
    Dot(Vec<usize>, Vec<usize>),
}

impl Instr {
    /// The instruction's value, its operands read from the values `v` before it.
    pub fn apply<T: Op>(&self, v: &[T]) -> T {
        match self {
            &Instr::Unary(op, a) => op.apply(v[a]),
            &Instr::Binary(op, a, b) => op.apply(v[a], v[b]),
            &Instr::MulAdd(a, b, c) => v[a].mul_add(v[b], v[c]),
            Instr::Sum(ix) => ix.iter().map(|&i| v[i]).sum(),
            Instr::Dot(ia, ib) => {
                let a: Vec<T> = ia.iter().map(|&i| v[i]).collect();
                let b: Vec<T> = ib.iter().map(|&i| v[i]).collect();
                T::dot(&a, &b)
            }
        }
    }
}

/// A generated program: `n` inputs, the instructions, and the values it returns.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub n: usize,
    pub instrs: Vec<Instr>,
    pub outputs: Vec<usize>,
}

impl Function for Program {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let v = self.values(x);
        self.outputs.iter().map(|&i| v[i]).collect()
    }
}

impl Program {
    /// Every value the program computes: the inputs, then one per instruction.
    pub fn values<T: Op>(&self, x: &[T]) -> Vec<T> {
        assert_eq!(x.len(), self.n, "a program of {} inputs", self.n);
        let mut v: Vec<T> = x.to_vec();
        for ins in &self.instrs {
            let y = ins.apply(&v);
            v.push(y);
        }
        v
    }

    /// The last value.
    pub fn last<T: Op>(&self, x: &[T]) -> T {
        *self.values(x).last().expect("a program has a value")
    }

    /// Which values the outputs depend on (the outputs included).
    pub fn live(&self) -> Vec<bool> {
        let len = self.n + self.instrs.len();
        let mut live = vec![false; len];
        for &o in &self.outputs {
            live[o] = true;
        }
        for (i, ins) in self.instrs.iter().enumerate().rev() {
            if live[self.n + i] {
                let operands: Vec<usize> = match ins {
                    &Instr::Unary(_, a) => vec![a],
                    &Instr::Binary(_, a, b) => vec![a, b],
                    &Instr::MulAdd(a, b, c) => vec![a, b, c],
                    Instr::Sum(ix) => ix.clone(),
                    Instr::Dot(ia, ib) => ia.iter().chain(ib).copied().collect(),
                };
                for k in operands {
                    live[k] = true;
                }
            }
        }
        live
    }

    /// The program of the first `k` instructions, returning the last of its values.
    pub fn prefix(&self, k: usize) -> Program {
        Program {
            n: self.n,
            instrs: self.instrs[..k].to_vec(),
            outputs: vec![self.n + k - 1],
        }
    }

    /// The first instruction that runs on or near a kink or a jump at `x`, if any: `abs` at 0
    /// (to rounding), `max`/`min` at a tie (to rounding), `%` where the quotient is near a whole
    /// number. There the derivative is a convention and finite differences see something else
    /// (a one-sided or averaged slope), so a finite-difference check skips such points; other
    /// nearby kinks are caught by [`fd_column`](crate::fd_column)'s step sizes disagreeing.
    pub fn kink_at(&self, x: &[f64]) -> Option<usize> {
        let v = self.values(x);
        self.instrs.iter().position(|ins| match *ins {
            // Zero to rounding too: `|cos(acos(0))|` is |6.1e-17|, whose slope is ±0.9 while
            // central differences straddling the kink agree at every step on 0. Nearer than
            // about 4·10⁻⁸ of the step, the three steps agree to the tolerance.
            Instr::Unary(Unary::Abs, a) => v[a].abs() <= 1e-9,
            // A tie within rounding too: `x₁ − (x₁x₂ + x₁)` against `x₂` at x₁ = −1 differ by an
            // ulp, and central differences straddling the kink agree at both steps on the
            // average of the two slopes.
            Instr::Binary(Binary::Max | Binary::Min, a, b) => {
                (v[a] - v[b]).abs() <= 1e-12 * v[a].abs().max(v[b].abs()).max(1.0)
            }
            // A jump of `%` near x too: times a factor that is 0 at x (`x₁·(p % q)` at x₁ = 0),
            // the jump moves f by O(h) across a step that straddles it, and central differences
            // agree on a wrong slope at every step size. A margin of 0.05 in the quotient: a
            // step of 10⁻³ moves it far less here.
            Instr::Binary(Binary::Rem, a, b) => {
                let (p, q) = (2.0 + v[a].sin(), 0.5 + v[b].sin() * v[b].sin());
                (p / q - (p / q).round()).abs() < 0.05 || p % q == 0.0
            }
            _ => false,
        })
    }
}

/// Which values a generated program returns.
#[derive(Clone, Debug)]
pub enum Outputs {
    /// The last value.
    Last,
    /// The last two values.
    LastTwo,
    /// This many values, each one of the last four.
    Recent(RangeInclusive<usize>),
}

/// What programs to generate: how many inputs and instructions, from which rules, with sums
/// and dot products or not, and what they return.
#[derive(Clone, Debug)]
pub struct Shape {
    pub inputs: RangeInclusive<usize>,
    pub instrs: Range<usize>,
    pub unary: &'static [Unary],
    pub binary: &'static [Binary],
    /// Sums and dot products of several values too.
    pub nary: bool,
    /// The first operand of each instruction is one of the last three values (so most of the
    /// program is live); else any earlier value.
    pub recent: bool,
    pub outputs: Outputs,
}

impl Shape {
    /// 1–4 inputs, 1–13 instructions of [`Unary::DRIVERS`] and [`Binary::ALL`], 1–3 outputs
    /// among the last four values: the drivers' tests.
    pub fn drivers() -> Shape {
        Shape {
            inputs: 1..=4,
            instrs: 1..14,
            unary: Unary::DRIVERS,
            binary: Binary::ALL,
            nary: false,
            recent: false,
            outputs: Outputs::Recent(1..=3),
        }
    }
}

/// Programs of the given shape.
pub fn programs(shape: Shape) -> impl Strategy<Value = Program> {
    let raw = (
        0..if shape.nary { 5usize } else { 3 },
        0..shape.unary.len(),
        0..shape.binary.len(),
        prop::collection::vec(any::<u32>(), 6),
    );
    (
        shape.inputs.clone(),
        prop::collection::vec(raw, shape.instrs.clone()),
        prop::collection::vec(any::<u32>(), 3),
    )
        .prop_map(move |(n, raw, outs)| {
            let mut instrs = Vec::with_capacity(raw.len());
            for (i, (kind, u, b, r)) in raw.into_iter().enumerate() {
                let len = (n + i) as u32;
                let at = |j: usize| (r[j] % len) as usize;
                let first = if shape.recent {
                    (len - 1 - r[0] % len.min(3)) as usize
                } else {
                    at(0)
                };
                instrs.push(match kind {
                    0 => Instr::Unary(shape.unary[u], first),
                    1 => Instr::Binary(shape.binary[b], first, at(1)),
                    2 => Instr::MulAdd(first, at(1), at(2)),
                    3 => Instr::Sum((0..1 + r[5] as usize % 4).map(at).collect()),
                    _ => {
                        let m = 1 + r[5] as usize % 3;
                        Instr::Dot(
                            (0..m).map(at).collect(),
                            (0..m).map(|j| at(j + 3)).collect(),
                        )
                    }
                });
            }
            let total = n + instrs.len();
            let outputs = match &shape.outputs {
                Outputs::Last => vec![total - 1],
                Outputs::LastTwo => vec![total - 2, total - 1],
                Outputs::Recent(count) => {
                    let m = count.start() + outs[0] as usize % (count.end() - count.start() + 1);
                    (0..m)
                        .map(|j| total - 1 - outs[j % 3] as usize % total.min(4))
                        .collect()
                }
            };
            Program { n, instrs, outputs }
        })
}

/// An input value: mostly random in [−2, 2], sometimes exactly at a kink or a tie (0, ±1), so
/// that the conventions of `abs`, `max`, `min` and `hypot` are exercised too.
pub fn input() -> impl Strategy<Value = f64> {
    prop_oneof![6 => -2.0..2.0_f64, 1 => Just(0.0), 1 => Just(1.0), 1 => Just(-1.0)]
}

/// A program of the given shape and a point for it.
pub fn program_at(shape: Shape) -> impl Strategy<Value = (Program, Vec<f64>)> {
    programs(shape).prop_flat_map(|p| {
        let n = p.n;
        (Just(p), prop::collection::vec(input(), n))
    })
}

/// The number of generated programs: `PROPTEST_CASES` if set, else `default` (the deep check
/// sets it).
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}
