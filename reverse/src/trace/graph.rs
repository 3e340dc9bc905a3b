//! Graphs: the tape as a Graphviz DOT graph and as a plain-text table.

use super::names::{num, pad, width};
use super::view::View;
use crate::storage::op_code::OpCode;
use core::fmt::Write as _;

/// Escapes a string for a double-quoted DOT label.
fn dot_escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The Graphviz DOT graph of `data`.
pub(super) fn dot(view: &View<'_>) -> String {
    let sinks = view.sinks();
    let mut out = String::new();
    out.push_str("digraph tape {\n");
    out.push_str("  rankdir=LR;\n");
    out.push_str("  node [shape=box, fontname=\"Helvetica\"];\n");
    out.push_str("  edge [fontname=\"Helvetica\", fontsize=10];\n");
    for (i, &sink) in sinks.iter().enumerate() {
        let name = format!("{} = {}", view.names[i], num(view.values[i]));
        // `\n`, a backslash and an n, is Graphviz's line break inside a label.
        let mut attrs = format!(
            "label=\"{}\\n{}\"",
            dot_escape(&name),
            dot_escape(view.op(i))
        );
        if view.ops[i] == OpCode::Input {
            attrs.push_str(", shape=ellipse");
        }
        if sink {
            attrs.push_str(", peripheries=2");
        }
        let _ = writeln!(out, "  n{i} [{attrs}];");
    }
    for i in 0..view.len() {
        for &(u, w) in view.operands(i) {
            let label = format!("∂{}/∂{} = {}", view.names[i], view.name(u), num(w));
            let style = if w == 0.0 { ", style=dashed" } else { "" };
            let _ = writeln!(
                out,
                "  n{u} -> n{i} [label=\"{}\"{style}];",
                dot_escape(&label)
            );
        }
    }
    out.push_str("}\n");
    out
}

/// The plain-text table of `data`: one line per node with its parents and partials.
pub(super) fn text(view: &View<'_>) -> String {
    let mut rows: Vec<[String; 5]> = vec![[
        "node".into(),
        "name".into(),
        "op".into(),
        "value".into(),
        "parents (local partial)".into(),
    ]];
    for i in 0..view.len() {
        let parents = view
            .operands(i)
            .iter()
            .map(|&(u, w)| format!("{} ({})", view.name(u), num(w)))
            .collect::<Vec<_>>()
            .join(", ");
        rows.push([
            i.to_string(),
            view.names[i].clone(),
            view.op(i).to_string(),
            num(view.values[i]),
            parents,
        ]);
    }
    let widths: Vec<usize> = (0..5)
        .map(|c| rows.iter().map(|r| width(&r[c])).max().unwrap_or(0))
        .collect();
    let n = view.len();
    let mut out = format!(
        "tape: {n} node{}, {} bytes\n",
        if n == 1 { "" } else { "s" },
        view.bytes
    );
    for r in &rows {
        let index = format!("{:>w$}", r[0], w = widths[0]);
        let line = format!(
            "  {index}  {}  {}  {}  {}",
            pad(&r[1], widths[1]),
            pad(&r[2], widths[2]),
            pad(&r[3], widths[3]),
            r[4]
        );
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
