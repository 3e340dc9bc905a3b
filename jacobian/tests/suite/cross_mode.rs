//! Forward = reverse = finite differences, and f64 = Dual = Var values, on generated programs.

use crate::common::{Program, cases, fd_column, program, rel_close};
use forward::Dual;
use jacobian::{Function, Mode, jacobian_with};
use proptest::prelude::*;
use proptest::test_runner::TestRunner;
use reverse::{Tape, Var};
use std::cell::RefCell;

fn values_agree(p: &Program, x: &[f64]) -> Result<(), TestCaseError> {
    let plain = p.eval(x);
    let duals: Vec<Dual<f64>> = x.iter().map(|&v| Dual::from(v)).collect();
    let dual: Vec<f64> = p.eval(&duals).iter().map(|d| d.primal).collect();
    let tape = Tape::new();
    let vars: Vec<Var> = tape.vars(x);
    let rev: Vec<f64> = p.eval(&vars).iter().map(|v| v.value()).collect();
    prop_assert_eq!(&plain, &dual);
    prop_assert_eq!(&plain, &rev);
    Ok(())
}

fn config(default: u32) -> ProptestConfig {
    ProptestConfig {
        cases: cases(default),
        source_file: Some(file!()),
        ..ProptestConfig::default()
    }
}

/// How far each generated program got: every one is compared three ways by value; those with
/// finite values forward against reverse; those without a kink at or near x against finite
/// differences too.
#[derive(Debug, Default)]
struct Tally {
    programs: usize,
    modes: usize,
    finite_differences: usize,
    non_finite: usize,
    on_kink: usize,
    kink_in_step: usize,
}

/// One program at one point, through every comparison it qualifies for.
fn three_ways(p: &Program, x: &[f64], tally: &mut Tally) -> Result<(), TestCaseError> {
    tally.programs += 1;
    values_agree(p, x)?;
    let fwd = jacobian_with(p, x, Mode::Forward).unwrap();
    let rev = jacobian_with(p, x, Mode::Reverse).unwrap();
    if !fwd.value.iter().all(|v| v.is_finite()) {
        tally.non_finite += 1;
        return Ok(());
    }
    prop_assert_eq!(&fwd.value, &rev.value);
    prop_assert_eq!(fwd.matrix.shape(), (p.outputs.len(), p.n));
    for (a, b) in fwd.matrix.iter().zip(rev.matrix.iter()) {
        prop_assert!(
            rel_close(*a, *b, 1e-12),
            "forward {a} vs reverse {b}\n{p:?} at {x:?}"
        );
    }
    tally.modes += 1;
    // Central differences where they can be trusted: not on the kinks and ties the generator
    // plants on purpose, and no kink within the step.
    if p.kink_at(x).is_some() {
        tally.on_kink += 1;
        return Ok(());
    }
    let Some(columns) = (0..p.n)
        .map(|j| fd_column(p, x, j))
        .collect::<Option<Vec<_>>>()
    else {
        tally.kink_in_step += 1;
        return Ok(());
    };
    for (j, col) in columns.iter().enumerate() {
        for (i, &num) in col.iter().enumerate() {
            let ad = fwd.matrix[(i, j)];
            prop_assert!(
                rel_close(ad, num, 1e-6),
                "J[{i},{j}] = {ad}, fd {num}\n{p:?} at {x:?}"
            );
        }
    }
    tally.finite_differences += 1;
    Ok(())
}

/// f64 = Dual = Var by value, forward = reverse, and both = finite differences, on 2 000
/// generated programs (more with `PROPTEST_CASES`). Prints how many reached each comparison
/// (`-- --nocapture`) and requires at least half of them to reach finite differences.
#[test]
fn forward_reverse_and_finite_differences_agree() {
    let tally = RefCell::new(Tally::default());
    let mut runner = TestRunner::new(config(2000));
    let outcome = runner.run(&program(), |(p, x)| {
        three_ways(&p, &x, &mut tally.borrow_mut())
    });
    if let Err(e) = outcome {
        panic!("{e}");
    }
    let t = tally.into_inner();
    println!(
        "{} programs: f64 = Dual = Var values on all; forward = reverse on {} ({} with a \
         non-finite value); finite differences on {} ({} on a kink, {} with a kink within the step)",
        t.programs, t.modes, t.non_finite, t.finite_differences, t.on_kink, t.kink_in_step
    );
    assert!(t.programs >= cases(2000) as usize, "{t:?}");
    assert!(
        2 * t.finite_differences >= t.programs,
        "too few reached finite differences: {t:?}"
    );
}

proptest! {
    #![proptest_config(config(512))]

    /// The chunked forward Jacobian (DualVec lanes) is bit-identical to single-tangent sweeps.
    #[test]
    fn chunked_forward_equals_single_tangent((p, x) in program()) {
        let chunked = jacobian_with(&p, &x, Mode::Forward).unwrap();
        let (_, rows) = forward::jacobian_rows(|v| p.eval(v), &x).unwrap();
        for (i, row) in rows.iter().enumerate() {
            for (j, &d) in row.iter().enumerate() {
                let c = chunked.matrix[(i, j)];
                prop_assert!(c.to_bits() == d.to_bits() || (c.is_nan() && d.is_nan()), "{c} vs {d}");
            }
        }
    }

    /// A vector reverse sweep gives, lane by lane, exactly the scalar sweeps' adjoints.
    #[test]
    fn vector_sweep_equals_scalar_sweeps((p, x) in program()) {
        let tape = Tape::new();
        let xs = tape.vars(&x);
        let ys = p.eval(&xs);
        let rec = tape.finish();
        let seeds: Vec<(Var, [f64; 4])> = ys
            .iter()
            .take(4)
            .enumerate()
            .map(|(l, &y)| {
                let mut e = [0.0; 4];
                e[l] = 1.0;
                (y, e)
            })
            .collect();
        let lanes = rec.sweep_vec(&seeds);
        for (l, &y) in ys.iter().take(4).enumerate() {
            let scalar = rec.gradient(y);
            for &xj in &xs {
                let (a, b) = (lanes.wrt(xj)[l], scalar.wrt(xj));
                prop_assert!(a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()) || (a == 0.0 && b == 0.0), "lane {a} vs scalar {b}");
            }
        }
    }
}
