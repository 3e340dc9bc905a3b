//! Machine code at run time: the module that turns Cranelift IR into executable code, calls it,
//! and holds the two functions it calls back. Every `unsafe` of the compiler is here (see
//! `docs/unsafe.md`).
//!
//! The code reads and writes the recording's arrays through the pointers of a [`Frame`],
//! without bounds checks: the compiler checked, before emitting it, that every index it
//! computes lies within the arrays' lengths at compile time, and [`Code`] checks at each call
//! that the arrays it is given have those lengths.

use super::guards::Kept;
use super::shape::Forward;
use crate::storage::NEG;
use crate::storage::op_code::{OpCode, UNARY, binary, unary, unary_c};
use crate::storage::program::{Form, LaneMachine, Machine, Rule, RuleFn};
use crate::storage::program::{dot, dot_value, fused, sum, write};
use crate::sweep::kernel::structural;
use core::cell::Cell;
use cranelift_codegen::Context;
use cranelift_codegen::ir::{AbiParam, FuncRef, InstBuilder, Signature, Value, types};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{FuncId, Linkage, Module, default_libcall_names};
use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::Mutex;

/// What compiled code and its calls read. The code itself reads the first four fields and
/// writes the fifth, at the offsets of `ir::{VALUES, PARTIALS, ADJOINTS, OUTCOMES, FAILED}`.
#[repr(C)]
pub(super) struct Frame<'a> {
    values: *mut f64,
    partials: *mut f64,
    adj: *mut f64,
    /// The guards' recorded outcomes (one per guard), and 1 where the guards' code found one
    /// that differs.
    outcomes: *const u64,
    failed: Cell<u64>,
    /// One past the last node whose adjoint may be non-zero at the sweep's start.
    end: u64,
    values_len: usize,
    partials_len: usize,
    adj_len: usize,
    nodes: usize,
    args: &'a [u32],
    rules: &'a [Rule<f64>],
    forms: &'a [Form],
    parents: &'a [u32],
    units: &'a [u32],
    calls: &'a [Forward],
    /// Adjoints per node (the lanes of a vector sweep).
    lanes: usize,
    /// A panic of a user's rule, carried over the machine code and resumed after it.
    panic: Cell<Option<Box<dyn Any + Send>>>,
}

// The offsets the code reads and writes the frame at.
const _: () = {
    use super::ir::{ADJOINTS, END, FAILED, OUTCOMES, PARTIALS, VALUES};
    use core::mem::offset_of;
    assert!(offset_of!(Frame<'_>, values) == VALUES as usize);
    assert!(offset_of!(Frame<'_>, partials) == PARTIALS as usize);
    assert!(offset_of!(Frame<'_>, adj) == ADJOINTS as usize);
    assert!(offset_of!(Frame<'_>, outcomes) == OUTCOMES as usize);
    assert!(offset_of!(Frame<'_>, failed) == FAILED as usize);
    assert!(offset_of!(Frame<'_>, end) == END as usize);
};

/// A compiled function: `f(frame)`.
type Function = unsafe extern "C" fn(*const Frame<'_>);

/// Node `node`'s value by its rule (the `rule`th of the frame's table), its partials written
/// from `e`: what the interpreter does for a node of that rule.
#[allow(unsafe_code)]
extern "C" fn eval(frame: *const Frame<'_>, rule: u64, a: u64, b: u64, e: u64, node: u64) -> f64 {
    // SAFETY: `frame` is the frame `Code::forward` passes to the code that calls this, alive
    // for the call; while this runs, the code does not touch the arrays, so these two slices
    // are the only references to them.
    let f = unsafe { &*frame };
    let values = unsafe { core::slice::from_raw_parts_mut(f.values, f.values_len) };
    let partials = unsafe { core::slice::from_raw_parts_mut(f.partials, f.partials_len) };
    let run = || {
        let Forward::Call { op, param, .. } = f.calls[rule as usize] else {
            unreachable!("a rule evaluated by a call");
        };
        // The node's own form: that of `max` and `min` (which operand won) may differ between
        // the turns of a loop.
        let form = f.forms[node as usize];
        let (a, b, e, n) = (a as usize, b as usize, e as usize, f.nodes);
        match op {
            OpCode::Sum => sum_apart(values, &f.args[a..a + param as usize]),
            OpCode::Dot if e == RUNS as usize => {
                dot_of_runs(values, &f.args[a..a + param as usize])
            }
            OpCode::Dot if e == NO_PARTIALS as usize => {
                dot_value(values, &f.args[a..a + param as usize])
            }
            OpCode::Dot => dot(values, &f.args[a..a + param as usize], n, partials, e),
            OpCode::MulAdd => fused(values, &f.args[a..a + 3], n, partials, e),
            OpCode::Custom => {
                let k = f.rules.partition_point(|r| (r.node as u64) < node);
                match &f.rules[k].eval {
                    RuleFn::Unary(g) => {
                        let (v, dv) = g(values[a]);
                        write(partials, e, form, dv, dv);
                        v
                    }
                    RuleFn::Binary(g) => {
                        let (v, da, db) = g(values[a], values[b]);
                        write(partials, e, form, da, db);
                        v
                    }
                }
            }
            op if op.is_unary() => {
                let (v, dv) = unary(op, param, values[a]);
                write(partials, e, form, dv, dv);
                v
            }
            op => {
                let (v, da, db) = binary(op, values[a], values[b]);
                write(partials, e, form, da, db);
                v
            }
        }
    };
    // A panic may not unwind through the machine code: it is kept and resumed after it.
    catch_unwind(AssertUnwindSafe(run)).unwrap_or_else(|p| {
        f.panic.set(Some(p));
        f64::NAN
    })
}

/// [`sum`], compiled apart: inlined into `eval`, its running sum went through the stack.
#[inline(never)]
fn sum_apart(values: &[f64], args: &[u32]) -> f64 {
    sum(values, args)
}

/// The `e` of a dot product whose partials are not stored: its sweep reads them from the
/// values of its operands ([`PAIRS`]); `RUNS` where each side's operands are consecutive
/// values (a row of constants by a vector of inputs, say), which the call reads as slices.
pub(super) const NO_PARTIALS: u64 = u64::MAX;
pub(super) const RUNS: u64 = u64::MAX - 1;

/// The kinds of edges [`sweep`] adds along: weighted edges from `lo` (their partials stored),
/// unit edges from `lo`, or the edges of a dot product of `count` operand pairs from `lo` in
/// the n-ary operands, each partial the value of its pair's other operand (`RUN_PAIRS`: each
/// side's operands consecutive, as for [`RUNS`]).
pub(super) const WEIGHTED: u64 = 0;
pub(super) const UNIT: u64 = 1;
pub(super) const PAIRS: u64 = 2;
pub(super) const RUN_PAIRS: u64 = 3;

/// [`dot_value`] of pairs `args` whose sides are runs of consecutive values, read as slices
/// (the same products and sums, which the compiler turns into vector instructions).
fn dot_of_runs(values: &[f64], args: &[u32]) -> f64 {
    let len = args.len() / 2;
    let (a, b) = (args[0] as usize, args[1] as usize);
    let (a, b) = (&values[a..a + len], &values[b..b + len]);
    shared_ops::dot_order(len, |j| a[j] * b[j])
}

/// The sweep of a node with many edges, whose adjoint is `a`: the plain sweep's terms, in its
/// order (a dot product's edges are its operands that are nodes, pair by pair).
#[allow(unsafe_code)]
extern "C" fn sweep(frame: *const Frame<'_>, lo: u64, count: u64, kind: u64, a: f64) {
    // SAFETY: as in `eval`, for the adjoints, which `Code::reverse` and `Code::gradient` pass,
    // and the values, which only a gradient's sweep reads (of dot products), and only here.
    let f = unsafe { &*frame };
    let adj = unsafe { core::slice::from_raw_parts_mut(f.adj, f.adj_len) };
    let (lo, count) = (lo as usize, count as usize);
    match kind {
        UNIT => {
            for &q in &f.units[lo..lo + count] {
                adj[(q & !NEG) as usize] += if q & NEG == 0 { a } else { -a };
            }
        }
        PAIRS | RUN_PAIRS => {
            let values = unsafe { core::slice::from_raw_parts(f.values, f.values_len) };
            let (args, n) = (&f.args[lo..lo + 2 * count], f.nodes);
            let sides = (kind == RUN_PAIRS)
                .then(|| apart(args[0] as usize, args[1] as usize, count, n))
                .flatten();
            if let Some(sides) = sides {
                // Each adjoint gets one term of this node: the sides may go one after the
                // other, each a loop over slices.
                for (s, other) in sides.into_iter().flatten() {
                    let w = &values[other..other + count];
                    for (u, &w) in adj[s..s + count].iter_mut().zip(w) {
                        *u += structural(w, a, w * a);
                    }
                }
                return;
            }
            for pair in args.chunks_exact(2) {
                for (r, w) in [(pair[0], pair[1]), (pair[1], pair[0])] {
                    if (r as usize) < n {
                        let w = values[w as usize];
                        adj[r as usize] += structural(w, a, w * a);
                    }
                }
            }
        }
        _ => {
            // The partials are only read here.
            let partials = unsafe { core::slice::from_raw_parts(f.partials, f.partials_len) };
            let edges = lo..lo + count;
            for (&p, &w) in f.parents[edges.clone()].iter().zip(&partials[edges]) {
                adj[p as usize] += structural(w, a, w * a);
            }
        }
    }
}

/// [`sweep`] of the frame's `lanes` adjoints per node (a vector sweep's), node `node`'s read
/// from memory (the code stores them before the call): each lane the scalar sweep's terms.
/// Dot products of pairs are not swept by a vector sweep's code (their partials are stored).
#[allow(unsafe_code)]
extern "C" fn sweep_lanes(frame: *const Frame<'_>, lo: u64, count: u64, kind: u64, node: u64) {
    // SAFETY: as in `sweep`, for the adjoints and the partials.
    let f = unsafe { &*frame };
    let adj = unsafe { core::slice::from_raw_parts_mut(f.adj, f.adj_len) };
    let q = f.lanes;
    let (lo, count) = (lo as usize, count as usize);
    // Every edge reaches a node before this one.
    let (before, own) = adj.split_at_mut(node as usize * q);
    let a = &own[..q];
    match kind {
        UNIT => {
            for &p in &f.units[lo..lo + count] {
                let t = &mut before[(p & !NEG) as usize * q..][..q];
                if p & NEG == 0 {
                    t.iter_mut().zip(a).for_each(|(t, &a)| *t += a);
                } else {
                    t.iter_mut().zip(a).for_each(|(t, &a)| *t += -a);
                }
            }
        }
        _ => {
            let partials = unsafe { core::slice::from_raw_parts(f.partials, f.partials_len) };
            let edges = lo..lo + count;
            for (&p, &w) in f.parents[edges.clone()].iter().zip(&partials[edges]) {
                let t = &mut before[p as usize * q..][..q];
                for (t, &a) in t.iter_mut().zip(a) {
                    *t += structural(w, a, w * a);
                }
            }
        }
    }
}

/// The sides of a dot product of `count` pairs, each side's operands consecutive from `a` and
/// `b`, to sweep: (first node, first operand of the other side) for each side of nodes, where
/// each side is all nodes or all constants (`n` nodes, the constants after them) and no node is
/// on both sides; else `None`.
fn apart(a: usize, b: usize, count: usize, n: usize) -> Option<[Option<(usize, usize)>; 2]> {
    let nodes = |s: usize| s + count <= n;
    let one_kind = [a, b].iter().all(|&s| nodes(s) || s >= n);
    let disjoint = !(nodes(a) && nodes(b)) || a + count <= b || b + count <= a;
    (one_kind && disjoint).then(|| [(a, b), (b, a)].map(|(s, o)| nodes(s).then_some((s, o))))
}

/// Compiles functions of one signature, `f(frame)`, into one module.
pub(super) struct Builder {
    module: JITModule,
    ctx: Context,
    fbc: FunctionBuilderContext,
    signature: Signature,
    calls: [FuncId; 3],
    /// The built-in one-argument rules, called directly.
    unary: Vec<(OpCode, FuncId)>,
    bytes: usize,
}

/// The functions the code calls, as the function being built names them.
pub(super) struct Calls {
    pub eval: FuncRef,
    pub sweep: FuncRef,
    pub sweep_lanes: FuncRef,
    /// `f(x) → (value, derivative)` of each built-in one-argument rule but `powi`.
    pub unary: Vec<(OpCode, FuncRef)>,
}

impl Builder {
    /// A module for this machine's processor; `Err` if Cranelift has no backend for it.
    pub fn new() -> Result<Builder, String> {
        let mut flags = settings::builder();
        let set = |f: &mut settings::Builder, k: &str, v: &str| {
            f.set(k, v)
                .map_err(|e| format!("Cranelift setting {k}={v}: {e}"))
        };
        set(&mut flags, "opt_level", "speed")?;
        set(&mut flags, "is_pic", "false")?;
        set(&mut flags, "use_colocated_libcalls", "false")?;
        // The IR verifier in debug builds (the tests), not in release.
        let verify = if cfg!(debug_assertions) {
            "true"
        } else {
            "false"
        };
        set(&mut flags, "enable_verifier", verify)?;
        let isa = cranelift_native::builder()
            .map_err(|e| format!("no Cranelift backend for this processor: {e}"))?
            .finish(settings::Flags::new(flags))
            .map_err(|e| format!("Cranelift: {e}"))?;
        let mut jit = JITBuilder::with_isa(isa, default_libcall_names());
        jit.symbol("wengert_eval", eval as *const u8);
        jit.symbol("wengert_sweep", sweep as *const u8);
        jit.symbol("wengert_sweep_lanes", sweep_lanes as *const u8);
        let rules: Vec<(OpCode, String)> = UNARY
            .iter()
            .filter_map(|&op| {
                let f = unary_c(op)?;
                let name = format!("wengert_{}", op.name());
                jit.symbol(name.clone(), f as *const u8);
                Some((op, name))
            })
            .collect();
        let mut module = JITModule::new(jit);
        let word = types::I64;
        let mut signature = module.make_signature();
        signature.params.push(AbiParam::new(word));
        let mut s_eval = module.make_signature();
        s_eval.params.extend([AbiParam::new(word); 6]);
        s_eval.returns.push(AbiParam::new(types::F64));
        let mut s_sweep = module.make_signature();
        s_sweep.params.extend([AbiParam::new(word); 4]);
        s_sweep.params.push(AbiParam::new(types::F64));
        let mut s_lanes = module.make_signature();
        s_lanes.params.extend([AbiParam::new(word); 5]);
        let declare = |m: &mut JITModule, name: &str, s: &Signature| {
            m.declare_function(name, Linkage::Import, s)
                .map_err(|e| format!("Cranelift: {e}"))
        };
        let eval = declare(&mut module, "wengert_eval", &s_eval)?;
        let sweep = declare(&mut module, "wengert_sweep", &s_sweep)?;
        let lanes = declare(&mut module, "wengert_sweep_lanes", &s_lanes)?;
        // (x) → (value, derivative): the C convention's two registers of a `Pair`.
        let mut s_unary = module.make_signature();
        s_unary.params.push(AbiParam::new(types::F64));
        s_unary.returns.extend([AbiParam::new(types::F64); 2]);
        let unary = rules
            .iter()
            .map(|(op, name)| Ok((*op, declare(&mut module, name, &s_unary)?)))
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Builder {
            ctx: module.make_context(),
            module,
            fbc: FunctionBuilderContext::new(),
            signature,
            calls: [eval, sweep, lanes],
            unary,
            bytes: 0,
        })
    }

    /// Compiles one function whose body `emit` writes, given the builder, the frame and the
    /// calls.
    pub fn function(
        &mut self,
        emit: impl FnOnce(&mut FunctionBuilder, Value, Calls),
    ) -> Result<FuncId, String> {
        let id = self
            .module
            .declare_anonymous_function(&self.signature)
            .map_err(|e| format!("Cranelift: {e}"))?;
        self.ctx.func.signature = self.signature.clone();
        {
            let mut b = FunctionBuilder::new(&mut self.ctx.func, &mut self.fbc);
            let entry = b.create_block();
            b.append_block_params_for_function_params(entry);
            b.switch_to_block(entry);
            b.seal_block(entry);
            let frame = b.block_params(entry)[0];
            let [eval, sweep, sweep_lanes] = self
                .calls
                .map(|id| self.module.declare_func_in_func(id, b.func));
            let unary = self
                .unary
                .iter()
                .map(|&(op, id)| (op, self.module.declare_func_in_func(id, b.func)))
                .collect();
            let calls = Calls {
                eval,
                sweep,
                sweep_lanes,
                unary,
            };
            emit(&mut b, frame, calls);
            b.ins().return_(&[]);
            b.finalize(self.module.target_config());
        }
        self.module
            .define_function(id, &mut self.ctx)
            .map_err(|e| format!("Cranelift: {e:?}"))?;
        self.bytes += self
            .ctx
            .compiled_code()
            .map_or(0, |c| c.code_buffer().len());
        self.module.clear_context(&mut self.ctx);
        Ok(id)
    }

    /// The machine code of the functions compiled, `forward` run in order, `reverse` and
    /// `checks` too; `guards` what the checks read.
    #[allow(unsafe_code)]
    pub fn finish(
        mut self,
        forward: &[FuncId],
        reverse: &[FuncId],
        checks: &[FuncId],
        lens: Lens,
        guards: Kept,
    ) -> Result<Code, String> {
        self.module
            .finalize_definitions()
            .map_err(|e| format!("Cranelift: {e}"))?;
        let get = |m: &JITModule, ids: &[FuncId]| -> Vec<Function> {
            ids.iter()
                .map(|&id| {
                    let p = m.get_finalized_function(id);
                    // SAFETY: `p` is the finalized code of a function declared with the
                    // signature `f(i64)`, which is `Function`'s on this host (SysV or the
                    // platform's C convention, a pointer argument, no result).
                    unsafe { core::mem::transmute::<*const u8, Function>(p) }
                })
                .collect()
        };
        Ok(Code {
            forward: get(&self.module, forward),
            reverse: get(&self.module, reverse),
            checks: get(&self.module, checks),
            guards,
            module: Mutex::new(Some(self.module)),
            bytes: self.bytes,
            lens,
        })
    }
}

/// The lengths of the arrays a program's code was compiled for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Lens {
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

/// A recording's machine code.
pub(super) struct Code {
    forward: Vec<Function>,
    reverse: Vec<Function>,
    /// The guards' checks, and what they read.
    checks: Vec<Function>,
    guards: Kept,
    /// Kept to free the code's memory with it (`JITModule` is not `Sync`, hence the lock).
    module: Mutex<Option<JITModule>>,
    bytes: usize,
    lens: Lens,
}

impl<'a> Frame<'a> {
    /// A frame of no arrays, for the code of `lens`: each caller sets those its code reads.
    fn empty(lens: &'a Lens) -> Frame<'a> {
        Frame {
            values: core::ptr::null_mut(),
            partials: core::ptr::null_mut(),
            adj: core::ptr::null_mut(),
            outcomes: core::ptr::null(),
            failed: Cell::new(0),
            end: lens.nodes as u64,
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

impl Code {
    /// Bytes of machine code.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Runs `functions` with a frame of these arrays, then resumes a panic of a user's rule.
    #[allow(unsafe_code)]
    fn run(&self, functions: &[Function], frame: &Frame<'_>) {
        for f in functions {
            // SAFETY: the frame's arrays have the lengths the code was compiled for (checked
            // by the callers), so every access of the code is in bounds; the frame outlives
            // the call.
            unsafe { f(frame) };
        }
        if let Some(p) = frame.panic.take() {
            resume_unwind(p);
        }
    }
}

/// Every array a gradient's code reads and writes: its own values, partials and adjoints, and
/// the recording's n-ary operands, rules and edges.
pub(super) struct Arrays<'a> {
    pub values: &'a mut [f64],
    pub partials: &'a mut [f64],
    pub adj: &'a mut [f64],
    pub args: &'a [u32],
    pub rules: &'a [Rule<f64>],
    pub forms: &'a [Form],
    pub parents: &'a [u32],
    pub units: &'a [u32],
}

impl Code {
    /// Runs the forward pass (`forward`) or the sweep of a gradient's code on `a`.
    pub fn gradient(&self, forward: bool, a: Arrays<'_>) {
        let frame = self.frame(a);
        self.run(
            if forward {
                &self.forward
            } else {
                &self.reverse
            },
            &frame,
        );
    }

    /// Whether every guard the code checks holds at the values of `a` (after the forward
    /// pass); [`unchecked`](Machine::unchecked) are left to the caller.
    pub fn checks_hold(&self, a: Arrays<'_>) -> bool {
        let frame = self.frame(a);
        self.run(&self.checks, &frame);
        frame.failed.get() == 0
    }

    /// The frame of a gradient's arrays, checked against the lengths the code was compiled
    /// for.
    fn frame<'a>(&'a self, a: Arrays<'a>) -> Frame<'a> {
        let l = &self.lens;
        assert!(
            (
                a.values.len(),
                a.partials.len(),
                a.adj.len(),
                a.args.len(),
                a.rules.len()
            ) == (l.values, l.partials, l.nodes, l.args, l.rules)
                && (a.parents.len(), a.units.len()) == (l.parents, l.units),
            "machine code run with another recording's arrays"
        );
        Frame {
            values: a.values.as_mut_ptr(),
            partials: a.partials.as_mut_ptr(),
            adj: a.adj.as_mut_ptr(),
            outcomes: self.guards.outcomes.as_ptr(),
            values_len: a.values.len(),
            partials_len: a.partials.len(),
            adj_len: a.adj.len(),
            args: a.args,
            rules: a.rules,
            forms: a.forms,
            parents: a.parents,
            units: a.units,
            ..Frame::empty(l)
        }
    }
}

impl Machine for Code {
    fn forward(
        &self,
        values: &mut [f64],
        partials: &mut [f64],
        args: &[u32],
        forms: &[Form],
        rules: &[Rule<f64>],
    ) {
        let l = &self.lens;
        assert!(
            (values.len(), partials.len(), args.len(), rules.len())
                == (l.values, l.partials, l.args, l.rules),
            "machine code run with another recording's arrays"
        );
        let frame = Frame {
            values: values.as_mut_ptr(),
            partials: partials.as_mut_ptr(),
            values_len: values.len(),
            partials_len: partials.len(),
            args,
            rules,
            forms,
            ..Frame::empty(l)
        };
        self.run(&self.forward, &frame);
    }

    fn reverse(
        &self,
        partials: &[f64],
        parents: &[u32],
        units: &[u32],
        adj: &mut [f64],
        end: usize,
    ) {
        let l = &self.lens;
        assert!(
            (partials.len(), parents.len(), units.len(), adj.len())
                == (l.partials, l.parents, l.units, l.nodes * l.lanes),
            "machine code run with another recording's arrays"
        );
        let frame = Frame {
            end: end.min(l.nodes) as u64,
            // Read only by the sweep's code and calls.
            partials: partials.as_ptr().cast_mut(),
            adj: adj.as_mut_ptr(),
            partials_len: partials.len(),
            adj_len: adj.len(),
            parents,
            units,
            ..Frame::empty(l)
        };
        self.run(&self.reverse, &frame);
    }

    fn guards_hold(&self, values: &[f64]) -> bool {
        let l = &self.lens;
        assert_eq!(
            values.len(),
            l.values,
            "machine code run with another recording's arrays"
        );
        let frame = Frame {
            // Only read by the checks.
            values: values.as_ptr().cast_mut(),
            outcomes: self.guards.outcomes.as_ptr(),
            values_len: values.len(),
            ..Frame::empty(l)
        };
        self.run(&self.checks, &frame);
        frame.failed.get() == 0
    }

    fn unchecked(&self) -> &[u32] {
        &self.guards.rest
    }

    fn kept_bytes(&self) -> usize {
        self.bytes + 8 * self.guards.outcomes.capacity() + 4 * self.guards.rest.capacity()
    }
}

/// The code of a vector sweep: [`Code`] of `lanes` adjoints per node, whose forward pass and
/// checks are those of the recording's [`Native`](crate::storage::program::Native) code.
pub(super) struct Lanes(pub Code);

impl LaneMachine for Lanes {
    fn lanes(&self) -> usize {
        self.0.lens.lanes
    }

    fn reverse(
        &self,
        partials: &[f64],
        parents: &[u32],
        units: &[u32],
        adj: &mut [f64],
        end: usize,
    ) {
        Machine::reverse(&self.0, partials, parents, units, adj, end);
    }

    fn kept_bytes(&self) -> usize {
        Machine::kept_bytes(&self.0)
    }
}

impl Drop for Code {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        let module = self.module.get_mut().map(Option::take);
        if let Ok(Some(module)) = module {
            // SAFETY: the functions of this module are in `self`, which is being dropped: none
            // is called again.
            unsafe { module.free_memory() };
        }
    }
}
