//! Teaching tools for a recorded tape: traces of the three sweeps, and graph export.
//!
//! A tape is the Wengert list of a program: every elementary operation with its value, its
//! parents and its *local partials*. The tools here print that list the way a textbook does:
//!
//! * [`Tape::trace_primal`]: the primal pass, each node's formula, value and local
//!   partials, in recording order;
//! * [`Tape::trace_reverse`] / [`Tape::trace_adjoints`]: the reverse sweep, every adjoint update
//!   `ū += ∂v/∂u · v̄` in the order the sweep makes it;
//! * [`Tape::trace_tangents`]: forward mode over the same list, `v̇ = Σ ∂v/∂u · u̇` from a seed,
//!   with the same stored partials (what `forward::Dual` numbers compute as they go);
//! * [`Tape::to_dot`] (Graphviz) and [`Tape::to_text`] (a table for the terminal): the graph,
//!   nodes with operation and value, edges with the local partial.
//! * [`Tape::trace_reevaluation`]: the primal pass evaluated again at a new point (same nodes,
//!   new values), with every branch guard checked there: the one that fails is shown.
//!
//! ```
//! use reverse::{Float, Tape};
//!
//! let tape = Tape::traced();
//! let x = tape.named_var("x", 2.0);
//! let y = tape.name(x.powi(2), "y");
//! let z = tape.name(y + 3.0, "z");
//! println!("{}", tape.trace_primal());    // x = 2, y = 4, z = 7
//! println!("{}", tape.trace_reverse(z));   // z̄ = 1, ȳ = 1, x̄ = 4
//! println!("{}", tape.trace_tangents(&[(x, 1.0)])); // ẋ = 1, ẏ = 4, ż = 4
//! assert_eq!(tape.trace_reverse(z).of(x), 4.0);
//! ```
//!
//! Names: a variable named with [`Tape::named_var`] or [`Tape::name`] shows under its name;
//! every other node is `vᵢ`, with i its index on the tape. A constant operand is not recorded on
//! the tape: the trace recovers it from the value and the partial where that is exact
//! (`y + 3`), and writes `c` otherwise.

mod display;
mod graph;
mod methods;
mod names;
mod passes;
mod view;

use crate::replay::GuardFailure;
use crate::tape::Tape;
use crate::tape::Var;
use crate::tape::live::foreign;

/// Which sweep a [`Trace`] shows.
///
/// ```
/// let tape = reverse::Tape::traced();
/// let x = tape.var(1.0);
/// assert_eq!(tape.trace_primal().pass, reverse::trace::Pass::Primal);
/// assert_eq!(tape.trace_reverse(x).pass, reverse::trace::Pass::Adjoint);
/// assert_eq!(tape.trace_tangents(&[(x, 1.0)]).pass, reverse::trace::Pass::Tangent);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pass {
    /// The primal pass: each node's value and local partials, in recording order.
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
    /// What the partial multiplies: the operand's value (primal pass), the operand's tangent
    /// `u̇` (tangent pass), or the adjoint `v̄` (adjoint pass).
    pub factor: f64,
}

/// One line of a [`Trace`]: a node's value, tangent, or one update of its adjoint.
///
/// ```
/// let tape = reverse::Tape::traced();
/// let x = tape.named_var("x", 2.0);
/// let y = tape.name(x * x, "y");
/// let t = tape.trace_primal();
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
/// let t = tape.trace_primal();
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
    /// The decisions the recording depends on (primal pass only), checked at the point
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
    /// assert!(tape.trace_primal().refused().is_none());
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
    /// assert_eq!(tape.trace_primal().of(y), 9.0);
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
