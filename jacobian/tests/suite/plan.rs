//! The plan: Auto picks the cheaper mode by the cost model, and reports what ran.

use jacobian::{Direction, Function, Mode, Op, Options, estimate, jacobian, jacobian_with_options};

/// f: Rⁿ → Rᵐ, each output a different smooth mix of all inputs.
struct Mix {
    n: usize,
    m: usize,
}
impl Function for Mix {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        (0..self.m)
            .map(|i| {
                let w = T::constant(1.0 + i as f64 / 7.0);
                x.iter().map(|&v| (v * w).sin()).sum::<T>().tanh()
            })
            .collect()
    }
    fn sizes(&self) -> Option<(usize, usize)> {
        Some((self.n, self.m))
    }
}

#[test]
fn auto_takes_reverse_for_gradients_and_forward_for_tall() {
    let wide = Mix { n: 300, m: 1 };
    let j = jacobian(&wide, &vec![0.1; 300]).unwrap();
    assert_eq!(
        (j.plan.mode, j.plan.sweeps, j.plan.lanes),
        (Direction::Reverse, 1, 1)
    );
    assert!(
        j.plan.tape.nodes > 300,
        "the tape holds at least the inputs"
    );
    let tall = Mix { n: 3, m: 300 };
    let j = jacobian(&tall, &[0.1, 0.2, 0.3]).unwrap();
    assert_eq!(
        (j.plan.mode, j.plan.sweeps, j.plan.lanes),
        (Direction::Forward, 1, 3)
    );
    assert_eq!(j.plan.tape.nodes, 0);
    assert!(
        j.plan
            .to_string()
            .starts_with("forward mode: 1 sweep of 3 tangents for a 300×3")
    );
}

#[test]
fn sweeps_are_chunked() {
    let f = Mix { n: 20, m: 19 };
    let x: Vec<f64> = (0..20).map(|i| i as f64 / 20.0).collect();
    let fwd = jacobian_with_options(
        &f,
        &x,
        Options {
            mode: Mode::Forward,
            threads: false,
        },
    )
    .unwrap();
    // The plan's sweeps and lanes are what it reports to the user: a contract.
    assert_eq!((fwd.plan.sweeps, fwd.plan.lanes), (2, 16)); // ⌈20/16⌉
    let rev = jacobian_with_options(
        &f,
        &x,
        Options {
            mode: Mode::Reverse,
            threads: false,
        },
    )
    .unwrap();
    assert_eq!((rev.plan.sweeps, rev.plan.lanes), (3, 8)); // ⌈19/8⌉
    for (a, b) in fwd.matrix.iter().zip(rev.matrix.iter()) {
        assert!((a - b).abs() <= 1e-13 * a.abs().max(1.0), "{a} vs {b}");
    }
}

#[test]
fn auto_follows_the_estimate() {
    for (n, m) in [(1, 1), (2, 9), (9, 2), (64, 64), (6, 1), (100, 3), (3, 100)] {
        let e = estimate(n, m);
        let want = if e.forward <= e.reverse {
            Mode::Forward
        } else {
            Mode::Reverse
        };
        let j = jacobian(&Mix { n, m }, &vec![0.3; n]).unwrap();
        assert_eq!(j.plan.mode, want, "({n}, {m}): {e:?}");
        assert_eq!(j.plan.estimate, e);
    }
}

#[test]
fn threaded_sweeps_give_identical_matrices() {
    // Large enough that the first sweep predicts > 500 µs of remaining work; unoptimised
    // code reaches that with a sixth of the work (400² took 11.6 s of the test command).
    let n = if cfg!(debug_assertions) { 160 } else { 400 };
    let f = Mix { n, m: n };
    let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
    for mode in [Mode::Forward, Mode::Reverse] {
        let serial = jacobian_with_options(
            &f,
            &x,
            Options {
                mode,
                threads: false,
            },
        )
        .unwrap();
        let par = jacobian_with_options(
            &f,
            &x,
            Options {
                mode,
                threads: true,
            },
        )
        .unwrap();
        assert_eq!(serial.plan.threads, 1);
        if rayon::current_num_threads() > 1 {
            // The count the sweeps ran on, kept in the plan (not read again when it is shown).
            assert_eq!(par.plan.threads, rayon::current_num_threads(), "{mode:?}");
            let shown = format!("on {} threads", par.plan.threads);
            assert!(
                par.plan.to_string().contains(&shown),
                "{mode:?}: {}",
                par.plan
            );
        }
        assert_eq!(serial.value, par.value);
        let same = serial
            .matrix
            .iter()
            .zip(par.matrix.iter())
            .all(|(a, b)| a.to_bits() == b.to_bits());
        assert!(same, "{mode:?}: threaded matrix differs");
    }
}
