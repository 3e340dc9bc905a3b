//! Machine code at run time: the module that turns Cranelift IR into executable code, calls it,
//! and holds the functions it calls back ([`calls`]). Every `unsafe` that runs or calls
//! machine code is here; the compiler's one other is an advice to the kernel about the
//! analysis's memory (`pages`; see `docs/unsafe.md`).
//!
//! The code reads and writes the recording's arrays through the pointers of a [`Frame`],
//! without bounds checks: the compiler checked, before emitting it, that every index it
//! computes lies within the arrays' lengths at compile time, and [`Code`] checks at each call
//! that the arrays it is given have those lengths.

mod calls;
mod frame;

pub(super) use calls::{NO_PARTIALS, PAIRS, RUN_PAIRS, RUNS, UNIT, WEIGHTED};
pub(super) use frame::Lens;

use super::guards::Kept;
use crate::storage::op_code::{OpCode, UNARY, unary_c};
use crate::storage::program::{Form, LaneMachine, Machine, Rule};
use calls::{eval, max_value, min_value, sweep, sweep_lanes};
use cranelift_codegen::Context;
use cranelift_codegen::ir::{AbiParam, FuncRef, InstBuilder, Signature, Value, types};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{FuncId, Linkage, Module, default_libcall_names};
use frame::Frame;
use std::panic::resume_unwind;
use std::sync::Mutex;

/// A compiled function: `f(frame)`.
type Function = unsafe extern "C" fn(*const Frame<'_>);

/// Compiles functions of one signature, `f(frame)`, into one module.
pub(super) struct Builder {
    module: JITModule,
    ctx: Context,
    fbc: FunctionBuilderContext,
    signature: Signature,
    calls: [FuncId; 3],
    /// The built-in one-argument rules, called directly.
    unary: Vec<(OpCode, FuncId)>,
    /// The values of `max` and `min`, called directly.
    winners: [FuncId; 2],
    bytes: usize,
}

/// The functions the code calls, as the function being built names them.
pub(super) struct Calls {
    pub eval: FuncRef,
    pub sweep: FuncRef,
    pub sweep_lanes: FuncRef,
    /// `f(x) → (value, derivative)` of each built-in one-argument rule but `powi`.
    pub unary: Vec<(OpCode, FuncRef)>,
    /// `f(a, b) → value` of `max` and `min`.
    pub winners: [FuncRef; 2],
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
        jit.symbol("wengert_max", max_value as *const u8);
        jit.symbol("wengert_min", min_value as *const u8);
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
        // (a, b) → value.
        let mut s_winner = module.make_signature();
        s_winner.params.extend([AbiParam::new(types::F64); 2]);
        s_winner.returns.push(AbiParam::new(types::F64));
        let winners = [
            declare(&mut module, "wengert_max", &s_winner)?,
            declare(&mut module, "wengert_min", &s_winner)?,
        ];
        Ok(Builder {
            ctx: module.make_context(),
            module,
            fbc: FunctionBuilderContext::new(),
            signature,
            calls: [eval, sweep, lanes],
            unary,
            winners,
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
            let winners = self
                .winners
                .map(|id| self.module.declare_func_in_func(id, b.func));
            let calls = Calls {
                eval,
                sweep,
                sweep_lanes,
                unary,
                winners,
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

impl Code {
    /// Bytes of machine code.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The recorded outcome of every guard of the recording.
    pub fn outcomes(&self) -> &[u64] {
        &self.guards.outcomes
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
            parent: a.parents.as_ptr(),
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
            parent: parents.as_ptr(),
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
