//! The choice among dense and compressed sweeps for a sparse Jacobian, and the plan that says
//! why.

use super::colouring::{Colouring, Order, colour_columns_with};
use super::{Counts, Detection, Pattern};
use crate::Mode;
use crate::lanes::{chunk_lanes, lanes_for};
use crate::plan::{Compilation, Replay, cost, estimate};
use core::fmt;
use std::cell::OnceCell;

/// How a sparse Jacobian is computed.
///
/// ```
/// use jacobian::sparse::Strategy;
/// assert_eq!(Strategy::ALL.len(), 4);
/// assert_eq!(Strategy::Columns.to_string(), "sparse by columns");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// ⌈n/N⌉ forward sweeps of N unit tangents, as [`jacobian`](crate::jacobian).
    DenseForward,
    /// One recording and ⌈m/Q⌉ reverse sweeps of Q unit adjoints.
    DenseReverse,
    /// Forward sweeps with one lane per column colour (compressed columns).
    Columns,
    /// One recording and reverse sweeps with one adjoint per row colour (compressed rows).
    Rows,
}

impl Strategy {
    /// Every strategy, in the order the plan lists them.
    pub const ALL: [Strategy; 4] = [
        Strategy::DenseForward,
        Strategy::DenseReverse,
        Strategy::Columns,
        Strategy::Rows,
    ];

    /// Sweeps and lanes for an m×n Jacobian with the given colour counts.
    pub(crate) fn sweeps(self, n: usize, m: usize, colours: (usize, usize)) -> (usize, usize) {
        let (per, lanes) = match self {
            Strategy::DenseForward => (n, lanes_for(n)),
            Strategy::DenseReverse => (m, crate::sweeps::reverse_lanes(m)),
            Strategy::Columns => (colours.0, lanes_for(colours.0)),
            Strategy::Rows => (colours.1, chunk_lanes(colours.1)),
        };
        (per.div_ceil(lanes).max(1), lanes)
    }

    /// The cost model's estimate, in plain evaluations of `f` (see [`cost`](crate::cost)).
    pub(crate) fn estimate(self, n: usize, m: usize, colours: (usize, usize)) -> f64 {
        let (sweeps, lanes) = self.sweeps(n, m, colours);
        let lanes = lanes as f64;
        match self {
            Strategy::DenseForward => estimate(n, m).forward,
            Strategy::DenseReverse => estimate(n, m).reverse,
            Strategy::Columns => sweeps as f64 * (cost::FWD_BASE + cost::FWD_LANE * lanes),
            Strategy::Rows => {
                cost::REC + sweeps as f64 * (cost::SWEEP_BASE + cost::SWEEP_LANE * lanes)
            }
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Strategy::DenseForward => "dense forward",
            Strategy::DenseReverse => "dense reverse",
            Strategy::Columns => "sparse by columns",
            Strategy::Rows => "sparse by rows",
        })
    }
}

/// What a sparse Jacobian computation did and why: the detection, the colourings, the strategy
/// and the sweeps it saved.
///
/// ```
/// use jacobian::{Function, Op};
/// use jacobian::sparse::{Detection, Strategy, sparse_jacobian};
/// struct Diagonal;
/// impl Function for Diagonal {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         x.iter().map(|v| v.sin()).collect()
///     }
/// }
/// let j = sparse_jacobian(&Diagonal, &[0.5; 1000])?;
/// let p = &j.plan;
/// assert_eq!((p.strategy, p.detection, p.column_colours, p.sweeps), (Strategy::Columns, Detection::Global, Some(1), 1));
/// assert!(p.to_string().starts_with("sparse by columns: 1 colour for 1 000 columns: 1 sweep of 1 lane instead of 63 sweeps of 16"));
/// # Ok::<(), jacobian::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct SparsePlan {
    /// The strategy that ran.
    pub strategy: Strategy,
    /// The detection that ran: `Global` or `Local`, never `Auto`.
    pub detection: Detection,
    /// Why global detection was given up for local (the branch it met), under `Auto`.
    pub fallback: Option<String>,
    /// Inputs.
    pub n: usize,
    /// Outputs.
    pub m: usize,
    /// Structural nonzeros of the pattern.
    pub nnz: usize,
    /// Colours of the column colouring; `None` if the columns were not coloured (forced rows,
    /// or rows so much cheaper that even [`column_bound`](Self::column_bound) colours could
    /// not compete).
    pub column_colours: Option<usize>,
    /// No column colouring has fewer colours: the longest row.
    pub column_bound: usize,
    /// Colours of the row colouring, or `None` (as for columns).
    pub row_colours: Option<usize>,
    /// No row colouring has fewer colours: the longest column.
    pub row_bound: usize,
    /// Sweeps run (after the recording, for `Rows` and `DenseReverse`).
    pub sweeps: usize,
    /// Tangents or adjoints per sweep.
    pub lanes: usize,
    /// The threads the sweeps ran on (1: the calling thread; see
    /// [`SparseOptions::threads`](crate::sparse::SparseOptions::threads)).
    pub threads: usize,
    /// The cost model's estimate of each strategy, in plain evaluations of `f`, in the order
    /// of [`Strategy::ALL`].
    pub estimates: [f64; 4],
    /// Why this strategy, in words.
    pub reason: String,
    /// For a prepared Jacobian: why the pattern was detected again at this call, if it was.
    pub redetected: Option<String>,
    /// How the sweeps obtained their recording: `NotRecorded` for sweeps by columns; for a
    /// prepared Jacobian by rows, re-evaluated or recorded afresh at this point (see
    /// [`PreparedSparseJacobian::with_preparation`](crate::sparse::PreparedSparseJacobian::with_preparation)).
    pub replay: Replay,
    /// What compiling the recording of sweeps by rows made (feature `jit`), once a prepared
    /// Jacobian tried.
    pub compiled: Option<Compilation>,
}

impl SparsePlan {
    /// The estimate of one strategy.
    pub fn estimate(&self, s: Strategy) -> f64 {
        self.estimates[Strategy::ALL
            .iter()
            .position(|&t| t == s)
            .expect("a strategy")]
    }
}

/// "1 sweep", "3 sweeps".
pub(crate) fn count(k: usize, what: &str) -> String {
    let k_str = thousands(k);
    if k == 1 {
        format!("{k_str} {what}")
    } else {
        format!("{k_str} {what}s")
    }
}

/// 10000 as "10 000" (a thin space would not survive every terminal).
pub(crate) fn thousands(k: usize) -> String {
    let s = k.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(ch);
    }
    out
}

impl fmt::Display for SparsePlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (colours, of, dense, unit) = match self.strategy {
            Strategy::Columns | Strategy::DenseForward => {
                (self.column_colours, count(self.n, "column"), self.n, "lane")
            }
            Strategy::Rows | Strategy::DenseReverse => {
                (self.row_colours, count(self.m, "row"), self.m, "adjoint")
            }
        };
        let dense_lanes = match self.strategy {
            Strategy::Columns | Strategy::DenseForward => lanes_for(dense),
            _ => crate::sweeps::reverse_lanes(dense),
        };
        write!(
            f,
            "{}: {} for {of}: {} of {} instead of {} of {dense_lanes}",
            self.strategy,
            match colours {
                Some(k) => count(k, "colour"),
                None => "no colouring".into(),
            },
            count(self.sweeps, "sweep"),
            count(self.lanes, unit),
            count(dense.div_ceil(dense_lanes).max(1), "sweep"),
        )?;
        write!(
            f,
            " ({} detection, {} nonzeros in {}×{}; {})",
            match self.detection {
                Detection::Local => "local",
                _ => "global",
            },
            thousands(self.nnz),
            self.m,
            self.n,
            self.reason
        )?;
        if self.threads > 1 {
            write!(f, ", on {} threads", self.threads)?;
        }
        if let Some(why) = &self.fallback {
            write!(f, "; global detection gave up at {why}")?;
        }
        if let Some(why) = &self.redetected {
            write!(f, "; pattern detected again: {why}")?;
        }
        if let Replay::Rerecorded(why) = &self.replay {
            write!(f, "; recorded afresh: {why}")?;
        }
        if let Some(c) = &self.compiled {
            write!(f, "; {c}")?;
        }
        Ok(())
    }
}

/// A detected pattern, coloured and planned: the plan, the colourings it made, and the
/// pattern's transpose if a colouring needed it.
pub(super) struct Planned {
    pub plan: SparsePlan,
    pub columns: Option<Colouring>,
    pub rows: Option<Colouring>,
    pub transpose: OnceCell<Pattern>,
}

/// Colours the pattern `p` that `detection` found (`counts`, if the detection took them) and
/// chooses the strategy: by columns for `Forward`, by rows for `Reverse`, the cheapest of four
/// for `Auto`.
///
/// Under `Auto` the side with the smaller lower bound is coloured first, and the other only
/// if its lower bound leaves it a chance: colouring rows that share long columns (the camera
/// columns of bundle adjustment) costs far more than the sweeps it could save.
pub(super) fn colour_and_plan(
    p: &Pattern,
    counts: Option<Counts>,
    mode: Mode,
    order: Order,
    detection: Detection,
    fallback: Option<String>,
) -> Planned {
    let (n, m) = (p.cols(), p.rows());
    // The transpose only if a colouring needs it (the natural order's columns do not).
    let transpose = OnceCell::new();
    let t = || transpose.get_or_init(|| p.transpose());
    // The counts give both bounds, and start the columns' colouring (the tracer took them
    // as it wrote the pattern).
    let counts = counts.unwrap_or_else(|| p.counts());
    let bounds = (counts.longest_row, counts.longest_column());
    let mut counts = Some(counts);
    let mut colour_columns = || colour_columns_with(p, transpose.get(), t, order, counts.take());
    let colour_rows = || colour_columns_with(t(), Some(p), || p, order, None);
    let (mut columns, mut rows) = (None, None);
    match mode {
        Mode::Forward => columns = Some(colour_columns()),
        Mode::Reverse => rows = Some(colour_rows()),
        Mode::Auto => {
            let first_columns = bounds.0 <= bounds.1;
            let first = if first_columns {
                colour_columns()
            } else {
                colour_rows()
            };
            // The other side at its lower bound, against the first at its colours.
            let (mine, other, counts) = if first_columns {
                (Strategy::Columns, Strategy::Rows, (first.count, bounds.1))
            } else {
                (Strategy::Rows, Strategy::Columns, (bounds.0, first.count))
            };
            let hope = other.estimate(n, m, counts) < mine.estimate(n, m, counts);
            if first_columns {
                rows = hope.then(colour_rows);
                columns = Some(first);
            } else {
                columns = hope.then(colour_columns);
                rows = Some(first);
            }
        }
    }
    let count = |c: &Option<Colouring>| c.as_ref().map(|c| c.count);
    let (column_colours, row_colours) = (count(&columns), count(&rows));
    let counts = (
        column_colours.unwrap_or(bounds.0),
        row_colours.unwrap_or(bounds.1),
    );
    let (strategy, estimates, reason) = match mode {
        Mode::Forward => (
            Strategy::Columns,
            [0.0; 4],
            "mode forced by the caller".into(),
        ),
        Mode::Reverse => (Strategy::Rows, [0.0; 4], "mode forced by the caller".into()),
        Mode::Auto => choose(n, m, p.nnz(), counts, (column_colours, row_colours)),
    };
    let estimates = if mode == Mode::Auto {
        estimates
    } else {
        Strategy::ALL.map(|s| s.estimate(n, m, counts))
    };
    let (sweeps, lanes) = strategy.sweeps(n, m, counts);
    let plan = SparsePlan {
        strategy,
        detection,
        fallback,
        n,
        m,
        nnz: p.nnz(),
        column_colours,
        column_bound: bounds.0,
        row_colours,
        row_bound: bounds.1,
        sweeps,
        lanes,
        threads: 1,
        estimates,
        reason,
        redetected: None,
        replay: Replay::NotRecorded,
        compiled: None,
    };
    Planned {
        plan,
        columns,
        rows,
        transpose,
    }
}

/// The cheapest strategy by the cost model, and the reason in words; a tie goes to the sparse
/// strategies unless the pattern is full.
/// `coloured` says which sides were coloured; an uncoloured side is estimated at its lower bound
/// (its count in `colours`), and the reason says so.
pub(crate) fn choose(
    n: usize,
    m: usize,
    nnz: usize,
    colours: (usize, usize),
    coloured: (Option<usize>, Option<usize>),
) -> (Strategy, [f64; 4], String) {
    let estimates = Strategy::ALL.map(|s| s.estimate(n, m, colours));
    let full = nnz == n * m;
    let rank = |i: usize| {
        let dense = i < 2;
        (estimates[i], dense != full)
    };
    let best = (0..4)
        .min_by(|&a, &b| rank(a).partial_cmp(&rank(b)).expect("finite estimates"))
        .expect("four strategies");
    let others: Vec<String> = (0..4)
        .filter(|&i| i != best)
        .map(|i| format!("{:.1} for {}", estimates[i], Strategy::ALL[i]))
        .collect();
    let mut reason = format!(
        "estimated {:.1} evaluations of f against {}",
        estimates[best],
        others.join(", ")
    );
    for (side, done, bound) in [
        ("columns", coloured.0, colours.0),
        ("rows", coloured.1, colours.1),
    ] {
        if done.is_none() {
            reason += &format!(
                "; {side} not coloured: even their lower bound of {} colours could not compete",
                thousands(bound)
            );
        }
    }
    (Strategy::ALL[best], estimates, reason)
}
