//! Prepared objects own their buffers: their calls take nothing from the thread's kept buffers
//! (`shared_ops::memory`), and dropping them frees their memory instead of keeping it.

use jacobian::sparse::{PreparedSparseJacobian, SparseOptions};
use jacobian::{Function, Mode, Op, PreparedGradient, PreparedJacobian};
use shared_ops::memory;

/// Rosenbrock's banana of n inputs.
struct Banana;
impl Function for Banana {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let hundred = T::constant(100.0);
        let s = x
            .windows(2)
            .map(|w| {
                let (a, b) = (T::one() - w[0], w[1] - w[0] * w[0]);
                a * a + hundred * b * b
            })
            .sum();
        vec![s]
    }
}

/// A tridiagonal system: reverse sweeps by row colours.
struct Chain;
impl Function for Chain {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let n = x.len();
        (0..n)
            .map(|i| x[i].sin() * x[(i + 1) % n] + x[(i + n - 1) % n])
            .collect()
    }
}

fn point(n: usize) -> Vec<f64> {
    (0..n).map(|i| 0.5 + 1e-3 * i as f64).collect()
}

#[test]
fn a_prepared_gradient_takes_nothing_and_frees_its_recording() {
    let x = point(2000);
    let mut p = PreparedGradient::new(Banana, &x).unwrap();
    let first = p.gradient(&x).unwrap(); // prepares the replay (its scratch is kept)
    memory::release_memory();
    for _ in 0..3 {
        assert_eq!(p.gradient(&x).unwrap(), first);
    }
    assert_eq!(memory::spare_bytes(), 0, "its calls took and kept nothing");
    drop(p);
    assert_eq!(
        memory::spare_bytes(),
        0,
        "dropped, its recording was freed, not kept"
    );
}

#[test]
fn a_prepared_jacobian_takes_nothing_and_frees_its_recording() {
    let x = point(300);
    let mut p = PreparedJacobian::with_mode(Chain, &x, Mode::Reverse).unwrap();
    let first = p.jacobian(&x).unwrap().matrix;
    memory::release_memory();
    for _ in 0..2 {
        assert_eq!(p.jacobian(&x).unwrap().matrix, first);
    }
    assert_eq!(memory::spare_bytes(), 0, "its calls took and kept nothing");
    drop(p);
    assert_eq!(
        memory::spare_bytes(),
        0,
        "dropped, its recording was freed, not kept"
    );
}

#[test]
fn a_prepared_sparse_jacobian_by_rows_records_in_its_own_buffers() {
    let x = point(300);
    let by_rows = SparseOptions {
        mode: Mode::Reverse,
        ..SparseOptions::default()
    };
    let mut p = PreparedSparseJacobian::with_options(Chain, &x, by_rows).unwrap();
    let first = p.jacobian(&x).unwrap().triplets();
    memory::release_memory();
    for k in 1..3 {
        let at = point(300)
            .iter()
            .map(|v| v + 1e-3 * k as f64)
            .collect::<Vec<_>>();
        let j = p.jacobian(&at).unwrap();
        assert_eq!(j.triplets().len(), first.len());
    }
    assert_eq!(memory::spare_bytes(), 0, "its calls took and kept nothing");
    drop(p);
    assert_eq!(
        memory::spare_bytes(),
        0,
        "dropped, its recording was freed, not kept"
    );
}

/// A compiled gradient keeps of the recording's edges only those its code reads: where the
/// code computes every partial again (Rosenbrock's arithmetic), none, and it keeps within half
/// again the plain recording. Its gradient is the interpreter's.
#[cfg(feature = "jit")]
#[test]
fn a_compiled_gradient_keeps_the_edges_its_code_reads() {
    use jacobian::Preparation;
    let x = point(4000);
    let y: Vec<f64> = x.iter().map(|v| v - 1.5).collect();
    let mut p = PreparedGradient::with(Banana, &x, Preparation::Compile).unwrap();
    let plan = p.plan().clone();
    assert_eq!(plan.strategy, Preparation::Compile, "{plan}");
    let ratio = plan.kept_bytes as f64 / plan.recording_bytes as f64;
    assert!(ratio <= 1.5, "{ratio:.2}× the recording\n{plan}");
    for point in [&y, &x] {
        assert_eq!(
            p.gradient(point).unwrap(),
            jacobian::gradient(&Banana, point).unwrap()
        );
    }
}
