//! A capacity hint: the thread's kept buffers (`shared_ops::memory`) readied for a recording of
//! a given size before the call that needs them.

use crate::storage::TapeData;
use crate::{Op, Var};
use shared_ops::memory::{give, take};

/// Readies this thread's kept buffers for a recording of `inputs` inputs and about `nodes`
/// nodes on a tape of `f64`, and its reverse sweep: a capacity hint for the first call.
///
/// The buffers are allocated and every page of them written once, outside the call that needs
/// them; the next driver call of up to `inputs` inputs and `nodes` nodes (with as many edges of
/// each kind) then grows no array and meets no fresh page (`benches/first_call.rs` measures
/// it). The buffers stay within the [spare limit](shared_ops::memory::spare_limit);
/// [`TapeStats::nodes`](crate::TapeStats) of an earlier recording is a good hint.
///
/// ```
/// use shared_ops::memory;
/// memory::release_memory();
/// reverse::warm_up(1_000, 100_000);
/// assert!(memory::spare_bytes() >= 100_000 * (4 + 12 + 4 + 8) + 1_000 * 16);
/// let (_, g) = reverse::gradient(|x: &[reverse::Var]| x[0] * x[1], &[2.0, 3.0]);
/// assert_eq!(g, vec![3.0, 2.0]);
/// ```
pub fn warm_up(inputs: usize, nodes: usize) {
    warm_up_for::<f64>(inputs, nodes);
}

/// [`warm_up`] for a tape of another scalar type `T` (a `Tape<Dual<f64>>`, a `Tape<Var>`).
///
/// ```
/// use shared_ops::memory;
/// memory::release_memory();
/// reverse::warm_up_for::<forward::Dual<f64>>(10, 1_000);
/// assert!(memory::spare_bytes() >= 1_000 * (4 + 16 + 4 + 16));
/// ```
pub fn warm_up_for<T: Op>(inputs: usize, nodes: usize) {
    let mut data = take::<TapeData<T>>();
    data.prefault(nodes);
    give(data);
    prefaulted::<T>(nodes);
    prefaulted::<Var<T>>(inputs);
}

/// A kept `Vec<X>` with room for `len` items, every page written once, given back.
fn prefaulted<X: Copy + Default + 'static>(len: usize) {
    let mut v = take::<Vec<X>>();
    v.clear();
    v.resize(len, X::default());
    give(v);
}
