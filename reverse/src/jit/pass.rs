//! The passes over a nest of regions: a loop over the nest's turns (where regions repeat as a
//! loop of loops) around the code of its regions, forwards ([`emit`](super::emit)) or backwards
//! ([`sweep`](super::sweep)).

use super::emit::{self, Env};
use super::ir::turns;
use super::shape::Nest;
use super::sweep;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;

/// One pass over a nest of regions: a loop over its turns around its regions' code, or the
/// region itself.
pub(super) fn nest(b: &mut FunctionBuilder, env: &Env, nest: &Nest, backwards: bool) {
    let pass = |b: &mut FunctionBuilder, outer: Option<Value>| {
        if backwards {
            for r in nest.regions.iter().rev() {
                sweep::reverse(b, env, r, outer);
            }
        } else {
            for r in &nest.regions {
                emit::forward(b, env, r, outer);
            }
        }
    };
    if nest.turns == 1 {
        pass(b, None);
    } else {
        turns(b, nest.turns, backwards, &[], |b, k, _| {
            pass(b, Some(k));
            Vec::new()
        });
    }
}

/// `emit`'s code of `nest`, run only where the nest starts before the environment's `end`
/// (always, without one).
pub(super) fn before_end(
    b: &mut FunctionBuilder,
    env: &Env,
    nest: &Nest,
    emit: impl FnOnce(&mut FunctionBuilder),
) {
    let Some(end) = env.end else {
        return emit(b);
    };
    let first = nest.regions.first().map_or(0, |r| r.start) as i64;
    let (body, next) = (b.create_block(), b.create_block());
    let go = b.ins().icmp_imm_s(IntCC::SignedGreaterThan, end, first);
    b.ins().brif(go, body, &[], next, &[]);
    b.switch_to_block(body);
    b.seal_block(body);
    emit(b);
    b.ins().jump(next, &[]);
    b.switch_to_block(next);
    b.seal_block(next);
}
