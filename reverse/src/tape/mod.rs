//! The tape: a flat Wengert list per recording, registered with this thread while it records.
//!
//! * [`storage`]: the arrays (structure of arrays) and how a node is appended;
//! * [`live`]: the thread's registry of recording tapes, which `Var` arithmetic appends to;
//! * [`warm_up`]: the thread's kept buffers readied for a recording's size.
//!
//! A dropped tape leaves its arrays to the next tape of the same scalar type on the same
//! thread, in the kept buffers of `shared_ops::memory`.

pub(crate) mod live;
mod var;
pub(crate) mod warm_up;

use crate::storage::append::With;
use crate::storage::{Keeps, Operands, TapeData};
use core::marker::PhantomData;
use core::mem::ManuallyDrop;
use core::ptr::NonNull;
use live::Borrow;
use shared_ops::Op;
use shared_ops::memory;
pub use var::Var;

/// A recording: the handle of one Wengert list on this thread.
///
/// Create it, make inputs with [`Tape::var`], compute with the returned [`Var`]s (every
/// operation appends one node), then sweep adjoints back as often as needed with
/// [`Tape::gradient`] or [`Tape::sweep`]. Dropping the tape ends the recording; its `Var`s then
/// panic with a clear message if used in arithmetic again.
///
/// The tape is generic over its scalar `T` (`f64` by default): a `Tape<Dual<f64>>` records
/// values and partials that carry a tangent (forward-over-reverse), a `Tape<Var<f64>>` records
/// them on an outer tape (reverse-over-reverse). Tapes nest: any number record at once on a
/// thread, each `Var` appending to its own.
///
/// A tape is tied to its thread (`!Send`); [`Tape::finish`] detaches the recording for sweeps on
/// any thread.
///
/// ```
/// use reverse::Tape;
///
/// let tape = Tape::new();
/// let x = tape.var(2.0);
/// let z = x * x + 3.0;
/// assert_eq!(z.value(), 7.0);
/// assert_eq!(tape.gradient(z).wrt(x), 4.0);
/// ```
pub struct Tape<T: Op = f64> {
    id: u64,
    data: NonNull<TapeData<T>>,
    /// Give the arrays to the thread's kept buffers when done (see [`Recording::free_on_drop`]).
    pooled: bool,
    /// `!Send` and `!Sync` (the registry is thread-local), and owns a `TapeData<T>`.
    _owns: PhantomData<(TapeData<T>, *const ())>,
}

impl<T: Op> Default for Tape<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Op> Tape<T> {
    /// Starts a recording on this thread.
    pub fn new() -> Tape<T> {
        Self::open(0, Keeps::Sweeps)
    }

    /// Starts a recording with room for `nodes` nodes (and as many edges). Buffers kept from an
    /// earlier recording on this thread are reused when there are some (see
    /// [`spare_limit`](shared_ops::memory::spare_limit)).
    ///
    /// ```
    /// let tape = reverse::Tape::<f64>::with_capacity(1000);
    /// assert!(tape.is_empty());
    /// ```
    pub fn with_capacity(nodes: usize) -> Tape<T> {
        Self::open(nodes, Keeps::Sweeps)
    }

    /// Starts a *replayable* recording: besides what sweeps need, it keeps its program (each
    /// node's operation, operands and value, and every branch decision), so that the finished
    /// recording can be evaluated again at new points ([`Recording::reevaluate`], see
    /// [`replay`](crate::replay)). That costs `size_of::<T>() + 10` bytes more per node, and
    /// recording takes longer.
    ///
    /// ```
    /// let tape = reverse::Tape::replayable();
    /// let x = tape.var(2.0);
    /// let y = x * x;
    /// let mut rec = tape.finish();
    /// rec.reevaluate(&[3.0])?;
    /// assert_eq!(rec.gradient(y).wrt(x), 6.0);
    /// # Ok::<(), reverse::ReplayError>(())
    /// ```
    pub fn replayable() -> Tape<T> {
        Self::open(0, Keeps::Program)
    }

    /// Starts a *traced* recording: a replayable one that also keeps an edge for every operand
    /// (even where its partial is 0, as for the loser of `max`), so that it can be printed
    /// ([`Tape::trace_primal`], [`Tape::to_dot`], …) and re-evaluated.
    ///
    /// ```
    /// let tape = reverse::Tape::traced();
    /// let x = tape.named_var("x", 2.0);
    /// let _ = x * x;
    /// assert!(tape.to_text().contains("x * x") || tape.to_text().contains("*"));
    /// ```
    pub fn traced() -> Tape<T> {
        Self::open(0, Keeps::Trace)
    }

    fn open(nodes: usize, keeps: Keeps) -> Tape<T> {
        let mut data = memory::take::<TapeData<T>>();
        data.reset(keeps);
        data.reserve(nodes);
        Self::register(data, true)
    }

    fn register(data: TapeData<T>, pooled: bool) -> Tape<T> {
        let (id, data) = live::open(Box::new(data));
        Tape {
            id,
            data,
            pooled,
            _owns: PhantomData,
        }
    }

    /// After a re-evaluation at a new point: the tape records no more (see `live::seal`).
    pub(crate) fn reevaluated(&self) {
        live::seal(self.id);
    }

    /// This tape's id (unique on this thread; 0 is never used).
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// A view of the storage for the duration of `f`.
    pub(crate) fn with_data<R>(&self, f: impl FnOnce(&TapeData<T>) -> R) -> R {
        let view = Borrow::new(self.id, &self.data);
        f(view.data())
    }

    /// The storage, to change in place (re-evaluation).
    pub(crate) fn with_data_mut<R>(&mut self, f: impl FnOnce(&mut TapeData<T>) -> R) -> R {
        live::with_mut(self.id, &mut self.data, f)
    }

    /// Panics unless `v` (not a constant) belongs to this tape.
    pub(crate) fn check_own(&self, v: Var<T>) {
        self.index_of(v);
    }

    /// A new independent variable (an input node) with value `x`.
    ///
    /// ```
    /// let tape = reverse::Tape::new();
    /// let x = tape.var(1.5);
    /// assert_eq!(x.value(), 1.5);
    /// ```
    pub fn var(&self, x: T) -> Var<T> {
        let i = live::record(
            self.id,
            With(|d: &mut TapeData<T>| {
                if let Some(p) = &mut d.program {
                    p.input(x);
                }
                d.input()
            }),
        );
        Var::on_tape(x, self.id, i)
    }

    /// A variable for each value of `xs`.
    ///
    /// ```
    /// let tape = reverse::Tape::new();
    /// let v = tape.vars(&[1.0, 2.0]);
    /// assert_eq!(v[1].value(), 2.0);
    /// ```
    pub fn vars(&self, xs: &[T]) -> Vec<Var<T>> {
        let mut out = Vec::with_capacity(xs.len());
        self.vars_into(xs, &mut out);
        out
    }

    /// [`vars`](Tape::vars) into a buffer (the drivers keep theirs between calls).
    pub(crate) fn vars_into(&self, xs: &[T], out: &mut Vec<Var<T>>) {
        let first = live::record(
            self.id,
            With(|d: &mut TapeData<T>| {
                let first = d.len() as u32;
                for _ in xs {
                    d.input();
                }
                if let Some(p) = &mut d.program {
                    for &x in xs {
                        p.input(x);
                    }
                }
                first
            }),
        );
        out.clear();
        out.extend(
            xs.iter()
                .zip(first..)
                .map(|(&x, i)| Var::on_tape(x, self.id, i)),
        );
    }

    /// A named variable; the name appears in traces and graph exports.
    ///
    /// ```
    /// let tape = reverse::Tape::new();
    /// let x = tape.named_var("x", 2.0);
    /// assert_eq!(tape.name_of(x).as_deref(), Some("x"));
    /// ```
    pub fn named_var(&self, name: &str, x: T) -> Var<T> {
        let v = self.var(x);
        self.name(v, name);
        v
    }

    /// Names an existing variable of this tape (for traces and graph exports).
    ///
    /// ```
    /// let tape = reverse::Tape::new();
    /// let x = tape.var(2.0);
    /// let y = tape.name(x * x, "y");
    /// assert_eq!(tape.name_of(y).as_deref(), Some("y"));
    /// ```
    pub fn name(&self, v: Var<T>, name: &str) -> Var<T> {
        if let Some(i) = self.index_of(v) {
            live::record(
                self.id,
                With(|d: &mut TapeData<T>| {
                    d.names.retain(|(j, _)| *j != i);
                    d.names.push((i, name.to_string()));
                }),
            );
        }
        v
    }

    /// The name given to `v`, if any.
    pub fn name_of(&self, v: Var<T>) -> Option<String> {
        let i = self.index_of(v)?;
        self.with_data(|d| {
            d.names
                .iter()
                .find(|(j, _)| *j == i)
                .map(|(_, n)| n.clone())
        })
    }

    /// The node index of `v` on this tape; `None` for a constant. Panics for a `Var` of another
    /// tape.
    pub(crate) fn index_of(&self, v: Var<T>) -> Option<u32> {
        match v.tape() {
            0 => None,
            id if id == self.id => Some(v.index()),
            id => live::foreign(id, self.id),
        }
    }

    /// Number of nodes recorded so far.
    ///
    /// ```
    /// use reverse::Float;
    /// let tape = reverse::Tape::new();
    /// let x = tape.var(2.0);
    /// let _ = x.sin() * x;
    /// assert_eq!(tape.len(), 3);
    /// ```
    pub fn len(&self) -> usize {
        self.with_data(|d| d.len())
    }

    /// True before anything is recorded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// What the recording holds so far: nodes, edges and bytes.
    ///
    /// ```
    /// let tape = reverse::Tape::new();
    /// let (x, y) = (tape.var(1.0), tape.var(2.0));
    /// let _ = x * y + x;
    /// let s = tape.stats();
    /// assert_eq!((s.nodes, s.edges, s.unit_edges), (4, 2, 2));
    /// assert_eq!(s.bytes, 4 * 4 + 2 * 12 + 2 * 4);
    /// ```
    pub fn stats(&self) -> TapeStats {
        self.with_data(TapeStats::of)
    }

    /// Forgets every node, keeping the capacity, and invalidates the `Var`s recorded so far (the
    /// tape takes a fresh id), so it can record a new evaluation without allocating.
    ///
    /// ```
    /// let mut tape = reverse::Tape::new();
    /// let x = tape.var(1.0);
    /// let _ = x * x;
    /// tape.clear();
    /// assert!(tape.is_empty());
    /// ```
    pub fn clear(&mut self) {
        let keeps = live::with_mut(self.id, &mut self.data, |d| {
            let keeps = d.keeps();
            d.reset(keeps);
            keeps
        });
        let fresh = live::new_id(keeps);
        live::rename(self.id, fresh);
        self.id = fresh;
    }

    /// Ends the recording and returns it, detached from this thread: it can be swept from any
    /// thread, and its `Var`s no longer take part in arithmetic.
    pub fn finish(self) -> Recording<T> {
        let me = ManuallyDrop::new(self);
        Recording {
            id: me.id,
            data: *live::close(me.id, me.data),
            pooled: me.pooled,
        }
    }
}

impl<T: Op> Drop for Tape<T> {
    fn drop(&mut self) {
        let data = live::close(self.id, self.data);
        if self.pooled {
            memory::give(*data);
        }
    }
}

/// A finished recording: the Wengert list of a [`Tape`], detached from the thread that recorded
/// it. It can be swept any number of times, from any thread (`Send + Sync`), while a new tape
/// records. Its `Var`s can no longer take part in arithmetic.
///
/// ```
/// use reverse::Tape;
/// let tape = Tape::new();
/// let x = tape.vars(&[1.0, 2.0]);
/// let ys = [x[0] * x[1], x[0] - x[1]];
/// let rec = tape.finish();
/// let (rec, x) = (&rec, &x);
/// let rows: Vec<Vec<f64>> = std::thread::scope(|s| {
///     let handles: Vec<_> =
///         ys.iter().map(|&y| s.spawn(move || rec.gradient(y).wrt_all(x))).collect();
///     handles.into_iter().map(|h| h.join().unwrap()).collect()
/// });
/// assert_eq!(rows, vec![vec![2.0, 1.0], vec![1.0, -1.0]]);
/// ```
pub struct Recording<T: Op = f64> {
    id: u64,
    data: TapeData<T>,
    /// Give the arrays to the thread's kept buffers when dropped (else free them).
    pooled: bool,
}

impl<T: Op> Drop for Recording<T> {
    fn drop(&mut self) {
        if self.pooled {
            memory::give(core::mem::take(&mut self.data));
        }
    }
}

impl<T: Op> Recording<T> {
    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// True if nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.data.len() == 0
    }

    /// This recording, freed when dropped instead of left to the thread's next recording
    /// (`shared_ops::memory`): for a recording that a long-lived object owns, such as a prepared
    /// gradient, whose memory is its own.
    ///
    /// ```
    /// use shared_ops::memory;
    /// memory::release_memory();
    /// let tape = reverse::Tape::new();
    /// let x = tape.var(1.0);
    /// let _ = x * x;
    /// drop(tape.finish().free_on_drop());
    /// assert_eq!(memory::spare_bytes(), 0);
    /// ```
    pub fn free_on_drop(mut self) -> Recording<T> {
        self.pooled = false;
        self
    }

    /// A new recording on this thread, in this recording's buffers: its nodes forgotten, its
    /// capacity and kind (plain, replayable or traced) kept, so that an object that records
    /// one function again and again allocates nothing. Its `Var`s are invalid from here on.
    ///
    /// ```
    /// let tape = reverse::Tape::new();
    /// let x = tape.var(1.0);
    /// let _ = x * x;
    /// let rec = tape.finish();
    /// let tape = rec.record_again();
    /// assert!(tape.is_empty());
    /// let x = tape.var(3.0);
    /// assert_eq!(tape.gradient(x * x).wrt(x), 6.0);
    /// ```
    pub fn record_again(self) -> Tape<T> {
        let mut me = ManuallyDrop::new(self);
        let mut data = core::mem::take(&mut me.data);
        data.reset(data.keeps());
        Tape::register(data, me.pooled)
    }

    /// Nodes, edges and bytes of the recording.
    ///
    /// ```
    /// use reverse::Float;
    /// let tape = reverse::Tape::new();
    /// let x = tape.var(1.0);
    /// let _ = x.sin();
    /// let s = tape.finish().stats();
    /// assert_eq!((s.nodes, s.edges, s.bytes), (2, 1, 2 * 4 + 12));
    /// ```
    pub fn stats(&self) -> TapeStats {
        TapeStats::of(&self.data)
    }

    /// Bytes the recording holds (the capacities of its arrays, of its program if it is
    /// replayable, and of what re-evaluation and sweeps derived from that program): what
    /// keeping it costs, where [`stats`](Recording::stats) counts what was recorded.
    ///
    /// ```
    /// let tape = reverse::Tape::new();
    /// let x = tape.var(1.0);
    /// let _ = x * x;
    /// let rec = tape.finish();
    /// assert!(rec.kept_bytes() >= rec.stats().bytes);
    /// ```
    pub fn kept_bytes(&self) -> usize {
        self.data.capacity_bytes()
    }

    /// Frees the capacity of the recording's arrays beyond what it recorded (they grow by
    /// doubling): for a recording kept long, or recorded into again by
    /// [`record_again`](Recording::record_again) for a function of the same size.
    ///
    /// ```
    /// let tape = reverse::Tape::new();
    /// let x = tape.var(1.0);
    /// let _ = (0..100).fold(x, |s, _| s * x);
    /// let mut rec = tape.finish();
    /// rec.shrink_to_fit();
    /// assert!(rec.kept_bytes() < rec.stats().bytes + 100);
    /// ```
    pub fn shrink_to_fit(&mut self) {
        self.data.shrink_arrays();
    }

    /// After a re-evaluation: nothing to do (a finished recording records no more anyway).
    pub(crate) fn reevaluated(&self) {}

    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    pub(crate) fn with_data<R>(&self, f: impl FnOnce(&TapeData<T>) -> R) -> R {
        f(&self.data)
    }

    pub(crate) fn with_data_mut<R>(&mut self, f: impl FnOnce(&mut TapeData<T>) -> R) -> R {
        f(&mut self.data)
    }

    /// Panics unless `v` (not a constant) belongs to this recording.
    pub(crate) fn check_own(&self, v: Var<T>) {
        if v.tape() != self.id {
            live::foreign(v.tape(), self.id);
        }
    }

    /// The node of `v` in this recording, `None` for a constant. Panics for a `Var` of another
    /// recording.
    ///
    /// ```
    /// let tape = reverse::Tape::new();
    /// let x = tape.var(2.0);
    /// let y = x * x;
    /// let rec = tape.finish();
    /// assert_eq!((rec.node(x), rec.node(y)), (Some(0), Some(1)));
    /// assert_eq!(rec.node(reverse::Var::constant(1.0)), None);
    /// ```
    pub fn node(&self, v: Var<T>) -> Option<usize> {
        if v.is_constant() {
            return None;
        }
        self.check_own(v);
        Some(v.index() as usize)
    }

    /// Each node in recording order, with the nodes it reads: `visit(node, operands)`. This is
    /// the recording's graph, for forward sweeps of other quantities than tangents, such as
    /// the index sets of sparsity detection (`jacobian::sparse`). Every recorded edge counts,
    /// whatever its partial; the loser of `max`/`min` leaves no edge on a tape that is not
    /// traced.
    ///
    /// ```
    /// use reverse::Float;
    /// let tape = reverse::Tape::new();
    /// let x = tape.var(0.5);
    /// let _ = x.sin() * x;
    /// let mut reads = vec![];
    /// tape.finish().for_each_node(|_, operands| reads.push(operands.len()));
    /// assert_eq!(reads, vec![0, 1, 2]);
    /// ```
    pub fn for_each_node(&self, mut visit: impl FnMut(usize, Operands<'_>)) {
        let d = &self.data;
        d.walk_forward(|i, edges| visit(i, Operands::of(d, edges)));
    }
}

/// What a recording holds, and its memory.
///
/// Bytes per node and per edge, with `s = size_of::<T>()` (8 for `f64`):
///
/// | item | bytes | what |
/// |---|---|---|
/// | node | 4 | where its edges start |
/// | weighted edge | 4 + s | the operand's index and the partial `∂v/∂u` |
/// | unit edge | 4 | the operand's index and a sign: a partial of ±1 (sums, differences) |
/// | program node | + s + 10 | its value, operation, form and two operands ([`Tape::replayable`] and [`Tape::traced`] only) |
/// | program constant | + s | a constant operand (same) |
///
/// So `a·b` costs 4 + 2·12 = 28 bytes and `a + b` 4 + 2·4 = 12 bytes on a tape of `f64`; a sum
/// or dot product of n terms is one node with n (unit) or 2n (weighted) edges.
///
/// ```
/// let tape = reverse::Tape::new();
/// let x = tape.vars(&[1.0, 2.0, 3.0]);
/// let _: reverse::Var = x.iter().copied().sum(); // one node, three unit edges
/// let s = tape.stats();
/// assert_eq!((s.nodes, s.unit_edges, s.bytes), (4, 3, 4 * 4 + 3 * 4));
/// assert_eq!(s.bytes_per_node(), 7.0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TapeStats {
    /// Nodes: inputs and elementary operations.
    pub nodes: usize,
    /// Weighted edges (an operand and a stored partial).
    pub edges: usize,
    /// Unit edges (an operand and a sign).
    pub unit_edges: usize,
    /// Bytes recorded (lengths, not the capacity reserved).
    pub bytes: usize,
}

impl TapeStats {
    fn of<T: Copy>(d: &TapeData<T>) -> TapeStats {
        TapeStats {
            nodes: d.len(),
            edges: d.parents().len(),
            unit_edges: d.units().len(),
            bytes: d.bytes(),
        }
    }

    /// Average bytes per node, edges included (0 for an empty tape).
    pub fn bytes_per_node(&self) -> f64 {
        self.bytes as f64 / self.nodes.max(1) as f64
    }
}
