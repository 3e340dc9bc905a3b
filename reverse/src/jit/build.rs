//! The compiler's pipeline: the recording's shape, its loops, a gradient's flags (see
//! [`flags`](super::flags)) and edges (see [`layout`]), the bounds the code relies on, and the
//! code of each region.

use super::emit::{self, Env};
use super::flags::{dot_runs, fold_sums, gradient_flags, over_turns};
use super::guards;
use super::ir;
use super::layout::{self, Edges};
use super::machine;
use super::nodes::{self, Forward, Index, Nodes};
use super::pass;
use super::report::{CodeStats, CompileError};
use super::shape::{self, Region};
use super::slots::Slots;
use crate::storage::TapeData;
use crate::storage::program::{Form, Native, Program};
use core::time::Duration;
use cranelift_module::FuncId;

/// The most instructions (estimated) in one compiled function: the register allocator's time
/// grows faster than linearly with a function's size, so long straight code is cut.
const FUNCTION: usize = 16_384;

/// The most instructions (estimated) the compiler emits for one recording: about a megabyte
/// of machine code.
pub const MOST_INSTRUCTIONS: usize = 1 << 18;

/// The most nodes of a recording the compiler takes: its analysis keeps about 40 bytes per
/// node while it runs (each node's kind and indices, and a few flags).
pub const MOST_NODES: usize = 1 << 23;

/// The most adjoints per node of a compiled vector sweep ([`Recording::compile_lanes`]).
///
/// [`Recording::compile_lanes`]: crate::Recording::compile_lanes
pub const MOST_LANES: usize = 8;

/// Compiles the program `p` of recording `d` (taken out of it) and keeps the code in it.
pub(super) fn compile(d: &TapeData<f64>, p: &mut Program<f64>) -> Result<CodeStats, CompileError> {
    let (code, stats, ..) = build(d, p, Target::Full)?;
    p.derived.put(Native(Box::new(code)));
    Ok(stats)
}

/// What [`build`] compiles.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Target {
    /// Every value, partial and adjoint, and the checks of the guards.
    Full,
    /// The gradient of a node, and the checks of the guards.
    Gradient(u32),
    /// The sweep alone, with this many adjoints per node (over the partials of `Full`'s
    /// forward pass).
    Lanes(usize),
}

/// The machine code of `target` for program `p` of recording `d`, and for a gradient the
/// edges its code reads (see [`layout`]).
pub(super) fn build(
    d: &TapeData<f64>,
    p: &mut Program<f64>,
    target: Target,
) -> Result<(machine::Code, CodeStats, Layout), CompileError> {
    let (y, lanes) = match target {
        Target::Full => (None, 1),
        Target::Gradient(y) => (Some(y), 1),
        Target::Lanes(q) => (None, q),
    };
    if d.len() > MOST_NODES {
        return Err(CompileError::TooManyNodes {
            nodes: d.len(),
            limit: MOST_NODES,
        });
    }
    // What the code reads: the constants after the nodes, the n-ary operands.
    p.operands()?;
    let nodes = nodes::nodes(d, p);
    let regions = shape::regions(&nodes);
    let n = nodes.len();
    let mut lens = machine::Lens {
        nodes: n,
        values: p.values.len(),
        partials: d.partials().len(),
        parents: d.parents().len(),
        units: d.units().len(),
        args: p.args.len(),
        rules: p.rules.len(),
        guards: p.guards.len(),
        calls: calls(&nodes),
        lanes,
    };
    for r in &regions {
        in_bounds(&nodes, r, &lens)
            .map_err(|m| CompileError::Backend(format!("internal error, nothing compiled: {m}")))?;
    }
    // Loops of loops: the code is that of the nests; a gradient folds its loops' sums.
    let mut nests = shape::nest(&nodes, &regions);
    let mut nodes = nodes;
    if let Some(y) = y {
        fold_sums(d, p, &mut nodes, &mut nests, y);
    }
    let nodes = nodes;
    let (mut runs, rest) = guards::plan(p, n);
    if lanes > 1 {
        runs.clear(); // (the forward pass's code checks them)
    }
    guards::in_bounds(&runs, lens.values, lens.guards)
        .map_err(|m| CompileError::Backend(format!("internal error, nothing compiled: {m}")))?;
    let instructions: usize = nests
        .iter()
        .flat_map(|nest| &nest.regions)
        .map(|r| emit::size(&nodes, r) * lanes)
        .sum::<usize>()
        + guards::size(&runs);
    if instructions > MOST_INSTRUCTIONS {
        let straight = nests
            .iter()
            .filter(|nest| nest.turns == 1)
            .flat_map(|nest| &nest.regions)
            .filter(|r| r.turns == 1)
            .map(|r| r.period)
            .sum();
        return Err(CompileError::TooMuchCode {
            instructions,
            straight,
            limit: MOST_INSTRUCTIONS,
        });
    }
    // The nests cut into functions of a bounded size (the sweep runs them last to first).
    let mut cuts = vec![0];
    let mut size = 0;
    for (i, nest) in nests.iter().enumerate() {
        let s: usize = nest
            .regions
            .iter()
            .map(|r| emit::size(&nodes, r) * lanes)
            .sum();
        if size + s > FUNCTION && size > 0 {
            cuts.push(i);
            size = 0;
        }
        size += s;
    }
    cuts.push(nests.len());
    let flags = y.map(|y| {
        let (mut keep, mut outside) = gradient_flags(d, p, &nodes, &regions, y);
        let mut runs = dot_runs(p, &nodes);
        over_turns(&mut keep, &nests, false);
        over_turns(&mut outside, &nests, false);
        over_turns(&mut runs, &nests, true);
        (keep, outside, runs)
    });
    let mode = match &flags {
        None => emit::Mode::Full,
        Some((keep, outside, runs)) => emit::Mode::Gradient {
            keep,
            outside,
            runs,
        },
    };
    // A gradient keeps only the edges its code reads.
    let args = &p
        .derived
        .get::<crate::replay::compile::Operands>()
        .expect("made by `operands` above")
        .args;
    let mut nodes = nodes;
    let edges = match mode {
        emit::Mode::Gradient { .. } => layout::edges(
            d,
            mode,
            &mut nodes,
            &mut nests,
            (p.values.len(), args),
            &mut lens,
        ),
        emit::Mode::Full => None,
    };
    let nodes = nodes;
    // A gradient's values and adjoints in slots where every line its code reads maps (else
    // by node, as any other code).
    let slots = match mode {
        emit::Mode::Gradient { keep, outside, .. } if edges.is_some() => {
            let slots = Slots::of(&nodes, &nests, (keep, outside), p.values.len());
            guards::mapped(&runs, |line, t, o| slots.over(line, t, o)).map(|runs| (slots, runs))
        }
        _ => None,
    };
    let rule = |f: Forward| lens.calls.iter().position(|&c| c == f).expect("listed") as i64;
    let code = |slots: Option<&Slots>, runs: &[guards::Nest]| {
        emit_all(
            &nodes,
            &nests,
            &cuts,
            Emit {
                n,
                recorded: &p.values,
                args,
                rule: &rule,
                mode,
                lanes,
                y,
                slots,
            },
            runs,
        )
    };
    let (parts, slots) = match slots {
        Some((slots, mapped)) => {
            let parts = code(Some(&slots), &mapped)?;
            if slots.failed() {
                (code(None, &runs)?, None)
            } else {
                (parts, Some(slots))
            }
        }
        None => (code(None, &runs)?, None),
    };
    if let Some(slots) = &slots {
        (lens.nodes, lens.values) = (slots.count(), slots.values());
    }
    let Functions {
        builder: b,
        forward,
        reverse,
        checks,
    } = parts;
    // A gradient's calls read the n-ary operands only where one evaluates or sweeps an n-ary
    // node; else it keeps none.
    let args_read = y.is_none()
        || nests.iter().flat_map(|nest| &nest.regions).any(|r| {
            (0..r.period).any(|j| {
                let nd = nodes.get(r.start + j);
                let short = emit::short_dot(mode, lanes, &nodes, (n, p.values.len(), args), r, j);
                let many = matches!(
                    nd.forward,
                    Forward::Call {
                        form: Form::Many,
                        ..
                    }
                );
                (many && short.is_none()) || emit::pairs(mode, &nodes, r, j).is_some()
            })
        });
    if !args_read {
        lens.args = 0;
    }
    let looped = nests
        .iter()
        .filter(|nest| nest.turns > 1)
        .map(|nest| nest.regions.iter().map(|r| r.nodes().len()).sum::<usize>() * nest.turns)
        .chain(
            nests
                .iter()
                .filter(|nest| nest.turns == 1)
                .flat_map(|nest| &nest.regions)
                .filter(|r| r.turns > 1)
                .map(|r| r.nodes().len()),
        )
        .sum();
    let loops = nests
        .iter()
        .map(|nest| {
            usize::from(nest.turns > 1) + nest.regions.iter().filter(|r| r.turns > 1).count()
        })
        .sum();
    let stats = CodeStats {
        bytes: 0,
        time: Duration::ZERO,
        nodes: n,
        looped,
        loops,
        functions: forward.len() + reverse.len() + checks.len(),
        guards: guards::count(&runs),
        sliced: nests
            .iter()
            .flat_map(|nest| &nest.regions)
            .map(|r| emit::sliced(mode, &nodes, (args, slots.as_ref()), r))
            .sum(),
    };
    let code = b
        .finish(&forward, &reverse, &checks, lens, guards::Kept::of(p, rest))
        .map_err(CompileError::Backend)?;
    let stats = CodeStats {
        bytes: code.bytes(),
        ..stats
    };
    let layout = Layout {
        edges,
        slots,
        args: args_read,
    };
    Ok((code, stats, layout))
}

/// Where a gradient's code finds what it reads: the edges it keeps (see [`layout`]), its
/// slots (see [`slots`](super::slots)), and whether its calls read the n-ary operands.
pub(super) struct Layout {
    pub edges: Option<Edges>,
    pub slots: Option<Slots>,
    pub args: bool,
}

/// What [`emit_all`] emits the code of, besides the nodes and nests.
struct Emit<'a> {
    n: usize,
    recorded: &'a [f64],
    args: &'a [u32],
    rule: &'a dyn Fn(Forward) -> i64,
    mode: emit::Mode<'a>,
    lanes: usize,
    y: Option<u32>,
    slots: Option<&'a Slots>,
}

/// The functions of a module: the forward passes, the sweeps and the guards' checks.
struct Functions {
    builder: machine::Builder,
    forward: Vec<FuncId>,
    reverse: Vec<FuncId>,
    checks: Vec<FuncId>,
}

/// The functions of the code of `nests` cut at `cuts`, forward and sweep, and of the checks of
/// the guards `runs`, in a new module.
fn emit_all(
    nodes: &Nodes,
    nests: &[shape::Nest],
    cuts: &[usize],
    e: Emit,
    runs: &[guards::Nest],
) -> Result<Functions, CompileError> {
    let Emit {
        n,
        recorded,
        args,
        rule,
        mode,
        lanes,
        y,
        slots,
    } = e;
    let mut b = machine::Builder::new().map_err(CompileError::Backend)?;
    let (mut forward, mut reverse) = (Vec::new(), Vec::new());
    for w in cuts.windows(2) {
        let part = &nests[w[0]..w[1]];
        let passes: &[bool] = if lanes > 1 { &[true] } else { &[false, true] };
        for &backwards in passes {
            let id = b
                .function(|fb, frame, calls| {
                    let [values, partials, adj, parents] = Env::load_pointers(fb, frame);
                    // The sweep of any seeds starts at the nest of the last one.
                    let end = (backwards && y.is_none()).then(|| {
                        use cranelift_codegen::ir::{InstBuilder, MemFlagsData, types::I64};
                        fb.ins().load(I64, MemFlagsData::trusted(), frame, ir::END)
                    });
                    let env = Env {
                        nodes,
                        n,
                        recorded,
                        args,
                        constants: Default::default(),
                        frame,
                        values,
                        partials,
                        adj,
                        parents,
                        eval: calls.eval,
                        sweep: calls.sweep,
                        sweep_lanes: calls.sweep_lanes,
                        unary: &calls.unary,
                        winners: calls.winners,
                        rule,
                        mode,
                        lanes,
                        end,
                        slots,
                    };
                    let live =
                        |nest: &&shape::Nest| !nest.regions.iter().all(|r| inputs_only(nodes, r));
                    if backwards {
                        for nest in part.iter().rev().filter(live) {
                            pass::before_end(fb, &env, nest, |fb| pass::nest(fb, &env, nest, true));
                        }
                    } else {
                        for nest in part.iter().filter(live) {
                            pass::nest(fb, &env, nest, false);
                        }
                    }
                })
                .map_err(CompileError::Backend)?;
            if backwards {
                &mut reverse
            } else {
                &mut forward
            }
            .push(id);
        }
    }
    reverse.reverse();
    let mut checks = Vec::new();
    if !runs.is_empty() {
        let id = b
            .function(|fb, frame, _| {
                use cranelift_codegen::ir::{InstBuilder, MemFlagsData, types::I64 as word};
                let f = MemFlagsData::trusted();
                let values = fb.ins().load(word, f, frame, ir::VALUES);
                let outcomes = fb.ins().load(word, f, frame, ir::OUTCOMES);
                let (failed, done) = (fb.create_block(), fb.create_block());
                guards::emit(fb, values, outcomes, runs, failed);
                fb.ins().jump(done, &[]);
                fb.switch_to_block(failed);
                fb.seal_block(failed);
                let one = fb.ins().iconst(word, 1);
                fb.ins().store(f, one, frame, ir::FAILED);
                fb.ins().jump(done, &[]);
                fb.switch_to_block(done);
                fb.seal_block(done);
            })
            .map_err(CompileError::Backend)?;
        checks.push(id);
    }
    Ok(Functions {
        builder: b,
        forward,
        reverse,
        checks,
    })
}

/// Whether region `r` holds inputs only, for which neither pass has anything to do (the
/// inputs' values are written before the code runs; they have no edges).
fn inputs_only(nodes: &Nodes, r: &Region) -> bool {
    (0..r.period).all(|j| nodes.get(r.start + j).forward == Forward::Input)
}

/// The rules evaluated by a call, each once: the table the calls index.
fn calls(nodes: &Nodes) -> Vec<Forward> {
    let mut out: Vec<Forward> = Vec::new();
    for &(forward, _) in nodes.distinct() {
        if matches!(forward, Forward::Call { .. }) && !out.contains(&forward) {
            out.push(forward);
        }
    }
    out
}

/// Checks that every index region `r`'s code computes lies within the arrays of `lens`: the
/// invariant of the machine code, which reads and writes without bounds checks. The indices
/// are linear in the turn, so the first and the last turn bound them.
fn in_bounds(nodes: &Nodes, r: &Region, l: &machine::Lens) -> Result<(), String> {
    use nodes::{E, LO, Reverse};
    let last = r.turns as i64 - 1;
    for j in 0..r.period {
        let nd = nodes.get(r.start + j);
        let step: &Index = &r.step[j];
        let within = |x: usize, extra: i64, len: usize| {
            [nd.at(x), nd.at(x) + last * step[x]]
                .iter()
                .all(|&i| i >= 0 && i.saturating_add(extra) <= len as i64)
        };
        let node_ok = r.start + j + r.period * (r.turns - 1) < l.nodes;
        let operands_ok = nd.operands().iter().all(|&x| within(x, 1, l.values));
        let edges = match nd.reverse {
            Reverse::Weighted(c) => {
                within(LO, c as i64, l.partials) && within(E, c as i64, l.partials)
            }
            Reverse::Unit(c, _) => within(LO, c as i64, l.units),
            // (The code reads a `max` or `min`'s partials too.)
            Reverse::Call { unit, count } => {
                within(LO, count as i64, if unit { l.units } else { l.parents })
                    && (unit || within(LO, count as i64, l.partials))
            }
        };
        let parents_ok = nd.parents().all(|x| within(x, 1, l.nodes));
        // (A call's own accesses are checked by Rust.)
        if !(node_ok && operands_ok && edges && parents_ok) {
            return Err(format!(
                "node {} of a region of {} turns of {} nodes from node {}: an index out of \
                 bounds ({nd:?}, checks {:?}, arrays {l:?})",
                r.start + j,
                r.turns,
                r.period,
                r.start,
                [node_ok, operands_ok, edges, parents_ok],
            ));
        }
    }
    Ok(())
}
