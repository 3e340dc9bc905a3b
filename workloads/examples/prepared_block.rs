//! The 2×15 bundle-adjustment block, for instruction counts: the hand-built 16-lane sweep and
//! `PreparedJacobian::jacobian_into`, each called N times (10 000 by default) in its own
//! function, so that callgrind can count each alone. Instructions per call are the difference
//! of two runs (N = 11 000 and 1 000) divided by 10 000, or one run's total divided by N:
//!
//! ```sh
//! cargo build --release -p workloads --example prepared_block
//! valgrind --tool=callgrind --toggle-collect='prepared_block::run_prepared' \
//!     target/release/examples/prepared_block 10000
//! valgrind --tool=callgrind --toggle-collect='prepared_block::run_hand' \
//!     target/release/examples/prepared_block 10000
//! ```

use std::hint::black_box;

use forward::DualVec;
use jacobian::{Jacobian, PreparedJacobian};
use workloads::Function;
use workloads::sparse::{BaBlock, BundleAdjustment};

/// One hand-built sweep of 16 lanes over the block's 15 inputs (as `benches/lanes.rs`).
#[inline(never)]
fn hand_16_lanes(f: &BaBlock, x: &[f64], out: &mut [[f64; 15]; 2]) {
    let xs: [DualVec<f64, 16>; 15] = std::array::from_fn(|j| DualVec::variable(x[j], j));
    let ys = f.eval(&xs);
    for (row, y) in out.iter_mut().zip(&ys) {
        row.copy_from_slice(&y.tangent[..15]);
    }
}

#[inline(never)]
fn run_hand(block: &BaBlock, x: &[f64], calls: usize) -> f64 {
    let mut out = [[0.0; 15]; 2];
    let mut sum = 0.0;
    for _ in 0..calls {
        hand_16_lanes(block, black_box(x), &mut out);
        sum += out[1][3];
    }
    sum
}

#[inline(never)]
fn run_prepared(
    p: &mut PreparedJacobian<BaBlock>,
    j: &mut Jacobian,
    x: &[f64],
    calls: usize,
) -> f64 {
    let mut sum = 0.0;
    for _ in 0..calls {
        p.jacobian_into(black_box(x), j).unwrap();
        sum += j.matrix[(1, 3)];
    }
    sum
}

fn main() {
    let calls = std::env::args()
        .nth(1)
        .map_or(10_000, |a| a.parse().expect("a number of calls"));
    let ba = BundleAdjustment::new(49, 7776, 31_843);
    let (block, x) = BaBlock::of(&ba, 1234);
    let mut p = PreparedJacobian::new(block, &x).unwrap();
    let mut j = p.jacobian(&x).unwrap();
    let (hand, prepared) = (
        run_hand(&block, &x, calls),
        run_prepared(&mut p, &mut j, &x, calls),
    );
    assert_eq!(hand, prepared, "both compute the same entry");
    println!("{calls} calls of each; J[1, 3] summed: {hand}");
}
