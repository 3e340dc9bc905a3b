//! The live tapes of this thread: which tape id records into which Wengert list.
//!
//! Every open [`Tape`](crate::Tape) registers its storage here under a unique id, and every
//! [`Var`](crate::Var) carries the id of the tape that recorded it. Recording an operation looks
//! the id up (the innermost two tapes are kept in `Cell`s, so the common case is one
//! thread-local load and a compare) and appends to that tape's storage. Tapes of different
//! scalar types record side by side: the inner level of reverse-over-reverse is a
//! `Tape<Var<f64>>` whose arithmetic records on the outer `Tape<f64>`.
//!
//! # The unsafe boundary
//!
//! The storage of a live tape is a `Box<TapeData<T>>` turned into a raw pointer, reached from
//! its `Tape<T>` handle and from this registry. Its `unsafe` (listed in `docs/unsafe.md`) rests
//! on three invariants, each kept by this module alone:
//!
//! 1. **Type.** An id is issued once (thread number and a per-thread serial) to one `Tape<T>`,
//!    and a `Var<T>` only ever carries the id of a `Tape<T>` of the same `T` (its fields are
//!    private; it is made by its tape or by arithmetic on `Var<T>`s). So the pointer registered
//!    under the id of a `Var<T>` points to a `TapeData<T>`.
//! 2. **Lifetime.** A pointer is registered from the tape's creation until its drop (or
//!    `finish`), which unregisters it before freeing or moving the storage. A lookup of an id
//!    that is not registered (a dropped tape, another thread's tape) panics and never touches
//!    memory.
//! 3. **Exclusivity.** A reference to the storage lives only inside [`record`] (mutable, for
//!    one [`Append`], which runs no user code) or inside [`Borrow`] (a view of the tape's handle,
//!    during which the tape's registry entry is marked, so that a recording into it panics
//!    instead of aliasing). No other code dereferences the pointer.
//!
//! Why not a `RefCell`: its borrow flag's store and reload around every node make a
//! read-modify-write chain through memory, which slows the recording of cheap arithmetic
//! severely (docs/unsafe.md names the benchmark).

use crate::storage::append::Append;
use crate::storage::{Keeps, TapeData};
use core::cell::{Cell, RefCell};
use core::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

/// A live tape: its id and its storage (a `TapeData<T>` for the `T` of that tape), and whether
/// it was re-evaluated at a new point, after which it records no more (see [`seal`]).
#[derive(Clone, Copy)]
struct Entry {
    id: u64,
    data: *mut (),
    sealed: bool,
}

impl Entry {
    const NONE: Entry = Entry {
        id: 0,
        data: core::ptr::null_mut(),
        sealed: false,
    };
}

/// Set in an entry's id while the tape's data is borrowed by a view: a recording into it then
/// misses the fast path and panics in [`find`]. Ids never reach this bit (see [`SERIAL_BITS`]).
const BORROWED: u64 = 1 << 63;

thread_local! {
    /// The innermost two live tapes: the fast path of every recording.
    static HOT: [Cell<Entry>; 2] = const { [Cell::new(Entry::NONE), Cell::new(Entry::NONE)] };
    /// Every live tape of this thread, oldest first (the source of truth for `HOT`).
    static LIVE: RefCell<Vec<Entry>> = const { RefCell::new(Vec::new()) };
    static THREAD: Cell<u64> = const { Cell::new(0) };
    static SERIAL: Cell<u64> = const { Cell::new(0) };
}

/// Tape ids: the thread's number in bits 40..61, a per-thread serial below, [`TRACE`] in bit
/// 61 and [`PROGRAM`] in bit 62. Id 0 means "constant".
const SERIAL_BITS: u32 = 40;

/// Set in the id of a tape that keeps its program (operations, operands, values and branch
/// guards, for re-evaluation and traces): a `Var` reads it from its own id after appending a
/// node, so a plain tape pays one bit test per operation, not a lookup.
pub(crate) const PROGRAM: u64 = 1 << 62;

/// Set (with [`PROGRAM`]) in the id of a traced tape, which keeps every operand's edge.
pub(crate) const TRACE: u64 = 1 << 61;

fn thread_number() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    THREAD.with(|t| {
        if t.get() == 0 {
            // 21 bits of thread numbers keep the TRACE, PROGRAM and BORROWED bits free.
            t.set(NEXT.fetch_add(1, Ordering::Relaxed) & ((1 << 21) - 1));
        }
        t.get()
    })
}

/// A fresh id, never issued before on any thread, with the flags of what the tape keeps:
/// [`PROGRAM`], and [`TRACE`] for a traced tape.
pub(crate) fn new_id(keeps: Keeps) -> u64 {
    let serial = SERIAL.with(|s| {
        s.set(s.get() + 1);
        s.get()
    });
    let flag = match keeps {
        Keeps::Sweeps => 0,
        Keeps::Program => PROGRAM,
        Keeps::Trace => PROGRAM | TRACE,
    };
    (thread_number() << SERIAL_BITS) | serial | flag
}

/// A tape's number within its thread, for messages.
pub(crate) fn serial(id: u64) -> u64 {
    id & ((1 << SERIAL_BITS) - 1)
}

/// Copies the innermost two entries of `LIVE` that record into `HOT` (a sealed one is found
/// only by [`find`], which refuses it).
fn refresh(live: &[Entry]) {
    HOT.with(|hot| {
        let mut top = live.iter().rev().filter(|e| !e.sealed);
        hot[0].set(top.next().copied().unwrap_or(Entry::NONE));
        hot[1].set(top.next().copied().unwrap_or(Entry::NONE));
    });
}

/// Registers new storage; returns its id and the pointer the tape keeps.
pub(crate) fn open<T>(data: Box<TapeData<T>>) -> (u64, NonNull<TapeData<T>>) {
    let id = new_id(data.keeps());
    let data = NonNull::from(Box::leak(data));
    LIVE.with(|l| {
        let mut l = l.borrow_mut();
        l.push(Entry {
            id,
            data: data.as_ptr().cast(),
            sealed: false,
        });
        refresh(&l);
    });
    (id, data)
}

/// Unregisters the tape `id` and returns its storage. The caller owns it from here on.
pub(crate) fn close<T>(id: u64, data: NonNull<TapeData<T>>) -> Box<TapeData<T>> {
    LIVE.with(|l| {
        let mut l = l.borrow_mut();
        if let Some(k) = l.iter().rposition(|e| e.id & !BORROWED == id) {
            l.remove(k);
        }
        refresh(&l);
    });
    // SAFETY: `data` came from `Box::leak` in `open` and was registered under `id` until the
    // line above (invariant 2); the handle that called us is being consumed, so no other
    // reference to the storage exists (invariant 3).
    #[allow(unsafe_code)]
    unsafe {
        Box::from_raw(data.as_ptr())
    }
}

/// Gives the tape `old` the id `new` (after [`Tape::clear`](crate::Tape::clear)): the `Var`s
/// carrying `old` no longer find it.
pub(crate) fn rename(old: u64, new: u64) {
    LIVE.with(|l| {
        let mut l = l.borrow_mut();
        for e in l.iter_mut().filter(|e| e.id == old) {
            e.id = new;
            e.sealed = false;
        }
        refresh(&l);
    });
}

/// Ends recording on the live tape `id`, after a re-evaluation at a new point: its `Var`s carry
/// the values of the point it was recorded at, and an operation on them would mix the two.
/// Its handle still reads and sweeps it; [`rename`] (a cleared tape) opens it again.
pub(crate) fn seal(id: u64) {
    LIVE.with(|l| {
        let mut l = l.borrow_mut();
        for e in l.iter_mut().filter(|e| e.id & !BORROWED == id) {
            e.sealed = true;
        }
        refresh(&l);
    });
}

/// Marks or unmarks the tape `id` as borrowed by a view.
fn mark(id: u64, borrowed: bool) {
    LIVE.with(|l| {
        let mut l = l.borrow_mut();
        for e in l.iter_mut().filter(|e| e.id & !BORROWED == id) {
            e.id = if borrowed { id | BORROWED } else { id };
        }
        refresh(&l);
    });
}

/// Appends to the storage of the recording tape `id`: the hot path of every operation.
///
/// [`Append::append`] must not run user code nor touch any tape (it appends plain data); the
/// values and partials are computed before. Panics with an explanation if `id` is not a live
/// tape of this thread.
#[inline(always)]
pub(crate) fn record<T, A: Append<T>>(id: u64, what: A) -> A::Out {
    let data = HOT.with(
        #[inline(always)]
        |hot| {
            let e = hot[0].get();
            if e.id == id {
                return e.data;
            }
            let e = hot[1].get();
            if e.id == id { e.data } else { find(id) }
        },
    );
    // SAFETY: `data` is registered under `id`, so it is the live `TapeData<T>` of the tape that
    // issued `id` (invariants 1 and 2). An entry borrowed by a view carries the BORROWED bit, so
    // it cannot match here (`find` panics for it), and `append` runs no code that could reach
    // the storage again: the reference is exclusive while it lives (invariant 3).
    #[allow(unsafe_code)]
    let data = unsafe { &mut *data.cast::<TapeData<T>>() };
    what.append(data)
}

/// [`record`] if the tape `id` is live and not borrowed; nothing otherwise. For cleanups that
/// run while a panic unwinds, which must not panic again.
#[cold]
pub(crate) fn record_if_live<T, A: Append<T>>(id: u64, what: A) -> Option<A::Out> {
    let live = LIVE.with(|l| {
        l.try_borrow()
            .is_ok_and(|l| l.iter().any(|e| e.id == id && !e.sealed))
    });
    live.then(|| record(id, what))
}

cold_path! {
    /// The slow path of [`record`]: a tape beyond the innermost two, or an explanation.
    fn find(id: u64) -> *mut () {
        let found = LIVE.with(|l| {
            l.borrow()
                .iter()
                .rev()
                .find(|e| e.id & !BORROWED == id)
                .copied()
        });
        match found {
            Some(e) if e.sealed => reevaluated(id),
            Some(e) if e.id & BORROWED == 0 => e.data,
            Some(_) => {
                panic!("reverse::Tape recorded a node while its data was borrowed (a bug in reverse)")
            }
            None => misuse(id),
        }
    }
}

/// A view of a live tape's storage, for the methods of its handle. The registry marks the tape
/// while the view lives, so that a recording into it panics rather than alias the reference.
pub(crate) struct Borrow<'a, T> {
    id: u64,
    data: &'a TapeData<T>,
}

impl<'a, T> Borrow<'a, T> {
    /// Borrows the storage of the live tape `id`, which the caller's handle owns.
    pub(crate) fn new(id: u64, data: &'a NonNull<TapeData<T>>) -> Borrow<'a, T> {
        mark(id, true);
        // SAFETY: the handle owns `data` and keeps it registered while it lives (invariant 2);
        // the mark set above keeps recordings away from it while this shared reference lives
        // (invariant 3).
        #[allow(unsafe_code)]
        let data = unsafe { data.as_ref() };
        Borrow { id, data }
    }

    pub(crate) fn data(&self) -> &TapeData<T> {
        self.data
    }
}

impl<T> Drop for Borrow<'_, T> {
    fn drop(&mut self) {
        mark(self.id, false);
    }
}

/// Runs `f` on the storage of the live tape `id` mutably (naming, clearing). `f` must not
/// record.
pub(crate) fn with_mut<T, R>(
    id: u64,
    data: &mut NonNull<TapeData<T>>,
    f: impl FnOnce(&mut TapeData<T>) -> R,
) -> R {
    mark(id, true);
    // SAFETY: as in `Borrow::new`, and the handle is borrowed mutably, so it makes no other
    // reference meanwhile.
    #[allow(unsafe_code)]
    let r = f(unsafe { data.as_mut() });
    mark(id, false);
    r
}

fn is_live(id: u64) -> bool {
    LIVE.with(|l| l.borrow().iter().any(|e| e.id & !BORROWED == id))
}

/// Explains why the tape `tape` cannot record, and panics. Kept out of line: the hot path only
/// compares two integers.
#[cold]
#[inline(never)]
pub(crate) fn misuse(tape: u64) -> ! {
    if (tape & !(PROGRAM | TRACE)) >> SERIAL_BITS != thread_number() {
        panic!(
            "reverse::Var used on another thread than the one that recorded it: a tape is \
             thread-local, so a Var sent to another thread cannot be differentiated there; \
             pass its value (Var::value) and record on this thread"
        );
    }
    panic!(
        "reverse::Var used after its tape #{} was dropped, finished or cleared: keep the Tape \
         alive, and uncleared, while its Vars are in use",
        serial(tape)
    )
}

/// A `Var` of the tape `tape` used in an operation after the tape was re-evaluated.
#[cold]
#[inline(never)]
fn reevaluated(tape: u64) -> ! {
    panic!(
        "reverse::Tape #{} was re-evaluated at a new point (Tape::reevaluate) and then asked to \
         record: its Vars carry the values of the point it was recorded at, so a new operation \
         would mix two points. Read and sweep the tape as it is; to record more, clear() it and \
         record afresh",
        serial(tape)
    )
}

/// Two `Var`s of different tapes met in one operation.
#[cold]
#[inline(never)]
pub(crate) fn mixed(a: u64, b: u64) -> ! {
    for t in [a, b] {
        if !is_live(t) {
            misuse(t);
        }
    }
    let (outer, inner) = if serial(a) < serial(b) {
        (a, b)
    } else {
        (b, a)
    };
    panic!(
        "reverse::Var of the outer tape #{} met a Var of the inner tape #{}, which is recording, \
         in one operation: the Vars of two recordings cannot be combined. To differentiate \
         through an inner derivative, let the inner level work on the outer level's numbers \
         (reverse::gradient over &[Var<f64>] records a Tape<Var<f64>>), or pass values \
         (Var::value) into the inner recording",
        serial(outer),
        serial(inner)
    )
}

/// A `Var` of tape `var_tape` used with tape `tape` (in a sweep or an adjoint lookup).
#[cold]
#[inline(never)]
pub(crate) fn foreign(var_tape: u64, tape: u64) -> ! {
    panic!(
        "reverse::Var of tape #{} used with tape #{}: each Var belongs to the tape that recorded \
         it",
        serial(var_tape),
        serial(tape)
    )
}
