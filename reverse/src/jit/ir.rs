//! The building blocks of the compiled code: the frame's offsets, indices that step with the
//! turns of a loop (and of the loop around it), loads and stores of the arrays' elements, and
//! the loop over a region's turns.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    BlockArg, InstBuilder, InstructionData, MemFlagsData, Opcode, Type, Value, ValueDef, types,
};
use cranelift_frontend::FunctionBuilder;

/// Byte offsets of the frame's pointers (see `machine::Frame`).
pub(super) const VALUES: i32 = 0;
pub(super) const PARTIALS: i32 = 8;
pub(super) const ADJOINTS: i32 = 16;
/// The recorded outcomes of the guards, and the flag the guards' code sets where one failed.
pub(super) const OUTCOMES: i32 = 24;
pub(super) const FAILED: i32 = 32;
/// One past the last node whose adjoint a sweep may find non-zero (those after it are zero).
pub(super) const END: i32 = 40;
/// The recording's parents (`u32`, one per weighted edge).
pub(super) const PARENTS: i32 = 48;

/// The turn counters of the code being emitted: of its loop (none in straight code), and of
/// the loop around it where loops are nested.
#[derive(Clone, Copy)]
pub(super) struct Turn {
    pub k: Option<Value>,
    pub outer: Option<Value>,
}

/// An index's steps: per turn of its loop, and per turn of the loop around it.
type Step = (i64, i64);

/// `k · step.0 + outer · step.1` (none if both are absent or zero).
fn stepped(b: &mut FunctionBuilder, t: Turn, step: Step, scale: i64) -> Option<Value> {
    let inner =
        t.k.filter(|_| step.0 != 0)
            .map(|k| b.ins().imul_imm_s(k, step.0 * scale));
    let outer = t
        .outer
        .filter(|_| step.1 != 0)
        .map(|o| b.ins().imul_imm_s(o, step.1 * scale));
    match (inner, outer) {
        (Some(x), Some(y)) => Some(b.ins().iadd(x, y)),
        (x, y) => x.or(y),
    }
}

/// The number `v` is, where the code defines it as an `f64` immediate.
pub(super) fn immediate(b: &FunctionBuilder, v: Value) -> Option<f64> {
    let ValueDef::Result(inst, 0) = b.func.dfg.value_def(v) else {
        return None;
    };
    match b.func.dfg.insts[inst] {
        InstructionData::UnaryIeee64 {
            opcode: Opcode::F64const,
            imm,
        } => Some(f64::from_bits(imm.bits())),
        _ => None,
    }
}

/// `index + k · step` as an integer.
pub(super) fn index(b: &mut FunctionBuilder, t: Turn, index: i64, step: Step) -> Value {
    match stepped(b, t, step, 1) {
        Some(x) => b.ins().iadd_imm_s(x, index),
        None => b.ins().iconst(types::I64, index),
    }
}

/// The address of element `index + k · step` of the array at `base` of elements of `size`
/// bytes, as a pointer and an offset.
fn element(
    b: &mut FunctionBuilder,
    base: Value,
    t: Turn,
    index: i64,
    step: Step,
    size: i64,
) -> (Value, i32) {
    let bytes = index * size;
    let base = match stepped(b, t, step, size) {
        Some(x) => b.ins().iadd(base, x),
        None => base,
    };
    match i32::try_from(bytes) {
        Ok(off) => (base, off),
        Err(_) => (b.ins().iadd_imm_s(base, bytes), 0),
    }
}

pub(super) fn load(b: &mut FunctionBuilder, base: Value, k: Turn, index: i64, step: Step) -> Value {
    load_as(b, types::F64, base, k, index, step)
}

/// [`load`] of an element the function does not write (the values in the sweep, the
/// recorded constants): free of every store, so that Cranelift may drop it where unused and
/// hoist it out of a loop where its address is the same in every turn.
pub(super) fn read(b: &mut FunctionBuilder, base: Value, k: Turn, index: i64, step: Step) -> Value {
    let (p, off) = element(b, base, k, index, step, 8);
    let flags = MemFlagsData::trusted().with_readonly().with_can_move();
    b.ins().load(types::F64, flags, p, off)
}

/// [`load`] of a value of type `ty` (two lanes of `f64`, say) from element `index + k · step`.
pub(super) fn load_as(
    b: &mut FunctionBuilder,
    ty: Type,
    base: Value,
    k: Turn,
    index: i64,
    step: Step,
) -> Value {
    let (p, off) = element(b, base, k, index, step, 8);
    b.ins().load(ty, MemFlagsData::trusted(), p, off)
}

/// Element `index + k · step` of the `u32` array at `base`, as an `i64`.
pub(super) fn load_u32(
    b: &mut FunctionBuilder,
    base: Value,
    t: Turn,
    index: i64,
    step: Step,
) -> Value {
    let (p, off) = element(b, base, t, index, step, 4);
    b.ins().uload32(MemFlagsData::trusted(), p, off)
}

pub(super) fn store(
    b: &mut FunctionBuilder,
    x: Value,
    base: Value,
    k: Turn,
    index: i64,
    step: Step,
) {
    let (p, off) = element(b, base, k, index, step, 8);
    b.ins().store(MemFlagsData::trusted(), x, p, off);
}

/// A loop over the `turns` of a region, forwards or backwards, with `body` emitted once. The
/// loop carries numbers from turn to turn: `init` into the first, what `body` returns into the
/// next; returns what the last turn returned.
pub(super) fn turns(
    b: &mut FunctionBuilder,
    count: usize,
    backwards: bool,
    init: &[Value],
    body: impl FnMut(&mut FunctionBuilder, Value, &[Value]) -> Vec<Value>,
) -> Vec<Value> {
    turns_from(b, count, backwards, None, init, body)
}

/// [`turns`], backwards from turn `first` (a value at most `count − 1`; a negative one runs
/// no turn) instead of the last.
pub(super) fn turns_from(
    b: &mut FunctionBuilder,
    count: usize,
    backwards: bool,
    first: Option<Value>,
    init: &[Value],
    mut body: impl FnMut(&mut FunctionBuilder, Value, &[Value]) -> Vec<Value>,
) -> Vec<Value> {
    let (header, inside, exit) = (b.create_block(), b.create_block(), b.create_block());
    b.append_block_param(header, types::I64);
    for &v in init {
        b.append_block_param(header, b.func.dfg.value_type(v));
    }
    let first = first.unwrap_or_else(|| {
        b.ins()
            .iconst(types::I64, if backwards { count as i64 - 1 } else { 0 })
    });
    let args: Vec<BlockArg> = core::iter::once(first)
        .chain(init.iter().copied())
        .map(Into::into)
        .collect();
    b.ins().jump(header, &args);
    b.switch_to_block(header);
    let params = b.block_params(header).to_vec();
    let k = params[0];
    let go = if backwards {
        b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, k, 0)
    } else {
        b.ins().icmp_imm_s(IntCC::SignedLessThan, k, count as i64)
    };
    b.ins().brif(go, inside, &[], exit, &[]);
    b.switch_to_block(inside);
    b.seal_block(inside);
    let out = body(b, k, &params[1..]);
    let next = b.ins().iadd_imm_s(k, if backwards { -1 } else { 1 });
    let args: Vec<BlockArg> = core::iter::once(next).chain(out).map(Into::into).collect();
    b.ins().jump(header, &args);
    b.seal_block(header);
    b.switch_to_block(exit);
    b.seal_block(exit);
    params[1..].to_vec()
}
