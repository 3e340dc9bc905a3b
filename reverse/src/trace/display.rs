//! How a [`Trace`] prints: its header, one line per step in aligned columns, the guards and
//! the footer.

use super::names::{BAR, DOT, decorate, factor, num, pad, width};
use super::{Pass, Step, Trace};
use crate::storage::op_code::OpCode;
use core::fmt;

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
