//! Re-evaluation: one pass over the program in recording order, recomputing every value and
//! writing every partial into the edge the recording gave it, so that the sweeps that follow
//! are the ones a fresh recording would make.

use super::guard::{self, GuardFailure};
use super::op_code::{OpCode, binary, unary};
use super::program::{CONST, Form, Program, RuleFn};
use crate::tape::storage::{TapeData, UNIT};
use shared_ops::rules::*;
use shared_ops::{Binary, Op, Unary};

/// Why a recording cannot be evaluated again at a new point.
///
/// ```
/// let tape = reverse::Tape::replayable();
/// let x = tape.vars(&[1.0, 2.0]);
/// let _ = x[0] * x[1];
/// let mut rec = tape.finish();
/// let err = rec.reevaluate(&[1.0]).unwrap_err();
/// assert_eq!(err, reverse::ReplayError::InputLength { expected: 2, found: 1 });
/// assert!(err.to_string().contains("2 inputs"));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum ReplayError {
    /// The recording kept no program: it was made by [`Tape::new`](crate::Tape::new), not
    /// [`Tape::replayable`](crate::Tape::replayable) or [`Tape::traced`](crate::Tape::traced).
    NotReplayable,
    /// The new point has another number of inputs than the recording.
    InputLength {
        /// Inputs recorded.
        expected: usize,
        /// Values given.
        found: usize,
    },
    /// A node of [`Var::from_partials`](crate::Var::from_partials): its partials were given,
    /// not computed by a rule, so they cannot be computed again.
    Opaque {
        /// The node.
        node: u32,
    },
    /// A decision the recording depended on goes the other way at the new point: the function
    /// would run other operations there. The recording is left at its previous point.
    Guard(GuardFailure),
}

impl core::fmt::Display for ReplayError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "re-evaluation at a new point: ")?;
        match self {
            ReplayError::NotReplayable => write!(
                f,
                "the recording keeps no program; record on Tape::replayable() (or \
                 Tape::traced()) instead of Tape::new()"
            ),
            ReplayError::InputLength { expected, found } => write!(
                f,
                "the recording has {expected} inputs but {found} values were given"
            ),
            ReplayError::Opaque { node } => write!(
                f,
                "node {node} was made by Var::from_partials, whose partials cannot be computed \
                 again; record afresh"
            ),
            ReplayError::Guard(g) => write!(f, "{g}; record afresh"),
        }
    }
}

impl std::error::Error for ReplayError {}

/// What evaluating a node takes: the common arithmetic with its form has a kernel of its own
/// (one dispatch per node, the rule inlined); other rules go through their code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Kernel {
    Input,
    Sum,
    Dot,
    MulAdd,
    Custom,
    /// A built-in one-argument rule, found by its code.
    Unary,
    /// A built-in two-argument rule, found by its code.
    Binary,
    Add,
    Sub,
    AddSame,
    SubSame,
    Neg,
    MulFirst,
    MulSecond,
    MulSame,
    MulBoth,
    DivFirst,
    DivSecond,
    DivBoth,
}

impl Kernel {
    fn of(op: OpCode, form: Form) -> Kernel {
        use {Form as F, OpCode as O};
        match (op, form) {
            (O::Input, _) => Kernel::Input,
            (O::Sum, _) => Kernel::Sum,
            (O::Dot, _) => Kernel::Dot,
            (O::MulAdd, _) => Kernel::MulAdd,
            (O::Custom, _) => Kernel::Custom,
            (O::Add, F::Value) => Kernel::Add,
            (O::Sub, F::Value) => Kernel::Sub,
            (O::Add, F::Same) => Kernel::AddSame,
            (O::Sub, F::Same) => Kernel::SubSame,
            (O::Neg, _) => Kernel::Neg,
            (O::Mul, F::First) => Kernel::MulFirst,
            (O::Mul, F::Second) => Kernel::MulSecond,
            (O::Mul, F::Same) => Kernel::MulSame,
            (O::Mul, F::Both) => Kernel::MulBoth,
            (O::Div, F::First) => Kernel::DivFirst,
            (O::Div, F::Second) => Kernel::DivSecond,
            (O::Div, F::Both) => Kernel::DivBoth,
            (op, _) if op.is_unary() => Kernel::Unary,
            _ => Kernel::Binary,
        }
    }
}

/// One node, ready to evaluate: operands are indices into the program's `values`, where the
/// constants follow the nodes; `e` is where its weighted edges start.
#[derive(Clone, Copy, Debug)]
struct Code {
    kernel: Kernel,
    op: OpCode,
    form: Form,
    a: u32,
    b: u32,
    e: u32,
}

/// The program prepared for re-evaluation.
#[derive(Clone, Debug, Default)]
pub(crate) struct Compiled<T> {
    code: Vec<Code>,
    args: Vec<u32>,
    /// The node of each input.
    inputs: Vec<u32>,
    /// The point being left, to go back to after a failed guard.
    previous: Vec<T>,
}

/// An operand as an index into `values` with the constants after the `n` nodes.
fn slot(r: u32, n: usize) -> u32 {
    if r & CONST != 0 {
        (r & !CONST) + n as u32
    } else {
        r
    }
}

impl<T: Op> Program<T> {
    /// Prepares the re-evaluation (once per recording): the operands become single indices and
    /// the constants move behind the nodes' values.
    fn compile(&mut self, starts: &[u32]) -> Result<(), ReplayError> {
        if self.compiled.is_some() {
            return Ok(());
        }
        let n = self.len();
        if let Some(i) = self.forms.iter().position(|&f| f == Form::Opaque) {
            return Err(ReplayError::Opaque { node: i as u32 });
        }
        let code = (0..n)
            .map(|i| {
                let (op, form, [a, b]) = (self.ops[i], self.forms[i], self.operands[i]);
                let (a, b) = match form {
                    Form::Input | Form::Many => (a, b),
                    _ if op == OpCode::Powi => (slot(a, n), b),
                    _ => (slot(a, n), slot(b, n)),
                };
                let e = starts[i] & !UNIT;
                Code {
                    kernel: Kernel::of(op, form),
                    op,
                    form,
                    a,
                    b,
                    e,
                }
            })
            .collect();
        let args = self.args.iter().map(|&r| slot(r, n)).collect();
        let inputs = (0..n as u32)
            .filter(|&i| self.forms[i as usize] == Form::Input)
            .collect();
        self.values.extend_from_slice(&self.consts);
        self.compiled = Some(Compiled {
            code,
            args,
            inputs,
            previous: Vec::new(),
        });
        Ok(())
    }
}

/// Re-evaluates the recording `d` at `x`: values and partials, then the guards. On a failed
/// guard, evaluates again at the previous point, so the recording stays consistent.
pub(crate) fn reevaluate<T: Op>(d: &mut TapeData<T>, x: &[T]) -> Result<(), ReplayError> {
    match reevaluate_showing(d, x, &mut |_| {})? {
        None => Ok(()),
        Some(f) => Err(ReplayError::Guard(f)),
    }
}

/// [`reevaluate`], letting `show` see the recording at `x` (a trace of the re-evaluation)
/// before a failed guard puts it back; returns the failure, if any.
pub(crate) fn reevaluate_showing<T: Op>(
    d: &mut TapeData<T>,
    x: &[T],
    show: &mut dyn FnMut(&TapeData<T>),
) -> Result<Option<GuardFailure>, ReplayError> {
    let Some(mut p) = d.program.take() else {
        return Err(ReplayError::NotReplayable);
    };
    let mut c = match prepare(d, &mut p, x) {
        Ok(c) => c,
        Err(e) => {
            d.program = Some(p);
            return Err(e);
        }
    };
    let mut previous = core::mem::take(&mut c.previous);
    previous.clear();
    previous.extend(c.inputs.iter().map(|&i| p.values[i as usize]));
    run(d, &mut p, &c, x);
    let failed = p.guards.iter().enumerate().find_map(|(k, g)| {
        let now = g.outcome(&p);
        (now != g.outcome).then(|| guard::failure(&p, k, now))
    });
    d.program = Some(p);
    show(d);
    let mut p = d.program.take().expect("put back above");
    if failed.is_some() {
        run(d, &mut p, &c, &previous);
    }
    c.previous = previous;
    p.compiled = Some(c);
    d.program = Some(p);
    Ok(failed)
}

/// Checks the number of inputs and takes the compiled program out (compiling it first).
fn prepare<T: Op>(
    d: &TapeData<T>,
    p: &mut Program<T>,
    x: &[T],
) -> Result<Compiled<T>, ReplayError> {
    let expected = p.inputs as usize;
    if x.len() != expected {
        return Err(ReplayError::InputLength {
            expected,
            found: x.len(),
        });
    }
    p.compile(d.starts())?;
    Ok(p.compiled.take().expect("compiled above"))
}

/// The pass itself: every node in recording order.
fn run<T: Op>(d: &mut TapeData<T>, p: &mut Program<T>, c: &Compiled<T>, x: &[T]) {
    let n = c.code.len();
    let partial = d.partials_mut();
    let values = &mut p.values[..];
    let mut rules = p.rules.iter();
    for (i, k) in c.code.iter().enumerate() {
        let e = k.e as usize;
        let (a, b) = (k.a as usize, k.b as usize);
        // A two-argument rule whose form is known here: the unused partials fold away.
        macro_rules! rule {
            ($rule:ident, $($slot:ident),*) => {{
                let (v, da, db) = $rule.eval(values[a], values[b]);
                let _ = (da, db);
                rule!(@write e, da, db; $($slot),*);
                v
            }};
            (@write $e:ident, $da:ident, $db:ident; ) => {};
            (@write $e:ident, $da:ident, $db:ident; first) => { partial[$e] = $da };
            (@write $e:ident, $da:ident, $db:ident; second) => { partial[$e] = $db };
            (@write $e:ident, $da:ident, $db:ident; same) => { partial[$e] = $da + $db };
            (@write $e:ident, $da:ident, $db:ident; first, second) => {{
                partial[$e] = $da;
                partial[$e + 1] = $db;
            }};
        }
        let v = match k.kernel {
            Kernel::Input => x[a],
            Kernel::Add => rule!(Add,),
            Kernel::Sub => rule!(Sub,),
            Kernel::AddSame => rule!(Add, same),
            Kernel::SubSame => rule!(Sub, same),
            Kernel::Neg => Neg.eval(values[a]).0,
            Kernel::MulFirst => rule!(Mul, first),
            Kernel::MulSecond => rule!(Mul, second),
            Kernel::MulSame => rule!(Mul, same),
            Kernel::MulBoth => rule!(Mul, first, second),
            Kernel::DivFirst => rule!(Div, first),
            Kernel::DivSecond => rule!(Div, second),
            Kernel::DivBoth => rule!(Div, first, second),
            Kernel::Unary => {
                let (v, dv) = unary(k.op, k.b, values[a]);
                write(partial, e, k.form, dv, dv);
                v
            }
            Kernel::Binary => {
                let (v, da, db) = binary(k.op, values[a], values[b]);
                write(partial, e, k.form, da, db);
                v
            }
            Kernel::Sum => {
                let args = &c.args[a..a + b];
                let mut s = values[args[0] as usize];
                for &r in &args[1..] {
                    s += values[r as usize];
                }
                s
            }
            Kernel::Dot => {
                let args = &c.args[a..a + b];
                let mut s = T::zero();
                let mut e = e;
                for (j, pair) in args.chunks_exact(2).enumerate() {
                    let (u, w) = (values[pair[0] as usize], values[pair[1] as usize]);
                    if j == 0 {
                        s = u * w;
                    } else {
                        s += u * w;
                    }
                    // An edge per variable operand (constants come after the n nodes).
                    for (r, partial_value) in [(pair[0], w), (pair[1], u)] {
                        if (r as usize) < n {
                            partial[e] = partial_value;
                            e += 1;
                        }
                    }
                }
                s
            }
            Kernel::MulAdd => {
                let args = &c.args[a..a + b];
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
            Kernel::Custom => match rules.next().map(|r| &r.eval) {
                Some(RuleFn::Unary(f)) => {
                    let (v, dv) = f(values[a]);
                    write(partial, e, k.form, dv, dv);
                    v
                }
                Some(RuleFn::Binary(f)) => {
                    let (v, da, db) = f(values[a], values[b]);
                    write(partial, e, k.form, da, db);
                    v
                }
                None => unreachable!("a custom node without its rule"),
            },
        };
        values[i] = v;
    }
}

/// Writes a node's partials where its form says.
#[inline(always)]
fn write<T: Op>(partial: &mut [T], e: usize, form: Form, da: T, db: T) {
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
