//! The computation graph of a recording, drawn with every node's value and adjoint.
//!
//! A traced tape keeps each elementary operation as a node: its formula, its value from the
//! primal pass, and an edge to each operand holding the local partial ∂v/∂u. This program
//! records two small functions, prints their primal pass and reverse sweep as a textbook does,
//! and draws each graph: nodes in columns by depth (an input has depth 0, any other node one
//! more than its deepest operand), edges labelled with their partials, each node with its value
//! and its adjoint.
//!
//! * x = 2, y = x², z = y + 3, where dz/dx = 4: `graph_seed.svg`.
//! * f = x·y + sin x at (x, y) = (2, 3): x feeds two nodes, so its adjoint is the sum of two
//!   contributions, y + cos x: `graph_fanout.svg`.
//!
//! The pictures go to `target/`; `-- --docs` writes the guide's copies in `docs/guide/img/`.
//! The test draws them in memory and checks them against the guide's copies.
//!
//! Run: `cargo run --release --example graph [-- --docs]`

use examples::picture::{self, Svg};
use wengert::{Float, Tape, Var};

/// x = 2, y = x², z = y + 3 on a traced tape: the tape and its output z.
fn seed() -> (Tape, Var) {
    let tape = Tape::traced();
    let x = tape.named_var("x", 2.0);
    let y = tape.name(x.powi(2), "y");
    let z = tape.name(y + 3.0, "z");
    (tape, z)
}

/// f = x·y + sin x at (2, 3) on a traced tape: the tape and its output f.
fn fanout() -> (Tape, Var) {
    let tape = Tape::traced();
    let x = tape.named_var("x", 2.0);
    let y = tape.named_var("y", 3.0);
    let a = tape.name(x * y, "a");
    let b = tape.name(x.sin(), "b");
    let f = tape.name(a + b, "f");
    (tape, f)
}

/// The pictures: file name, title, and the recording drawn.
type Recorder = fn() -> (Tape, Var);
const PICTURES: [(&str, &str, Recorder); 2] = [
    (
        "graph_seed.svg",
        "x = 2, y = x², z = y + 3: dz/dx = 4",
        seed,
    ),
    (
        "graph_fanout.svg",
        "f = x·y + sin x at (2, 3): x̄ = y + cos x",
        fanout,
    ),
];

/// A number as the picture prints it: an integer as one, else four decimals without trailing
/// zeros.
fn num(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e9 {
        return format!("{v:.0}");
    }
    let s = format!("{v:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// `name` with a bar over it (a combining macron): the adjoint's name.
fn bar(name: &str) -> String {
    format!("{name}\u{304}")
}

/// Box size, gaps between columns and rows, and margins, in pixels.
const W: f64 = 200.0;
const H: f64 = 78.0;
const GAP_X: f64 = 190.0;
const GAP_Y: f64 = 34.0;
const LEFT: f64 = 30.0;
const TOP: f64 = 62.0;
const BOTTOM: f64 = 76.0;

/// The graph of `tape` as SVG: nodes by depth with value and adjoint (the reverse sweep from
/// `output`), edges with their local partials.
fn draw(tape: &Tape, output: Var, title: &str) -> String {
    let primal = tape.trace_primal();
    let adjoints = tape.trace_reverse(output);
    let nodes = primal.steps.len();

    // Depth of each node; the recording order is topological, so one pass suffices.
    let mut depth = vec![0_usize; nodes];
    for s in &primal.steps {
        let d = s.terms.iter().map(|t| depth[t.node as usize] + 1).max();
        depth[s.node as usize] = d.unwrap_or(0);
    }
    let columns = depth.iter().max().map_or(1, |d| d + 1);
    let mut row = vec![0_usize; nodes];
    let mut per_column = vec![0_usize; columns];
    for i in 0..nodes {
        row[i] = per_column[depth[i]];
        per_column[depth[i]] += 1;
    }
    let block = |rows: usize| rows as f64 * H + rows.saturating_sub(1) as f64 * GAP_Y;
    let tallest = block(per_column.iter().copied().max().unwrap_or(1));
    let at = |i: usize| {
        let d = depth[i];
        let x = LEFT + d as f64 * (W + GAP_X);
        let y = TOP + (tallest - block(per_column[d])) / 2.0 + row[i] as f64 * (H + GAP_Y);
        (x, y)
    };

    let width = 2.0 * LEFT + columns as f64 * W + (columns - 1) as f64 * GAP_X;
    let height = TOP + tallest + BOTTOM;
    let mut svg = Svg::new(width, height);
    svg.text(width / 2.0, 32.0, 18.0, "middle", "#222", title);

    // Edges first, then their labels over any line, then the boxes over the edges' ends.
    let edges: Vec<_> = primal
        .steps
        .iter()
        .flat_map(|s| s.terms.iter().map(move |t| (s, t)))
        .map(|(s, t)| {
            let ((ux, uy), (vx, vy)) = (at(t.node as usize), at(s.node as usize));
            let (from, to) = ((ux + W, uy + H / 2.0), (vx, vy + H / 2.0));
            let label = format!("∂{}/∂{} = {}", s.name, t.name, num(t.partial));
            (from, to, label)
        })
        .collect();
    for (from, to, _) in &edges {
        svg.line(*from, *to, "#555", 1.5, false, true);
    }
    for (from, to, label) in &edges {
        // Nearer the operand than the middle: two edges that cross share their middle.
        let (mx, my) = (
            from.0 + 0.35 * (to.0 - from.0),
            from.1 + 0.35 * (to.1 - from.1),
        );
        let w = 7.5 * label.chars().count() as f64 + 8.0;
        svg.rect(mx - w / 2.0, my - 13.0, w, 19.0, "#fff", "#ccc");
        svg.text(mx, my + 1.0, 13.0, "middle", "#333", label);
    }

    for s in &primal.steps {
        let (x, y) = at(s.node as usize);
        let output_node = output.index() == s.node;
        let stroke = if output_node { "#222" } else { "#778" };
        svg.rect(x, y, W, H, "#f3f5fa", stroke);
        let formula = if s.op == "input" {
            format!("{} (input)", s.name)
        } else {
            format!("{} = {}", s.name, s.expr)
        };
        let cx = x + W / 2.0;
        svg.text(cx, y + 22.0, 15.0, "middle", "#111", &formula);
        let value = format!("value {}", num(s.value));
        svg.text(cx, y + 44.0, 14.0, "middle", "#1f4e9c", &value);
        let adjoint = adjoints.values[s.node as usize];
        let adjoint = format!("adjoint {} = {}", bar(&s.name), num(adjoint));
        svg.text(cx, y + 65.0, 14.0, "middle", "#b22222", &adjoint);
    }

    let out = primal.steps[output.index() as usize].name.clone();
    let notes = [
        "values (blue): the primal pass, left to right; each edge keeps its local partial ∂v/∂u"
            .to_string(),
        format!(
            "adjoints (red): the reverse sweep from {} = 1, right to left: ū += ∂v/∂u · v̄",
            bar(&out)
        ),
    ];
    for (k, note) in notes.iter().enumerate() {
        let y = height - BOTTOM + 34.0 + 20.0 * k as f64;
        svg.text(LEFT, y, 13.0, "start", "#444", note);
    }
    svg.finish()
}

fn main() -> std::io::Result<()> {
    run(false)
}

/// Prints each recording's passes and draws its picture (under test, in the temporary
/// directory).
fn run(under_test: bool) -> std::io::Result<()> {
    for (name, title, record) in PICTURES {
        let (tape, output) = record();
        println!("{title}\n");
        println!("{}", tape.trace_primal());
        println!("{}", tape.trace_reverse(output));
        println!("{}", tape.to_text());
        let path = picture::write(name, &draw(&tape, output, title), under_test)?;
        println!("picture: {}\n", path.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs() {
        super::run(true).unwrap();
    }

    #[test]
    fn the_guide_shows_what_the_code_draws() {
        for (name, title, record) in PICTURES {
            let (tape, output) = record();
            picture::check(name, &draw(&tape, output, title), "graph");
        }
    }

    #[test]
    fn the_adjoints_are_the_textbook_ones() {
        let (tape, z) = seed();
        let t = tape.trace_reverse(z);
        assert_eq!(t.values, vec![4.0, 1.0, 1.0]); // x̄, ȳ, z̄
        let (tape, f) = fanout();
        let t = tape.trace_reverse(f);
        // x̄ = ∂a/∂x·ā + ∂b/∂x·b̄ = y + cos x, ȳ = x.
        assert_eq!(t.values[0], 3.0 + 2.0_f64.cos());
        assert_eq!(t.values[1], 2.0);
    }
}
