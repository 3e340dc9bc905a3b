//! The cost report of a Jacobian: both modes run and timed side by side, with the plan the auto
//! mode would choose, so the asymmetry between forward and reverse mode can be seen in numbers.

use crate::{Direction, Error, Function, Mode, Options, Plan, jacobian_with_options};
use core::fmt;
use std::time::{Duration, Instant};

/// What one mode cost for one Jacobian.
///
/// ```
/// use jacobian::{Function, Mode, Op};
/// struct F;
/// impl Function for F {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         vec![x[0] * x[1], x[0].sin()]
///     }
/// }
/// let r = jacobian::cost_report(&F, &[1.0, 2.0])?;
/// assert_eq!(r.forward.mode, Mode::Forward);
/// assert_eq!(r.forward.tape.bytes, 0); // forward mode keeps no tape
/// let t = r.reverse.tape; // 4 bytes per node, 12 per weighted edge, 4 per unit edge
/// assert_eq!(t.bytes, 4 * t.nodes + 12 * t.edges + 4 * t.unit_edges);
/// # Ok::<(), jacobian::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ModeCost {
    /// The mode forced for this row.
    pub mode: Direction,
    /// Sweeps run: ⌈n/N⌉ forward sweeps of N tangents, or ⌈m/Q⌉ reverse sweeps of Q adjoints
    /// after the one recording.
    pub sweeps: usize,
    /// Tangents or adjoints carried per sweep (N or Q).
    pub lanes: usize,
    /// What the tape held: nodes, weighted and unit edges, and bytes (all 0 in forward mode).
    /// A node takes 4 bytes, a weighted edge 12 (its operand and partial), a unit edge 4 (its
    /// operand and a sign): see [`reverse::TapeStats`].
    pub tape: reverse::TapeStats,
    /// The cost model's estimate, in plain evaluations of f.
    pub estimate: f64,
    /// The median time of one Jacobian in this mode, on one thread.
    pub time: Duration,
    /// The plan of the forced run.
    pub plan: Plan,
}

impl ModeCost {
    /// The measured time in units of one plain evaluation of f (compare with
    /// [`estimate`](ModeCost::estimate)).
    ///
    /// ```
    /// use jacobian::{Function, Op};
    /// struct F;
    /// impl Function for F {
    ///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
    ///         x.iter().map(|&v| v.exp()).collect()
    ///     }
    /// }
    /// let r = jacobian::cost_report(&F, &[0.5; 4])?;
    /// assert!(r.forward.evaluations(r.eval_time) > 0.0);
    /// # Ok::<(), jacobian::Error>(())
    /// ```
    pub fn evaluations(&self, eval_time: Duration) -> f64 {
        self.time.as_secs_f64() / eval_time.as_secs_f64().max(1e-12)
    }
}

/// Forward and reverse mode on one Jacobian, measured: sweeps, tape, time, and the plan the
/// auto mode chooses. `Display` prints it as a small table.
///
/// ```
/// use jacobian::{Function, Mode, Op};
/// /// A loss: 64 inputs, 1 output.
/// struct Loss;
/// impl Function for Loss {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         vec![x.iter().map(|&v| v * v).sum()]
///     }
/// }
/// let r = jacobian::cost_report(&Loss, &[0.5; 64])?;
/// assert_eq!(r.auto.mode, Mode::Reverse);
/// assert_eq!((r.forward.sweeps, r.reverse.sweeps), (4, 1)); // ⌈64/16⌉ and ⌈1/1⌉
/// println!("{r}");
/// # Ok::<(), jacobian::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct CostReport {
    /// Inputs.
    pub n: usize,
    /// Outputs.
    pub m: usize,
    /// The plan of the auto mode ([`Mode::Auto`], threads off): which mode it chose and why.
    pub auto: Plan,
    /// Forward mode, forced.
    pub forward: ModeCost,
    /// Reverse mode, forced.
    pub reverse: ModeCost,
    /// The median time of one plain `f64` evaluation of f.
    pub eval_time: Duration,
    /// Timed runs per mode (the median is reported).
    pub runs: usize,
    /// The largest absolute difference between the two modes' matrices.
    pub max_difference: f64,
}

impl CostReport {
    /// The mode that measured faster.
    ///
    /// ```
    /// use jacobian::{Function, Op};
    /// struct F;
    /// impl Function for F {
    ///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
    ///         vec![x[0].sin()]
    ///     }
    /// }
    /// let r = jacobian::cost_report(&F, &[1.0])?;
    /// let forward_faster = r.forward.time <= r.reverse.time;
    /// assert_eq!(r.faster() == jacobian::Direction::Forward, forward_faster);
    /// # Ok::<(), jacobian::Error>(())
    /// ```
    pub fn faster(&self) -> Direction {
        if self.forward.time <= self.reverse.time {
            Direction::Forward
        } else {
            Direction::Reverse
        }
    }
}

/// Runs forward and reverse mode on the Jacobian of `f` at `x` (threads off, so the timing is
/// fair), 5 timed runs each, and reports the cost of each and the auto mode's plan.
///
/// Errors as [`jacobian`](crate::jacobian) does (bad input size, an output length that changes).
///
/// ```
/// use jacobian::{Function, Mode, Op};
/// /// A curve: 2 parameters, 50 points.
/// struct Curve;
/// impl Function for Curve {
///     fn eval<T: Op>(&self, p: &[T]) -> Vec<T> {
///         (0..50).map(|k| p[0] * (p[1] * (k as f64 / 10.0)).sin()).collect()
///     }
/// }
/// let r = jacobian::cost_report(&Curve, &[1.0, 2.0])?;
/// assert_eq!((r.n, r.m), (2, 50));
/// assert_eq!(r.auto.mode, Mode::Forward);
/// assert_eq!(r.forward.sweeps, 1); // both columns in one sweep of 2 tangents
/// assert!(r.reverse.tape.nodes > 0);
/// assert!(r.max_difference < 1e-12);
/// # Ok::<(), jacobian::Error>(())
/// ```
pub fn cost_report<F: Function + Sync>(f: &F, x: &[f64]) -> Result<CostReport, Error> {
    cost_report_with_runs(f, x, 5)
}

/// [`cost_report`] with `runs` timed runs per mode (at least 1).
///
/// ```
/// use jacobian::{Function, Op};
/// struct F;
/// impl Function for F {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         vec![x[0] * x[1]]
///     }
///     fn sizes(&self) -> Option<(usize, usize)> {
///         Some((2, 1))
///     }
/// }
/// let r = jacobian::cost_report_with_runs(&F, &[1.0, 2.0], 1)?;
/// assert_eq!(r.runs, 1);
/// assert!(jacobian::cost_report_with_runs(&F, &[1.0], 1).is_err());
/// # Ok::<(), jacobian::Error>(())
/// ```
pub fn cost_report_with_runs<F: Function + Sync>(
    f: &F,
    x: &[f64],
    runs: usize,
) -> Result<CostReport, Error> {
    let runs = runs.max(1);
    let serial = |mode| Options {
        mode,
        threads: false,
    };
    let auto = jacobian_with_options(f, x, serial(Mode::Auto))?.plan;
    let cost = |mode: Direction| -> Result<(ModeCost, nalgebra::DMatrix<f64>), Error> {
        let j = jacobian_with_options(f, x, serial(mode.into()))?;
        let run = || jacobian_with_options(f, x, serial(mode.into())).map(drop);
        let time = median_time(runs, run)?;
        let estimate = match mode {
            Direction::Forward => j.plan.estimate.forward,
            Direction::Reverse => j.plan.estimate.reverse,
        };
        let cost = ModeCost {
            mode,
            sweeps: j.plan.sweeps,
            lanes: j.plan.lanes,
            tape: j.plan.tape,
            estimate,
            time,
            plan: j.plan,
        };
        Ok((cost, j.matrix))
    };
    let (forward, jf) = cost(Direction::Forward)?;
    let (reverse, jr) = cost(Direction::Reverse)?;
    let eval_time = median_time(runs, || {
        core::hint::black_box(f.eval(core::hint::black_box(x)));
        Ok(())
    })?;
    Ok(CostReport {
        n: x.len(),
        m: jf.nrows(),
        auto,
        forward,
        reverse,
        eval_time,
        runs,
        max_difference: (&jf - &jr).amax(),
    })
}

/// The median over `runs` samples of the time of one call of `run`. A sample repeats a fast
/// call until it lasts about half a millisecond, so the clock's resolution does not dominate.
pub(crate) fn median_time(
    runs: usize,
    mut run: impl FnMut() -> Result<(), Error>,
) -> Result<Duration, Error> {
    let start = Instant::now();
    run()?;
    let once = start.elapsed().max(Duration::from_nanos(10));
    let repeat = (Duration::from_micros(500).as_nanos() / once.as_nanos()).clamp(1, 100_000) as u32;
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        for _ in 0..repeat {
            run()?;
        }
        samples.push(start.elapsed() / repeat);
    }
    samples.sort();
    Ok(samples[samples.len() / 2])
}

impl fmt::Display for CostReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "cost of the {}×{} Jacobian of f: R^{} → R^{} (median of {} run{}, one thread)",
            self.m,
            self.n,
            self.n,
            self.m,
            self.runs,
            if self.runs == 1 { "" } else { "s" }
        )?;
        writeln!(
            f,
            "  {:<8} {:>6} {:>6} {:>9} {:>9} {:>11} {:>6} {:>11} {:>8} {:>8}",
            "mode",
            "sweeps",
            "lanes",
            "nodes",
            "edges",
            "tape bytes",
            "B/node",
            "time",
            "× f(x)",
            "model"
        )?;
        for c in [&self.forward, &self.reverse] {
            let name = if c.mode == Direction::Forward {
                "forward"
            } else {
                "reverse"
            };
            writeln!(
                f,
                "  {:<8} {:>6} {:>6} {:>9} {:>9} {:>11} {:>6.1} {:>11} {:>8.1} {:>8.1}",
                name,
                c.sweeps,
                c.lanes,
                c.tape.nodes,
                c.tape.edges + c.tape.unit_edges,
                c.tape.bytes,
                c.tape.bytes_per_node(),
                format!("{:.1?}", c.time),
                c.evaluations(self.eval_time),
                c.estimate
            )?;
        }
        writeln!(
            f,
            "  edges: operands (weighted 12 B, unit 4 B); × f(x): time in plain evaluations of f ({:.1?} each); model: the plan's estimate",
            self.eval_time
        )?;
        writeln!(f, "auto plan: {}", self.auto)?;
        let (fast, slow) = match self.faster() {
            Direction::Forward => (
                "forward",
                self.reverse.time.as_secs_f64() / self.forward.time.as_secs_f64().max(1e-12),
            ),
            Direction::Reverse => (
                "reverse",
                self.forward.time.as_secs_f64() / self.reverse.time.as_secs_f64().max(1e-12),
            ),
        };
        write!(
            f,
            "measured: {fast} mode is {slow:.1}× faster; the two matrices differ by at most {:.1e}",
            self.max_difference
        )
    }
}
