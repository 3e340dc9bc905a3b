//! The cost report of a sparse Jacobian: the four strategies timed side by side, with the plan
//! and the spy plot, so the sweeps that colouring saves can be seen in numbers.

use super::{PreparedSparseJacobian, SparseJacobian, SparseOptions, Strategy};
use crate::Mode;
use crate::report::median_time;
use core::fmt;
use shared_ops::{Error, Function};
use std::time::Duration;

/// Dense strategies are skipped above this many matrix entries (their m×n matrix alone would
/// take 80 MB).
const DENSE_LIMIT: usize = 10_000_000;

/// One strategy's measured cost in a [`SparseCostReport`].
#[derive(Clone, Debug, PartialEq)]
pub struct StrategyCost {
    /// The strategy.
    pub strategy: Strategy,
    /// Sweeps and lanes it ran.
    pub sweeps: usize,
    /// Tangents or adjoints per sweep.
    pub lanes: usize,
    /// Median time at a new point with the pattern and colouring prepared, or `None` where it
    /// was skipped (a dense matrix too large to hold).
    pub time: Option<Duration>,
    /// The cost model's estimate, in plain evaluations of `f`.
    pub estimate: f64,
}

/// The four strategies of a sparse Jacobian timed side by side (prepared: detection and
/// colouring outside the timing), the one-shot time of `Auto` (detection included), the plan
/// and the spy plot.
///
/// ```
/// use jacobian::{Function, Op};
/// struct Chain;
/// impl Function for Chain {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         x.windows(2).map(|w| w[0] * w[1].sin()).collect()
///     }
/// }
/// let r = jacobian::sparse::sparse_cost_report(&Chain, &[0.5; 200], 3)?;
/// assert_eq!(r.costs.len(), 4);
/// assert_eq!(r.jacobian.plan.column_colours, Some(2));
/// let text = r.to_string();
/// assert!(text.contains("sparse by columns") && text.contains("one forward lane per letter"));
/// # Ok::<(), jacobian::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct SparseCostReport {
    /// Each strategy, in the order of [`Strategy::ALL`].
    pub costs: Vec<StrategyCost>,
    /// The one-shot `Auto` result (its plan and spy plot).
    pub jacobian: SparseJacobian,
    /// Median time of the one-shot `Auto` call: detection, colouring, sweeps.
    pub one_shot: Duration,
    /// Median time of one plain evaluation of `f`.
    pub eval_time: Duration,
}

/// Times the four strategies of the sparse Jacobian of `f` at `x`, `runs` timed runs each (one
/// thread for the dense ones), and the one-shot `Auto` call.
///
/// # Errors
///
/// As [`sparse_jacobian`](super::sparse_jacobian).
pub fn sparse_cost_report<F: Function + Sync>(
    f: &F,
    x: &[f64],
    runs: usize,
) -> Result<SparseCostReport, Error> {
    let runs = runs.max(1);
    let jacobian = super::sparse_jacobian(f, x)?;
    let one_shot = median_time(runs, || super::sparse_jacobian(f, x).map(drop))?;
    let eval_time = median_time(runs, || {
        core::hint::black_box(f.eval(core::hint::black_box(x)));
        Ok(())
    })?;
    let plan = &jacobian.plan;
    let mut costs = Vec::new();
    for strategy in Strategy::ALL {
        let mode = match strategy {
            Strategy::DenseForward | Strategy::Columns => Mode::Forward,
            _ => Mode::Reverse,
        };
        let options = SparseOptions {
            mode,
            ..SparseOptions::default()
        };
        let dense = matches!(strategy, Strategy::DenseForward | Strategy::DenseReverse);
        let (time, sweeps, lanes) = if dense && plan.n * plan.m > DENSE_LIMIT {
            let counts = (plan.column_bound, plan.row_bound);
            let (sweeps, lanes) = strategy.sweeps(plan.n, plan.m, counts);
            (None, sweeps, lanes)
        } else {
            let mut p = PreparedSparseJacobian::with_options(f, x, options)?;
            p.use_strategy(strategy);
            let time = median_time(runs, || p.jacobian(x).map(drop))?;
            (Some(time), p.plan().sweeps, p.plan().lanes)
        };
        costs.push(StrategyCost {
            strategy,
            sweeps,
            lanes,
            time,
            estimate: plan.estimate(strategy),
        });
    }
    Ok(SparseCostReport {
        costs,
        jacobian,
        one_shot,
        eval_time,
    })
}

impl fmt::Display for SparseCostReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = &self.jacobian.plan;
        let per_f = |t: Duration| t.as_secs_f64() / self.eval_time.as_secs_f64().max(1e-12);
        writeln!(
            f,
            "cost of the sparse {}×{} Jacobian of f (medians, prepared: detection and colouring done once)",
            p.m, p.n
        )?;
        writeln!(
            f,
            "  {:<18} {:>7} {:>6} {:>11} {:>9} {:>8}",
            "strategy", "sweeps", "lanes", "time", "× f(x)", "model"
        )?;
        for c in &self.costs {
            let (time, ratio) = match c.time {
                Some(t) => (format!("{t:.1?}"), format!("{:.1}", per_f(t))),
                None => ("skipped".into(), "-".into()),
            };
            writeln!(
                f,
                "  {:<18} {:>7} {:>6} {:>11} {:>9} {:>8.1}",
                c.strategy.to_string(),
                c.sweeps,
                c.lanes,
                time,
                ratio,
                c.estimate
            )?;
        }
        writeln!(
            f,
            "one-shot auto (detection included): {:.1?} = {:.1} f(x); f(x) takes {:.1?}",
            self.one_shot,
            per_f(self.one_shot),
            self.eval_time
        )?;
        writeln!(f, "plan: {p}")?;
        write!(f, "{}", self.jacobian.spy())
    }
}
