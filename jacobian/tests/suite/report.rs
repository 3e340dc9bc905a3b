//! The cost report: both modes run on one Jacobian, with values that must agree with each other
//! and with the plan. No assertion on timings (they depend on the machine), only that they exist.

use jacobian::{
    CostReport, Direction, Error, Function, Mode, Op, cost_report, cost_report_with_runs, estimate,
};
use std::time::Duration;

/// `f(x) = tanh(A·sin x)` with a fixed m×n matrix: about 2·m·n tape nodes.
struct Dense {
    n: usize,
    m: usize,
}

impl Function for Dense {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let s: Vec<T> = x.iter().map(|v| v.sin()).collect();
        (0..self.m)
            .map(|i| {
                s.iter()
                    .enumerate()
                    .map(|(j, &s)| T::constant(((i + 2 * j) as f64).sin()) * s)
                    .sum::<T>()
                    .tanh()
            })
            .collect()
    }
    fn sizes(&self) -> Option<(usize, usize)> {
        Some((self.n, self.m))
    }
}

fn report(n: usize, m: usize) -> CostReport {
    let x: Vec<f64> = (0..n).map(|j| 0.1 * j as f64 - 0.4).collect();
    cost_report_with_runs(&Dense { n, m }, &x, 3).expect("a valid input")
}

/// The tangents per forward sweep the drivers use for k columns: k itself up to 4, 8 up to 8,
/// else 16.
fn lanes(k: usize) -> usize {
    match k {
        0..=4 => k,
        5..=8 => 8,
        _ => 16,
    }
}

/// The adjoints per reverse sweep for k rows: 1, 2, 4 or 8.
fn adjoints(k: usize) -> usize {
    match k {
        1 => 1,
        2 => 2,
        3..=4 => 4,
        _ => 8,
    }
}

#[test]
fn sweeps_lanes_and_tape_are_consistent() {
    for (n, m) in [(1, 1), (3, 1), (20, 2), (2, 20), (9, 17), (33, 5)] {
        let r = report(n, m);
        assert_eq!((r.n, r.m), (n, m));
        assert_eq!(r.runs, 3);

        let f = &r.forward;
        assert_eq!(f.mode, Mode::Forward);
        assert_eq!(f.lanes, lanes(n), "{n}×{m}");
        assert_eq!(
            f.sweeps,
            n.div_ceil(f.lanes),
            "forward sweeps = ⌈n/N⌉ for {n}×{m}"
        );
        assert_eq!(
            (f.tape.nodes, f.tape.bytes),
            (0, 0),
            "forward mode keeps no tape"
        );
        assert_eq!(f.plan.mode, Mode::Forward);
        assert_eq!(f.plan.reason, "mode forced by the caller");
        assert_eq!(f.plan.threads, 1, "threads are off for a fair timing");

        let b = &r.reverse;
        assert_eq!(b.mode, Mode::Reverse);
        assert_eq!(b.lanes, adjoints(m), "{n}×{m}");
        assert_eq!(
            b.sweeps,
            m.div_ceil(b.lanes),
            "reverse sweeps = ⌈m/Q⌉ for {n}×{m}"
        );
        // n inputs, n sines, m rows of n products and n − 1 sums, m tanh.
        let t = b.tape;
        assert!(t.nodes >= n + m, "{} nodes for {n}×{m}", t.nodes);
        assert_eq!(t.bytes, 4 * t.nodes + 12 * t.edges + 4 * t.unit_edges);
        assert_eq!(t, b.plan.tape);
        assert_eq!(b.plan.threads, 1);

        let e = estimate(n, m);
        assert_eq!((f.estimate, b.estimate), (e.forward, e.reverse));
        let cheaper = if e.forward <= e.reverse {
            Mode::Forward
        } else {
            Mode::Reverse
        };
        assert_eq!(r.auto.mode, cheaper, "the auto plan follows the cost model");
        assert_eq!(r.auto.threads, 1);

        assert!(
            r.max_difference < 1e-12,
            "the modes agree: {}",
            r.max_difference
        );
        for t in [f.time, b.time, r.eval_time] {
            assert!(t > Duration::ZERO);
        }
        assert!(f.evaluations(r.eval_time) > 0.0);
        assert_eq!(
            r.faster() == Direction::Forward,
            r.forward.time <= r.reverse.time
        );
    }
}

#[test]
fn wide_and_tall_choose_opposite_modes() {
    assert_eq!(report(64, 1).auto.mode, Mode::Reverse);
    assert_eq!(report(1, 64).auto.mode, Mode::Forward);
    let wide = report(64, 1);
    assert_eq!((wide.forward.sweeps, wide.reverse.sweeps), (4, 1)); // ⌈64/16⌉
}

#[test]
fn display_is_a_table() {
    let r = report(12, 3);
    let text = r.to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 7, "{text}");
    assert_eq!(
        lines[0],
        "cost of the 3×12 Jacobian of f: R^12 → R^3 (median of 3 runs, one thread)"
    );
    for word in [
        "mode",
        "sweeps",
        "lanes",
        "nodes",
        "edges",
        "tape bytes",
        "B/node",
        "time",
        "× f(x)",
        "model",
    ] {
        assert!(lines[1].contains(word), "{text}");
    }
    let cells: Vec<&str> = lines[2].split_whitespace().collect();
    assert_eq!(&cells[..6], ["forward", "1", "16", "0", "0", "0"], "{text}");
    let cells: Vec<&str> = lines[3].split_whitespace().collect();
    let t = r.reverse.tape;
    let nodes = t.nodes.to_string();
    let edges = (t.edges + t.unit_edges).to_string();
    let bytes = t.bytes.to_string();
    let per_node = format!("{:.1}", t.bytes_per_node());
    assert_eq!(
        &cells[..7],
        ["reverse", "1", "4", &nodes, &edges, &bytes, &per_node],
        "{text}"
    );
    let e = jacobian::estimate(12, 3);
    let expected = if e.forward <= e.reverse {
        "auto plan: forward mode: 1 sweep of 16 tangents"
    } else {
        "auto plan: reverse mode: 1 sweep of 4 adjoints"
    };
    assert!(lines[5].starts_with(expected), "{text}");
    assert!(lines[6].starts_with("measured: "), "{text}");
}

#[test]
fn default_runs_and_errors() {
    struct Square;
    impl Function for Square {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            vec![x[0] * x[0]]
        }
        fn sizes(&self) -> Option<(usize, usize)> {
            Some((1, 1))
        }
    }
    let r = cost_report(&Square, &[3.0]).unwrap();
    assert_eq!(r.runs, 5);
    assert_eq!(r.max_difference, 0.0);
    assert!(matches!(
        cost_report(&Square, &[1.0, 2.0]),
        Err(Error::InputLength {
            expected: 1,
            found: 2
        })
    ));
    // Zero runs still time once.
    assert_eq!(cost_report_with_runs(&Square, &[3.0], 0).unwrap().runs, 1);
}
