//! Forward = reverse = finite differences, and f64 = Dual = Var values, on generated programs.

mod common;

use common::{Program, fd_column, program, rel_close};
use forward::Dual;
use jacobian::{Function, Mode, jacobian_with};
use proptest::prelude::*;
use reverse::{Tape, Var};

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

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, max_global_rejects: 4096, ..ProptestConfig::default() })]

    #[test]
    fn forward_reverse_and_finite_differences_agree((p, x) in program()) {
        values_agree(&p, &x)?;
        let fwd = jacobian_with(&p, &x, Mode::Forward).unwrap();
        let rev = jacobian_with(&p, &x, Mode::Reverse).unwrap();
        prop_assume!(fwd.value.iter().all(|v| v.is_finite()));
        prop_assert_eq!(&fwd.value, &rev.value);
        prop_assert_eq!(fwd.matrix.shape(), (p.outputs.len(), p.n));
        for (a, b) in fwd.matrix.iter().zip(rev.matrix.iter()) {
            prop_assert!(rel_close(*a, *b, 1e-12), "forward {a} vs reverse {b}\n{p:?} at {x:?}");
        }
        // Central differences, where they can be trusted: not at the kink and tie points the
        // generator plants on purpose, and no kink within the step.
        prop_assume!(x.iter().all(|v| v.abs() != 0.0 && v.abs() != 1.0));
        let mut columns = Vec::new();
        for j in 0..p.n {
            let col = fd_column(&p, &x, j);
            prop_assume!(col.is_some());
            columns.push(col.unwrap());
        }
        for (j, col) in columns.iter().enumerate() {
            for (i, &num) in col.iter().enumerate() {
                let ad = fwd.matrix[(i, j)];
                prop_assert!(rel_close(ad, num, 1e-6), "J[{i},{j}] = {ad}, fd {num}\n{p:?} at {x:?}");
            }
        }
    }

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
