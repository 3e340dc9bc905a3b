//! Guards compiled in: a gradient's code checks the recording's decisions itself, after its
//! forward pass.
//!
//! Each guard's outcome is recomputed from the new values and compared with the recorded one,
//! as re-evaluation does it. A comparison (every operator), the winner of `max` and `min`, and
//! the side of `abs` and `relu` compile to a few instructions each, and a run of guards of one
//! check whose operands step evenly (a loop's guards, recorded turn by turn) to a loop that
//! reads the recorded outcomes from an array. The other guards (the tests of `Float`, the
//! integers of `floor`, `%`, …, `hypot`'s corner) are checked by Rust after the code. The code
//! says only whether every guard held; where one failed, re-evaluation finds and names it.

use super::ir::{self, Turn};
use crate::storage::guard::Kind;
use crate::storage::op_code::OpCode;
use crate::storage::program::{CONST, Program};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{Block, InstBuilder, MemFlagsData, Value, types};
use cranelift_frontend::FunctionBuilder;
use shared_ops::Compare;

/// The fewest guards compiled as a loop.
const FEWEST_TURNS: usize = 3;

/// The most guard runs compiled (about 20 instructions each); past it, Rust checks them all.
const MOST_RUNS: usize = 4096;

/// What the code keeps of the guards: their recorded outcomes, which its checks read, and the
/// guards it leaves to Rust (their indices).
pub(super) struct Kept {
    pub outcomes: Vec<u64>,
    pub rest: Vec<u32>,
}

impl Kept {
    pub fn of(p: &Program<f64>, rest: Vec<u32>) -> Kept {
        Kept {
            outcomes: p.guards.iter().map(|g| g.outcome).collect(),
            rest,
        }
    }
}

/// What a compiled guard computes from its operands `x`, `y`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Check {
    /// `x.partial_cmp(y)` answered as `Compare::answer` does.
    Compare(Compare),
    /// The piece of `max`/`min`: the ordering of `x` and `y` and which is NaN.
    Winner,
    /// The piece of `abs`: the ordering of `x` and 0.
    Sign,
    /// The piece of `relu`: `x > 0`.
    Positive,
}

/// Guards `first..first + turns` of one check: guard `first + k` reads the values at
/// `at + k · step` (indices into the values, the constants after the nodes). In a nest's row
/// `o`, everything moves on by `o · row` and the guards by `o` times the nest's stride.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Run {
    check: Check,
    first: usize,
    turns: usize,
    at: [i64; 2],
    step: [i64; 2],
    row: [i64; 2],
}

/// Runs repeated `rows` times, each row `stride` guards after the last (a loop of loops, as a
/// mixture's points record their guards); one row for runs that do not repeat.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Nest {
    rows: usize,
    stride: usize,
    body: Vec<Run>,
}

/// The longest body of runs looked for in a nest.
const LONGEST_BODY: usize = 4;

/// The compiled guards' nests, and the guards left to Rust (their indices).
pub(super) fn plan(p: &Program<f64>, n: usize) -> (Vec<Nest>, Vec<u32>) {
    let slot = |r: u32| {
        if r & CONST != 0 {
            (r & !CONST) as i64 + n as i64
        } else {
            r as i64
        }
    };
    let (mut runs, mut rest): (Vec<Run>, Vec<u32>) = (Vec::new(), Vec::new());
    for (g, guard) in p.guards.iter().enumerate() {
        let compiled = match guard.kind {
            Kind::Compare { a, b, how } => Some((Check::Compare(how), [slot(a), slot(b)])),
            Kind::Piece { node } => {
                let [a, b] = p.operands[node as usize];
                match p.ops[node as usize] {
                    OpCode::Max | OpCode::Min => Some((Check::Winner, [slot(a), slot(b)])),
                    OpCode::Abs => Some((Check::Sign, [slot(a); 2])),
                    OpCode::Relu => Some((Check::Positive, [slot(a); 2])),
                    _ => None,
                }
            }
            Kind::Test { .. } => None,
        };
        let Some((check, at)) = compiled else {
            rest.push(g as u32);
            continue;
        };
        let single = Run {
            check,
            first: g,
            turns: 1,
            at,
            step: [0; 2],
            row: [0; 2],
        };
        let Some(r) = runs
            .last_mut()
            .filter(|r| r.check == check && r.first + r.turns == g)
        else {
            runs.push(single);
            continue;
        };
        let step = [at[0] - r.at[0], at[1] - r.at[1]];
        if r.turns == 1 {
            (r.step, r.turns) = (step, 2);
        } else if (0..2).all(|x| at[x] == r.at[x] + r.turns as i64 * r.step[x]) {
            r.turns += 1;
        } else if r.turns == 2 {
            // The pair's second guard may begin a run with this one (a fold's first step is
            // often unlike the rest).
            let second = [0, 1].map(|x| r.at[x] + r.step[x]);
            (r.turns, r.step) = (1, [0; 2]);
            runs.push(Run {
                first: g - 1,
                turns: 2,
                at: second,
                step: [at[0] - second[0], at[1] - second[1]],
                ..single
            });
        } else {
            runs.push(single);
        }
    }
    // A run too short to be a loop is straight code, guard by guard.
    let mut short = Vec::with_capacity(runs.len());
    for r in runs {
        if r.turns >= FEWEST_TURNS || r.turns == 1 {
            short.push(r);
        } else {
            short.extend((0..r.turns).map(|k| Run {
                first: r.first + k,
                turns: 1,
                at: [0, 1].map(|x| r.at[x] + k as i64 * r.step[x]),
                step: [0; 2],
                ..r.clone()
            }));
        }
    }
    let nests = nests(&short);
    if nests.len() > MOST_RUNS {
        return (Vec::new(), (0..p.guards.len() as u32).collect());
    }
    (nests, rest)
}

/// `runs` as nests: from each run on, the body of up to [`LONGEST_BODY`] runs repeated most
/// often, each repetition's runs alike (check, turns, steps) and moved on by one step per run
/// (operands) and one stride (guards).
fn nests(runs: &[Run]) -> Vec<Nest> {
    let alike = |a: &Run, b: &Run| (a.check, a.turns, a.step) == (b.check, b.turns, b.step);
    let delta = |a: &Run, b: &Run| [b.at[0] - a.at[0], b.at[1] - a.at[1]];
    let mut out = Vec::new();
    let mut i = 0;
    while i < runs.len() {
        let mut best = (1, 1);
        for len in 1..=LONGEST_BODY.min((runs.len() - i) / 2) {
            let body = &runs[i..i + len];
            let next = &runs[i + len..i + 2 * len];
            let stride = next[0].first - body[0].first;
            if !body
                .iter()
                .zip(next)
                .all(|(a, b)| alike(a, b) && b.first - a.first == stride)
            {
                continue;
            }
            let rows_step: Vec<[i64; 2]> =
                body.iter().zip(next).map(|(a, b)| delta(a, b)).collect();
            let mut rows = 2;
            while i + (rows + 1) * len <= runs.len() {
                let row = &runs[i + rows * len..i + (rows + 1) * len];
                let fits = body.iter().zip(row).zip(&rows_step).all(|((a, b), d)| {
                    alike(a, b)
                        && b.first == a.first + rows * stride
                        && (0..2).all(|x| b.at[x] == a.at[x] + rows as i64 * d[x])
                });
                if !fits {
                    break;
                }
                rows += 1;
            }
            if rows * len > best.0 * best.1 {
                best = (rows, len);
            }
        }
        let (rows, len) = best;
        let body: Vec<Run> = (0..len)
            .map(|j| Run {
                row: if rows > 1 {
                    delta(&runs[i + j], &runs[i + len + j])
                } else {
                    [0; 2]
                },
                ..runs[i + j].clone()
            })
            .collect();
        let stride = if rows > 1 {
            runs[i + len].first - runs[i].first
        } else {
            0
        };
        out.push(Nest { rows, stride, body });
        i += rows * len;
    }
    out
}

/// The code of `nests`: jumps to `failed` at the first guard whose outcome differs from the
/// recorded one in `outcomes` (a pointer to one `u64` per guard).
pub(super) fn emit(
    b: &mut FunctionBuilder,
    values: Value,
    outcomes: Value,
    nests: &[Nest],
    failed: Block,
) {
    for nest in nests {
        let row = |b: &mut FunctionBuilder, outer: Option<Value>| {
            for r in &nest.body {
                let check = |b: &mut FunctionBuilder, t: Turn| {
                    let x = ir::load(b, values, t, r.at[0], (r.step[0], r.row[0]));
                    let y = ir::load(b, values, t, r.at[1], (r.step[1], r.row[1]));
                    let got = outcome(b, r.check, x, y);
                    let g = ir::index(b, t, r.first as i64, (1, nest.stride as i64));
                    let at = b.ins().imul_imm_s(g, 8);
                    let at = b.ins().iadd(outcomes, at);
                    let recorded = b.ins().load(types::I64, MemFlagsData::trusted(), at, 0);
                    let differs = b.ins().icmp(IntCC::NotEqual, got, recorded);
                    let held = b.create_block();
                    b.set_cold_block(failed);
                    b.ins().brif(differs, failed, &[], held, &[]);
                    b.switch_to_block(held);
                    b.seal_block(held);
                };
                if r.turns == 1 {
                    check(b, Turn { k: None, outer });
                } else {
                    ir::turns(b, r.turns, false, &[], |b, k, _| {
                        check(b, Turn { k: Some(k), outer });
                        Vec::new()
                    });
                }
            }
        };
        if nest.rows == 1 {
            row(b, None);
        } else {
            ir::turns(b, nest.rows, false, &[], |b, o, _| {
                row(b, Some(o));
                Vec::new()
            });
        }
    }
}

/// The outcome of `check` at `x`, `y`, as `storage::guard` computes it.
fn outcome(b: &mut FunctionBuilder, check: Check, x: Value, y: Value) -> Value {
    let int = |b: &mut FunctionBuilder, c: Value| b.ins().uextend(types::I64, c);
    match check {
        Check::Compare(Compare::Order) => order(b, x, y),
        Check::Compare(how) => {
            let cc = match how {
                Compare::Order => unreachable!("matched above"),
                Compare::Eq => FloatCC::Equal,
                // `!=` holds for a NaN operand: unordered or not equal.
                Compare::Ne => FloatCC::NotEqual,
                Compare::Lt => FloatCC::LessThan,
                Compare::Le => FloatCC::LessThanOrEqual,
                Compare::Gt => FloatCC::GreaterThan,
                Compare::Ge => FloatCC::GreaterThanOrEqual,
            };
            let c = b.ins().fcmp(cc, x, y);
            int(b, c)
        }
        Check::Winner => {
            let o = order(b, x, y);
            let x_nan = b.ins().fcmp(FloatCC::Unordered, x, x);
            let y_nan = b.ins().fcmp(FloatCC::Unordered, y, y);
            let (x_nan, y_nan) = (int(b, x_nan), int(b, y_nan));
            let x_nan = b.ins().ishl_imm_u(x_nan, 2);
            let y_nan = b.ins().ishl_imm_u(y_nan, 3);
            let o = b.ins().bor(o, x_nan);
            b.ins().bor(o, y_nan)
        }
        Check::Sign => {
            let zero = b.ins().f64const(0.0);
            order(b, x, zero)
        }
        Check::Positive => {
            let zero = b.ins().f64const(0.0);
            let c = b.ins().fcmp(FloatCC::GreaterThan, x, zero);
            int(b, c)
        }
    }
}

/// `x.partial_cmp(y)` as a number: 0 `<`, 1 `=`, 2 `>`, 3 unordered.
fn order(b: &mut FunctionBuilder, x: Value, y: Value) -> Value {
    let lt = b.ins().fcmp(FloatCC::LessThan, x, y);
    let eq = b.ins().fcmp(FloatCC::Equal, x, y);
    let gt = b.ins().fcmp(FloatCC::GreaterThan, x, y);
    let [zero, one, two, three] = [0, 1, 2, 3].map(|c| b.ins().iconst(types::I64, c));
    let o = b.ins().select(gt, two, three);
    let o = b.ins().select(eq, one, o);
    b.ins().select(lt, zero, o)
}

/// Checks that every index the code of `nests` computes lies within `values` values and
/// `guards` outcomes: the invariant of the machine code, which reads without bounds checks.
/// The indices are linear in the turn and the row, so the first and last of each bound them.
pub(super) fn in_bounds(nests: &[Nest], values: usize, guards: usize) -> Result<(), String> {
    for nest in nests {
        let last_row = nest.rows as i64 - 1;
        for r in &nest.body {
            let last = r.turns as i64 - 1;
            let within = |x: usize| {
                [0, last].iter().all(|&k| {
                    [0, last_row].iter().all(|&o| {
                        let i = r.at[x] + k * r.step[x] + o * r.row[x];
                        i >= 0 && i < values as i64
                    })
                })
            };
            let end = r.first as i64 + last_row * nest.stride as i64 + r.turns as i64;
            if !(within(0) && within(1) && end <= guards as i64) {
                return Err(format!(
                    "guards from {} read an index out of bounds ({r:?} in {} rows of stride \
                     {}, {values} values, {guards} guards)",
                    r.first, nest.rows, nest.stride
                ));
            }
        }
    }
    Ok(())
}

/// `nests` reading the values through `map`, which maps a line of value indices over its
/// turns (of the run, of the rows) to another (a gradient's slots); `None` where some line
/// does not map.
pub(super) fn mapped(
    nests: &[Nest],
    map: impl Fn((i64, (i64, i64)), usize, usize) -> Option<(i64, (i64, i64))>,
) -> Option<Vec<Nest>> {
    let mut out = nests.to_vec();
    for nest in &mut out {
        for r in &mut nest.body {
            for x in 0..2 {
                let (at, (step, row)) = map((r.at[x], (r.step[x], r.row[x])), r.turns, nest.rows)?;
                (r.at[x], r.step[x], r.row[x]) = (at, step, row);
            }
        }
    }
    Some(out)
}

/// The guards `nests` check.
pub(super) fn count(nests: &[Nest]) -> usize {
    nests
        .iter()
        .map(|nest| nest.rows * nest.body.iter().map(|r| r.turns).sum::<usize>())
        .sum()
}

/// The estimated instructions of `nests`, for the code's size.
pub(super) fn size(nests: &[Nest]) -> usize {
    nests.iter().map(|nest| 8 + 24 * nest.body.len()).sum()
}

#[cfg(test)]
mod tests {
    use crate::{Float, Tape, Var};

    /// The guards' plan of what `record` records on inputs `x`.
    fn planned(x: &[f64], record: impl Fn(&[Var])) -> (Vec<super::Nest>, Vec<u32>) {
        let tape = Tape::replayable();
        record(&tape.vars(x));
        let rec = tape.finish();
        rec.with_data(|d| {
            let p = d.program.as_ref().unwrap();
            super::plan(p, p.len())
        })
    }

    fn sines(n: usize) -> Vec<f64> {
        (0..n).map(|i| (i as f64 * 0.9).sin()).collect()
    }

    /// Comparisons of neighbours are one run whose operands step by one, compiled as a loop;
    /// a test of `Float` is left to Rust.
    #[test]
    fn a_loop_of_comparisons_is_one_run_and_a_test_is_left_to_rust() {
        let (nests, rest) = planned(&[0.1, 0.5, 0.2, 0.9, 0.3, 0.4], |xs| {
            let rising: Vec<bool> = xs.windows(2).map(|w| w[0] < w[1]).collect();
            assert_eq!(rising, [true, false, true, false, true]);
            assert!(!xs[0].is_nan());
        });
        assert_eq!(nests.len(), 1);
        assert_eq!((nests[0].rows, nests[0].body.len()), (1, 1));
        let r = &nests[0].body[0];
        assert_eq!((r.first, r.turns, r.at, r.step), (0, 5, [0, 1], [1, 1]));
        assert_eq!(rest, [5]);
    }

    /// Rows of comparisons (a loop of loops): one nest of rows, each row a loop.
    #[test]
    fn a_loop_of_loops_of_comparisons_is_one_nest() {
        let (nests, rest) = planned(&sines(24), |xs| {
            for r in 0..4 {
                for k in 0..5 {
                    let _ = xs[r * 6 + k] < xs[r * 6 + k + 1];
                }
            }
        });
        assert!(rest.is_empty());
        assert_eq!(nests.len(), 1);
        assert_eq!(
            (nests[0].rows, nests[0].stride, nests[0].body.len()),
            (4, 5, 1)
        );
        let r = &nests[0].body[0];
        assert_eq!((r.turns, r.step, r.row), (5, [1, 1], [6, 6]));
        assert_eq!(super::count(&nests), 20);
    }

    /// A running `max` per row, as a mixture's log-sum-exp records it: its first guard (two
    /// inputs) unlike the rest (the last maximum and an input), so each row is a guard and a
    /// loop, and the rows one nest of both.
    #[test]
    fn rows_of_running_maxima_are_one_nest_of_two_runs() {
        let (nests, rest) = planned(&sines(24), |xs| {
            for r in 0..4 {
                let row = &xs[r * 6..r * 6 + 6];
                let _ = row[2..].iter().fold(row[0].max(row[1]), |m, &v| m.max(v));
            }
        });
        assert!(rest.is_empty());
        assert_eq!(nests.len(), 1, "{nests:?}");
        assert_eq!((nests[0].rows, nests[0].stride), (4, 5));
        let turns: Vec<usize> = nests[0].body.iter().map(|r| r.turns).collect();
        assert_eq!(turns, [1, 4]);
        assert_eq!(super::count(&nests), 20);
    }
}
