//! Which pair of modes computes a Hessian: a cost model in units of one plain evaluation of f.

use core::fmt;

/// The pair of modes that computes a Hessian: the outer mode differentiates the inner one's
/// derivative.
///
/// ```
/// use jacobian::Pair;
/// assert_eq!(Pair::ForwardOverReverse.to_string(), "forward over reverse");
/// assert_eq!(Pair::ALL.len(), 4);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pair {
    /// Tangents through a reverse sweep: per chunk of N columns, one recording on a tape of
    /// N-tangent duals and one sweep. The usual choice.
    ForwardOverReverse,
    /// A reverse sweep of a forward sweep: per chunk of N columns, the N-tangent forward sweep
    /// is recorded on a tape and swept back with N adjoints.
    ReverseOverForward,
    /// Duals of duals, no tape: one sweep per pair of chunks, ⌈n/N⌉(⌈n/N⌉+1)/2 in all.
    ForwardOverForward,
    /// One recording of a recording and its sweep, then ⌈n/N⌉ vector sweeps of it.
    ReverseOverReverse,
    /// Let the plan choose.
    Auto,
}

impl Pair {
    /// The four pairs that run (every one but `Auto`).
    pub const ALL: [Pair; 4] = [
        Pair::ForwardOverReverse,
        Pair::ReverseOverForward,
        Pair::ForwardOverForward,
        Pair::ReverseOverReverse,
    ];
}

impl fmt::Display for Pair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Pair::ForwardOverReverse => "forward over reverse",
            Pair::ReverseOverForward => "reverse over forward",
            Pair::ForwardOverForward => "forward over forward",
            Pair::ReverseOverReverse => "reverse over reverse",
            Pair::Auto => "auto",
        })
    }
}

/// The Hessian cost model's constants. A pair's cost depends on the shape of f's tape more
/// than on n: forward over reverse pays per edge for a dual-number partial, reverse over reverse
/// records about four operations of the inner sweep per weighted edge, and then sweeps them
/// ⌈n/N⌉ times. So the model counts the nodes, weighted edges and unit edges of f's recording
/// ([`reverse::TapeStats`]), which the plan reads from the first forward-over-reverse chunk.
///
/// The unit is a time on the machine the constants are fitted on (`cargo bench -p benches
/// --bench hessian`, Rosenbrock n = 16, 100 and `SinQuad` n = 64, one thread); only the ratios
/// between pairs matter for the choice.
pub mod hessian_cost {
    /// Forward over reverse, per chunk and node (a rule on N-tangent duals).
    pub const FOR_NODE: f64 = 3.45;
    /// Forward over reverse, per chunk and weighted edge (an N-tangent partial, stored and
    /// multiplied in the sweep).
    pub const FOR_EDGE: f64 = 9.45;
    /// Forward over reverse, per chunk and unit edge (an N-tangent addition).
    pub const FOR_UNIT: f64 = 2.8;
    /// Reverse over reverse: outer nodes recorded per inner node.
    pub const ROR_PER_NODE: f64 = 0.3;
    /// Reverse over reverse: outer nodes recorded per inner weighted edge (the inner sweep's
    /// product and sum, and the partial's own operations).
    pub const ROR_PER_EDGE: f64 = 3.9;
    /// Reverse over reverse: outer nodes recorded per inner unit edge.
    pub const ROR_PER_UNIT: f64 = 0.35;
    /// Reverse over reverse, per outer node and vector sweep of N adjoints.
    pub const ROR_SWEEP: f64 = 1.19;
    /// Reverse over reverse: the one recording, in vector sweeps.
    pub const ROR_RECORD: f64 = 13.5;
    /// Forward over forward, per sweep and node or edge (duals of N-tangent duals).
    pub const FOF: f64 = 25.0;
    /// Reverse over forward, per chunk and node or edge (every tangent operation recorded).
    pub const ROF: f64 = 100.0;
}

/// The estimated cost of each pair for an n×n Hessian of a function whose recording has the
/// shape `tape` (see [`hessian_cost`] for the unit).
///
/// ```
/// use jacobian::{Pair, estimate_hessian};
/// use reverse::TapeStats;
/// // A chain of cheap scalar operations: reverse over reverse wins for large n.
/// let chain = TapeStats { nodes: 800, edges: 500, unit_edges: 600, bytes: 0 };
/// assert_eq!(estimate_hessian(100, &chain).cheapest(), Pair::ReverseOverReverse);
/// // A few nodes with many edges (dot products): forward over reverse wins.
/// let dense = TapeStats { nodes: 260, edges: 4300, unit_edges: 64, bytes: 0 };
/// assert_eq!(estimate_hessian(64, &dense).cheapest(), Pair::ForwardOverReverse);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairEstimate {
    /// Per pair, in the order of [`Pair::ALL`].
    pub costs: [f64; 4],
}

impl PairEstimate {
    /// The estimate for one pair (`Auto`: the cheapest).
    pub fn cost(&self, pair: Pair) -> f64 {
        let pair = if pair == Pair::Auto {
            self.cheapest()
        } else {
            pair
        };
        self.costs[Pair::ALL.iter().position(|&p| p == pair).unwrap_or(0)]
    }

    /// The pair with the lowest estimate.
    pub fn cheapest(&self) -> Pair {
        let mut best = 0;
        for k in 1..4 {
            if self.costs[k] < self.costs[best] {
                best = k;
            }
        }
        Pair::ALL[best]
    }
}

/// The Hessian cost model (see [`hessian_cost`] for the constants and the unit).
pub fn estimate_hessian(n: usize, tape: &reverse::TapeStats) -> PairEstimate {
    use hessian_cost::*;
    let c = n.div_ceil(crate::lanes::chunk_lanes(n)) as f64;
    let (k, e, u) = (tape.nodes as f64, tape.edges as f64, tape.unit_edges as f64);
    let chunk = FOR_NODE * k + FOR_EDGE * e + FOR_UNIT * u;
    let outer = ROR_PER_NODE * k + ROR_PER_EDGE * e + ROR_PER_UNIT * u;
    PairEstimate {
        costs: [
            c * chunk,
            c * ROF * (k + e + u),
            c * (c + 1.0) / 2.0 * FOF * (k + e + u),
            (ROR_RECORD + c) * ROR_SWEEP * outer,
        ],
    }
}

/// What a Hessian computation did and why.
///
/// ```
/// use jacobian::{Function, Op, Pair};
/// struct F;
/// impl Function for F {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         vec![x.iter().map(|&v| v.sin()).sum()]
///     }
/// }
/// let h = jacobian::hessian_with(&F, &[0.5; 10], Pair::ReverseOverReverse)?;
/// assert_eq!(h.plan.pair, Pair::ReverseOverReverse);
/// assert_eq!((h.plan.sweeps, h.plan.lanes), (2, 8));
/// assert!(h.plan.to_string().starts_with("reverse over reverse: 2 sweeps of 8 adjoints"));
/// # Ok::<(), jacobian::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct HessianPlan {
    /// The pair that ran, never `Auto`.
    pub pair: Pair,
    /// Sweeps of the outer mode: recordings-and-sweeps (forward over reverse), recorded
    /// forward sweeps (reverse over forward), dual-of-dual evaluations (forward over forward),
    /// or vector sweeps of the one recording (reverse over reverse).
    pub sweeps: usize,
    /// Tangents or adjoints carried per sweep.
    pub lanes: usize,
    /// Inputs.
    pub n: usize,
    /// The largest recording, if the pair records one.
    pub tape: reverse::TapeStats,
    /// The cost model's estimate for every pair, when the plan chose (it reads the shape of
    /// f's tape from the first chunk); `None` when the pair was forced.
    pub estimate: Option<PairEstimate>,
    /// Why this pair, in words.
    pub reason: String,
}

impl HessianPlan {
    pub(crate) fn new(
        pair: Pair,
        n: usize,
        (sweeps, lanes): (usize, usize),
        tape: reverse::TapeStats,
        estimate: Option<PairEstimate>,
        reason: String,
    ) -> HessianPlan {
        HessianPlan {
            pair,
            sweeps,
            lanes,
            n,
            tape,
            estimate,
            reason,
        }
    }
}

impl fmt::Display for HessianPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unit = match self.pair {
            Pair::ReverseOverForward | Pair::ReverseOverReverse => "adjoint",
            _ => "tangent",
        };
        let s = if self.sweeps == 1 { "" } else { "s" };
        let l = if self.lanes == 1 { "" } else { "s" };
        write!(
            f,
            "{}: {} sweep{s} of {} {unit}{l} for a {n}×{n} Hessian",
            self.pair,
            self.sweeps,
            self.lanes,
            n = self.n
        )?;
        if self.tape.nodes > 0 {
            write!(f, ", {} nodes recorded", self.tape.nodes)?;
        }
        write!(f, " ({})", self.reason)
    }
}
