//! The teaching tools: traces of the three sweeps, DOT and text graphs.

use reverse::trace::Pass;
use reverse::{Float, Op, Tape, Var};

/// The seed example: x = 2, y = x², z = y + 3.
fn seed_example(tape: &Tape) -> (Var, Var, Var) {
    let x = tape.named_var("x", 2.0);
    let y = tape.name(x.powi(2), "y");
    let z = tape.name(y + 3.0, "z");
    (x, y, z)
}

#[test]
fn forward_trace_of_the_seed_example() {
    let tape = Tape::traced();
    seed_example(&tape);
    let want = "\
primal pass (3 nodes, in recording order): values, and the local partials ∂v/∂u the tape stores
  x               = 2  input
  y = powi(x, 2)  = 4  ∂y/∂x = 4
  z = y + 3       = 7  ∂z/∂y = 1
";
    assert_eq!(tape.trace_primal().to_string(), want);
}

#[test]
fn reverse_trace_of_the_seed_example() {
    let tape = Tape::traced();
    let (_, _, z) = seed_example(&tape);
    let want = "\
reverse sweep from z̄ = 1: ū += ∂v/∂u · v̄, nodes in reverse order
  z̄ = 1                   seed
  ȳ += ∂z/∂y · z̄ = 1 · 1  → ȳ = 1
  x̄ += ∂y/∂x · ȳ = 4 · 1  → x̄ = 4
gradient: x̄ = 4
";
    assert_eq!(tape.trace_reverse(z).to_string(), want);
}

#[test]
fn tangent_trace_of_the_seed_example() {
    let tape = Tape::traced();
    let (x, _, _) = seed_example(&tape);
    let want = "\
tangent sweep (forward mode) from ẋ = 1: v̇ = Σ ∂v/∂u · u̇, nodes in recording order
  ẋ = 1  (seed)
  ẏ = ∂y/∂x · ẋ = 4 · 1 = 4
  ż = ∂z/∂y · ẏ = 1 · 4 = 4
outputs: ż = 4
";
    assert_eq!(tape.trace_tangents(&[(x, 1.0)]).to_string(), want);
}

#[test]
fn structured_steps_of_the_seed_example() {
    let tape = Tape::traced();
    let (x, y, z) = seed_example(&tape);

    let fwd = tape.trace_primal();
    assert_eq!(fwd.pass, Pass::Primal);
    let rows: Vec<(&str, &str, &str, f64)> = fwd
        .steps
        .iter()
        .map(|s| (s.name.as_str(), s.op, s.expr.as_str(), s.value))
        .collect();
    assert_eq!(
        rows,
        [
            ("x", "input", "input", 2.0),
            ("y", "powi", "powi(x, 2)", 4.0),
            ("z", "+", "y + 3", 7.0)
        ]
    );
    assert_eq!(fwd.steps[1].terms[0].partial, 4.0);
    assert_eq!(fwd.steps[1].terms[0].factor, 2.0); // the operand's value

    // Backward: z̄ = 1, ȳ = 1, x̄ = 4, in that order.
    let rev = tape.trace_reverse(z);
    assert_eq!(rev.pass, Pass::Adjoint);
    let rows: Vec<(u32, f64)> = rev.steps.iter().map(|s| (s.node, s.value)).collect();
    assert_eq!(rows, [(z.index(), 1.0), (y.index(), 1.0), (x.index(), 4.0)]);
    assert_eq!(rev.steps[0].seed, Some(1.0));
    let t = &rev.steps[2].terms[0];
    assert_eq!(
        (t.node, t.name.as_str(), t.partial, t.factor),
        (y.index(), "y", 4.0, 1.0)
    );
    assert_eq!((rev.of(x), rev.of(y), rev.of(z)), (4.0, 1.0, 1.0));

    // Tangents: ẋ = 1, ẏ = 4, ż = 4.
    let tan = tape.trace_tangents(&[(x, 1.0)]);
    assert_eq!(tan.pass, Pass::Tangent);
    let values: Vec<f64> = tan.steps.iter().map(|s| s.value).collect();
    assert_eq!(values, [1.0, 4.0, 4.0]);
    assert_eq!(tan.values, [1.0, 4.0, 4.0]);
}

#[test]
fn dot_of_a_small_graph() {
    let tape = Tape::traced();
    let x = tape.named_var("x", 2.0);
    let w = tape.named_var("w", 3.0);
    let p = tape.name(x * w, "p");
    let _ = tape.name(p.sin(), "s");
    let _ = x.floor();
    let want = r#"digraph tape {
  rankdir=LR;
  node [shape=box, fontname="Helvetica"];
  edge [fontname="Helvetica", fontsize=10];
  n0 [label="x = 2\ninput", shape=ellipse];
  n1 [label="w = 3\ninput", shape=ellipse];
  n2 [label="p = 6\n*"];
  n3 [label="s = -0.279415\nsin", peripheries=2];
  n4 [label="v₄ = 2\nfloor", peripheries=2];
  n0 -> n2 [label="∂p/∂x = 3"];
  n1 -> n2 [label="∂p/∂w = 2"];
  n2 -> n3 [label="∂s/∂p = 0.96017"];
  n0 -> n4 [label="∂v₄/∂x = 0", style=dashed];
}
"#;
    assert_eq!(tape.to_dot(), want);
}

#[test]
fn dot_escapes_quotes_in_names() {
    let tape = Tape::traced();
    let _ = tape.named_var("a \"quoted\" \\ name", 1.0);
    let dot = tape.to_dot();
    assert!(
        dot.contains(
            r#"n0 [label="a \"quoted\" \\ name = 1\ninput", shape=ellipse, peripheries=2];"#
        ),
        "{dot}"
    );
}

#[test]
fn text_rendering() {
    let tape = Tape::traced();
    seed_example(&tape);
    // 3 nodes (4 bytes each), a weighted edge (12) and a unit edge (4), and on a traced tape
    // each node's program (value, operation, form and two operands: 18 bytes each) and the
    // constant 3 (8).
    let want = "\
tape: 3 nodes, 90 bytes
  node  name  op     value  parents (local partial)
     0  x     input  2
     1  y     powi   4      x (4)
     2  z     +      7      y (1)
";
    assert_eq!(tape.to_text(), want);

    let tape = Tape::traced();
    let a = tape.var(1.0);
    let b = tape.var(-2.0);
    let _ = (a * b).exp() - a;
    let want = "\
tape: 5 nodes, 154 bytes
  node  name  op     value      parents (local partial)
     0  v₀    input  1
     1  v₁    input  -2
     2  v₂    *      -2         v₀ (-2), v₁ (1)
     3  v₃    exp    0.135335   v₂ (0.135335)
     4  v₄    -      -0.864665  v₃ (1), v₀ (-1)
";
    assert_eq!(tape.to_text(), want);
}

#[test]
fn unnamed_nodes_get_textbook_names_and_names_can_be_given_late() {
    let tape = Tape::traced();
    let x = tape.var(0.5);
    let mut v = x;
    for _ in 0..11 {
        v = v.sin();
    }
    let t = tape.trace_primal();
    assert_eq!(t.steps[0].name, "v₀");
    assert_eq!(t.steps[11].name, "v₁₁");
    assert_eq!(t.steps[11].expr, "sin(v₁₀)");
    // The bar and the dot go over the letter, before the index.
    let rev = tape.trace_reverse(v).to_string();
    assert!(rev.contains("v̄₁₀ += ∂v₁₁/∂v₁₀ · v̄₁₁ = "), "{rev}");
    let tan = tape.trace_tangents(&[(x, 1.0)]).to_string();
    assert!(tan.contains("v̇₁ = ∂v₁/∂v₀ · v̇₀ = "), "{tan}");

    // Naming after the fact; a multi-letter name takes its mark at the end.
    tape.name(x, "input");
    tape.name(v, "out");
    let rev = tape.trace_reverse(v).to_string();
    assert!(rev.starts_with("reverse sweep from out̄ = 1"), "{rev}");
    assert!(rev.contains("gradient: input̄ = "), "{rev}");
    assert!(tape.trace_primal().to_string().contains("out = sin(v₁₀)"));
}

#[test]
fn custom_operations_show_their_names() {
    #[derive(Clone, Copy)]
    struct Softplus;
    impl shared_ops::Unary for Softplus {
        const NAME: &'static str = "softplus";
        fn eval<T: Op>(self, x: T) -> (T, T) {
            (x.exp().ln_1p(), T::one() / (T::one() + (-x).exp()))
        }
    }
    #[derive(Clone, Copy)]
    struct Blend;
    impl shared_ops::Binary for Blend {
        const NAME: &'static str = "blend";
        fn eval<T: Op>(self, a: T, b: T) -> (T, T, T) {
            (
                a * T::constant(0.25) + b * T::constant(0.75),
                T::constant(0.25),
                T::constant(0.75),
            )
        }
    }
    let tape = Tape::traced();
    let x = tape.named_var("x", 0.0);
    let w = tape.named_var("w", 4.0);
    let s = tape.name(x.apply1(Softplus), "s");
    let b = tape.name(s.apply2(w, Blend), "b");

    let fwd = tape.trace_primal();
    assert_eq!(fwd.steps[2].op, "softplus");
    assert_eq!(fwd.steps[2].expr, "softplus(x)");
    assert_eq!(fwd.steps[3].op, "blend");
    assert_eq!(fwd.steps[3].expr, "blend(s, w)");
    let text = fwd.to_string();
    assert!(
        text.contains("s = softplus(x)  = 0.693147  ∂s/∂x = 0.5"),
        "{text}"
    );
    assert!(
        text.contains("b = blend(s, w)  = 3.17329   ∂b/∂s = 0.25, ∂b/∂w = 0.75"),
        "{text}"
    );

    let rev = tape.trace_reverse(b);
    assert_eq!(rev.of(x), 0.25 * 0.5);
    assert_eq!(rev.of(w), 0.75);
    assert!(
        tape.to_dot()
            .contains("n2 [label=\"s = 0.693147\\nsoftplus\"];")
    );
    assert!(tape.to_text().contains("softplus"));
}

#[test]
fn formulas_show_every_constant_the_program_holds() {
    let tape = Tape::traced();
    let x = tape.named_var("x", 2.0);
    let exprs = [
        x + 3.0,
        x - 3.0,
        5.0 - x,
        x + (-1.5),
        x * 4.0,
        x * x,
        x + x,
        x / 4.0,
        4.0 / x,
        x.powi(3),
        x.powi(-2),
        x.powi(0),
        x.powf(Var::constant(1.5)),
        x.max(Var::constant(1.0)),
        x.mul_add(Var::constant(2.0), Var::constant(1.0)),
    ];
    let t = tape.trace_primal();
    let got: Vec<&str> = exprs
        .iter()
        .map(|v| t.steps[v.index() as usize].expr.as_str())
        .collect();
    assert_eq!(
        got,
        [
            "x + 3",
            "x - 3",
            "5 - x",
            "x - 1.5",
            "x * 4",
            "x * x",
            "x + x",
            "x / 4",
            "4 / x",
            "powi(x, 3)",
            "powi(x, -2)",
            "powi(x, 0)",
            "powf(x, 1.5)",
            "max(x, 1)",
            "mul_add(x, 2, 1)",
        ]
    );
    assert!(!t.to_string().contains(" c"), "{t}");
    // Re-evaluated where values cannot tell `x * x` from `x * 0`, the formulas stay.
    let mut tape = Tape::traced();
    let x = tape.named_var("x", 2.0);
    let (y, z) = (x * x, x * 4.0);
    tape.reevaluate(&[0.0]).unwrap();
    let t = tape.trace_primal();
    let step = |v: Var| &t.steps[v.index() as usize];
    assert_eq!((step(y).expr.as_str(), step(y).value), ("x * x", 0.0));
    assert_eq!((step(z).expr.as_str(), step(z).value), ("x * 4", 0.0));
}

/// A small program with shared subexpressions, both binary and unary operations.
fn program<T: Op>(x: &[T]) -> Vec<T> {
    let a = x[0] * x[1];
    let b = a.sin() + x[2].exp();
    let c = (b / x[0]).tanh() - x[1].powi(3);
    let d = a.hypot(c) * T::constant(0.5) + x[2].max(x[0]);
    vec![c, d]
}

#[test]
fn tangent_trace_agrees_with_forward_duals() {
    use forward::Dual;
    let x0 = [0.7, -1.3, 0.4];
    let tape = Tape::traced();
    let xs = tape.vars(&x0);
    let ys = program(&xs);
    for (k, dir) in [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.3, -2.0, 0.5]]
        .iter()
        .enumerate()
    {
        let seeds: Vec<(Var, f64)> = xs.iter().copied().zip(dir.iter().copied()).collect();
        let t = tape.trace_tangents(&seeds);
        let duals: Vec<Dual<f64>> = x0.iter().zip(dir).map(|(&p, &d)| Dual::new(p, d)).collect();
        let want = program(&duals);
        for (y, d) in ys.iter().zip(&want) {
            let got = t.of(*y);
            assert!(
                (got - d.tangent).abs() <= 1e-14 * d.tangent.abs().max(1.0),
                "direction {k}: trace {got} vs dual {}",
                d.tangent
            );
        }
        // Every step is v̇ = Σ ∂v/∂u · u̇ over its terms.
        for s in &t.steps {
            let sum: f64 =
                s.terms.iter().map(|t| t.partial * t.factor).sum::<f64>() + s.seed.unwrap_or(0.0);
            assert!((s.value - sum).abs() <= 1e-15 * sum.abs().max(1.0));
        }
    }
}

#[test]
fn adjoint_trace_agrees_with_the_sweep() {
    let tape = Tape::traced();
    let xs = tape.vars(&[0.7, -1.3, 0.4]);
    let ys = program(&xs);
    for seeds in [
        vec![(ys[0], 1.0)],
        vec![(ys[1], 1.0)],
        vec![(ys[0], 0.5), (ys[1], -2.0)],
    ] {
        let t = tape.trace_adjoints(&seeds);
        let adj = tape.sweep(&seeds);
        for i in 0..tape.len() {
            assert_eq!(
                t.values[i],
                adj.as_slice().get(i).copied().unwrap_or(0.0),
                "node {i}"
            );
        }
        assert_eq!(
            t.steps.iter().filter(|s| s.seed.is_some()).count(),
            seeds.len()
        );
        // Each update adds ∂v/∂u · v̄ to the running adjoint of u.
        let mut running = vec![0.0; tape.len()];
        for s in &t.steps {
            let add = match s.seed {
                Some(seed) => seed,
                None => s.terms[0].partial * s.terms[0].factor,
            };
            running[s.node as usize] += add;
            assert_eq!(running[s.node as usize], s.value);
        }
    }
    // Gradient line lists every input.
    let text = tape.trace_reverse(ys[1]).to_string();
    assert!(text.contains("gradient: v̄₀ = "), "{text}");
    assert!(text.contains(", v̄₂ = "), "{text}");
}

#[test]
fn zero_partials_propagate_nothing() {
    let tape = Tape::traced();
    let x = tape.named_var("x", 1.5);
    let y = tape.name(x.floor() + x.sin(), "y");
    let t = tape.trace_reverse(y);
    // y → v₁ (floor) and v₂ (sin); floor's partial is 0, so only sin passes to x.
    assert_eq!(t.steps.iter().filter(|s| s.node == x.index()).count(), 1);
    assert_eq!(t.of(x), 1.5_f64.cos());
    // The tangent trace shows the zero partial as a term, and it gives exactly 0.
    let tan = tape.trace_tangents(&[(x, 1.0)]);
    assert_eq!(tan.steps[1].terms[0].partial, 0.0);
    assert_eq!(tan.steps[1].value, 0.0);
}

#[test]
fn constants_and_foreign_vars() {
    let tape = Tape::traced();
    let x = tape.var(2.0);
    let y = x * x;
    let c = Var::constant(3.0);
    // A constant seed is ignored; a constant has no value on the tape.
    assert_eq!(tape.trace_adjoints(&[(y, 1.0), (c, 5.0)]).of(x), 4.0);
    assert_eq!(tape.trace_primal().of(c), 0.0);
    let empty = tape.trace_adjoints(&[]);
    assert!(empty.steps.is_empty());
    assert!(empty.to_string().starts_with("reverse sweep from no seed"));

    let other = Tape::traced();
    let z = other.var(1.0);
    let msg = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        tape.trace_reverse(z);
    }))
    .expect_err("a Var of another tape panics");
    let msg = msg.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("used with tape"), "{msg}");
}

#[test]
fn traces_work_on_an_outer_tape_while_an_inner_one_records() {
    let outer = Tape::traced();
    let (x, _, z) = seed_example(&outer);
    let inner = Tape::traced();
    let _ = inner.var(1.0) * 2.0;
    assert_eq!(outer.trace_reverse(z).of(x), 4.0);
    assert_eq!(outer.trace_primal().steps.len(), 3);
    assert_eq!(inner.trace_primal().steps.len(), 2);
}

#[test]
fn empty_tape() {
    let tape = Tape::traced();
    assert_eq!(
        tape.trace_primal().to_string(),
        "primal pass (0 nodes, in recording order): values, and the local partials ∂v/∂u the tape stores\n"
    );
    assert_eq!(
        tape.to_text(),
        "tape: 0 nodes, 0 bytes\n  node  name  op  value  parents (local partial)\n"
    );
    assert!(
        tape.to_dot()
            .ends_with("  edge [fontname=\"Helvetica\", fontsize=10];\n}\n")
    );
}

/// A re-evaluation traced: the same formulas with new values; then one whose guard fails,
/// shown in the trace, and the tape left where it was.
#[test]
fn a_reevaluation_and_a_failed_guard_traced() {
    let mut tape = Tape::traced();
    let x = tape.named_var("x", 2.0);
    let y = tape.named_var("y", 1.0);
    let big = x > y;
    let z = tape.name(if big { x * y } else { x + y }, "z");
    let before = tape.trace_primal();
    assert_eq!(before.guards.len(), 1);
    assert!(
        before
            .to_string()
            .contains("after y: the comparison node 0 (x₀ = 2) > node 1 (x₁ = 1): true  holds")
    );

    let t = tape.trace_reevaluation(&[3.0, 0.5]).unwrap();
    let exprs =
        |t: &reverse::trace::Trace| t.steps.iter().map(|s| s.expr.clone()).collect::<Vec<_>>();
    assert_eq!(exprs(&t), exprs(&before), "same structure");
    assert_eq!((t.of(x), t.of(y), t.of(z)), (3.0, 0.5, 1.5));
    assert!(t.refused().is_none());
    assert!(
        t.to_string()
            .starts_with("re-evaluated at [3.0, 0.5]: primal pass")
    );
    assert_eq!(tape.value(z), 1.5);

    let t = tape.trace_reevaluation(&[1.0, 4.0]).unwrap();
    let refused = t.refused().expect("x > y flips");
    assert_eq!((refused.guard, refused.node), (0, 0));
    let text = t.to_string();
    assert!(
        text.contains("was true, now false  FAILS: this point needs a new recording"),
        "{text}"
    );
    assert_eq!(
        t.of(z),
        4.0,
        "the trace shows the values at the refused point"
    );
    assert_eq!(tape.value(z), 1.5, "the tape is back at (3, 0.5)");
    assert_eq!(tape.gradient(z).wrt(x), 0.5);
}
