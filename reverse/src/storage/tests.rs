//! The fast appends of the tape store exactly what the slow path stores.

use super::*;

/// The fast path (plain writes under `limit`) stores exactly what the slow path stores:
/// a long random mix of node kinds, from empty buffers through many growths, recorded on an
/// tape on the fast path and on one whose every node takes the slow path.
#[test]
fn fast_appends_equal_slow_appends_across_growth() {
    let mut fast = TapeData::<f64>::default();
    let mut slow = TapeData::<f64>::default();
    fast.reset(Keeps::Sweeps);
    slow.never_fast = true;
    slow.reset(Keeps::Sweeps);
    assert_eq!(slow.limit, 0, "every node takes the slow path");
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = |m: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % m
    };
    for i in 0..60_000u32 {
        let p = |k: u64| (k as u32) % i.max(1);
        let w = f64::from(i) * 0.5;
        match next(7) {
            0 => {
                let (a, b) = (p(next(1 << 20)), p(next(1 << 20)));
                assert_eq!(
                    fast.weighted([a, b], [w, -w]),
                    slow.weighted([a, b], [w, -w])
                );
            }
            1 => {
                let (a, b, c) = (p(next(1 << 20)), p(next(1 << 20)), p(next(1 << 20)));
                let e = ([a, b, c], [w, 1.0, 2.0]);
                assert_eq!(fast.weighted(e.0, e.1), slow.weighted(e.0, e.1));
            }
            2 => assert_eq!(fast.input(), slow.input()),
            3 => {
                let a = p(next(1 << 20)) | NEG;
                assert_eq!(fast.unit([a]), slow.unit([a]));
            }
            4 => {
                let (a, b) = (p(next(1 << 20)), p(next(1 << 20)) | NEG);
                assert_eq!(fast.unit([a, b]), slow.unit([a, b]));
            }
            5 => {
                let k = next(40) as usize;
                let edges: Vec<(u32, f64)> = (0..k).map(|j| (p(next(1 << 20)), j as f64)).collect();
                let (ef, es) = (edges.iter().copied(), edges.iter().copied());
                assert_eq!(fast.weighted_exact(k, ef), slow.weighted_exact(k, es));
            }
            _ => {
                let k = next(30) as usize;
                let (bf, bs) = (fast.staged.len(), slow.staged.len());
                for _ in 0..k {
                    let a = p(next(1 << 20));
                    fast.stage(a);
                    slow.stage(a);
                }
                assert_eq!(fast.unit_staged(bf), slow.unit_staged(bs));
            }
        }
        assert!(fast.len() <= fast.start.capacity());
    }
    assert_eq!(fast.starts(), slow.starts());
    assert_eq!(fast.parents(), slow.parents());
    assert_eq!(fast.partials(), slow.partials());
    assert_eq!(fast.units(), slow.units());
    // Shrinking moves the bound with the capacities (no room left: the next node takes the
    // slow path and grows), and appending still works.
    fast.shrink_to_fit();
    assert_eq!(fast.limit, fast.len());
    let n = fast.len() as u32;
    assert_eq!(fast.weighted([0, 1], [1.0, 2.0]), n);
    assert_eq!(fast.unit([0, 1 | NEG]), n + 1);
}
