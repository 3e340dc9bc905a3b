//! The methods: the traces and graph exports as methods of a traced `Tape<f64>`.

use super::graph::{dot, text};
use super::passes::{adjoint, primal, tangent};
use super::view::View;
use super::{Tape, Trace};
use crate::replay::ReplayError;
use crate::tape::Var;

impl Tape<f64> {
    /// Node indices of seeds (constants dropped); panics for a `Var` of another tape.
    fn seed_nodes(&self, seeds: &[(Var, f64)]) -> Vec<(u32, f64)> {
        seeds
            .iter()
            .filter_map(|&(v, s)| self.index_of(v).map(|i| (i, s)))
            .collect()
    }

    /// The primal pass as recorded: every node's formula, value and local partials, in order.
    ///
    /// ```
    /// use reverse::Float;
    /// let tape = reverse::Tape::traced();
    /// let x = tape.named_var("x", 2.0);
    /// let y = tape.name(x.powi(2), "y");
    /// let z = tape.name(y + 3.0, "z");
    /// let t = tape.trace_primal();
    /// let values: Vec<f64> = t.steps.iter().map(|s| s.value).collect();
    /// assert_eq!(values, [2.0, 4.0, 7.0]);
    /// assert_eq!(t.steps[2].expr, "y + 3");
    /// # let _ = z;
    /// ```
    pub fn trace_primal(&self) -> Trace {
        self.with_data(|d| primal(&View::new(self.id(), d, "trace_primal")))
    }

    /// The primal pass re-evaluated at a new point `x` (one value per input): the same nodes
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
    /// assert!(t.to_string().contains("was true, now false  FAILS"));
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
        if trace.refused().is_none() {
            self.reevaluated();
        }
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
