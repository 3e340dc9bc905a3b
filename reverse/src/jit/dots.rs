//! A compiled gradient's short dot products: those of at most [`INLINE_PAIRS`] pairs whose
//! operands step in a line from turn to turn, computed and swept by its code instead of by a
//! call (see [`line`]), summed in the order of the function the interpreter calls (those of
//! few enough edges to be swept as weighted edges are swept so, their partials read from the
//! operands: see [`partials`]).

use super::ir::{Turn, load, read, store};
use super::nodes::{A, Nodes};
use super::shape::Region;
use cranelift_codegen::ir::{InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;

/// An operand's index in the first turn, and its steps per turn of its loop and of the loop
/// around it.
pub(super) type Arg = (i64, (i64, i64));

/// The most pairs of a dot product a gradient's code computes and sweeps itself.
pub(super) const INLINE_PAIRS: u32 = 16;

/// The `param` operands of dot product `j` of `r` (which the emitter chose: see
/// `emit::dot_args`), where each steps in a line from turn to turn: each operand's index in
/// the first turn and its steps, the same line in every turn, and within the values (a node's
/// adjoint within the adjoints) in every turn; `args` are the n-ary operands as indices into
/// the `values` values, the `n` nodes first. The code reads them from memory (a gradient keeps
/// the operands of its calls); the sweep adds their terms there, in the interpreter's order.
pub(super) fn line(
    nodes: &Nodes,
    r: &Region,
    j: usize,
    param: i64,
    (n, values, args): (usize, usize, &[u32]),
) -> Option<Vec<Arg>> {
    let nd = nodes.get(r.start + j);
    let (a, sa, oa) = (nd.at(A), r.step[j][A], r.outer_step(j, A));
    let outers = r.outer.as_ref().map_or(1, |o| o.turns) as i64;
    let (n, values) = (n as i64, values as i64);
    let arg = |o: i64, k: i64, m: i64| {
        let at = a + k * sa + o * oa + m;
        (0..args.len() as i64)
            .contains(&at)
            .then(|| i64::from(args[at as usize]))
    };
    (0..param)
        .map(|m| {
            let first = arg(0, 0, m)?;
            let step = if r.turns > 1 {
                arg(0, 1, m)? - first
            } else {
                0
            };
            let outer = if outers > 1 { arg(1, 0, m)? - first } else { 0 };
            let node = first < n;
            let line = (0..outers).all(|o| {
                (0..r.turns as i64).all(|k| {
                    let i = first + k * step + o * outer;
                    arg(o, k, m) == Some(i) && (0..values).contains(&i) && (i < n) == node
                })
            });
            line.then_some((first, (step, outer)))
        })
        .collect()
}

/// `Σ term(i)` over `i < n` in the order of `shared_ops::dot_order` (the interpreter's): in
/// sequence below 8 terms, else in 8 sums added pairwise, then the rest in sequence.
fn order(
    b: &mut FunctionBuilder,
    n: usize,
    mut term: impl FnMut(&mut FunctionBuilder, usize) -> Value,
) -> Value {
    if n < 8 {
        if n == 0 {
            return b.ins().f64const(0.0);
        }
        let mut s = term(b, 0);
        for i in 1..n {
            let t = term(b, i);
            s = b.ins().fadd(s, t);
        }
        return s;
    }
    let mut s: Vec<Value> = (0..8).map(|i| term(b, i)).collect();
    let whole = n / 8 * 8;
    for i in (8..whole).step_by(8) {
        for (l, s) in s.iter_mut().enumerate() {
            let t = term(b, i + l);
            *s = b.ins().fadd(*s, t);
        }
    }
    let mut add = |x: Value, y: Value| b.ins().fadd(x, y);
    let (s01, s23, s45, s67) = (
        add(s[0], s[1]),
        add(s[2], s[3]),
        add(s[4], s[5]),
        add(s[6], s[7]),
    );
    let (low, high) = (add(s01, s23), add(s45, s67));
    let mut total = add(low, high);
    for i in whole..n {
        let t = term(b, i);
        total = b.ins().fadd(total, t);
    }
    total
}

/// The value of the dot product of operands `args` in turn `k`, the values at `values`.
pub(super) fn value(b: &mut FunctionBuilder, values: Value, k: Turn, args: &[Arg]) -> Value {
    let term = |b: &mut FunctionBuilder, m: usize| {
        let (x, y) = (args[2 * m], args[2 * m + 1]);
        let x = load(b, values, k, x.0, x.1);
        let y = load(b, values, k, y.0, y.1);
        b.ins().fmul(x, y)
    };
    order(b, args.len() / 2, term)
}

/// The edges of the dot product of operands `args`, in the order the interpreter's call writes
/// and sweeps them: each pair's two sides in turn, one edge for each operand that is a node
/// (`n` nodes), as (that operand, the operand whose value is its partial).
fn edges(args: &[Arg], n: usize) -> impl Iterator<Item = (Arg, Arg)> + '_ {
    let sides = args
        .chunks_exact(2)
        .flat_map(|p| [(p[0], p[1]), (p[1], p[0])]);
    sides.filter(move |(to, _)| to.0 < n as i64)
}

/// The partials of the dot product of operands `args`, edge by edge (see [`edges`]): the
/// operand whose value each is.
pub(super) fn partials(args: &[Arg], n: usize) -> Vec<Arg> {
    edges(args, n).map(|(_, from)| from).collect()
}

/// The sweep of the dot product of operands `args` in turn `k`, edge by edge (see [`edges`]):
/// the term of each from its partial by `term`, added to the operand's adjoint in memory (one
/// per node: a gradient's), as the interpreter's call adds them.
pub(super) fn sweep(
    b: &mut FunctionBuilder,
    (values, adj, n): (Value, Value, usize),
    k: Turn,
    args: &[Arg],
    mut term: impl FnMut(&mut FunctionBuilder, Value) -> Value,
) {
    for (to, from) in edges(args, n) {
        let w = read(b, values, k, from.0, from.1);
        let t = term(b, w);
        let sum = load(b, adj, k, to.0, to.1);
        let sum = b.ins().fadd(sum, t);
        store(b, sum, adj, k, to.0, to.1);
    }
}
