//! The frame the compiled code and its calls read, and the lengths of the arrays a program's
//! code was compiled for.

use crate::jit::nodes::Forward;
use crate::storage::program::{Form, Rule};
use core::cell::Cell;
use std::any::Any;

/// What compiled code and its calls read. The code itself reads the first four fields, the
/// sixth and the seventh and writes the fifth, at the offsets of
/// `ir::{VALUES, PARTIALS, ADJOINTS, OUTCOMES, FAILED, END, PARENTS}`.
#[repr(C)]
pub(in crate::jit) struct Frame<'a> {
    pub(super) values: *mut f64,
    pub(super) partials: *mut f64,
    pub(super) adj: *mut f64,
    /// The guards' recorded outcomes (one per guard), and 1 where the guards' code found one
    /// that differs.
    pub(super) outcomes: *const u64,
    pub(super) failed: Cell<u64>,
    /// One past the last node whose adjoint may be non-zero at the sweep's start.
    pub(super) end: u64,
    /// The first of `parents`: the sweep's code reads the node a `max` or `min` chose there.
    pub(super) parent: *const u32,
    pub(super) values_len: usize,
    pub(super) partials_len: usize,
    pub(super) adj_len: usize,
    pub(super) nodes: usize,
    pub(super) args: &'a [u32],
    pub(super) rules: &'a [Rule<f64>],
    pub(super) forms: &'a [Form],
    pub(super) parents: &'a [u32],
    pub(super) units: &'a [u32],
    pub(super) calls: &'a [Forward],
    /// Adjoints per node (the lanes of a vector sweep).
    pub(super) lanes: usize,
    /// A panic of a user's rule, carried over the machine code and resumed after it.
    pub(super) panic: Cell<Option<Box<dyn Any + Send>>>,
}

// The offsets the code reads and writes the frame at.
const _: () = {
    use crate::jit::ir::{ADJOINTS, END, FAILED, OUTCOMES, PARENTS, PARTIALS, VALUES};
    use core::mem::offset_of;
    assert!(offset_of!(Frame<'_>, values) == VALUES as usize);
    assert!(offset_of!(Frame<'_>, partials) == PARTIALS as usize);
    assert!(offset_of!(Frame<'_>, adj) == ADJOINTS as usize);
    assert!(offset_of!(Frame<'_>, outcomes) == OUTCOMES as usize);
    assert!(offset_of!(Frame<'_>, failed) == FAILED as usize);
    assert!(offset_of!(Frame<'_>, end) == END as usize);
    assert!(offset_of!(Frame<'_>, parent) == PARENTS as usize);
};

/// The lengths of the arrays a program's code was compiled for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::jit) struct Lens {
    pub nodes: usize,
    pub values: usize,
    pub partials: usize,
    pub parents: usize,
    pub units: usize,
    pub args: usize,
    pub rules: usize,
    pub guards: usize,
    pub calls: Vec<Forward>,
    /// Adjoints per node: 1, or the lanes of a vector sweep.
    pub lanes: usize,
}

impl<'a> Frame<'a> {
    /// A frame of no arrays, for the code of `lens`: each caller sets those its code reads.
    pub(super) fn empty(lens: &'a Lens) -> Frame<'a> {
        Frame {
            values: core::ptr::null_mut(),
            partials: core::ptr::null_mut(),
            adj: core::ptr::null_mut(),
            outcomes: core::ptr::null(),
            failed: Cell::new(0),
            end: lens.nodes as u64,
            parent: core::ptr::null(),
            values_len: 0,
            partials_len: 0,
            adj_len: 0,
            nodes: lens.nodes,
            args: &[],
            rules: &[],
            forms: &[],
            parents: &[],
            units: &[],
            calls: &lens.calls,
            lanes: lens.lanes,
            panic: Cell::new(None),
        }
    }
}
