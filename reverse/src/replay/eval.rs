//! Re-evaluation: one pass over the program in recording order, recomputing every value and
//! writing every partial into the edge the recording gave it, so that the sweeps that follow
//! are the ones a fresh recording would make.

use super::compile::{Compiled, Kernel, Operands};
use super::error::{self, GuardFailure, ReplayError};
use crate::storage::TapeData;
use crate::storage::op_code::{binary, unary};
use crate::storage::program::{Native, Program, Rule, RuleFn};
use crate::storage::program::{dot, fused, sum, write};
use core::any::Any;
use shared_ops::rules::*;
use shared_ops::{Binary, Op, Unary};

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
    // The point being left, to go back to if a guard fails (none can without guards).
    let mut previous = core::mem::take(&mut c.previous);
    previous.clear();
    match c.first_input {
        _ if p.guards.is_empty() => {}
        Some(i) => previous.extend_from_slice(&p.values[i as usize..i as usize + x.len()]),
        None => previous.extend(c.inputs.iter().map(|&i| p.values[i as usize])),
    }
    run(d, &mut p, &c, x);
    // The machine code checks what it can; the first failure is found and named here.
    let held = native_guards(&p).is_some_and(|(held, unchecked)| {
        held && unchecked.iter().all(|&k| {
            let g = &p.guards[k as usize];
            g.outcome(&p) == g.outcome
        })
    });
    let failed = (!held)
        .then(|| {
            p.guards.iter().enumerate().find_map(|(k, g)| {
                let now = g.outcome(&p);
                (now != g.outcome).then(|| error::failure(&p, k, now))
            })
        })
        .flatten();
    d.program = Some(p);
    show(d);
    let mut p = d.program.take().expect("put back above");
    if failed.is_some() {
        run(d, &mut p, &c, &previous);
    }
    c.previous = previous;
    p.derived.put(c);
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
    p.compile(d)?;
    Ok(p.derived.take::<Compiled<T>>().expect("compiled above"))
}

/// The pass itself: group by group, each a loop over its nodes with the kernel inlined.
fn run<T: Op>(d: &mut TapeData<T>, p: &mut Program<T>, c: &Compiled<T>, x: &[T]) {
    let n = p.len();
    match c.first_input {
        Some(i) => p.values[i as usize..i as usize + x.len()].copy_from_slice(x),
        None => {
            for (&i, &v) in c.inputs.iter().zip(x) {
                p.values[i as usize] = v;
            }
        }
    }
    if native(d, p) {
        return;
    }
    let partial = d.partials_mut();
    let Program {
        values,
        rules,
        derived,
        ..
    } = p;
    let values = &mut values[..];
    let args = &derived.get::<Operands>().expect("prepared").args;
    for g in &c.groups {
        let nodes = &c.code[g.start as usize..g.end as usize];
        // The kernels read operands with `get!` and write values and partials with `set!`.
        #[allow(unused_macros)] // by the kernels with operands only
        macro_rules! get {
            ($i:expr) => {
                values[$i]
            };
        }
        macro_rules! set {
            ($s:ident[$i:expr] = $x:expr) => {
                $s[$i] = $x
            };
        }
        // Evaluates `$value` for each node of the group, with `$a`, `$b`, `$e` its operands
        // and first edge, and stores it.
        macro_rules! each {
            (|$a:ident, $b:ident, $e:ident| $value:expr) => {{
                for k in nodes {
                    let ($a, $b, $e, node) = k.parts();
                    let v = $value;
                    set!(values[node] = v);
                }
            }};
        }
        // A two-argument rule whose form is known here: the unused partials fold away.
        macro_rules! rule {
            ($rule:ident, $($slot:ident),*) => {
                each!(|a, b, e| {
                    let (v, da, db) = $rule.eval(get!(a), get!(b));
                    let _ = (da, db, e);
                    rule!(@write e, da, db; $($slot),*);
                    v
                })
            };
            (@write $e:ident, $da:ident, $db:ident; ) => {};
            (@write $e:ident, $da:ident, $db:ident; first) => { set!(partial[$e] = $da) };
            (@write $e:ident, $da:ident, $db:ident; second) => { set!(partial[$e] = $db) };
            // Both edges on one node: `x · x`.
            (@write $e:ident, $da:ident, $db:ident; same) => { set!(partial[$e] = $da + $db) };
            (@write $e:ident, $da:ident, $db:ident; first, second) => {{
                set!(partial[$e] = $da);
                set!(partial[$e + 1] = $db);
            }};
        }
        let (op, form) = (g.op, g.form);
        match g.kernel {
            Kernel::Input => unreachable!("inputs are written before the groups"),
            Kernel::Add => rule!(Add,),
            Kernel::Sub => rule!(Sub,),
            Kernel::AddSame => rule!(Add, same),
            Kernel::SubSame => rule!(Sub, same),
            Kernel::Neg => each!(|a, _b, _e| Neg.eval(get!(a)).0),
            Kernel::MulFirst => rule!(Mul, first),
            Kernel::MulSecond => rule!(Mul, second),
            Kernel::MulSame => rule!(Mul, same),
            Kernel::MulBoth => rule!(Mul, first, second),
            Kernel::DivFirst => rule!(Div, first),
            Kernel::DivSecond => rule!(Div, second),
            Kernel::DivBoth => rule!(Div, first, second),
            Kernel::Unary => each!(|a, b, e| {
                let (v, dv) = unary(op, b as u32, get!(a));
                write(partial, e, form, dv, dv);
                v
            }),
            Kernel::Binary => each!(|a, b, e| {
                let (v, da, db) = binary(op, get!(a), get!(b));
                write(partial, e, form, da, db);
                v
            }),
            Kernel::Sum => each!(|a, b, _e| sum(values, &args[a..a + b])),
            Kernel::Dot => each!(|a, b, e| dot(values, &args[a..a + b], n, partial, e)),
            Kernel::MulAdd => each!(|a, _b, e| fused(values, &args[a..a + 3], n, partial, e)),
            Kernel::Custom => match &rules[g.rule as usize].eval {
                RuleFn::Unary(f) => each!(|a, _b, e| {
                    let (v, dv) = f(get!(a));
                    write(partial, e, form, dv, dv);
                    v
                }),
                RuleFn::Binary(f) => each!(|a, b, e| {
                    let (v, da, db) = f(get!(a), get!(b));
                    write(partial, e, form, da, db);
                    v
                }),
            },
        }
    }
}

/// The pass by the recording's machine code, if it was compiled (see `jit`): false if not.
fn native<T: Op>(d: &mut TapeData<T>, p: &mut Program<T>) -> bool {
    let Program {
        derived,
        values,
        rules,
        forms,
        ..
    } = p;
    let Some(Native(m)) = derived.get::<Native>() else {
        return false;
    };
    // Only a recording of `f64` is compiled.
    let d = (d as &mut dyn Any).downcast_mut::<TapeData<f64>>();
    let values = (values as &mut dyn Any).downcast_mut::<Vec<f64>>();
    let rules = (rules as &dyn Any).downcast_ref::<Vec<Rule<f64>>>();
    let (Some(d), Some(values), Some(rules)) = (d, values, rules) else {
        unreachable!("machine code for a recording not of f64");
    };
    let args = &derived.get::<Operands>().expect("prepared").args;
    m.forward(values, d.partials_mut(), args, forms, rules);
    true
}

/// The guards' check by the recording's machine code, if it was compiled: whether those it
/// checks hold, and those it leaves unchecked.
fn native_guards<T: Op>(p: &Program<T>) -> Option<(bool, &[u32])> {
    let Native(m) = p.derived.get::<Native>()?;
    let values = (&p.values as &dyn Any).downcast_ref::<Vec<f64>>()?;
    Some((m.guards_hold(values), m.unchecked()))
}
