//! How compressed sweeps are read back: forward sweeps of more colours than lanes, each read
//! from its own outputs, and the check of a local pattern that sees a branch flip in any sweep.

use jacobian::sparse::{
    Detection, PreparedSparseJacobian, SparseOptions, Strategy, sparse_jacobian_with,
};
use jacobian::{Function, Mode, Op, jacobian_with};

/// Row 1 reads x₁ too when x₀ ≤ 0.
struct Widens;

impl Function for Widens {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        if x[0] > T::zero() {
            vec![x[0] * x[1], x[2]]
        } else {
            vec![x[0] * x[1], x[2] + x[1] * x[1]]
        }
    }
}

#[test]
fn a_prepared_local_pattern_is_detected_again_when_the_branch_flips() {
    let mut p = PreparedSparseJacobian::new(Widens, &[1.0, 2.0, 3.0]).unwrap();
    assert_eq!(p.plan().detection, Detection::Local);
    // Columns 0 and 2 share a colour, column 1 has its own; row 1 used only column 2's.
    assert_eq!(p.colouring().unwrap().colours, vec![0, 1, 0]);
    let same_branch = p.jacobian(&[2.0, 2.0, 3.0]).unwrap();
    assert_eq!(
        (p.redetections(), same_branch.plan.redetected.clone()),
        (0, None)
    );
    // At x₀ < 0, row 1 gains x₁, whose colour row 1 did not use: the check sees it.
    let j = p.jacobian(&[-1.0, 2.0, 3.0]).unwrap();
    assert_eq!(p.redetections(), 1);
    assert!(j.plan.redetected.is_some(), "{}", j.plan);
    assert!(j.plan.to_string().contains("pattern detected again"));
    assert_eq!(
        j.triplets(),
        vec![(0, 0, 2.0), (0, 1, -1.0), (1, 1, 4.0), (1, 2, 1.0)]
    );
}

/// The rows trade inputs when x₀ ≤ 0: the colourings on either side differ, with as many
/// colours.
struct Trades;

impl Function for Trades {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        if x[0] > T::zero() {
            vec![x[0] * x[1], x[2] * x[3]]
        } else {
            vec![x[0] * x[2], x[1] * x[3]]
        }
    }
}

/// A prepared call seeds by the colouring it has now: a call after the first writes only the
/// primals, which must not survive a new colouring of as many lanes.
#[test]
fn a_prepared_call_seeds_by_the_colouring_it_has_now() {
    let mut p = PreparedSparseJacobian::new(Trades, &[1.0, 2.0, 3.0, 4.0]).unwrap();
    let dense = |x: &[f64]| jacobian_with(&Trades, x, Mode::Forward).unwrap().matrix;
    let mut j = p.jacobian(&[1.0, 2.0, 3.0, 4.0]).unwrap();
    assert_eq!(p.colouring().unwrap().colours, vec![0, 1, 0, 1]);
    for x in [[1.5, 2.0, 3.0, 4.0], [2.5, -1.0, 0.5, 2.0]] {
        assert_eq!(p.jacobian(&x).unwrap().to_dense(), dense(&x));
        p.jacobian_into(&x, &mut j).unwrap();
        assert_eq!(j.to_dense(), dense(&x));
    }
    let x = [-1.0, 2.0, 3.0, 4.0];
    p.redetect(&x).unwrap();
    assert_eq!(p.colouring().unwrap().colours, vec![0, 0, 1, 1]);
    for x in [x, [-2.0, 1.0, -3.0, 0.5]] {
        assert_eq!(p.jacobian(&x).unwrap().to_dense(), dense(&x));
        assert_eq!(p.jacobian(&x).unwrap().to_dense(), dense(&x));
    }
    // Through another strategy and back.
    p.use_strategy(Strategy::DenseForward);
    assert_eq!(p.jacobian(&x).unwrap().to_dense(), dense(&x));
    p.use_strategy(Strategy::Columns);
    for x in [x, [-0.5, 3.0, 1.0, 2.0]] {
        assert_eq!(p.jacobian(&x).unwrap().to_dense(), dense(&x));
    }
}

/// Output 0 reads all 40 inputs, so natural colouring gives input j colour j: three forward
/// sweeps of 16 lanes (16 + 16 + 8). Output 1 reads x₃₉ (colour 39, the third sweep's lane 7)
/// only when x₀ ≤ 0, a branch global detection refuses.
struct WideRow;

impl Function for WideRow {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let total = x.iter().fold(T::zero(), |s, v| s + v.sin());
        let extra = if x[0] > T::zero() {
            T::zero()
        } else {
            x[39] * x[39]
        };
        let mut y = vec![total, x[1] * x[2] + extra];
        y.extend(x.windows(2).map(|w| w[0] * w[1]));
        y
    }
}

fn point(shift: f64) -> Vec<f64> {
    (0..40).map(|i| shift + 0.1 * i as f64).collect()
}

#[test]
fn forward_sweeps_of_more_colours_than_lanes_read_each_sweep_from_its_own_outputs() {
    let forced = SparseOptions {
        mode: Mode::Forward,
        ..SparseOptions::default()
    };
    let (x, y) = (point(0.5), point(0.7));
    let mut p = PreparedSparseJacobian::with_options(WideRow, &x, forced).unwrap();
    let at_y = p.jacobian(&y).unwrap();
    let plan = &at_y.plan;
    assert_eq!(plan.detection, Detection::Local);
    assert_eq!(
        (plan.column_colours, plan.sweeps, plan.lanes),
        (Some(40), 3, 16)
    );
    // Compressed lanes compute the products of unit seeds: bit for bit.
    let dense = jacobian_with(&WideRow, &y, Mode::Forward).unwrap();
    assert_eq!(at_y.to_dense(), dense.matrix);
    assert_eq!(at_y.value, dense.value);
    let mut into = p.jacobian(&x).unwrap();
    p.jacobian_into(&y, &mut into).unwrap();
    assert_eq!(into.to_dense(), dense.matrix);
    assert_eq!(p.redetections(), 0);
    let once = sparse_jacobian_with(&WideRow, &y, forced).unwrap();
    assert_eq!(once.to_dense(), dense.matrix);
}

#[test]
fn the_check_sees_a_nonzero_outside_the_pattern_in_a_later_sweep() {
    let forced = SparseOptions {
        mode: Mode::Forward,
        ..SparseOptions::default()
    };
    let mut p = PreparedSparseJacobian::with_options(WideRow, &point(0.5), forced).unwrap();
    // At x₀ < 0 output 1 reads x₃₉, whose lane lies in the third sweep.
    let flipped = point(-1.0);
    let mut j = p.jacobian(&point(0.6)).unwrap();
    p.jacobian_into(&flipped, &mut j).unwrap();
    assert_eq!(p.redetections(), 1);
    assert!(j.plan.redetected.is_some(), "{}", j.plan);
    let dense = jacobian_with(&WideRow, &flipped, Mode::Forward).unwrap();
    assert_eq!(j.to_dense(), dense.matrix);
    assert_ne!(dense.matrix[(1, 39)], 0.0);
}

/// yᵢ = xᵢ·xᵢ₊₁ + sin xᵢ₊₂ (indices mod n).
struct Ring(usize);

impl Function for Ring {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let n = self.0;
        (0..n)
            .map(|i| x[i] * x[(i + 1) % n] + x[(i + 2) % n].sin())
            .collect()
    }
}

/// Only sweeps by rows read local detection's recording: an object sweeping by columns gives
/// it back to the thread's kept buffers when it is made, instead of holding it for good; an
/// object by rows owns it, and frees it (rather than keeping it in the thread's buffers) when
/// it no longer sweeps by rows.
#[test]
fn only_sweeps_by_rows_keep_the_detection_recording() {
    let (f, x) = (Ring(2000), vec![0.5; 2000]);
    let kept_after = |mode| {
        shared_ops::memory::release_memory();
        let options = SparseOptions {
            mode,
            detection: Detection::Local,
            ..SparseOptions::default()
        };
        let p = PreparedSparseJacobian::with_options(Ring(f.0), &x, options).unwrap();
        (shared_ops::memory::spare_bytes(), p)
    };
    let (columns, by_columns) = kept_after(Mode::Forward);
    let (rows, by_rows) = kept_after(Mode::Reverse);
    // The recording of 2 000 outputs of four operations holds well over 100 kB.
    assert!(
        columns > rows + 100_000,
        "{columns} bytes kept against {rows}"
    );
    // Both objects still give the Jacobian (rows from the recording they kept).
    let (mut a, mut b) = (by_columns, by_rows);
    let want = a.jacobian(&x).unwrap().triplets();
    assert_eq!(b.jacobian(&x).unwrap().triplets(), want);
    // An object by rows switched to columns before its first call frees the recording at the
    // switch (its memory is its own: none goes to the thread's buffers); by rows again, it
    // records afresh.
    let (_, mut c) = kept_after(Mode::Reverse);
    let before = shared_ops::memory::spare_bytes();
    c.use_strategy(Strategy::Columns);
    assert_eq!(shared_ops::memory::spare_bytes(), before);
    assert_eq!(c.jacobian(&x).unwrap().triplets(), want);
    c.use_strategy(Strategy::Rows);
    assert_eq!(c.jacobian(&x).unwrap().triplets(), want);
}
