//! The schedule of Rosenbrock's recording: what it bypasses, and its runs.

use crate::Tape;

/// Rosenbrock's term `(1 − x₀)² + 100·(x₁ − x₀²)²`, summed: of each term's nodes, `x₀²`
/// (read once, by the difference), the two squares' sum and its two summands (read once,
/// by the sum) are bypassed; 6 of its 10 edges are swept. The gradient keeps its exact
/// value. (The counts are the schedule's contract: bypassing is what makes it pay.)
#[test]
fn rosenbrock_terms_bypass_four_nodes_and_four_edges() {
    let tape = Tape::replayable();
    let x = tape.vars(&[0.5, 2.0, -1.0]);
    let y: crate::Var = x
        .windows(2)
        .map(|w| {
            let (a, b) = (1.0 - w[0], w[1] - w[0] * w[0]);
            a * a + b * b * 100.0
        })
        .sum();
    let mut rec = tape.finish();
    rec.reevaluate(&[0.5, 2.0, -1.0]).unwrap();
    let s = rec
        .with_data(|d| d.schedule().cloned())
        .expect("a schedule");
    assert_eq!(s.bypassed.len(), 2 * 4);
    let swept = s.weighted.len() + s.plus.len() + s.minus.len();
    let negated: u32 = (s.segments.iter())
        .filter(|g| g.kind == 1)
        .map(|g| g.end - g.start)
        .sum();
    assert_eq!((swept, negated), (2 * 6, 2));
    // With aᵢ = 1 − xᵢ and bᵢ = xᵢ₊₁ − xᵢ² (a = (0.5, −1), b = (1.75, −5)): ∂/∂x₀ =
    // −2a₀ − 400·x₀·b₀, ∂/∂x₁ = 200·b₀ − 2a₁ − 400·x₁·b₁, ∂/∂x₂ = 200·b₁.
    let g = rec.sweep_wrt(&[(y, 1.0)], &x);
    assert_eq!(g, [-1.0 - 350.0, 350.0 + 2.0 + 4000.0, -1000.0]);
}

/// Rosenbrock n = 1000: all but a few of the swept edges are in runs, and each run's
/// stored edges are its first plus its step, as the sweep's unchecked loops assume.
#[test]
fn rosenbrock_edges_are_swept_in_runs_whose_edges_follow_their_step() {
    let (rec, _, _) = crate::testing::rosenbrock_replayed(1000);
    let s = rec.with_data(|d| d.schedule().cloned()).unwrap();
    let (mut swept, mut in_runs) = (0, 0);
    for g in &s.segments {
        let r = g.start as usize..g.end as usize;
        swept += r.len();
        let Some((dvu, dk)) = g.step else { continue };
        in_runs += r.len();
        let (edges, ks) = match g.kind {
            0 | 1 => (&s.weighted[r.clone()], Some(&s.edge[r])),
            2 => (&s.plus[r], None),
            _ => (&s.minus[r], None),
        };
        for i in 1..edges.len() {
            assert_eq!(edges[i - 1].wrapping_add(dvu), edges[i]);
            if let Some(ks) = ks {
                assert_eq!(ks[i - 1].wrapping_add(dk), ks[i]);
            }
        }
    }
    assert_eq!(swept, 999 * 6);
    assert!(in_runs + 10 >= swept, "{in_runs} of {swept} edges in runs");
}
