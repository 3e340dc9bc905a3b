//! A gradient compiled alone: its machine code and the buffers it works in, apart from the
//! recording's.

use super::machine;
use super::report::CodeStats;
use crate::storage::TapeData;
use crate::storage::program::{Machine, Program};

/// A gradient's machine code and the buffers it works in.
pub(super) struct Gradient {
    pub(super) code: machine::Code,
    /// The output, and the input nodes.
    pub(super) y: u32,
    pub(super) inputs: Vec<u32>,
    /// Values (the constants after the nodes), partials of calls, adjoints.
    pub(super) values: Vec<f64>,
    pub(super) partials: Vec<f64>,
    pub(super) adj: Vec<f64>,
    pub(super) stats: CodeStats,
}

impl crate::storage::derived::Derived for Gradient {
    fn capacity_bytes(&self) -> usize {
        self.code.kept_bytes()
            + 8 * (self.values.capacity() + self.partials.capacity() + self.adj.capacity())
    }
    crate::storage::derived::derived_any!();
}

impl Gradient {
    /// The forward pass, the guards, the sweep; `Err` if a guard fails.
    pub(super) fn run(
        &mut self,
        d: &TapeData<f64>,
        p: &Program<f64>,
        x: &[f64],
        grad: &mut [f64],
    ) -> Result<f64, ()> {
        let Gradient {
            code,
            y,
            inputs,
            values,
            partials,
            adj,
            ..
        } = self;
        match inputs[..] {
            // Consecutive, as `Tape::vars` makes them: two slices.
            [first, .., last] if (last - first) as usize + 1 == inputs.len() => {
                let at = first as usize..last as usize + 1;
                values[at.clone()].copy_from_slice(x);
                adj[at].fill(0.0);
            }
            _ => {
                for (&i, &v) in inputs.iter().zip(x) {
                    values[i as usize] = v;
                    adj[i as usize] = 0.0;
                }
            }
        }
        let args = &p
            .derived
            .get::<crate::replay::compile::Operands>()
            .expect("prepared when compiled")
            .args;
        macro_rules! arrays {
            () => {
                machine::Arrays {
                    values: &mut *values,
                    partials: &mut *partials,
                    adj: &mut *adj,
                    args,
                    rules: &p.rules,
                    forms: &p.forms,
                    parents: d.parents(),
                    units: d.units(),
                }
            };
        }
        code.gradient(true, arrays!());
        let held = code.checks_hold(arrays!())
            && code.unchecked().iter().all(|&k| {
                let g = &p.guards[k as usize];
                g.outcome_at(p, values) == g.outcome
            });
        if !held {
            return Err(());
        }
        adj[*y as usize] += 1.0;
        code.gradient(false, arrays!());
        for (g, &i) in grad.iter_mut().zip(inputs.iter()) {
            *g = adj[i as usize];
        }
        Ok(values[*y as usize])
    }
}
