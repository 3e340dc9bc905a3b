//! What a sparse Hessian computation does and why: [`SparseHessianPlan`], and the choice it
//! reports (detection, star colouring, compressed against dense).

use super::detect::detect_hessian;
use super::plan::{count, thousands};
use super::{Colouring, Detection, Pattern, SparseOptions, colour_star};
use crate::lanes::tape_lanes;
use crate::plan::{Compilation, cost};
use crate::{Mode, Preparation};
use core::fmt;
use shared_ops::{Error, Function};

/// What a sparse Hessian computation did and why.
///
/// ```
/// use jacobian::{Function, Op};
/// struct Separable;
/// impl Function for Separable {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         vec![x.iter().map(|v| v.exp()).sum()]
///     }
/// }
/// let h = jacobian::sparse::sparse_hessian(&Separable, &[0.0; 100])?;
/// assert!(h.plan.compressed);
/// assert_eq!((h.plan.colours, h.plan.sweeps), (1, 1));
/// assert!(h.plan.to_string().starts_with("star colouring: 1 colour for 100 columns: 1 sweep of 1 lane instead of 13 sweeps of 8"));
/// # Ok::<(), jacobian::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct SparseHessianPlan {
    /// Compressed Hessian-vector products ran (else the dense [`hessian`](crate::hessian)).
    pub compressed: bool,
    /// The detection that ran: `Global` or `Local`.
    pub detection: Detection,
    /// Why global detection was given up, under `Auto`.
    pub fallback: Option<String>,
    /// Inputs.
    pub n: usize,
    /// Structural nonzeros (both triangles).
    pub nnz: usize,
    /// Star colours.
    pub colours: usize,
    /// No colouring has fewer: the longest row.
    pub bound: usize,
    /// Sweeps run: forward over reverse, or (prepared products) one per colour.
    pub sweeps: usize,
    /// Tangents per sweep.
    pub lanes: usize,
    /// Why, in words.
    pub reason: String,
    /// How the compressed products run ([`PreparedSparseHessian::with_preparation`](super::PreparedSparseHessian::with_preparation)):
    /// `Record`, forward over reverse on `f` recorded afresh at each call; `Reevaluate` or
    /// `Compile`, one Hessian-vector product per colour by the gradient of `∇f·v` (reverse over
    /// forward), re-evaluated or compiled to machine code.
    pub preparation: Preparation,
    /// What compiling made, where it was asked for: its code, and a call of the compiled
    /// products against one of forward over reverse (`interpreted_call`), timed while
    /// preparing; or why nothing was compiled.
    pub compiled: Option<Compilation>,
}

impl fmt::Display for SparseHessianPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dense = self.n.div_ceil(8).max(1);
        write!(
            f,
            "{}: {} for {}: {} of {} instead of {} of 8 ({} detection, {} nonzeros in {}×{}; {})",
            if self.compressed {
                "star colouring"
            } else {
                "dense"
            },
            count(self.colours, "colour"),
            count(self.n, "column"),
            count(self.sweeps, "sweep"),
            count(self.lanes, "lane"),
            count(dense, "sweep"),
            match self.detection {
                Detection::Local => "local",
                _ => "global",
            },
            thousands(self.nnz),
            self.n,
            self.n,
            self.reason,
        )?;
        if let Some(why) = &self.fallback {
            write!(f, "; global detection gave up at {why}")?;
        }
        match self.preparation {
            Preparation::Compile => write!(f, "; one compiled product per colour")?,
            Preparation::Reevaluate => write!(f, "; one re-evaluated product per colour")?,
            _ => {}
        }
        match &self.compiled {
            Some(c) => write!(f, "; {c}"),
            None => Ok(()),
        }
    }
}

/// Detection, star colouring and the choice between compressed and dense.
pub(super) fn plan<F: Function>(
    f: &F,
    x: &[f64],
    options: SparseOptions,
) -> Result<(Pattern, Colouring, SparseHessianPlan), Error> {
    let d = detect_hessian(f, x, options.detection)?;
    let p = d.pattern;
    let n = p.cols();
    let full = p.nnz() == n * n;
    // A full pattern needs n colours, one per column: the dense Hessian, without colouring.
    if full && options.mode == Mode::Auto {
        let colouring = Colouring::distinct(n, options.order);
        let plan = SparseHessianPlan {
            compressed: false,
            detection: d.ran,
            fallback: d.fallback,
            n,
            nnz: p.nnz(),
            colours: n,
            bound: n,
            sweeps: n.div_ceil(8).max(1),
            lanes: 8,
            reason: "the pattern is full (every pair of inputs coupled): the dense Hessian, \
                     forward over reverse, without colouring"
                .into(),
            preparation: Preparation::Record,
            compiled: None,
        };
        return Ok((p, colouring, plan));
    }
    let colouring = colour_star(&p, options.order)?;
    let k = colouring.count;
    let lanes = tape_lanes(k);
    let sweeps = k.div_ceil(lanes).max(1);
    // Both run one forward-over-reverse sweep per chunk: compare sweeps × (base + lanes).
    let per = |sweeps: usize, lanes: usize| {
        sweeps as f64 * (cost::FWD_BASE + cost::FWD_LANE * lanes as f64)
    };
    let (sparse, dense) = (per(sweeps, lanes), per(n.div_ceil(8).max(1), 8));
    let compressed = match options.mode {
        Mode::Auto => sparse < dense || (sparse == dense && !full),
        _ => true,
    };
    let reason = match options.mode {
        Mode::Auto => format!(
            "estimated {sparse:.1} sweep costs compressed against {dense:.1} dense, forward over reverse"
        ),
        _ => "compressed products forced by the caller".to_string(),
    };
    let (sweeps, lanes) = if compressed {
        (sweeps, lanes)
    } else {
        (n.div_ceil(8).max(1), 8)
    };
    let plan = SparseHessianPlan {
        compressed,
        detection: d.ran,
        fallback: d.fallback,
        n,
        nnz: p.nnz(),
        colours: k,
        bound: colouring.lower_bound,
        sweeps,
        lanes,
        reason,
        preparation: Preparation::Record,
        compiled: None,
    };
    Ok((p, colouring, plan))
}
