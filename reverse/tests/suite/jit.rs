//! Compiled recordings (feature `jit`) against the interpreter, bit for bit: every node's value
//! and every node's adjoint (of scalar sweeps and of a vector sweep), on generated programs (every rule of the table, user rules,
//! kinks whose guards flip, sums and dot products) and on generated loops (a random body
//! repeated, its turns chained, compiled as loops), at the recorded point and at new ones,
//! where a guard may fail and must fail alike.

use proptest::prelude::*;
use reverse::jit::RunError;
use reverse::{Recording, ReplayError, Tape, Var};
use shared_ops::Op;
use test_support::programs::{Binary, Instr, Program, Shape, Unary, cases, programs};

/// The bits of each number, every NaN as one (Rust leaves a NaN's sign and payload
/// unspecified).
fn bits(v: impl IntoIterator<Item = f64>) -> Vec<u64> {
    v.into_iter()
        .map(|x| if x.is_nan() { f64::NAN } else { x }.to_bits())
        .collect()
}

/// A recording of `record` at `x` and the vars it returns (every value, outputs last).
fn recording(x: &[f64], record: &dyn Fn(&[Var]) -> Vec<Var>) -> (Recording, Vec<Var>, Vec<Var>) {
    let tape = Tape::replayable();
    let xs = tape.vars(x);
    let vs = record(&xs);
    (tape.finish(), xs, vs)
}

/// What a recording gives at its current point: every value, and the adjoints of every node
/// for each of `outputs` seeded alone and for all of them at once.
fn state(rec: &Recording, vs: &[Var], outputs: &[Var]) -> Vec<Vec<u64>> {
    let mut out = vec![bits(vs.iter().map(|&v| rec.value(v)))];
    for &y in outputs {
        out.push(bits(rec.gradient(y).as_slice().iter().copied()));
    }
    let all: Vec<(Var, f64)> = outputs
        .iter()
        .zip([1.0, -0.5, 2.0])
        .map(|(&y, s)| (y, s))
        .collect();
    out.push(bits(rec.sweep(&all).as_slice().iter().copied()));
    // A vector sweep of four lanes: the first two outputs alone, then all of them weighted,
    // and none (a vector of two lanes half zero).
    let lanes: Vec<(Var, [f64; 4])> = outputs
        .iter()
        .enumerate()
        .map(|(i, &y)| {
            let mut s = [0.0; 4];
            if i < 2 {
                s[i] = 1.0;
            }
            s[2] = [1.0, -0.5, 2.0][i.min(2)];
            (y, s)
        })
        .collect();
    let adj = rec.sweep_vec(&lanes);
    out.push(bits(vs.iter().flat_map(|&v| adj.wrt(v))));
    out
}

/// Records `record` at `x` twice, compiles one recording, and checks that both give the same
/// bits at `x` and at each point of `points` (and the same error where a guard fails).
fn compiled_agrees(
    x: &[f64],
    points: &[Vec<f64>],
    record: &dyn Fn(&[Var]) -> Vec<Var>,
    outputs: usize,
) -> Result<reverse::jit::CodeStats, TestCaseError> {
    let (mut interpreted, _, vs) = recording(x, record);
    let (mut compiled, _, vs2) = recording(x, record);
    prop_assert_eq!(vs.len(), vs2.len());
    let code = compiled
        .compile()
        .expect("a replayable recording of f64 compiles");
    compiled
        .compile_lanes(4)
        .expect("a compiled recording's vector sweep compiles");
    let (outs, outs2) = (&vs[vs.len() - outputs..], &vs2[vs2.len() - outputs..]);
    // The gradient of the last output by its own code, against the interpreter's.
    let (gradient, _, vs3) = recording(x, record);
    let y3 = vs3[vs3.len() - 1];
    if !y3.is_constant() {
        let mut gradient = gradient
            .compile_gradient(y3)
            .expect("a replayable recording of f64 compiles");
        let (mut reference, xs4, vs4) = recording(x, record);
        let y4 = vs4[vs4.len() - 1];
        for p in points.iter().map(|p| &p[..]).chain(core::iter::once(x)) {
            let mut g = vec![0.0; x.len()];
            // A failed guard named from a recording made afresh at `p`, as re-evaluation
            // names it.
            let got = gradient.gradient(p, &mut g).map_err(|e| match e {
                RunError::Guard => ReplayError::Guard(
                    gradient
                        .failed_guard(&recording(p, record).0)
                        .expect("a guard differs"),
                ),
                e => panic!("{e}"),
            });
            let want = reference
                .reevaluate(p)
                .map(|()| (reference.value(y4), reference.gradient(y4).wrt_all(&xs4)));
            match (got, want) {
                (Ok(v), Ok((v2, g2))) => {
                    prop_assert_eq!(bits([v]), bits([v2]), "value at {:?}", p);
                    prop_assert_eq!(bits(g.iter().copied()), bits(g2), "gradient at {:?}", p);
                }
                (Err(e), Err(e2)) => prop_assert_eq!(e, e2, "at {:?}", p),
                (got, want) => prop_assert!(false, "at {:?}: {:?} vs {:?}", p, got, want),
            }
        }
    }
    for p in core::iter::once(x).chain(points.iter().map(|p| &p[..])) {
        let (a, b): (Result<(), ReplayError>, _) =
            (interpreted.reevaluate(p), compiled.reevaluate(p));
        prop_assert_eq!(&a, &b, "re-evaluation at {:?}", p);
        prop_assert_eq!(
            state(&interpreted, &vs, outs),
            state(&compiled, &vs2, outs2),
            "at {:?}",
            p
        );
    }
    Ok(code)
}

/// Programs of every rule (kinks and jumps too, whose guards may fail at the new points),
/// with sums and dot products.
fn shape() -> Shape {
    Shape {
        inputs: 1..=4,
        instrs: 1..24,
        unary: Unary::TAYLOR,
        binary: Binary::ALL,
        nary: true,
        recent: true,
        outputs: test_support::programs::Outputs::LastTwo,
    }
}

fn point(n: usize) -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(test_support::programs::input(), n)
}

/// `body` run `turns` times, each turn on the next inputs and on the last turn's result (a
/// recurrence, as an unrolled loop records it, if `chained`) or on the first input (a
/// parameter every turn reads); then the sum of every turn's result (one node of many edges)
/// and the last result.
fn looped(body: &Program, turns: usize, chained: bool) -> impl Fn(&[Var]) -> Vec<Var> + '_ {
    move |xs: &[Var]| {
        let mut all = Vec::new();
        let mut carry = xs[0];
        let mut results = Vec::new();
        for k in 0..turns {
            let mut window = vec![if chained { carry } else { xs[0] }];
            window.extend_from_slice(&xs[k + 1..k + body.n]);
            let v = body.values(&window);
            carry = *v.last().expect("a value");
            results.push(carry);
            all.extend(v);
        }
        all.push(results.iter().copied().sum());
        all.push(carry);
        all
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(2000)))]

    /// Straight programs: compiled node by node.
    #[test]
    fn compiled_programs_equal_interpreted_ones_bit_for_bit(
        (p, x, points) in programs(shape()).prop_flat_map(|p| {
            let n = p.n;
            (Just(p), point(n), prop::collection::vec(point(n), 1..3))
        }),
    ) {
        let record = |xs: &[Var]| p.values(xs);
        compiled_agrees(&x, &points, &record, 2)?;
    }
}

/// `body` in a loop of loops: row `r` of `rows` runs `body` `cols` times, each turn on the
/// row's parameter (input `r`) and the turn's own inputs, then sums the row's results (one node
/// of many edges); the rows' sums are summed last. As a mixture's components, or a layer's
/// units, record.
fn nested(body: &Program, rows: usize, cols: usize) -> impl Fn(&[Var]) -> Vec<Var> + '_ {
    move |xs: &[Var]| {
        let (params, data) = xs.split_at(rows);
        let mut all = Vec::new();
        let mut sums = Vec::new();
        for (r, &param) in params.iter().enumerate() {
            let mut results = Vec::new();
            for c in 0..cols {
                let at = r * cols + c;
                let mut window = vec![param];
                window.extend_from_slice(&data[at..at + body.n - 1]);
                let v = body.values(&window);
                results.push(*v.last().expect("a value"));
                all.extend(v);
            }
            let s: Var = results.iter().copied().sum();
            sums.push(s);
            all.push(s);
        }
        all.push(sums.iter().copied().sum());
        all
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(300)))]

    /// Loops of loops: rows of turns of a random body, compiled as a loop of loops where its
    /// turns record the same operations.
    #[test]
    fn compiled_loops_of_loops_equal_interpreted_ones_bit_for_bit(
        (p, rows, cols, x, points) in programs(Shape { inputs: 2..=3, instrs: 1..8, ..shape() })
            .prop_flat_map(|p| (Just(p), 3..6usize, 3..60usize))
            .prop_flat_map(|(p, rows, cols)| {
                let n = rows + rows * cols + p.n;
                (Just(p), Just(rows), Just(cols), point(n), prop::collection::vec(point(n), 1..3))
            }),
    ) {
        let record = nested(&p, rows, cols);
        compiled_agrees(&x, &points, &record, 1)?;
    }
}

/// A smooth body in rows of turns longer than the longest body looked for is one loop of
/// loops: the code of one row's loop.
#[test]
fn a_loop_of_loops_is_compiled_once() {
    let body = Program {
        n: 3,
        instrs: vec![
            Instr::Binary(Binary::Sub, 1, 0),
            Instr::Binary(Binary::Mul, 3, 3),
            Instr::Binary(Binary::Mul, 4, 2),
        ],
        outputs: vec![5],
    };
    let (rows, cols) = (40, 100);
    let n = rows + rows * cols + 2;
    let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.7).sin()).collect();
    let points = vec![x.iter().map(|v| v * 1.1).collect::<Vec<f64>>()];
    let record = nested(&body, rows, cols);
    let code = compiled_agrees(&x, &points, &record, 1).unwrap();
    assert!(code.looped * 10 >= code.nodes * 9, "{code:?}");
    assert!(code.loops >= 2 && code.bytes < 16 << 10, "{code:?}");
}

/// A loop whose turns take dot products of 1, 2, 3, 8 and 13 pairs of inputs in a scattered
/// order (not runs), each turn's one input further on, every fourth pair against a constant: a
/// compiled gradient computes and sweeps them in its code, its sums in the interpreter's order
/// (pairwise beyond 8 terms), the partials of the shortest (swept as weighted edges) read from
/// their operands.
#[test]
fn short_dot_products_in_a_loop_sum_in_the_interpreters_order() {
    for pairs in [1usize, 2, 3, 8, 13] {
        let scatter = |m: usize| (7 * m + 3) % 17;
        let record = move |xs: &[Var]| {
            let mut all = Vec::new();
            for k in 0..10 {
                let a: Vec<Var> = (0..pairs).map(|m| xs[k + scatter(m)]).collect();
                let b: Vec<Var> = (0..pairs)
                    .map(|m| match m % 4 {
                        1 => Var::constant(0.75 + m as f64),
                        _ => xs[k + scatter(m + 5)],
                    })
                    .collect();
                let d = Var::dot(&a, &b);
                all.extend([d, d * xs[k]]);
            }
            let terms: Vec<Var> = all.chunks(2).map(|t| t[1]).collect();
            all.push(terms.iter().copied().sum());
            all
        };
        // Magnitudes far apart, so that another order of the sum rounds differently.
        let x: Vec<f64> = (0..27)
            .map(|i| (i as f64 * 0.7).sin() * 10f64.powi(i % 9 - 4))
            .collect();
        let points = vec![x.iter().map(|v| v * -1.3 + 1e-3).collect()];
        let code = compiled_agrees(&x, &points, &record, 1).unwrap();
        assert!(code.looped >= 20, "{code:?}");
    }
}

/// A running `max` and a running `min` over the inputs, in a loop (log-sum-exp's `max`): a
/// compiled gradient computes their values in its code, as `f64::max` and `f64::min` do, at
/// points with signed zeros and moved winners, and fails as the interpreter does where an
/// operand is NaN or a pair ties (other branches).
#[test]
fn running_extremes_in_a_loop_are_the_rules_bits() {
    let record = |xs: &[Var]| {
        let (mut hi, mut lo) = (xs[0], xs[0]);
        let mut out = Vec::new();
        for &x in &xs[1..] {
            hi = reverse::Float::max(hi, x);
            lo = reverse::Float::min(x, lo);
            out.extend([hi, lo]);
        }
        let terms: Vec<Var> = out.iter().map(|&v| v * v).collect();
        out.push(terms.iter().copied().sum::<Var>() + hi * lo);
        out
    };
    let x: Vec<f64> = (0..16).map(|i| ((i * 7) % 11) as f64 - 4.0).collect();
    let mut points = Vec::new();
    for (i, v) in [
        (4, f64::NAN),
        (3, f64::NAN),
        (5, 0.0),
        (8, -0.0),
        (9, f64::INFINITY),
        (2, -0.0),
    ] {
        let mut p = x.clone();
        p[i] = v;
        points.push(p);
    }
    // Every value signed zeros (ties: another branch), then one winner moved.
    points.push(
        x.iter()
            .map(|&v| if v > 0.0 { 0.0 } else { -0.0 })
            .collect(),
    );
    points.push(x.iter().map(|v| v * 2.0 + 0.5).collect());
    // A NaN operand of a piece fails its guard; a signed zero that wins or loses by value
    // keeps the branches, as do the moved points.
    let (mut rec, ..) = recording(&x, &record);
    let held = points
        .iter()
        .map(|p| rec.reevaluate(p).is_ok())
        .collect::<Vec<_>>();
    let runs = [false, false, true, true, false, true, false, true];
    assert_eq!(held, runs);
    let code = compiled_agrees(&x, &points, &record, 1).unwrap();
    assert!(code.looped >= 30, "{code:?}");
}

/// Inputs made within a loop, each read once by a product with `−0`: the gradient is `+0`
/// (the plain sweep adds the term `−0` to `+0`), though the code adds up a turn's adjoints in
/// registers from their first term.
#[test]
fn an_adjoint_of_negative_zero_terms_is_positive_zero() {
    let tape = Tape::replayable();
    let mut xs = Vec::new();
    let mut terms = Vec::new();
    for k in 0..12 {
        let x = tape.var(0.5 + k as f64);
        let u = x * -0.0;
        terms.push(u + 1.0);
        xs.push(x);
    }
    let y: Var = terms.iter().copied().sum();
    let rec = tape.finish();
    let want = rec.gradient(y).wrt_all(&xs);
    assert!(want.iter().all(|g| g.to_bits() == 0), "{want:?}");
    let mut code = rec.compile_gradient(y).map_err(|e| e.error).unwrap();
    assert!(code.code().looped >= 24, "{:?}", code.code());
    let x: Vec<f64> = (0..12).map(|k| k as f64).collect();
    let mut got = vec![1.0; 12];
    code.gradient(&x, &mut got).unwrap();
    assert_eq!(bits(got), bits(want));
}

/// A loop multiplying by constants, the same in every turn (which the code knows): where one
/// is zero or infinite and the adjoint it multiplies is infinite or zero, the term is the
/// structural zero, as the interpreter's, not `0 · ∞`.
#[test]
fn constant_factors_in_a_loop_keep_their_structural_zeros() {
    for (c, d) in [
        (0.0, f64::INFINITY),
        (f64::INFINITY, 0.0),
        (-0.0, f64::NAN),
        (3.0, -2.0),
    ] {
        let record = move |xs: &[Var]| {
            let mut all = Vec::new();
            for &x in xs {
                let u = x * c;
                let v = u * d;
                let w = v + x * x;
                all.extend([u, v, w]);
            }
            let terms: Vec<Var> = all.chunks(3).map(|t| t[2]).collect();
            all.push(terms.iter().copied().sum());
            all
        };
        let x: Vec<f64> = (0..12).map(|i| 0.25 * i as f64 - 1.0).collect();
        let points = vec![x.iter().map(|v| v * 1.5 + 0.1).collect()];
        let code = compiled_agrees(&x, &points, &record, 1).unwrap();
        assert!(code.looped >= 30, "{code:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(500)))]

    /// Loops: a random body repeated 4 to 40 times, compiled as a loop where its turns record
    /// the same operations (a kink's winner may differ from turn to turn); chained through
    /// its results or reading one parameter and its own inputs (whose adjoints the loop
    /// carries from turn to turn).
    #[test]
    fn compiled_loops_equal_interpreted_ones_bit_for_bit(
        (p, turns, chained, x, points) in programs(Shape { inputs: 2..=3, instrs: 1..10, ..shape() })
            .prop_flat_map(|p| (Just(p), 4..40usize, any::<bool>()))
            .prop_flat_map(|(p, turns, chained)| {
                let n = p.n + turns;
                (Just(p), Just(turns), Just(chained), point(n), prop::collection::vec(point(n), 1..3))
            }),
    ) {
        let record = looped(&p, turns, chained);
        compiled_agrees(&x, &points, &record, 2)?;
    }
}

/// Rosenbrock's terms are one loop; its gradient is the interpreter's, bit for bit, at new
/// points.
/// Rosenbrock's function of `n` inputs, compiled and interpreted at `points` new points: the
/// compiled code's figures.
fn rosenbrock(n: usize, points: usize) -> reverse::jit::CodeStats {
    let x: Vec<f64> = (0..n).map(|i| 0.5 + (i as f64 * 0.37).sin()).collect();
    let record = |xs: &[Var]| {
        let mut s = Vec::new();
        for w in xs.windows(2) {
            let t =
                (w[1] - w[0] * w[0]) * 100.0 * (w[1] - w[0] * w[0]) + (1.0 - w[0]) * (1.0 - w[0]);
            s.push(t);
        }
        vec![s.iter().copied().sum::<Var>()]
    };
    let points: Vec<Vec<f64>> = (1..=points)
        .map(|k| x.iter().map(|v| v * (1.0 + 0.1 * k as f64)).collect())
        .collect();
    compiled_agrees(&x, &points, &record, 1).unwrap()
}

#[test]
fn rosenbrock_is_one_loop_and_equals_the_interpreter() {
    let code = rosenbrock(1000, 3);
    assert!(code.looped >= code.nodes * 9 / 10, "{code:?}");
    assert!(code.bytes < 64 << 10, "{code:?}");
}

/// A sum over a loop's turns that the loop adds up as it goes, and the same sum where some of
/// its terms are read by another node too, which the loop must not fold (their adjoints take a
/// term from outside the sum): both the interpreter's bits.
#[test]
fn a_sum_over_a_loop_whose_terms_are_read_elsewhere_equals_the_interpreter() {
    let x: Vec<f64> = (0..40).map(|i| 0.5 + (i as f64 * 0.37).sin()).collect();
    let terms = |xs: &[Var]| -> Vec<Var> {
        xs.windows(2)
            .map(|w| (w[1] - w[0] * w[0]) * 100.0 * (w[1] - w[0] * w[0]) + (1.0 - w[0]) * w[1])
            .collect()
    };
    let alone = |xs: &[Var]| vec![terms(xs).iter().copied().sum::<Var>()];
    let shared = |xs: &[Var]| {
        let t = terms(xs);
        vec![t.iter().copied().sum::<Var>() * t[7] + t[3] * Op::value(&t[20])]
    };
    let points: Vec<Vec<f64>> = (1..3)
        .map(|k| x.iter().map(|v| v * (1.0 + 0.1 * k as f64)).collect())
        .collect();
    compiled_agrees(&x, &points, &alone, 1).unwrap();
    compiled_agrees(&x, &points, &shared, 1).unwrap();
}

/// A gradient keeps no partial of `exp` (its rule's derivative is its value, which the code
/// keeps anyway): a loop of `exp` keeps 12 bytes a node (a partial and its parent) fewer than
/// the same loop of `ln`, and both give the interpreter's bits.
#[test]
fn a_gradient_reads_exp_partials_from_its_values() {
    let n = 200;
    let x: Vec<f64> = (0..n)
        .map(|i| 0.5 + (i as f64 * 0.37).sin().abs())
        .collect();
    let points: Vec<Vec<f64>> = (1..3)
        .map(|k| x.iter().map(|v| v * (1.0 + 0.1 * k as f64)).collect())
        .collect();
    let kept = |f: fn(Var) -> Var| {
        let record = move |xs: &[Var]| vec![xs.iter().map(|&v| f(v * 0.5)).sum::<Var>()];
        compiled_agrees(&x, &points, &record, 1).unwrap();
        let (rec, _, vs) = recording(&x, &record);
        let y = vs[vs.len() - 1];
        rec.compile_gradient(y)
            .map_err(|e| e.error)
            .unwrap()
            .kept_bytes()
    };
    // (Their machine code differs by a few bytes.)
    let fewer = kept(reverse::Float::ln) as i64 - kept(reverse::Float::exp) as i64;
    assert!((fewer - 12 * n as i64).abs() < 64, "{fewer} bytes fewer");
}

/// A loop whose turns each take a new input and call a built-in rule on it directly: the
/// call's operand is the turn's input, which no register holds (the code loads it), and the
/// compiled gradient is the interpreter's, bit for bit, at new points.
#[test]
fn a_direct_call_of_its_turns_input_equals_the_interpreter() {
    let n = 40;
    let record = |x: &[f64]| {
        let tape = Tape::replayable();
        let (mut s, mut xs) = (tape.var(x[0]), vec![]);
        xs.push(s);
        for &v in &x[1..] {
            let x = tape.var(v);
            s = s * 0.75 + reverse::Float::sin(x) * x;
            xs.push(x);
        }
        (tape.finish(), xs, s)
    };
    let x: Vec<f64> = (0..n).map(|i| 0.5 + (i as f64 * 0.37).sin()).collect();
    let (rec, _, y) = record(&x);
    let mut compiled = rec.compile_gradient(y).map_err(|e| e.error).unwrap();
    assert!(compiled.code().loops >= 1, "{:?}", compiled.code());
    let (mut reference, xs, y) = record(&x);
    for k in 1..4 {
        let p: Vec<f64> = x.iter().map(|v| v * (1.0 - 0.2 * k as f64)).collect();
        let mut g = vec![0.0; n];
        let value = compiled.gradient(&p, &mut g).unwrap();
        reference.reevaluate(&p).unwrap();
        assert_eq!(bits([value]), bits([reference.value(y)]));
        assert_eq!(bits(g), bits(reference.gradient(y).wrt_all(&xs)));
    }
}

/// A recurrence whose first step is peeled (straight code that the loop's first turn reads as
/// the turn before it), as an ODE solver records one: its gradient keeps a value and an
/// adjoint only for the nodes of each turn that pass through memory (the two carried to the
/// next turn and the input), numbered in slots, not 16 bytes for every node; and it gives the
/// interpreter's bits.
#[test]
fn a_peeled_recurrence_keeps_slots_only_for_what_passes_through_memory() {
    let n = 300;
    let record = |xs: &[Var]| {
        let (mut t, mut u) = (xs[0] * 0.5, xs[0] + 1.0);
        for &x in &xs[1..] {
            let a = x * t;
            let b = a * 0.25 + u;
            let c = b * b - a;
            (t, u) = (c / 3.0 + t * 0.5, u * 0.75 + b);
        }
        vec![t + u]
    };
    let x: Vec<f64> = (0..n)
        .map(|i| 0.3 + 0.2 * (i as f64 * 0.37).sin())
        .collect();
    let points: Vec<Vec<f64>> = (1..3)
        .map(|k| x.iter().map(|v| v * (1.0 - 0.1 * k as f64)).collect())
        .collect();
    compiled_agrees(&x, &points, &record, 1).unwrap();
    let (rec, _, vs) = recording(&x, &record);
    let g = rec
        .compile_gradient(vs[vs.len() - 1])
        .map_err(|e| e.error)
        .unwrap();
    let code = g.code();
    assert!(code.loops >= 1, "{code:?}");
    // By node, the nodes' values and adjoints alone would take 16 bytes a node (the constants,
    // four a turn, and the code come on top).
    let kept = g.kept_bytes() - code.bytes;
    assert!(kept < 16 * code.nodes, "{kept} bytes kept for {code:?}");
}

/// A dot product whose sides are runs of values that straight code computes just before a
/// loop, which takes some of them for its turn before the first: their slots are then not
/// consecutive, and the gradient reads them pair by pair instead of as a slice, to the
/// interpreter's bits.
#[test]
fn a_run_whose_slots_are_not_consecutive_is_read_pair_by_pair() {
    use reverse::Float;
    let record = |xs: &[Var]| {
        let v = [
            xs[0] * 1.5,
            xs[1].sin(),
            xs[2] + 1.0,
            xs[3].exp(),
            xs[4] / 3.0,
        ];
        let terms = (0..8).map(|k| {
            let row: Vec<Var> = (0..5)
                .map(|j| Var::constant((k * 5 + j) as f64 * 0.1 - 1.0))
                .collect();
            let e = Var::dot(&v, &row) - 0.5;
            e * e
        });
        vec![terms.sum::<Var>()]
    };
    let x = [0.3, -0.7, 1.1, 0.2, -1.4];
    let points = [vec![0.5, 0.1, -0.3, 0.9, 0.4]];
    compiled_agrees(&x, &points, &record, 1).unwrap();
}

/// A recording large enough that the compiler's analysis allocates arrays of several huge
/// pages (which it asks the kernel to back as such, see `docs/unsafe.md`), compiled to the
/// interpreter's bits, in code no larger than that of a short one.
#[test]
fn a_large_recording_equals_the_interpreter() {
    let code = rosenbrock(60_000, 1);
    assert!(code.nodes > 500_000, "{code:?}");
    assert!(code.looped >= code.nodes * 9 / 10, "{code:?}");
    assert!(code.bytes < 64 << 10, "{code:?}");
}

/// Dot products whose sides are runs of consecutive values, which a compiled gradient reads
/// as slices, and their near misses: a loop of a window of inputs by a row of constants (zeros
/// and an infinity among them), one turn of which reads a permuted window; two runs of nodes
/// apart, the same run twice, two overlapping runs; runs of computed nodes.
fn dots(xs: &[Var]) -> Vec<Var> {
    let c = |k: usize, j: usize| match (k + j) % 5 {
        0 => Var::constant(0.0),
        1 if k == 2 => Var::constant(f64::INFINITY),
        r => Var::constant(r as f64 - 1.5),
    };
    let mut all = Vec::new();
    for k in 0..6 {
        let row: Vec<Var> = (0..8).map(|j| c(k, j)).collect();
        let mut window = xs[k..k + 8].to_vec();
        if k == 3 {
            window.swap(1, 5);
        }
        all.push(Var::dot(&window, &row));
    }
    all.push(Var::dot(&xs[0..8], &xs[8..16]));
    all.push(Var::dot(&xs[0..8], &xs[0..8]));
    all.push(Var::dot(&xs[0..8], &xs[4..12]));
    let u: Vec<Var> = xs.iter().map(|&x| reverse::Float::sin(x)).collect();
    all.push(Var::dot(&u[0..8], &u[8..16]));
    all.push(Var::dot(&u[2..10], &xs[0..8]));
    all.push(all.iter().copied().sum::<Var>());
    all
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(200)))]

    /// Dot products read as slices give the interpreter's bits, zeros and infinities too.
    #[test]
    fn dot_products_of_runs_equal_the_interpreter(
        x in point(16),
        points in prop::collection::vec(point(16), 1..3),
    ) {
        compiled_agrees(&x, &points, &dots, 1)?;
    }
}

/// Which of [`dots`]' products a gradient reads as slices: the five after the loop (the same
/// run twice and the overlapping runs too, whose sweep goes pair by pair), and none of the
/// loop's six, since its code is one body for every turn and one turn is no run; a loop of runs
/// only, all six.
#[test]
fn a_compiled_gradient_reads_runs_of_values_as_slices() {
    let x: Vec<f64> = (0..16).map(|i| 0.1 * i as f64 - 0.7).collect();
    let (rec, _, vs) = recording(&x, &dots);
    let y = *vs.last().expect("outputs");
    let stats = rec.compile_gradient(y).expect("compiles").code().clone();
    // The six of the loop fall back together (one turn is no run); the five after it are
    // runs, the same run twice and the overlapping ones too (their forward reads slices; their
    // sweep finds the sides not apart and goes pair by pair).
    assert_eq!(stats.sliced, 5, "{stats:?}");
    let (ok, _, vs) = recording(&x, &|xs: &[Var]| {
        let row: Vec<Var> = (0..8).map(|j| Var::constant(j as f64)).collect();
        let mut all: Vec<Var> = (0..6).map(|k| Var::dot(&xs[k..k + 8], &row)).collect();
        all.push(all.iter().copied().sum::<Var>());
        all
    });
    let y = *vs.last().expect("outputs");
    assert_eq!(ok.compile_gradient(y).expect("compiles").code().sliced, 6);
}

/// Branches on every comparison operator: first loops of `<` over neighbours, of a running
/// `max`, of `abs` and of `relu` (runs of guards, compiled as loops), then each operator once per
/// neighbour pair, against inputs and constants (a guard of each check in turn, straight
/// code), and a test of `Float` (left to Rust). Every branch changes the operations.
fn branches(xs: &[Var]) -> Vec<Var> {
    use core::cmp::Ordering;
    use reverse::Float;
    let rising: Vec<bool> = xs.windows(2).map(|w| w[0] < w[1]).collect();
    let mut top = xs[0];
    let mut all = Vec::new();
    for &x in &xs[1..] {
        top = top.max(x);
    }
    all.extend(xs[1..].iter().map(|x| x.abs()));
    all.extend(xs[1..].iter().map(|&x| x.apply1(shared_ops::rules::Relu)));
    let mut y = top;
    for (w, &up) in xs.windows(2).zip(&rising) {
        let (a, b) = (w[0], w[1]);
        y = if up { y * b } else { y - a };
        y = if a <= Var::constant(0.5) {
            y + a
        } else {
            y * a
        };
        y = if b > a { y.sin() } else { y.cos() };
        y = if b >= Var::constant(-0.5) {
            y * 2.0
        } else {
            y / 3.0
        };
        y = if a == b { y + 1.0 } else { y - b };
        y = if a != Var::constant(1.0) {
            y * 0.5
        } else {
            y + 0.5
        };
        y = match a.partial_cmp(&b) {
            Some(Ordering::Less) => y * a,
            Some(Ordering::Greater) => y + a,
            Some(Ordering::Equal) => y - a,
            None => y,
        };
        if b.is_nan() {
            y += 1.0;
        }
        all.push(y);
    }
    all.push(all.iter().copied().sum::<Var>() + y);
    all
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(300)))]

    /// The compiled gradient checks the guards in its code, and wherever one flips it fails
    /// as re-evaluation does, naming the same guard.
    #[test]
    fn compiled_branches_fail_where_the_interpreter_does(
        x in point(8),
        points in prop::collection::vec(point(8), 1..4),
    ) {
        compiled_agrees(&x, &points, &branches, 1)?;
    }
}

/// Every comparison, `max`, `abs` and `relu` guard of [`branches`] is checked by the compiled
/// code (runs of them as loops), the `is_nan` tests by Rust; a flip of the loop's last
/// comparison fails the call.
#[test]
fn a_compiled_gradient_checks_its_guards_in_its_code() {
    let x: Vec<f64> = (0..40).map(|i| (i as f64 * 0.7).sin()).collect();
    let tape = Tape::replayable();
    let xs = tape.vars(&x);
    let vs = branches(&xs);
    let mut grad = tape.finish().compile_gradient(vs[vs.len() - 1]).unwrap();
    let code = grad.code().clone();
    // Per neighbour pair: `<`, six more comparisons, `max`, `abs`, `relu` (`is_nan` is Rust's).
    assert_eq!(code.guards, 39 * 10, "{code:?}");
    let mut g = vec![0.0; x.len()];
    assert!(grad.gradient(&x, &mut g).is_ok());
    let mut flipped = x.clone();
    flipped.swap(38, 39);
    assert_eq!(grad.gradient(&flipped, &mut g), Err(RunError::Guard));
    // Named from a recording made afresh at the new point: re-evaluation's error.
    let (fresh, _, _) = recording(&flipped, &branches);
    let err = ReplayError::Guard(grad.failed_guard(&fresh).expect("a guard differs"));
    let ReplayError::Guard(f) = &err else {
        panic!("{err}")
    };
    assert!(f.guard < 39, "the loop of `<` fails first: {err}");
    // Compiled whole: the same guards checked, the same error.
    let (mut whole, _, _) = recording(&x, &branches);
    assert_eq!(whole.compile().unwrap().guards, 39 * 10);
    assert_eq!(whole.reevaluate(&flipped).unwrap_err(), err);
    let (mut interpreted, _, _) = recording(&x, &branches);
    assert_eq!(interpreted.reevaluate(&flipped).unwrap_err(), err);
}

/// A user's rule that panics inside compiled code panics out of `reevaluate`, and the
/// recording can be dropped afterwards.
#[test]
fn a_panic_in_a_rule_unwinds_out_of_compiled_code() {
    #[derive(Clone, Copy)]
    struct Picky;
    impl shared_ops::Unary for Picky {
        const NAME: &'static str = "picky";
        fn eval<T: reverse::Op>(self, x: T) -> (T, T) {
            assert!(x.value() < 10.0, "picky refuses {}", x.value());
            (x, T::one())
        }
    }
    let (mut rec, _, _) = recording(&[1.0], &|xs| vec![xs[0].apply1(Picky)]);
    rec.compile().unwrap();
    rec.reevaluate(&[2.0]).unwrap();
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| rec.reevaluate(&[20.0])));
    let msg = caught.unwrap_err();
    assert_eq!(
        msg.downcast_ref::<String>().map(String::as_str),
        Some("picky refuses 20")
    );
}

/// What cannot be compiled says why.
#[test]
fn compile_refuses_what_it_cannot_compile() {
    let tape = Tape::new();
    let x = tape.var(1.0);
    let _ = x * x;
    let err = tape.finish().compile().unwrap_err();
    assert_eq!(
        err,
        reverse::jit::CompileError::Replay(ReplayError::NotReplayable)
    );

    let tape = Tape::<forward::Dual<f64>>::replayable();
    let x = tape.var(forward::Dual::variable(1.0));
    let _ = x * x;
    let err = tape.finish().compile().unwrap_err();
    assert!(err.to_string().contains("only recordings of f64"), "{err}");
}

/// The vector sweeps of the lane counts a Jacobian runs (1, 2, 4, 8) equal the interpreter's, on
/// Rosenbrock's loop (whose cells carry adjoints from turn to turn) with a sum of many edges
/// (swept by a call); compiling the same lanes again makes nothing; other counts are refused;
/// forgetting the code forgets the lanes too.
#[test]
fn compiled_vector_sweeps_equal_the_interpreter() {
    let record = |xs: &[Var]| {
        let terms: Vec<Var> = xs
            .windows(2)
            .map(|w| {
                let (a, b) = (1.0 - w[0], w[1] - w[0] * w[0]);
                a * a + 100.0 * b * b
            })
            .collect();
        let sum: Var = terms.iter().copied().sum();
        let mut out = terms;
        out.push(sum);
        out
    };
    let x: Vec<f64> = (0..40).map(|i| 0.1 * i as f64 - 1.3).collect();
    let (mut interpreted, xs, vs) = recording(&x, &record);
    let (mut compiled, xs2, vs2) = recording(&x, &record);
    fn seeds<const Q: usize>(vs: &[Var]) -> Vec<(Var, [f64; Q])> {
        // Lane l seeds output l (and the last output, in every lane, by 0.5).
        let mut out: Vec<(Var, [f64; Q])> = (0..Q)
            .map(|l| {
                let mut s = [0.0; Q];
                s[l] = 1.0 + l as f64;
                (vs[l * 3], s)
            })
            .collect();
        out.push((*vs.last().unwrap(), [0.5; Q]));
        out
    }
    fn lanes<const Q: usize>(rec: &Recording, xs: &[Var], vs: &[Var]) -> Vec<u64> {
        let adj = rec.sweep_vec::<Q>(&seeds::<Q>(vs));
        bits(xs.iter().chain(vs).flat_map(|&v| adj.wrt(v)))
    }
    for q in [2, 4, 8] {
        let code = compiled.compile_lanes(q).unwrap();
        assert!(code.bytes > 0 && code.loops >= 1, "{code:?}");
        assert_eq!(compiled.compile_lanes(q).unwrap().bytes, 0, "compiled once");
    }
    let new: Vec<f64> = x.iter().map(|v| v * 0.7 + 0.2).collect();
    for p in [&x, &new] {
        interpreted.reevaluate(p).unwrap();
        compiled.reevaluate(p).unwrap();
        // (One lane runs the scalar sweep's code.)
        assert_eq!(
            lanes::<1>(&interpreted, &xs, &vs),
            lanes::<1>(&compiled, &xs2, &vs2)
        );
        assert_eq!(
            lanes::<2>(&interpreted, &xs, &vs),
            lanes::<2>(&compiled, &xs2, &vs2)
        );
        assert_eq!(
            lanes::<4>(&interpreted, &xs, &vs),
            lanes::<4>(&compiled, &xs2, &vs2)
        );
        assert_eq!(
            lanes::<8>(&interpreted, &xs, &vs),
            lanes::<8>(&compiled, &xs2, &vs2)
        );
        // Seeds in the middle of the loop (the sweep starts at their turn), in each lane.
        let early: Vec<(Var, [f64; 2])> = vec![(vs2[7], [1.0, 0.0]), (vs2[10], [0.0, -2.0])];
        let early1 = [(vs[7], [1.0, 0.0]), (vs[10], [0.0, -2.0])];
        let (got, want) = (compiled.sweep_vec(&early), interpreted.sweep_vec(&early1));
        for (&v, &v1) in xs2.iter().chain(&vs2).zip(xs.iter().chain(&vs)) {
            assert_eq!(bits(got.wrt(v)), bits(want.wrt(v1)));
        }
        // A buffer kept from a sweep that reached further: zeroed where it must be.
        let mut kept = reverse::AdjointsVec::default();
        compiled.sweep_vec_into(&seeds::<2>(&vs2), &mut kept);
        compiled.sweep_vec_into(&early, &mut kept);
        for (&v, &v1) in xs2.iter().chain(&vs2).zip(xs.iter().chain(&vs)) {
            assert_eq!(bits(kept.wrt(v)), bits(want.wrt(v1)));
        }
        let one = compiled.sweep(&[(vs2[10], 1.5)]);
        let one1 = interpreted.sweep(&[(vs[10], 1.5)]);
        for (&v, &v1) in xs2.iter().chain(&vs2).zip(xs.iter().chain(&vs)) {
            assert_eq!(one.wrt(v).to_bits(), one1.wrt(v1).to_bits());
        }
        // Each lane is the scalar sweep of its seeds: lane 1 seeds output 3 by 2 and the sum.
        let adj = compiled.sweep_vec::<2>(&seeds::<2>(&vs2));
        let one = compiled.sweep(&[(vs2[3], 2.0), (vs2[vs2.len() - 1], 0.5)]);
        for &v in &xs2 {
            assert_eq!(adj.wrt(v)[1].to_bits(), one.wrt(v).to_bits());
        }
    }
    for q in [0, 1, 3, 9, 10] {
        let err = compiled.compile_lanes(q).unwrap_err();
        assert_eq!(
            err,
            reverse::jit::CompileError::Lanes {
                lanes: q,
                limit: reverse::jit::MOST_LANES
            }
        );
        assert!(err.to_string().contains(&format!("{q} lanes")), "{err}");
    }
    compiled.forget_code();
    assert!(compiled.code().is_none());
    assert_eq!(
        lanes::<4>(&interpreted, &xs, &vs),
        lanes::<4>(&compiled, &xs2, &vs2)
    );
}
