//! The compiler's pipeline: the recording's shape, its loops, the flags of a gradient, the
//! bounds the code relies on, and the code of each region.

use super::emit::{self, Env};
use super::guards;
use super::ir;
use super::layout::{self, Edges};
use super::machine;
use super::pass;
use super::report::{CodeStats, CompileError};
use super::shape::{self, Forward, Index, Node, Region};
use crate::storage::TapeData;
use crate::storage::program::{Native, Program};
use core::time::Duration;

/// The most instructions (estimated) in one compiled function: the register allocator's time
/// grows faster than linearly with a function's size, so long straight code is cut.
const FUNCTION: usize = 16_384;

/// The most instructions (estimated) the compiler emits for one recording: about a megabyte
/// of machine code.
pub const MOST_INSTRUCTIONS: usize = 1 << 18;

/// The most nodes of a recording the compiler takes: its analysis keeps about 100 bytes per
/// node while it runs.
pub const MOST_NODES: usize = 1 << 23;

/// The most adjoints per node of a compiled vector sweep ([`Recording::compile_lanes`]).
///
/// [`Recording::compile_lanes`]: crate::Recording::compile_lanes
pub const MOST_LANES: usize = 8;

/// Compiles the program `p` of recording `d` (taken out of it) and keeps the code in it.
pub(super) fn compile(d: &TapeData<f64>, p: &mut Program<f64>) -> Result<CodeStats, CompileError> {
    let (code, stats, _) = build(d, p, Target::Full)?;
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
) -> Result<(machine::Code, CodeStats, Option<Edges>), CompileError> {
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
    let (nodes, kinds) = shape::nodes(d, p);
    let regions = shape::regions(&nodes, &kinds);
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
        calls: calls(&kinds),
        lanes,
    };
    for r in &regions {
        in_bounds(&nodes, r, &lens)
            .map_err(|m| CompileError::Backend(format!("internal error, nothing compiled: {m}")))?;
    }
    // Loops of loops: the code is that of the nests; a gradient folds its loops' sums.
    let mut nests = shape::nest(&nodes, &kinds, &regions);
    drop(kinds);
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
    let mut b = machine::Builder::new().map_err(CompileError::Backend)?;
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
        let (keep, outside) = gradient_flags(d, p, &nodes, &regions, y);
        (keep, outside, dot_runs(p, &nodes))
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
    let rule = |f: Forward| lens.calls.iter().position(|&c| c == f).expect("listed") as i64;
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
                        nodes: &nodes,
                        n,
                        recorded: &p.values,
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
                        rule: &rule,
                        mode,
                        lanes,
                        end,
                    };
                    let live =
                        |nest: &&shape::Nest| !nest.regions.iter().all(|r| inputs_only(&nodes, r));
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
                guards::emit(fb, values, outcomes, &runs, failed);
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
            .map(|r| emit::sliced(mode, &nodes, r))
            .sum(),
    };
    let code = b
        .finish(&forward, &reverse, &checks, lens, guards::Kept::of(p, rest))
        .map_err(CompileError::Backend)?;
    let stats = CodeStats {
        bytes: code.bytes(),
        ..stats
    };
    Ok((code, stats, edges))
}

/// For the gradient of node `y`: which values must be in memory (`keep`: read through memory,
/// by a call or by a guard, and `y`'s), and which adjoints may receive a term through memory
/// (`outside`: added to by another turn or region or by a call, the inputs and `y`).
fn gradient_flags(
    d: &TapeData<f64>,
    p: &Program<f64>,
    nodes: &[Node],
    regions: &[Region],
    y: u32,
) -> (Vec<bool>, Vec<bool>) {
    use crate::storage::guard::Kind;
    use crate::storage::program::CONST;
    use shape::{Points, Reverse};
    let n = nodes.len();
    let (mut keep, mut outside) = (vec![false; n], vec![false; n]);
    let mark = |flags: &mut Vec<bool>, r: u32| {
        if r & CONST == 0 && (r as usize) < n {
            flags[r as usize] = true;
        }
    };
    mark(&mut keep, y);
    mark(&mut outside, y);
    for (i, nd) in nodes.iter().enumerate() {
        match nd.forward {
            // An input's adjoint is the gradient; a folded sum's is read by its loop.
            Forward::Input | Forward::Folded => outside[i] = true,
            // A call reads its operands from memory.
            Forward::Call { op, form, param } => {
                if form == crate::storage::program::Form::Many {
                    let [a, _] = p.operands[i];
                    for &r in &p.args[a as usize..(a + param) as usize] {
                        mark(&mut keep, r);
                    }
                } else {
                    let [a, b] = p.operands[i];
                    mark(&mut keep, a);
                    if op != crate::storage::op_code::OpCode::Powi {
                        mark(&mut keep, b);
                    }
                }
            }
            Forward::Inline(_) => {}
        }
        // A call's sweep adds through memory.
        if let Reverse::Call { unit, count } = nd.reverse {
            let lo = nd.at(shape::LO) as usize;
            let edges = lo..lo + count as usize;
            let reached = if unit {
                &d.units()[edges]
            } else {
                &d.parents()[edges]
            };
            for &q in reached {
                mark(&mut outside, q & !crate::storage::NEG);
            }
        }
    }
    for g in &p.guards {
        match g.kind {
            Kind::Compare { a, b, .. } => {
                mark(&mut keep, a);
                mark(&mut keep, b);
            }
            Kind::Test { a, .. } => mark(&mut keep, a),
            Kind::Piece { node } => {
                let [a, b] = p.operands[node as usize];
                mark(&mut keep, node);
                mark(&mut keep, a);
                mark(&mut keep, b);
            }
        }
    }
    // What the compiled code reads from memory, turn by turn.
    for r in regions {
        let carry =
            (0..r.period).all(|j| !matches!(nodes[r.start + j].reverse, Reverse::Call { .. }));
        for j in 0..r.period {
            let nd = &nodes[r.start + j];
            let memory = |x: usize| !matches!(r.points(nodes, j, x, n), Some(Points::Turn(_)));
            let operands: Vec<usize> = nd
                .operands()
                .iter()
                .copied()
                .filter(|&x| memory(x))
                .collect();
            let parents: Vec<usize> = nd.parents().filter(|&x| !carry || memory(x)).collect();
            for k in 0..r.turns as i64 {
                let at = |x: usize| nd.at(x) + k * r.step[j][x];
                for &x in &operands {
                    if (at(x) as usize) < n {
                        keep[at(x) as usize] = true;
                    }
                }
                for &x in &parents {
                    outside[at(x) as usize] = true;
                }
            }
        }
    }
    (keep, outside)
}

/// Folds into their loops the sums of one body node over every turn (see `Region::fold`):
/// where a loop of the top level (not in a loop of loops) has a body node read only by one
/// sum node, itself a region of its own, whose operands are exactly that node's values turn by
/// turn, and none of them is the output `y` (whose seed is another term).
fn fold_sums(
    d: &TapeData<f64>,
    p: &Program<f64>,
    nodes: &mut [Node],
    nests: &mut [shape::Nest],
    y: u32,
) {
    use crate::storage::program::CONST;
    let n = nodes.len();
    // Each node's only reader (NONE: none, or several).
    const NONE: u32 = u32::MAX;
    const MANY: u32 = u32::MAX - 1;
    let mut reader = vec![NONE; n];
    let (parent, unit) = (d.parents(), d.units());
    for (v, edges) in d.walk_back(n) {
        let read = match edges {
            crate::storage::Edges::Weighted(lo, hi) => &parent[lo..hi],
            crate::storage::Edges::Unit(lo, hi) => &unit[lo..hi],
        };
        for &u in read {
            let r = &mut reader[(u & !crate::storage::NEG) as usize];
            *r = if *r == NONE { v as u32 } else { MANY };
        }
    }
    // Nodes that are regions of their own at the top level.
    let mut alone = vec![false; n];
    for nest in nests.iter() {
        if let [r] = &nest.regions[..]
            && nest.turns == 1
            && r.turns == 1
        {
            alone[r.start] = true;
        }
    }
    for nest in nests.iter_mut().filter(|nest| nest.turns == 1) {
        let [r] = &mut nest.regions[..] else { continue };
        if r.turns < 2 {
            continue;
        }
        let found = (0..r.period).find_map(|j| {
            let sum = reader[r.start + j];
            let ok = (sum as usize) < n
                && alone[sum as usize]
                && sum as usize >= r.nodes().end
                && matches!(nodes[sum as usize].forward,
                    Forward::Call { op: crate::storage::op_code::OpCode::Sum, param, .. }
                        if param as usize == r.turns)
                && (0..r.turns).all(|k| {
                    let t = r.start + k * r.period + j;
                    reader[t] == sum && t != y as usize
                })
                && {
                    let [a, len] = p.operands[sum as usize];
                    let args = &p.args[a as usize..(a + len) as usize];
                    args.iter()
                        .enumerate()
                        .all(|(k, &x)| x & CONST == 0 && x as usize == r.start + k * r.period + j)
                };
            ok.then_some((j, sum as usize))
        });
        if let Some((j, sum)) = found {
            r.fold = Some((j, sum));
            nodes[sum].forward = Forward::Folded;
            nodes[sum].reverse = shape::Reverse::Unit(0, 0);
        }
    }
}

/// Per node, whether it is a dot product whose pairs' operands are consecutive on each side
/// (`a + j` and `b + j` in pair j): its call reads them as two slices.
fn dot_runs(p: &Program<f64>, nodes: &[Node]) -> Vec<bool> {
    let runs = |args: &[u32]| {
        let (a, b) = (args[0], args[1]);
        (0u32..)
            .zip(args.chunks_exact(2))
            .all(|(j, q)| q[0] == a.wrapping_add(j) && q[1] == b.wrapping_add(j))
    };
    let dot = crate::storage::op_code::OpCode::Dot;
    (0..nodes.len())
        .map(|i| match nodes[i].forward {
            Forward::Call { op, param, .. } if op == dot && param >= 2 => {
                let a = p.operands[i][0] as usize;
                runs(&p.args[a..a + param as usize])
            }
            _ => false,
        })
        .collect()
}

/// Whether region `r` holds inputs only, for which neither pass has anything to do (the
/// inputs' values are written before the code runs; they have no edges).
fn inputs_only(nodes: &[Node], r: &Region) -> bool {
    (0..r.period).all(|j| nodes[r.start + j].forward == Forward::Input)
}

/// The rules evaluated by a call, each once: the table the calls index.
fn calls(kinds: &shape::Kinds) -> Vec<Forward> {
    let mut out: Vec<Forward> = Vec::new();
    for &(forward, _) in &kinds.distinct {
        if matches!(forward, Forward::Call { .. }) && !out.contains(&forward) {
            out.push(forward);
        }
    }
    out
}

/// Checks that every index region `r`'s code computes lies within the arrays of `lens`: the
/// invariant of the machine code, which reads and writes without bounds checks. The indices
/// are linear in the turn, so the first and the last turn bound them.
fn in_bounds(nodes: &[Node], r: &Region, l: &machine::Lens) -> Result<(), String> {
    use shape::{E, LO, Reverse};
    let last = r.turns as i64 - 1;
    for j in 0..r.period {
        let nd = &nodes[r.start + j];
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
