//! The tape: a thread-local stack of flat Wengert lists.
//!
//! Each recording is a `Vec<Node>`: for every elementary operation its value, its (at most two)
//! parents and the local partials with respect to them, and a one-byte operation code. No graph
//! of pointers, no allocation per node; the vectors are recycled across recordings.
//!
//! Recordings nest: [`Tape::new`] pushes a tape on this thread's stack and dropping it pops it,
//! so code that records can call a driver that records its own tape inside.

use crate::var::Var;
use core::cell::{Cell, RefCell};
use core::marker::PhantomData;
use core::mem::ManuallyDrop;
use shared_ops::OpCode;
use std::sync::atomic::{AtomicU64, Ordering};

/// One entry of the Wengert list: 40 bytes.
///
/// Unary operations and inputs leave the unused partials at 0 and the unused parents at
/// [`NO_PARENT`]; a zero partial is never propagated, so that index is never touched.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Node {
    pub value: f64,
    pub partial: [f64; 2],
    pub parent: [u32; 2],
    pub op: OpCode,
}

impl Node {
    /// An independent variable: no parents, no partials.
    fn input(value: f64) -> Node {
        Node {
            value,
            partial: [0.0; 2],
            parent: [NO_PARENT; 2],
            op: OpCode::Input,
        }
    }
}

/// The parent slot of a node that has no parent there (inputs; the second slot of unary
/// operations and of operations with a constant operand). Its partial is 0, so sweeps never
/// follow it.
pub(crate) const NO_PARENT: u32 = u32::MAX;

/// Bytes per tape node (the `Node` record), for cost reports.
///
/// ```
/// assert_eq!(reverse::NODE_BYTES, 40);
/// ```
pub const NODE_BYTES: usize = core::mem::size_of::<Node>();

pub(crate) struct TapeData {
    pub id: u64,
    pub nodes: Vec<Node>,
    /// Names of user-defined operations (code `Custom`), by node.
    pub custom: Vec<(u32, &'static str)>,
    /// Names the user gave to variables, by node.
    pub names: Vec<(u32, String)>,
}

impl TapeData {
    const NONE: TapeData = TapeData {
        id: 0,
        nodes: Vec::new(),
        custom: Vec::new(),
        names: Vec::new(),
    };
}

thread_local! {
    /// The recording tape, held directly in thread-local storage so that recording a node is a
    /// compare of ids and a `Vec::push`, with no indirection. Id 0: nothing is recording.
    ///
    /// `ManuallyDrop` keeps this slot free of a thread-exit destructor, which would add a
    /// registration check to every access (≈ 2× the cost of recording a node). Nothing leaks:
    /// the slot owns a buffer only while a `Tape` is alive, and `Tape::drop` takes it back.
    static ACTIVE: RefCell<ManuallyDrop<TapeData>> =
        const { RefCell::new(ManuallyDrop::new(TapeData::NONE)) };
    /// Outer tapes, suspended while an inner one records (innermost last).
    static SUSPENDED: RefCell<Vec<TapeData>> = const { RefCell::new(Vec::new()) };
    static SPARE: RefCell<Vec<Vec<Node>>> = const { RefCell::new(Vec::new()) };
    static THREAD: Cell<u64> = const { Cell::new(0) };
    static SERIAL: Cell<u64> = const { Cell::new(0) };
}

/// Tape ids: the thread's number in the high 24 bits, a per-thread serial below. Id 0 means
/// "constant". A `Var` carries its tape's id, so misuse is detected and explained.
const SERIAL_BITS: u32 = 40;

fn thread_number() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    THREAD.with(|t| {
        if t.get() == 0 {
            t.set(NEXT.fetch_add(1, Ordering::Relaxed));
        }
        t.get()
    })
}

fn new_id() -> u64 {
    let serial = SERIAL.with(|s| {
        s.set(s.get() + 1);
        s.get()
    });
    (thread_number() << SERIAL_BITS) | serial
}

/// A tape's number within its thread, for messages.
pub(crate) fn serial(id: u64) -> u64 {
    id & ((1 << SERIAL_BITS) - 1)
}

/// The id of the recording tape (0 if none).
pub(crate) fn active_id() -> u64 {
    ACTIVE.with(|a| a.try_borrow_mut().map(|a| a.id).unwrap_or(0))
}

fn is_suspended(id: u64) -> bool {
    SUSPENDED.with(|s| {
        s.try_borrow()
            .map(|s| s.iter().any(|t| t.id == id))
            .unwrap_or(false)
    })
}

/// Explains why `tape` is not the recording tape, and panics. Kept out of line: the hot path
/// only compares two integers.
#[cold]
#[inline(never)]
pub(crate) fn misuse(tape: u64) -> ! {
    let active = active_id();
    if tape >> SERIAL_BITS != thread_number() {
        panic!(
            "reverse::Var used on another thread than the one that recorded it: a tape is \
             thread-local, so a Var sent to another thread cannot be differentiated there; \
             pass its value (Var::value) and record on this thread"
        );
    }
    if is_suspended(tape) {
        panic!(
            "reverse::Var from tape #{} used while the inner tape #{} is recording: Vars of an \
             outer tape cannot enter an inner recording; pass their values (Var::value) into \
             it, or finish the inner recording first",
            serial(tape),
            serial(active),
        );
    }
    if active == 0 {
        panic!(
            "reverse::Var used after its tape #{} was dropped or finished (no tape is recording now): keep \
             the Tape alive while its Vars are in use",
            serial(tape)
        );
    }
    panic!(
        "reverse::Var used after its tape #{} was dropped or finished, with the other tape #{} recording: \
         keep the Tape alive while its Vars are in use",
        serial(tape),
        serial(active)
    )
}

/// A `Var` of tape `var_tape` used with tape `tape` (in a sweep or an adjoint lookup).
#[cold]
#[inline(never)]
pub(crate) fn misuse_foreign(var_tape: u64, tape: u64) -> ! {
    let alive = active_id() == var_tape || is_suspended(var_tape);
    if alive && var_tape >> SERIAL_BITS == thread_number() {
        panic!(
            "reverse::Var of tape #{} used with tape #{}: each Var belongs to the tape that \
             recorded it",
            serial(var_tape),
            serial(tape)
        );
    }
    misuse(var_tape)
}

/// Appends a node to the recording tape, which must be `tape`. Returns its index.
#[inline(always)]
pub(crate) fn push(tape: u64, node: Node) -> u32 {
    let index = ACTIVE.with(|a| {
        // A `RefCell::borrow_mut` here would store and restore the borrow flag around every
        // node: a read-modify-write chain through memory that halves the recording speed of
        // cheap arithmetic (Rosenbrock n = 1000: 37 µs → 18 µs without it, measured with a
        // release build recording the function alone). Instead:
        //
        // SAFETY: every other access to ACTIVE takes `borrow_mut` (never `borrow`), so a live
        // reference into it always shows as a mutable borrow, which `try_borrow_unguarded`
        // detects: then we refuse (a recording from inside such an access, which the crate
        // never does). Otherwise nothing else refers to the data, and the `&mut` below lives
        // only for this closure, which calls no user code and cannot re-enter.
        #[allow(unsafe_code)]
        let a = unsafe {
            if a.try_borrow_unguarded().is_err() {
                return Err(());
            }
            &mut *a.as_ptr()
        };
        if a.id != tape {
            return Ok(None);
        }
        let i = a.nodes.len();
        if i == a.nodes.capacity() {
            grow(&mut a.nodes);
        }
        a.nodes.push(node);
        Ok(Some(i as u32))
    });
    match index {
        Ok(Some(i)) => i,
        Ok(None) => misuse(tape),
        Err(()) => reentrant(),
    }
}

#[cold]
#[inline(never)]
fn reentrant() -> ! {
    panic!("reverse::Tape recorded a node while its data was borrowed (a bug in reverse)")
}

/// The slow path of `push`: double the buffer, and refuse to pass the `u32` index range.
#[cold]
#[inline(never)]
fn grow(nodes: &mut Vec<Node>) {
    if nodes.len() >= u32::MAX as usize {
        panic!(
            "reverse::Tape holds {} nodes, the most one tape can index (u32)",
            nodes.len()
        );
    }
    nodes.reserve(nodes.capacity().max(1024));
}

/// Runs `f` on the data of tape `id`, recording or suspended (sweeps may run on an outer tape
/// while an inner one records).
pub(crate) fn with_tape<R>(id: u64, f: impl FnOnce(&TapeData) -> R) -> R {
    let mut f = Some(f);
    let done = ACTIVE.with(|a| {
        // Exclusive even for reading: `push` relies on ACTIVE never being shared-borrowed.
        let a = a.borrow_mut();
        (a.id == id).then(|| (f.take().expect("called once"))(&a))
    });
    if let Some(r) = done {
        return r;
    }
    let done = SUSPENDED.with(|s| {
        let s = s.borrow();
        s.iter()
            .rev()
            .find(|t| t.id == id)
            .map(|t| (f.take().expect("called once"))(t))
    });
    done.unwrap_or_else(|| misuse(id))
}

pub(crate) fn with_tape_mut<R>(id: u64, f: impl FnOnce(&mut TapeData) -> R) -> R {
    let mut f = Some(f);
    let done = ACTIVE.with(|a| {
        let mut a = a.borrow_mut();
        (a.id == id).then(|| (f.take().expect("called once"))(&mut a))
    });
    if let Some(r) = done {
        return r;
    }
    let done = SUSPENDED.with(|s| {
        let mut s = s.borrow_mut();
        s.iter_mut()
            .rev()
            .find(|t| t.id == id)
            .map(|t| (f.take().expect("called once"))(t))
    });
    done.unwrap_or_else(|| misuse(id))
}

/// A recording: the handle of the active Wengert list on this thread.
///
/// Create it, make inputs with [`Tape::var`], compute with the returned [`Var`]s (every
/// operation appends one node), then sweep adjoints back as often as needed with
/// [`Tape::gradient`] or [`Tape::sweep`]. Dropping the tape ends the recording; its `Var`s then
/// panic with a clear message if used in arithmetic again.
///
/// A tape is tied to its thread (`!Send`). A new tape while one is recording nests inside it;
/// the inner one is active until dropped.
///
/// The tape stores `f64` values and partials. Reverse-over-reverse (a tape of `Var`s) is left
/// for later: the node layout would become generic over the stored number type, as the rules
/// already are.
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
pub struct Tape {
    id: u64,
    _not_send: PhantomData<*const ()>,
}

impl Default for Tape {
    fn default() -> Self {
        Self::new()
    }
}

impl Tape {
    /// Starts a recording on this thread (nested inside any active one).
    pub fn new() -> Tape {
        Self::with_capacity(0)
    }

    /// Starts a recording with room for `nodes` nodes. A recycled buffer from an earlier
    /// recording on this thread is reused when one is available.
    ///
    /// ```
    /// let tape = reverse::Tape::with_capacity(1000);
    /// assert!(tape.is_empty());
    /// ```
    pub fn with_capacity(capacity: usize) -> Tape {
        let id = new_id();
        let mut nodes = SPARE.with(|s| s.borrow_mut().pop()).unwrap_or_default();
        nodes.reserve(capacity);
        let fresh = TapeData {
            id,
            nodes,
            custom: Vec::new(),
            names: Vec::new(),
        };
        let outer = ACTIVE.with(|a| core::mem::replace(&mut **a.borrow_mut(), fresh));
        if outer.id != 0 {
            SUSPENDED.with(|s| s.borrow_mut().push(outer));
        }
        Tape {
            id,
            _not_send: PhantomData,
        }
    }

    /// This tape's id (unique on this thread; 0 is never used).
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// A new independent variable (an input node) with value `x`.
    ///
    /// ```
    /// let tape = reverse::Tape::new();
    /// let x = tape.var(1.5);
    /// assert_eq!(x.value(), 1.5);
    /// ```
    pub fn var(&self, x: f64) -> Var {
        Var::on_tape(x, self.id, push(self.id, Node::input(x)))
    }

    /// A variable for each value of `xs`.
    ///
    /// ```
    /// let tape = reverse::Tape::new();
    /// let v = tape.vars(&[1.0, 2.0]);
    /// assert_eq!(v[1].value(), 2.0);
    /// ```
    pub fn vars(&self, xs: &[f64]) -> Vec<Var> {
        if active_id() != self.id {
            misuse(self.id); // inputs go on the recording tape only, as in `var`
        }
        // One borrow of the tape for all inputs, not one per input.
        let first = with_tape_mut(self.id, |t| {
            let first = t.nodes.len();
            if first + xs.len() > NO_PARENT as usize {
                panic!("reverse::Tape cannot index {} more nodes (u32)", xs.len());
            }
            t.nodes.extend(xs.iter().map(|&x| Node::input(x)));
            first as u32
        });
        xs.iter()
            .zip(first..)
            .map(|(&x, i)| Var::on_tape(x, self.id, i))
            .collect()
    }

    /// A named variable; the name appears in traces and graph exports.
    ///
    /// ```
    /// let tape = reverse::Tape::new();
    /// let x = tape.named_var("x", 2.0);
    /// assert_eq!(tape.name_of(x).as_deref(), Some("x"));
    /// ```
    pub fn named_var(&self, name: &str, x: f64) -> Var {
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
    pub fn name(&self, v: Var, name: &str) -> Var {
        if let Some(i) = self.index_of(v) {
            with_tape_mut(self.id, |t| {
                t.names.retain(|(j, _)| *j != i);
                t.names.push((i, name.to_string()));
            });
        }
        v
    }

    /// The name given to `v`, if any.
    pub fn name_of(&self, v: Var) -> Option<String> {
        let i = self.index_of(v)?;
        with_tape(self.id, |t| {
            t.names
                .iter()
                .find(|(j, _)| *j == i)
                .map(|(_, n)| n.clone())
        })
    }

    /// The node index of `v` on this tape; `None` for a constant. Panics for a `Var` of another
    /// tape.
    pub(crate) fn index_of(&self, v: Var) -> Option<u32> {
        match v.tape() {
            0 => None,
            id if id == self.id => Some(v.index()),
            id => misuse_foreign(id, self.id),
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
        with_tape(self.id, |t| t.nodes.len())
    }

    /// True before anything is recorded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of the recording so far (`len() × NODE_BYTES`).
    pub fn bytes(&self) -> usize {
        self.len() * NODE_BYTES
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
        let fresh = new_id();
        with_tape_mut(self.id, |t| {
            t.nodes.clear();
            t.custom.clear();
            t.names.clear();
            t.id = fresh;
        });
        self.id = fresh;
    }
}

impl Drop for Tape {
    fn drop(&mut self) {
        recycle(take(self).nodes);
    }
}

/// Detaches the data of `tape` from this thread's stack, resuming the innermost suspended tape
/// if `tape` was recording. A tape dropped out of order is removed wherever it is suspended.
pub(crate) fn take(tape: &Tape) -> TapeData {
    let id = tape.id;
    if active_id() == id {
        let outer = SUSPENDED
            .with(|s| s.borrow_mut().pop())
            .unwrap_or(TapeData::NONE);
        return ACTIVE.with(|a| core::mem::replace(&mut **a.borrow_mut(), outer));
    }
    SUSPENDED
        .with(|s| {
            let mut s = s.borrow_mut();
            s.iter().rposition(|t| t.id == id).map(|i| s.remove(i))
        })
        .unwrap_or(TapeData::NONE)
}

/// Keeps a node buffer for the next recording on this thread (a few at most).
pub(crate) fn recycle(mut nodes: Vec<Node>) {
    if nodes.capacity() == 0 {
        return;
    }
    nodes.clear();
    SPARE.with(|s| {
        let mut s = s.borrow_mut();
        if s.len() < 4 {
            s.push(nodes);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The invariant of `push`'s unsafe block: a recording while the tape's data is borrowed is
    /// refused with a panic, never an aliased `&mut`.
    #[test]
    fn recording_inside_a_borrow_of_the_tape_is_refused() {
        let tape = Tape::new();
        let x = tape.var(2.0);
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            with_tape(tape.id(), |_| x * x);
        }));
        let msg = caught.expect_err("must panic");
        let msg = msg.downcast_ref::<&str>().copied().unwrap_or_default();
        assert!(msg.contains("while its data was borrowed"), "{msg}");
        // The tape is intact and still records.
        let y = x * x;
        assert_eq!(tape.gradient(y).wrt(x), 4.0);
        assert_eq!(tape.len(), 2);
    }
}
