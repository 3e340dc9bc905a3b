//! Teaching tools for a recorded tape: traces of the three sweeps, and graph export.
//!
//! A tape is the Wengert list of a program: every elementary operation with its value, its
//! parents and its *local partials*. The tools here print that list the way a textbook does:
//!
//! * [`Tape::trace_forward`]: the forward (primal) pass, each node's formula, value and local
//!   partials, in recording order;
//! * [`Tape::trace_reverse`] / [`Tape::trace_adjoints`]: the reverse sweep, every adjoint update
//!   `ū += ∂v/∂u · v̄` in the order the sweep makes it;
//! * [`Tape::trace_tangents`]: forward mode over the same list, `v̇ = Σ ∂v/∂u · u̇` from a seed,
//!   with the same stored partials (what `forward::Dual` numbers compute as they go);
//! * [`Tape::to_dot`] (Graphviz) and [`Tape::to_text`] (a table for the terminal): the graph,
//!   nodes with operation and value, edges with the local partial.
//! * [`Tape::trace_reevaluation`]: the forward pass evaluated again at a new point (same nodes,
//!   new values), with every branch guard checked there: the one that fails is shown.
//!
//! ```
//! use reverse::{Float, Tape};
//!
//! let tape = Tape::traced();
//! let x = tape.named_var("x", 2.0);
//! let y = tape.name(x.powi(2), "y");
//! let z = tape.name(y + 3.0, "z");
//! println!("{}", tape.trace_forward());    // x = 2, y = 4, z = 7
//! println!("{}", tape.trace_reverse(z));   // z̄ = 1, ȳ = 1, x̄ = 4
//! println!("{}", tape.trace_tangents(&[(x, 1.0)])); // ẋ = 1, ẏ = 4, ż = 4
//! assert_eq!(tape.trace_reverse(z).of(x), 4.0);
//! ```
//!
//! Names: a variable named with [`Tape::named_var`] or [`Tape::name`] shows under its name;
//! every other node is `vᵢ`, with i its index on the tape. A constant operand is not recorded on
//! the tape: the trace recovers it from the value and the partial where that is exact
//! (`y + 3`), and writes `c` otherwise.

use crate::replay::guard;
use crate::replay::{GuardFailure, ReplayError};
use crate::tape::Tape;
use crate::tape::live::foreign;
use crate::tape::storage::{Edges, NEG, TapeData};
use crate::var::Var;
use core::fmt::{self, Write as _};
use shared_ops::OpCode;
use std::collections::HashMap;

/// Which sweep a [`Trace`] shows.
///
/// ```
/// let tape = reverse::Tape::traced();
/// let x = tape.var(1.0);
/// assert_eq!(tape.trace_forward().pass, reverse::trace::Pass::Primal);
/// assert_eq!(tape.trace_reverse(x).pass, reverse::trace::Pass::Adjoint);
/// assert_eq!(tape.trace_tangents(&[(x, 1.0)]).pass, reverse::trace::Pass::Tangent);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pass {
    /// The forward pass: each node's value and local partials, in recording order.
    Primal,
    /// A tangent sweep (forward mode): `v̇ = Σ ∂v/∂u · u̇`, in recording order.
    Tangent,
    /// An adjoint sweep (reverse mode): `ū += ∂v/∂u · v̄`, nodes in reverse order.
    Adjoint,
}

/// One local partial `∂v/∂u` used by a [`Step`], and what it multiplies.
///
/// ```
/// let tape = reverse::Tape::traced();
/// let x = tape.var(3.0);
/// let y = x * x;
/// let t = tape.trace_tangents(&[(x, 1.0)]);
/// let term = &t.steps[1].terms[0];
/// assert_eq!((term.node, term.partial, term.factor), (x.index(), 6.0, 1.0));
/// # let _ = y;
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Term {
    /// The other node of the edge: the operand u (forward and tangent pass), or the node v whose
    /// adjoint flows back to the step's node (adjoint pass).
    pub node: u32,
    /// Its name (user-given, or `vᵢ`).
    pub name: String,
    /// The local partial `∂v/∂u`, as stored on the tape.
    pub partial: f64,
    /// What the partial multiplies: the operand's value (forward pass), the operand's tangent
    /// `u̇` (tangent pass), or the adjoint `v̄` (adjoint pass).
    pub factor: f64,
}

/// One line of a [`Trace`]: a node's value, tangent, or one update of its adjoint.
///
/// ```
/// let tape = reverse::Tape::traced();
/// let x = tape.named_var("x", 2.0);
/// let y = tape.name(x * x, "y");
/// let t = tape.trace_forward();
/// assert_eq!(t.steps[1].name, "y");
/// assert_eq!(t.steps[1].expr, "x * x");
/// assert_eq!(t.steps[1].value, 4.0);
/// # let _ = y;
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// The node this step computes (forward, tangent) or whose adjoint it updates (adjoint).
    pub node: u32,
    /// Its name (user-given, or `vᵢ`).
    pub name: String,
    /// The operation's name (`"input"`, `"+"`, `"sin"`, a custom rule's name, …).
    pub op: &'static str,
    /// The node's formula in terms of its operands, as `"powi(x, 2)"` or `"y + 3"` (`"input"` for
    /// an input).
    pub expr: String,
    /// A seed added at this step (tangent and adjoint passes).
    pub seed: Option<f64>,
    /// The local partials used.
    pub terms: Vec<Term>,
    /// The result after this step: the node's value (forward), tangent (tangent pass), or its
    /// adjoint so far (adjoint pass).
    pub value: f64,
}

/// A decision the recording depends on (a branch guard), as a trace shows it.
///
/// ```
/// let tape = reverse::Tape::traced();
/// let x = tape.named_var("x", 2.0);
/// let y = if x > reverse::Var::constant(1.0) { x * x } else { x };
/// let t = tape.trace_forward();
/// assert_eq!(t.guards.len(), 1);
/// assert!(t.guards[0].holds());
/// assert_eq!(t.guards[0].after, 1); // taken when one node was recorded
/// # let _ = y;
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    /// How many nodes were recorded when it was taken.
    pub after: u32,
    /// Where it was taken, in words: `"after y"` (the last node recorded before it).
    pub place: String,
    /// The node it concerns: a piecewise rule's node, or a comparison's first variable operand.
    pub node: u32,
    /// The decision in words.
    pub what: String,
    /// Its outcome when recorded.
    pub recorded: String,
    /// Its outcome at the point traced (the recorded one, or a re-evaluation's).
    pub now: String,
}

impl Decision {
    /// True if the outcome at the traced point is the recorded one.
    pub fn holds(&self) -> bool {
        self.recorded == self.now
    }
}

/// A trace of one sweep over a tape: structured [`steps`](Trace::steps), and a textbook
/// rendering by `Display`.
///
/// ```
/// use reverse::Float;
/// let tape = reverse::Tape::traced();
/// let x = tape.named_var("x", 2.0);
/// let y = tape.name(x.powi(2), "y");
/// let z = tape.name(y + 3.0, "z");
/// let t = tape.trace_reverse(z);
/// assert_eq!(t.of(x), 4.0);
/// assert!(t.to_string().contains("x̄ += ∂y/∂x · ȳ = 4 · 1"));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    /// Which sweep.
    pub pass: Pass,
    /// The steps in the order the sweep makes them.
    pub steps: Vec<Step>,
    /// The final value, tangent or adjoint of every node, by node index.
    pub values: Vec<f64>,
    /// The decisions the recording depends on (forward pass only), checked at the point
    /// traced.
    pub guards: Vec<Decision>,
    tape: u64,
    header: String,
    footer: Vec<String>,
}

impl Trace {
    /// The first guard that fails at the point traced (a re-evaluation that is refused).
    ///
    /// ```
    /// let tape = reverse::Tape::traced();
    /// let _ = tape.var(1.0);
    /// assert!(tape.trace_forward().refused().is_none());
    /// ```
    pub fn refused(&self) -> Option<GuardFailure> {
        let (k, g) = self.guards.iter().enumerate().find(|(_, g)| !g.holds())?;
        Some(GuardFailure {
            guard: k,
            node: g.node,
            what: g.what.clone(),
            recorded: g.recorded.clone(),
            now: g.now.clone(),
        })
    }

    /// The final value (forward), tangent (tangent pass) or adjoint (adjoint pass) of `v`;
    /// 0 for a constant. Panics for a `Var` of another tape.
    ///
    /// ```
    /// let tape = reverse::Tape::traced();
    /// let x = tape.var(3.0);
    /// let y = x * x;
    /// assert_eq!(tape.trace_forward().of(y), 9.0);
    /// assert_eq!(tape.trace_tangents(&[(x, 1.0)]).of(y), 6.0);
    /// assert_eq!(tape.trace_reverse(y).of(x), 6.0);
    /// ```
    pub fn of(&self, v: Var) -> f64 {
        if v.is_constant() {
            return 0.0;
        }
        if v.tape() != self.tape {
            foreign(v.tape(), self.tape);
        }
        self.values.get(v.index() as usize).copied().unwrap_or(0.0)
    }
}

impl fmt::Display for Trace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.header)?;
        let rows: Vec<[String; 3]> = self.steps.iter().map(|s| row(self.pass, s)).collect();
        let w0 = rows.iter().map(|r| width(&r[0])).max().unwrap_or(0);
        let w1 = rows.iter().map(|r| width(&r[1])).max().unwrap_or(0);
        for [a, b, c] in &rows {
            let line = format!("  {}  {}  {c}", pad(a, w0), pad(b, w1));
            writeln!(f, "{}", line.trim_end())?;
        }
        if !self.guards.is_empty() {
            writeln!(f, "decisions the recording depends on (guards):")?;
        }
        for g in &self.guards {
            let at = &g.place;
            if g.holds() {
                writeln!(f, "  {at}: {}: {}  holds", g.what, g.recorded)?;
            } else {
                writeln!(
                    f,
                    "  {at}: {}: was {}, now {}  FAILS: this point needs a new recording",
                    g.what, g.recorded, g.now
                )?;
            }
        }
        for line in &self.footer {
            writeln!(f, "{line}")?;
        }
        Ok(())
    }
}

/// The three columns of a step's line.
fn row(pass: Pass, s: &Step) -> [String; 3] {
    match pass {
        Pass::Primal => {
            let lhs = if s.op == OpCode::Input.name() {
                s.name.clone()
            } else {
                format!("{} = {}", s.name, s.expr)
            };
            let note = if s.terms.is_empty() {
                s.op.to_string()
            } else {
                s.terms
                    .iter()
                    .map(|t| format!("∂{}/∂{} = {}", s.name, t.name, num(t.partial)))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            [lhs, format!("= {}", num(s.value)), note]
        }
        Pass::Tangent => {
            let dot = decorate(&s.name, DOT);
            let mut sym: Vec<String> = s
                .terms
                .iter()
                .map(|t| format!("∂{}/∂{} · {}", s.name, t.name, decorate(&t.name, DOT)))
                .collect();
            let mut val: Vec<(f64, f64)> = s.terms.iter().map(|t| (t.partial, t.factor)).collect();
            let is_input = s.op == OpCode::Input.name();
            if let Some(seed) = s.seed
                && !(is_input && s.terms.is_empty())
            {
                sym.push("seed".into());
                val.push((seed, 1.0));
            }
            let eq = if sym.is_empty() {
                let note = match (s.seed, is_input) {
                    (Some(_), _) => "  (seed)",
                    (None, true) => "  (input)",
                    (None, false) => "",
                };
                format!("{dot} = {}{note}", num(s.value))
            } else {
                let products: Vec<String> = val
                    .iter()
                    .enumerate()
                    .map(|(k, &(a, b))| {
                        let a = if k == 0 { num(a) } else { factor(a) };
                        if sym[k] == "seed" {
                            a
                        } else {
                            format!("{a} · {}", factor(b))
                        }
                    })
                    .collect();
                format!(
                    "{dot} = {} = {} = {}",
                    sym.join(" + "),
                    products.join(" + "),
                    num(s.value)
                )
            };
            [eq, String::new(), String::new()]
        }
        Pass::Adjoint => {
            let bar = decorate(&s.name, BAR);
            match (s.seed, s.terms.first()) {
                (Some(seed), _) => [
                    format!("{bar} = {}", num(seed)),
                    "seed".into(),
                    String::new(),
                ],
                (None, Some(t)) => [
                    format!(
                        "{bar} += ∂{}/∂{} · {} = {} · {}",
                        t.name,
                        s.name,
                        decorate(&t.name, BAR),
                        num(t.partial),
                        factor(t.factor)
                    ),
                    format!("→ {bar} = {}", num(s.value)),
                    String::new(),
                ],
                (None, None) => [
                    format!("{bar} = {}", num(s.value)),
                    String::new(),
                    String::new(),
                ],
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Names and numbers.

/// Combining dot above: the tangent u̇.
const DOT: char = '\u{307}';
/// Combining macron: the adjoint ū.
const BAR: char = '\u{304}';

/// `v₁₂` for node 12.
fn default_name(i: usize) -> String {
    const SUB: [char; 10] = ['₀', '₁', '₂', '₃', '₄', '₅', '₆', '₇', '₈', '₉'];
    let mut s = String::from("v");
    for d in i.to_string().bytes() {
        s.push(SUB[(d - b'0') as usize]);
    }
    s
}

/// Puts the tangent dot or adjoint bar over a name: over its letter when the name is one letter
/// and an index (`x`, `v₃`, `x_1`), else over its last character. The precomposed character is
/// used where Unicode has one (`ẋ`, `ȳ`: the form a keyboard gives), so the text is NFC.
fn decorate(name: &str, mark: char) -> String {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return mark.to_string();
    };
    let indexed = first.is_alphabetic()
        && chars
            .clone()
            .all(|c| c.is_ascii_digit() || ('₀'..='₉').contains(&c) || c == '_' || c == '\'');
    let (base, rest) = if indexed {
        (String::from(first), chars.as_str())
    } else {
        (name.to_string(), "")
    };
    let mut out = base;
    let last = out.pop().expect("the base is not empty");
    match compose(last, mark) {
        Some(c) => out.push(c),
        None => {
            out.push(last);
            out.push(mark);
        }
    }
    out.push_str(rest);
    out
}

/// The precomposed form of a letter with a macron or a dot above, if Unicode has one.
fn compose(base: char, mark: char) -> Option<char> {
    const BARRED: &str = "aāeēgḡiīoōuūyȳAĀEĒGḠIĪOŌUŪYȲ";
    const DOTTED: &str =
        "aȧbḃcċdḋeėfḟgġhḣmṁnṅoȯpṗrṙsṡtṫwẇxẋyẏzżAȦBḂCĊDḊEĖFḞGĠHḢIİMṀNṄOȮPṖRṘSṠTṪWẆXẊYẎZŻ";
    let table = match mark {
        BAR => BARRED,
        DOT => DOTTED,
        _ => return None,
    };
    let pairs: Vec<char> = table.chars().collect();
    pairs.chunks_exact(2).find(|p| p[0] == base).map(|p| p[1])
}

/// Display width: characters, not counting combining marks.
fn width(s: &str) -> usize {
    s.chars()
        .filter(|c| !('\u{300}'..='\u{36f}').contains(c))
        .count()
}

fn pad(s: &str, w: usize) -> String {
    let mut out = s.to_string();
    out.extend(core::iter::repeat_n(' ', w.saturating_sub(width(s))));
    out
}

/// A number for reading: integers in full, others to 6 significant digits.
fn num(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "∞".into() } else { "-∞".into() };
    }
    if x == 0.0 {
        return "0".into();
    }
    if x.fract() == 0.0 && x.abs() < 1e15 {
        return format!("{x}");
    }
    let e = x.abs().log10().floor() as i32;
    if (-4..6).contains(&e) {
        let s = format!("{x:.*}", (5 - e) as usize);
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        let s = format!("{x:.5e}");
        match s.split_once('e') {
            Some((m, exp)) => {
                format!("{}e{exp}", m.trim_end_matches('0').trim_end_matches('.'))
            }
            None => s,
        }
    }
}

/// A number inside a product: negative ones in parentheses.
fn factor(x: f64) -> String {
    if x < 0.0 {
        format!("({})", num(x))
    } else {
        num(x)
    }
}

// ---------------------------------------------------------------------------------------------
// Reading the tape.

/// A traced tape with its node names resolved and its edges read per node.
struct View<'a> {
    id: u64,
    values: &'a [f64],
    ops: &'a [OpCode],
    /// Per node, its operands with `∂vᵢ/∂operand`, in the order the sweep follows them (a unit
    /// edge shows its ±1).
    operands: Vec<Vec<(u32, f64)>>,
    names: Vec<String>,
    /// Names of user-defined operations, by node.
    custom: HashMap<u32, &'static str>,
    /// The guards, checked at the current values.
    guards: Vec<Decision>,
    bytes: usize,
}

impl<'a> View<'a> {
    /// Panics, naming the method, for a tape that keeps no values or operations.
    fn new(id: u64, data: &'a TapeData<f64>, method: &str) -> View<'a> {
        let Some(program) = data.program.as_deref().filter(|_| data.traced) else {
            panic!(
                "Tape::{method} shows each node's value and operation, which only a traced tape \
                 keeps: record on Tape::traced() instead of Tape::new()"
            );
        };
        let mut given: Vec<Option<&str>> = vec![None; data.len()];
        for (i, name) in &data.names {
            if let Some(slot) = given.get_mut(*i as usize) {
                *slot = Some(name);
            }
        }
        let names: Vec<String> = given
            .iter()
            .enumerate()
            .map(|(i, n)| n.map_or_else(|| default_name(i), str::to_string))
            .collect();
        let operands = data
            .edge_ranges()
            .into_iter()
            .map(|e| match e {
                Edges::Weighted(lo, hi) => (lo..hi)
                    .map(|k| (data.parents()[k], data.partials()[k]))
                    .collect(),
                Edges::Unit(lo, hi) => data.units()[lo..hi]
                    .iter()
                    .map(|&p| {
                        let w = if p & NEG == 0 { 1.0 } else { -1.0 };
                        (p & !NEG, w)
                    })
                    .collect(),
            })
            .collect();
        let guards = (0..program.guards.len())
            .map(|k| {
                let g = &program.guards[k];
                let (node, what, recorded, now) = guard::explain(program, k, g.outcome(program));
                let place = match g.at {
                    0 => "before any node".to_string(),
                    k => format!("after {}", names[k as usize - 1]),
                };
                Decision {
                    after: g.at,
                    place,
                    node,
                    what,
                    recorded,
                    now,
                }
            })
            .collect();
        View {
            id,
            values: &program.values[..program.len()],
            ops: &program.ops,
            operands,
            names,
            custom: program.rules.iter().map(|r| (r.node, r.name)).collect(),
            guards,
            bytes: data.bytes(),
        }
    }

    fn len(&self) -> usize {
        self.values.len()
    }

    fn name(&self, i: u32) -> &str {
        &self.names[i as usize]
    }

    /// The operation's name; a user-defined rule's own name for `Custom`.
    fn op(&self, i: usize) -> &'static str {
        match self.ops[i] {
            OpCode::Custom => self
                .custom
                .get(&(i as u32))
                .copied()
                .unwrap_or(OpCode::Custom.name()),
            op => op.name(),
        }
    }

    /// The operands of node `i` that are on the tape, with `∂vᵢ/∂operand`. A constant operand
    /// is not recorded. (For `x·x` the tape holds one edge to `x` with the whole partial.)
    fn operands(&self, i: usize) -> &[(u32, f64)] {
        &self.operands[i]
    }

    /// The edges into node `i` that a sweep follows: the non-zero partials.
    fn edges(&self, i: usize) -> impl Iterator<Item = (u32, f64)> + '_ {
        self.operands[i].iter().copied().filter(|&(_, w)| w != 0.0)
    }

    /// The formula of node `i` in terms of its operands' names. The second return is true when
    /// it contains a constant `c` the tape does not hold.
    fn expr(&self, i: usize) -> (String, bool) {
        let ops = self.operands(i);
        let v = self.values[i];
        match (self.ops[i], ops) {
            (OpCode::Input, _) => ("input".into(), false),
            (
                op @ (OpCode::Add | OpCode::Sub | OpCode::Mul | OpCode::Div | OpCode::Rem),
                &[(a, _), (b, _)],
            ) => (
                format!("{} {} {}", self.name(a), op.name(), self.name(b)),
                false,
            ),
            (
                op @ (OpCode::Add | OpCode::Sub | OpCode::Mul | OpCode::Div | OpCode::Rem),
                &[(a, w)],
            ) => {
                let an = self.name(a);
                let p = self.values[a as usize];
                match infix_constant(op, p, w, v) {
                    Some(Recovered::Same) => (format!("{an} {} {an}", op.name()), false),
                    Some(Recovered::Right(c)) => {
                        if c < 0.0 && matches!(op, OpCode::Add | OpCode::Sub) {
                            let flip = if op == OpCode::Add { "-" } else { "+" };
                            (format!("{an} {flip} {}", num(-c)), false)
                        } else {
                            (format!("{an} {} {}", op.name(), num(c)), false)
                        }
                    }
                    Some(Recovered::Left(c)) => (format!("{} {} {an}", num(c), op.name()), false),
                    None => (format!("{an} {} c", op.name()), true),
                }
            }
            (OpCode::Powi, &[(a, w)]) => {
                let p = self.values[a as usize];
                match powi_exponent(p, w, v) {
                    Some(k) => (format!("powi({}, {k})", self.name(a)), false),
                    None => (format!("powi({}, c)", self.name(a)), true),
                }
            }
            (op, ops) => {
                let mut args: Vec<&str> = ops.iter().map(|&(u, _)| self.name(u)).collect();
                let missing = arity(op).map_or(0, |a| a.saturating_sub(args.len()));
                args.extend(core::iter::repeat_n("c", missing));
                (format!("{}({})", self.op(i), args.join(", ")), missing > 0)
            }
        }
    }

    /// Nodes that no other node uses: the outputs of the program.
    fn sinks(&self) -> Vec<bool> {
        let mut used = vec![false; self.len()];
        for i in 0..self.len() {
            for &(u, _) in self.operands(i) {
                used[u as usize] = true;
            }
        }
        used.iter().map(|u| !u).collect()
    }
}

/// Operands an operation takes; `None` for a user-defined rule (one or two: the tape does not
/// say, so its second slot is read when it is set).
fn arity(op: OpCode) -> Option<usize> {
    use OpCode::*;
    match op {
        Custom => None,
        Input => Some(0),
        Add | Sub | Mul | Div | Rem | Powf | Log | Atan2 | Hypot | Max | Min => Some(2),
        MulAdd => Some(3),
        _ => Some(1),
    }
}

enum Recovered {
    /// `a op a` (the tape merges the two equal parents into one).
    Same,
    /// `a op c`.
    Right(f64),
    /// `c op a`.
    Left(f64),
}

/// Recovers the constant of `a op c` (or `c op a`) from the operand's value `p`, the partial
/// `w` and the result `v`, when the recovered constant reproduces `v` exactly.
fn infix_constant(op: OpCode, p: f64, w: f64, v: f64) -> Option<Recovered> {
    match op {
        OpCode::Add if w == 2.0 && p + p == v => Some(Recovered::Same),
        OpCode::Add => Some(v - p).filter(|c| p + c == v).map(Recovered::Right),
        OpCode::Sub if w == 1.0 => Some(p - v).filter(|c| p - c == v).map(Recovered::Right),
        OpCode::Sub if w == -1.0 => Some(v + p).filter(|c| c - p == v).map(Recovered::Left),
        OpCode::Mul if p * w == v => Some(Recovered::Right(w)),
        OpCode::Mul if w == p + p && v == p * p => Some(Recovered::Same),
        OpCode::Div => {
            let c = 1.0 / w;
            if p / c == v && 1.0 / c == w {
                return Some(Recovered::Right(c));
            }
            let c = v * p;
            (c / p == v && -v / p == w).then_some(Recovered::Left(c))
        }
        _ => None,
    }
}

/// Recovers n of `powi(a, n)` from `p = a`, `w = n·aⁿ⁻¹` and `v = aⁿ`.
fn powi_exponent(p: f64, w: f64, v: f64) -> Option<i32> {
    if v == 1.0 && w == 0.0 {
        return Some(0);
    }
    if p == 0.0 || v == 0.0 || !(w * p / v).is_finite() {
        return None;
    }
    let k = (w * p / v).round();
    (k.abs() <= 1024.0 && p.powi(k as i32) == v).then_some(k as i32)
}

// ---------------------------------------------------------------------------------------------
// The traces, over the tape's data.

/// The forward pass of `data`: every node's formula, value and local partials.
fn primal(view: &View<'_>) -> Trace {
    let mut any_c = false;
    let steps = (0..view.len())
        .map(|i| {
            let (expr, c) = view.expr(i);
            any_c |= c;
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
    let mut footer = Vec::new();
    if any_c {
        footer.push("(c: a constant operand; constants are not recorded on the tape)".into());
    }
    Trace {
        pass: Pass::Primal,
        steps,
        values: view.values.to_vec(),
        guards: view.guards.clone(),
        tape: view.id,
        header: format!(
            "forward pass ({} node{}, in recording order): values, and the local partials ∂v/∂u the tape stores",
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
fn tangent(view: &View<'_>, seeds: &[(u32, f64)]) -> Trace {
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
            expr: view.expr(i).0,
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

/// An adjoint sweep over `data` from `seeds` (node, v̄), step for step as the sweep kernel
/// makes it: nodes after the last seed are not visited, and a zero adjoint or a zero partial
/// propagates nothing.
fn adjoint(view: &View<'_>, seeds: &[(u32, f64)]) -> Trace {
    let end = seeds
        .iter()
        .map(|&(i, _)| i as usize + 1)
        .max()
        .unwrap_or(0);
    let mut adj = vec![0.0; view.len()];
    let mut steps = Vec::new();
    for &(i, s) in seeds {
        adj[i as usize] += s;
        steps.push(Step {
            node: i,
            name: view.name(i).to_string(),
            op: view.op(i as usize),
            expr: view.expr(i as usize).0,
            seed: Some(s),
            terms: Vec::new(),
            value: adj[i as usize],
        });
    }
    for i in (0..end).rev() {
        let a = adj[i];
        if a == 0.0 {
            continue;
        }
        for (u, w) in view.edges(i) {
            adj[u as usize] += w * a;
            steps.push(Step {
                node: u,
                name: view.name(u).to_string(),
                op: view.op(u as usize),
                expr: view.expr(u as usize).0,
                seed: None,
                terms: vec![Term {
                    node: i as u32,
                    name: view.names[i].clone(),
                    partial: w,
                    factor: a,
                }],
                value: adj[u as usize],
            });
        }
    }
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

// ---------------------------------------------------------------------------------------------
// Graphs.

/// Escapes a string for a double-quoted DOT label.
fn dot_escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The Graphviz DOT graph of `data`.
fn dot(view: &View<'_>) -> String {
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
fn text(view: &View<'_>) -> String {
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

// ---------------------------------------------------------------------------------------------
// The methods.

impl Tape<f64> {
    /// Node indices of seeds (constants dropped); panics for a `Var` of another tape.
    fn seed_nodes(&self, seeds: &[(Var, f64)]) -> Vec<(u32, f64)> {
        seeds
            .iter()
            .filter_map(|&(v, s)| self.index_of(v).map(|i| (i, s)))
            .collect()
    }

    /// The forward pass as recorded: every node's formula, value and local partials, in order.
    ///
    /// ```
    /// use reverse::Float;
    /// let tape = reverse::Tape::traced();
    /// let x = tape.named_var("x", 2.0);
    /// let y = tape.name(x.powi(2), "y");
    /// let z = tape.name(y + 3.0, "z");
    /// let t = tape.trace_forward();
    /// let values: Vec<f64> = t.steps.iter().map(|s| s.value).collect();
    /// assert_eq!(values, [2.0, 4.0, 7.0]);
    /// assert_eq!(t.steps[2].expr, "y + 3");
    /// # let _ = z;
    /// ```
    pub fn trace_forward(&self) -> Trace {
        self.with_data(|d| primal(&View::new(self.id(), d, "trace_forward")))
    }

    /// The forward pass re-evaluated at a new point `x` (one value per input): the same nodes
    /// and formulas with new values and partials, and every guard checked there. If a guard
    /// fails, the trace shows it (and the values at `x` that a recording must not be swept
    /// with), [`Trace::refused`] returns it, and the tape stays at its previous point; else the
    /// tape is left at `x`, as by [`Tape::reevaluate`].
    ///
    /// # Errors
    ///
    /// As [`Tape::reevaluate`], except a failed guard, which the trace shows.
    ///
    /// ```
    /// let mut tape = reverse::Tape::traced();
    /// let x = tape.named_var("x", 2.0);
    /// let y = tape.name(if x > reverse::Var::constant(1.0) { x * x } else { -x }, "y");
    /// let t = tape.trace_reevaluation(&[3.0])?;
    /// assert_eq!((t.of(y), t.steps[1].expr.as_str()), (9.0, "x * x"));
    /// let t = tape.trace_reevaluation(&[0.5])?;
    /// assert!(t.refused().is_some());
    /// assert!(t.to_string().contains("was >, now <  FAILS"));
    /// assert_eq!(tape.value(y), 9.0); // still at x = 3
    /// # Ok::<(), reverse::ReplayError>(())
    /// ```
    pub fn trace_reevaluation(&mut self, x: &[f64]) -> Result<Trace, ReplayError> {
        let id = self.id();
        let mut trace = None;
        self.with_data_mut(|d| {
            crate::replay::reevaluate_showing(d, x, &mut |d| {
                trace = Some(primal(&View::new(id, d, "trace_reevaluation")));
            })
        })?;
        let mut trace = trace.expect("shown at the new point");
        trace.header = format!("re-evaluated at {x:?}: {}", trace.header);
        Ok(trace)
    }

    /// The reverse sweep from `y` (seed `ȳ = 1`), every adjoint update in the order the sweep
    /// makes it. Its adjoints equal [`Tape::gradient`]'s.
    ///
    /// ```
    /// let tape = reverse::Tape::traced();
    /// let x = tape.named_var("x", 2.0);
    /// let z = tape.name(x * x + 3.0, "z");
    /// let t = tape.trace_reverse(z);
    /// assert_eq!(t.of(x), tape.gradient(z).wrt(x));
    /// assert_eq!(t.steps.len(), 3); // the seed z̄, then v̄₁, then x̄
    /// ```
    pub fn trace_reverse(&self, y: Var) -> Trace {
        self.trace_adjoints(&[(y, 1.0)])
    }

    /// The reverse sweep from arbitrary output adjoints (as [`Tape::sweep`]).
    ///
    /// ```
    /// let tape = reverse::Tape::traced();
    /// let x = tape.var(2.0);
    /// let (a, b) = (x * 3.0, x * x);
    /// let t = tape.trace_adjoints(&[(a, 1.0), (b, 0.5)]);
    /// assert_eq!(t.of(x), 3.0 + 0.5 * 4.0);
    /// ```
    pub fn trace_adjoints(&self, seeds: &[(Var, f64)]) -> Trace {
        let seeds = self.seed_nodes(seeds);
        self.with_data(|d| adjoint(&View::new(self.id(), d, "trace_adjoints"), &seeds))
    }

    /// A tangent sweep (forward mode) over the recorded list from `seeds` (`u̇` per variable,
    /// usually inputs; others 0): `v̇ = Σ ∂v/∂u · u̇` with the partials stored on the tape, which
    /// are the ones `forward::Dual` computes. A seed on an intermediate node is added to its
    /// computed tangent.
    ///
    /// ```
    /// use reverse::Float;
    /// let tape = reverse::Tape::traced();
    /// let x = tape.named_var("x", 2.0);
    /// let y = tape.name(x.powi(2), "y");
    /// let z = tape.name(y + 3.0, "z");
    /// let t = tape.trace_tangents(&[(x, 1.0)]);
    /// assert_eq!((t.of(x), t.of(y), t.of(z)), (1.0, 4.0, 4.0));
    /// ```
    pub fn trace_tangents(&self, seeds: &[(Var, f64)]) -> Trace {
        let seeds = self.seed_nodes(seeds);
        self.with_data(|d| tangent(&View::new(self.id(), d, "trace_tangents"), &seeds))
    }

    /// The tape as a Graphviz DOT graph: nodes labelled with name, value and operation (inputs
    /// as ellipses, nodes nothing uses, the outputs, with a double border), edges from operand
    /// to result labelled with the local partial (dashed where it is 0: no adjoint flows).
    /// Render with `dot -Tsvg tape.dot > tape.svg`.
    ///
    /// ```
    /// let tape = reverse::Tape::traced();
    /// let x = tape.named_var("x", 2.0);
    /// let y = tape.name(x * x, "y");
    /// let dot = tape.to_dot();
    /// assert!(dot.starts_with("digraph tape {"));
    /// assert!(dot.contains("n0 -> n1 [label=\"∂y/∂x = 4\"];"));
    /// # let _ = y;
    /// ```
    pub fn to_dot(&self) -> String {
        self.with_data(|d| dot(&View::new(self.id(), d, "to_dot")))
    }

    /// The tape as a table for the terminal: one line per node with its name, operation, value
    /// and parents with their local partials.
    ///
    /// ```
    /// let tape = reverse::Tape::traced();
    /// let x = tape.named_var("x", 2.0);
    /// let _ = x.sin();
    /// let text = tape.to_text();
    /// let line = text.lines().last().unwrap();
    /// assert_eq!(line.split_whitespace().collect::<Vec<_>>(), ["1", "v₁", "sin", "0.909297", "x", "(-0.416147)"]);
    /// # use reverse::Float;
    /// ```
    pub fn to_text(&self) -> String {
        self.with_data(|d| text(&View::new(self.id(), d, "to_text")))
    }
}
