//! A re-evaluated recording's sweeps give a fresh recording's adjoints bit for bit (of the
//! inputs, of every node, and of any value asked for): the partials that re-evaluation writes
//! are the recording's, on long generated programs full of structural zeros, infinities and
//! NaNs, with seeds anywhere.

use proptest::prelude::*;
use reverse::{Float, Tape, Var};

/// One step of a generated program: an operation and two earlier values (`near` steps back
/// for chains, or anywhere).
#[derive(Clone, Copy, Debug)]
struct Step {
    op: u8,
    a: u32,
    b: u32,
    near: bool,
}

/// A value the steps can produce on their own as well: zeros, ±∞, NaN and the kinks' points.
fn input() -> impl Strategy<Value = f64> {
    prop_oneof![
        6 => -3.0..3.0_f64,
        1 => Just(0.0),
        1 => Just(-0.0),
        1 => Just(1.0),
        1 => Just(f64::INFINITY),
        1 => Just(f64::NEG_INFINITY),
        1 => Just(f64::NAN),
        1 => Just(1e-300),
    ]
}

fn steps(len: usize) -> impl Strategy<Value = Vec<Step>> {
    prop::collection::vec(
        (
            any::<u8>(),
            any::<u32>(),
            any::<u32>(),
            prop::bool::weighted(0.7),
        )
            .prop_map(|(op, a, b, near)| Step { op, a, b, near }),
        len,
    )
}

/// Runs the steps on `x`; every value is kept (so any can be seeded). `tame` programs keep
/// their values finite and away from the kinks (their adjoints are sums of ordinary numbers,
/// whose bits show the order of the terms); the others head for zeros, infinities and NaNs.
fn program<T: Float + From<f64>>(x: &[T], steps: &[Step], tame: bool) -> Vec<T> {
    let c = |v: f64| -> T { v.into() };
    let mut v = x.to_vec();
    for s in steps {
        let pick = |r: u32| {
            let len = v.len();
            if s.near {
                len - 1 - (r as usize % len.min(8))
            } else {
                r as usize % len
            }
        };
        let (p, q) = (v[pick(s.a)], v[pick(s.b)]);
        if tame {
            v.push(match s.op % 10 {
                0 => p + q,
                1 => p - q,
                2 => (p * q).sin(),
                3 => p / (c(1.0) + q * q),
                4 => (p.abs() + c(0.5)).sqrt(),
                5 => p.max(q) * c(0.75),
                6 => p.sin() * q.cos(),
                7 => (p + q).tanh(),
                8 => p * c(0.75) - c(0.25) * q,
                _ => p.mul_add(q.tanh(), c(0.5)),
            });
            continue;
        }
        let y = match s.op % 20 {
            0 => p + q,
            1 => p - q,
            2 => p * q,
            3 => p / q,
            4 => p.abs().sqrt(), // ∂ = ∞ at 0
            5 => p.abs(),
            6 => p.max(q),
            7 => p.min(q),
            8 => p.sin() * q,
            9 => p.exp(), // overflows to ∞
            10 => p.ln(), // −∞ at 0, NaN below
            11 => p.powi(3),
            12 => p * c(0.0), // a zero partial
            13 => p - c(1.5), // a shift (no node)
            14 => c(2.0) - p,
            15 => -p,
            16 => p * p,
            17 => p.tanh() + q * c(3.0),
            18 => p.hypot(q),
            _ => p.mul_add(q, p),
        };
        v.push(y);
    }
    v
}

/// The bits of each number, every NaN as one: Rust leaves the sign and payload of a NaN that
/// arithmetic makes unspecified (a sweep that subtracts and one that adds a negation may
/// differ there).
fn bits(v: &[f64]) -> Vec<u64> {
    v.iter()
        .map(|x| if x.is_nan() { f64::NAN } else { *x }.to_bits())
        .collect()
}

/// For each seed list, on a recording of `steps` at `x` made by `tape` (re-evaluated at `x`
/// first when `replay`): the adjoints of the inputs, of every node (`as_slice`), and of every
/// value but the shifts (which have no node of their own) by `sweep_wrt`.
fn adjoints(
    tape: Tape,
    x: &[f64],
    (steps, tame): (&[Step], bool),
    seeds: &[Vec<(u32, f64)>],
    replay: bool,
) -> Vec<[Vec<u64>; 3]> {
    let xs = tape.vars(x);
    let v: Vec<Var> = program(&xs, steps, tame);
    let shift = |k: usize| !tame && k >= x.len() && steps[k - x.len()].op % 20 == 13;
    let wanted: Vec<Var> = (0..v.len()).filter(|&k| !shift(k)).map(|k| v[k]).collect();
    let mut rec = tape.finish();
    if replay {
        rec.reevaluate(x)
            .expect("the recorded point itself passes every guard");
    }
    seeds
        .iter()
        .map(|seeds| {
            let seeds: Vec<(Var, f64)> = seeds
                .iter()
                .map(|&(i, s)| (v[i as usize % v.len()], s))
                .collect();
            let swept = rec.sweep(&seeds);
            [
                bits(&swept.wrt_all(&xs)),
                bits(swept.as_slice()),
                bits(&rec.sweep_wrt(&seeds, &wanted)),
            ]
        })
        .collect()
}

/// The re-evaluated sweeps' adjoints against a fresh recording's: on a plain tape for the inputs
/// and the values asked for, and on a replayable tape not re-evaluated for every node
/// (a replayable tape numbers its nodes differently: a shift keeps a value-only node).
fn agree(
    x: &[f64],
    program: (&[Step], bool),
    seeds: &[Vec<(u32, f64)>],
    replayed: &[[Vec<u64>; 3]],
) -> Result<(), TestCaseError> {
    let plain = adjoints(Tape::new(), x, program, seeds, false);
    let recorded = adjoints(Tape::replayable(), x, program, seeds, false);
    for ((p, r), s) in plain.iter().zip(&recorded).zip(replayed) {
        prop_assert_eq!(&p[0], &s[0], "the inputs' adjoints");
        prop_assert_eq!(&r[1], &s[1], "every node's adjoint");
        prop_assert_eq!(&p[2], &s[2], "the adjoints asked for by sweep_wrt");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(test_support::cases(24)))]

    /// Programs of 3 000 to 12 000 steps: the re-evaluated recording's sweeps give a fresh
    /// one's bits, for seeds of the last value, of values anywhere, several at once, and of −0.
    #[test]
    fn reevaluated_sweeps_equal_fresh_sweeps_bit_for_bit(
        x in prop::collection::vec(input(), 1..6),
        steps in (3_000..12_000usize).prop_flat_map(steps),
        seeds in prop::collection::vec(
            prop::collection::vec((any::<u32>(), prop_oneof![Just(1.0), Just(-0.0), Just(0.0), -2.0..2.0_f64]), 1..4),
            1..4,
        ),
    ) {
        let mut seeds = seeds;
        seeds.push(vec![(u32::MAX, 1.0)]); // the last value (u32::MAX % len is near the end)
        let replayed = adjoints(Tape::replayable(), &x, (&steps, false), &seeds, true);
        agree(&x, (&steps, false), &seeds, &replayed)?;
    }

    /// The same on programs whose values stay finite: there the adjoints are sums of ordinary
    /// numbers, and a term added out of order changes their bits.
    #[test]
    fn reevaluated_sweeps_keep_the_order_of_every_sum(
        x in prop::collection::vec(-2.0..2.0_f64, 1..6),
        steps in (3_000..12_000usize).prop_flat_map(steps),
        seeds in prop::collection::vec(prop::collection::vec((any::<u32>(), -2.0..2.0_f64), 1..4), 1..4),
    ) {
        let replayed = adjoints(Tape::replayable(), &x, (&steps, true), &seeds, true);
        let inputs = replayed.iter().flat_map(|a| &a[0]);
        let finite = inputs.clone().filter(|&&b| f64::from_bits(b).is_finite()).count();
        prop_assert!(finite * 2 >= inputs.count(), "mostly finite adjoints");
        agree(&x, (&steps, true), &seeds, &replayed)?;
    }
}

/// The last node seeded on a long chain: re-evaluated, its terms into the inputs add up in a
/// fresh recording's order.
#[test]
fn a_long_chain_keeps_its_order() {
    let x = [0.5, 2.0];
    let run = |tape: Tape, replay: bool| {
        let xs = tape.vars(&x);
        let mut y = xs[0];
        for i in 0..20_000 {
            // Each step reads the one before it and an input: a chain whose terms into x
            // accumulate across every window.
            y = if i % 3 == 0 {
                y * xs[1] * 0.5
            } else {
                y.sin() + xs[0]
            };
        }
        let mut rec = tape.finish();
        if replay {
            rec.reevaluate(&x).unwrap();
        }
        bits(&rec.gradient(y).wrt_all(&xs))
    };
    let plain = run(Tape::new(), false);
    assert_eq!(plain, run(Tape::replayable(), true));
    assert!(
        plain
            .iter()
            .all(|&b| f64::from_bits(b).is_finite() && b != 0)
    );
}
