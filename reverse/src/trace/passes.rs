//! The traces, over the tape's data: the primal pass, a tangent sweep (forward mode) and an
//! adjoint sweep (reverse mode), each as a [`Trace`].

use super::names::{BAR, DOT, decorate, num};
use super::view::View;
use super::{Pass, Step, Term, Trace};
use crate::storage::op_code::OpCode;
use crate::sweep::kernel::{self, Partial};

/// The primal pass of `data`: every node's formula, value and local partials.
pub(super) fn primal(view: &View<'_>) -> Trace {
    let steps = (0..view.len())
        .map(|i| {
            let expr = view.expr(i);
            let terms = view
                .operands(i)
                .iter()
                .copied()
                .map(|(u, w)| Term {
                    node: u,
                    name: view.name(u).to_string(),
                    partial: w,
                    factor: view.values[u as usize],
                })
                .collect();
            Step {
                node: i as u32,
                name: view.names[i].clone(),
                op: view.op(i),
                expr,
                seed: None,
                terms,
                value: view.values[i],
            }
        })
        .collect();
    let footer = Vec::new();
    Trace {
        pass: Pass::Primal,
        steps,
        values: view.values.to_vec(),
        guards: view.guards.clone(),
        tape: view.id,
        header: format!(
            "primal pass ({} node{}, in recording order): values, and the local partials ∂v/∂u the tape stores",
            view.len(),
            if view.len() == 1 { "" } else { "s" }
        ),
        footer,
    }
}

fn seeds_text(view: &View<'_>, seeds: &[(u32, f64)], mark: char) -> String {
    if seeds.is_empty() {
        return "no seed".into();
    }
    seeds
        .iter()
        .map(|&(i, s)| format!("{} = {}", decorate(view.name(i), mark), num(s)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A tangent sweep over `data` from `seeds` (node, u̇): forward mode on the recorded list.
pub(super) fn tangent(view: &View<'_>, seeds: &[(u32, f64)]) -> Trace {
    let len = view.len();
    let mut seed: Vec<Option<f64>> = vec![None; len];
    for &(i, s) in seeds {
        let slot = &mut seed[i as usize];
        *slot = Some(slot.unwrap_or(0.0) + s);
    }
    let mut tan = vec![0.0; len];
    let mut steps = Vec::with_capacity(len);
    for i in 0..len {
        let terms: Vec<Term> = view
            .operands(i)
            .iter()
            .copied()
            .map(|(u, w)| Term {
                node: u,
                name: view.name(u).to_string(),
                partial: w,
                factor: tan[u as usize],
            })
            .collect();
        // A zero factor gives exactly zero (the structural-zero convention), never 0 · ∞.
        let mut t = terms
            .iter()
            .map(|t| {
                if t.partial == 0.0 || t.factor == 0.0 {
                    0.0
                } else {
                    t.partial * t.factor
                }
            })
            .fold(0.0, |a, b| a + b);
        if let Some(s) = seed[i] {
            t += s;
        }
        tan[i] = t;
        steps.push(Step {
            node: i as u32,
            name: view.names[i].clone(),
            op: view.op(i),
            expr: view.expr(i),
            seed: seed[i],
            terms,
            value: t,
        });
    }
    let sinks = view.sinks();
    let outs: Vec<String> = (0..len)
        .filter(|&i| sinks[i] && view.ops[i] != OpCode::Input)
        .map(|i| format!("{} = {}", decorate(&view.names[i], DOT), num(tan[i])))
        .collect();
    let mut footer = Vec::new();
    if !outs.is_empty() {
        footer.push(format!("outputs: {}", outs.join(", ")));
    }
    Trace {
        pass: Pass::Tangent,
        steps,
        values: tan,
        guards: Vec::new(),
        tape: view.id,
        header: format!(
            "tangent sweep (forward mode) from {}: v̇ = Σ ∂v/∂u · u̇, nodes in recording order",
            seeds_text(view, seeds, DOT)
        ),
        footer,
    }
}

/// An adjoint sweep over `data` from `seeds` (node, v̄): the sweep kernel itself
/// ([`kernel::observed`]), each term it adds written down as a step. Nodes after the last seed
/// are not visited, and a zero adjoint or a zero partial propagates nothing.
pub(super) fn adjoint(view: &View<'_>, seeds: &[(u32, f64)]) -> Trace {
    let end = seeds
        .iter()
        .map(|&(i, _)| i as usize + 1)
        .max()
        .unwrap_or(0);
    let mut adj = vec![0.0; end];
    let mut steps = Vec::new();
    for &(i, s) in seeds {
        adj[i as usize] += s;
        steps.push(Step {
            node: i,
            name: view.name(i).to_string(),
            op: view.op(i as usize),
            expr: view.expr(i as usize),
            seed: Some(s),
            terms: Vec::new(),
            value: adj[i as usize],
        });
    }
    kernel::observed(view.data, &mut adj, |t| {
        let (u, i) = (t.parent, t.node);
        steps.push(Step {
            node: u,
            name: view.name(u).to_string(),
            op: view.op(u as usize),
            expr: view.expr(u as usize),
            seed: None,
            terms: vec![Term {
                node: i as u32,
                name: view.names[i].clone(),
                partial: match t.partial {
                    Partial::Weight(w) => w,
                    Partial::Plus => 1.0,
                    Partial::Minus => -1.0,
                },
                factor: t.adjoint,
            }],
            value: t.after,
        });
    });
    adj.resize(view.len(), 0.0);
    let grads: Vec<String> = (0..view.len())
        .filter(|&i| view.ops[i] == OpCode::Input)
        .map(|i| format!("{} = {}", decorate(&view.names[i], BAR), num(adj[i])))
        .collect();
    let mut footer = Vec::new();
    if !grads.is_empty() {
        footer.push(format!("gradient: {}", grads.join(", ")));
    }
    Trace {
        pass: Pass::Adjoint,
        steps,
        values: adj,
        guards: Vec::new(),
        tape: view.id,
        header: format!(
            "reverse sweep from {}: ū += ∂v/∂u · v̄, nodes in reverse order",
            seeds_text(view, seeds, BAR)
        ),
        footer,
    }
}
