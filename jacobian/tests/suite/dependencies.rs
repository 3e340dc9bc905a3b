//! `recording_pattern` (local detection: the sparsity pattern of a recording) against index
//! sets carried beside the
//! program: unary, binary and n-ary nodes, constants, repeated operands, and runs of thousands
//! of nodes of one kind (the forward walk reads the tape in blocks of 4 096 nodes, and a run of
//! unit edges hides where the weighted ones end).

use jacobian::sparse::recording_pattern;
use proptest::prelude::*;
use reverse::{Float, Tape, Var};
use std::collections::BTreeSet;

/// One step of a program over its values so far (operands taken modulo their count).
#[derive(Clone, Debug)]
enum Step {
    Add(usize, usize),
    Mul(usize, usize),
    Sub(usize, usize),
    Sin(usize),
    /// A piecewise-constant rule (`floor`, `ceil`, `round`, `trunc`, `signum`, by the second
    /// number): it depends on no input.
    Flat(usize, u8),
    AddConstant(usize, f64),
    /// An n-ary node: `Σ wₖ·vₖ` by `Var::from_partials`.
    Sum(Vec<usize>),
    /// `len` additions (unit edges) or products (weighted edges) in a row, each with input
    /// `input`: a run of nodes of one kind.
    Run {
        from: usize,
        input: usize,
        len: usize,
        product: bool,
    },
}

fn step() -> impl Strategy<Value = Step> {
    let i = || 0..1000usize;
    prop_oneof![
        3 => (i(), i()).prop_map(|(a, b)| Step::Add(a, b)),
        3 => (i(), i()).prop_map(|(a, b)| Step::Mul(a, b)),
        2 => (i(), i()).prop_map(|(a, b)| Step::Sub(a, b)),
        2 => i().prop_map(Step::Sin),
        1 => (i(), 0..5u8).prop_map(|(a, r)| Step::Flat(a, r)),
        1 => (i(), 0.5..2.0_f64).prop_map(|(a, c)| Step::AddConstant(a, c)),
        1 => prop::collection::vec(i(), 3..7).prop_map(Step::Sum),
        1 => (i(), i(), 1..6000usize, any::<bool>())
            .prop_map(|(from, input, len, product)| Step::Run { from, input, len, product }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn dependencies_are_the_index_sets_of_the_program(
        n in 1..7usize,
        steps in prop::collection::vec(step(), 0..30),
        picks in prop::collection::vec(0..1000usize, 1..8),
    ) {
        let tape = Tape::new();
        let x: Vec<Var> = tape.vars(&vec![0.5; n]);
        let mut vals: Vec<Var> = x.clone();
        let mut sets: Vec<BTreeSet<usize>> = (0..n).map(|k| BTreeSet::from([k])).collect();
        for s in &steps {
            let m = vals.len();
            let union = |a: usize, b: usize| -> BTreeSet<usize> {
                sets[a % m].union(&sets[b % m]).copied().collect()
            };
            let (v, set) = match *s {
                Step::Add(a, b) => (vals[a % m] + vals[b % m], union(a, b)),
                Step::Mul(a, b) => (vals[a % m] * vals[b % m], union(a, b)),
                Step::Sub(a, b) => (vals[a % m] - vals[b % m], union(a, b)),
                Step::Sin(a) => (vals[a % m].sin(), sets[a % m].clone()),
                Step::Flat(a, r) => {
                    let v = vals[a % m];
                    let flat = [v.floor(), v.ceil(), v.round(), v.trunc(), v.signum()];
                    (flat[r as usize], BTreeSet::new())
                }
                Step::AddConstant(a, c) => (vals[a % m] + Var::constant(c), sets[a % m].clone()),
                Step::Sum(ref ops) => {
                    let edges: Vec<(Var, f64)> = ops.iter().map(|&o| (vals[o % m], 0.5)).collect();
                    let value = edges.iter().map(|e| 0.5 * e.0.value()).sum();
                    let set = ops.iter().flat_map(|&o| sets[o % m].iter().copied()).collect();
                    (Var::from_partials(value, &edges), set)
                }
                Step::Run { from, input, len, product } => {
                    let (mut v, k) = (vals[from % m], input % n);
                    for _ in 0..len {
                        v = if product { v * x[k] } else { v + x[k] };
                    }
                    let mut set = sets[from % m].clone();
                    set.insert(k);
                    (v, set)
                }
            };
            vals.push(v);
            sets.push(set);
        }
        let m = vals.len();
        // Outputs: picked values, the last one, and a constant (an empty row).
        let mut ys: Vec<Var> = picks.iter().map(|&p| vals[p % m]).collect();
        let mut want: Vec<Vec<usize>> =
            picks.iter().map(|&p| sets[p % m].iter().copied().collect()).collect();
        ys.push(vals[m - 1]);
        want.push(sets[m - 1].iter().copied().collect());
        ys.push(Var::constant(1.0));
        want.push(Vec::new());
        let p = recording_pattern(&tape.finish(), &x, &ys);
        prop_assert_eq!((p.rows(), p.cols()), (ys.len(), n));
        for (i, row) in want.iter().enumerate() {
            prop_assert_eq!(p.row(i), &row[..], "output {}", i);
        }
    }
}

/// A piecewise-constant rule passes no adjoint: on a plain tape its result is a constant, with
/// no node, and what is built on it depends only on the rest.
#[test]
fn a_piecewise_constant_result_is_a_constant_on_a_plain_tape() {
    let tape = Tape::new();
    let x = tape.vars(&[1.5, -2.0]);
    let before = tape.len();
    let k = [
        x[0].floor(),
        x[0].ceil(),
        x[1].round(),
        x[1].trunc(),
        x[0].signum(),
    ];
    assert_eq!(tape.len(), before);
    assert!(k.iter().all(|k| k.is_constant()));
    assert_eq!(k.map(|k| k.value()), [1.0, 2.0, -2.0, -2.0, 1.0]);
    let y = k[0] * x[1] + x[0].floor().sin();
    assert_eq!(tape.gradient(y).wrt_all(&x), vec![0.0, 1.0]);
    let p = recording_pattern(&tape.finish(), &x, &[y, k[4]]);
    assert_eq!((p.offsets(), p.indices()), (&[0, 1, 1][..], &[1][..]));
}

/// A product by a variable that is 0 at this point still depends on it; a node that reads an
/// input twice lists it once.
#[test]
fn every_edge_counts_once() {
    let tape = Tape::new();
    let x = tape.vars(&[0.0, 2.0, 3.0]);
    let y = [x[0] * x[1], x[2] * x[2] + x[2], x[1] - x[1]];
    let p = recording_pattern(&tape.finish(), &x, &y);
    assert_eq!(p.offsets(), &[0, 2, 3, 4]);
    assert_eq!(p.indices(), &[0, 1, 2, 1]);
}
