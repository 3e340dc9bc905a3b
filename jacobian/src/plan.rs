//! The choice between n forward sweeps and m reverse sweeps.

use core::fmt;

/// Which sweeps compute a Jacobian.
///
/// ```
/// use jacobian::Mode;
/// assert_ne!(Mode::Forward, Mode::Reverse);
/// let m = Mode::Auto;
/// let copy = m; // Copy
/// assert_eq!(m, copy);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Tangent sweeps: one per input (N per chunk), each giving Jacobian columns.
    Forward,
    /// One recording, then adjoint sweeps: one per output, each giving a Jacobian row.
    Reverse,
    /// Let the plan choose.
    Auto,
}

/// What a Jacobian computation did and why.
///
/// ```
/// use jacobian::{Function, Op};
/// struct Wide;
/// impl Function for Wide {
///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
///         vec![x.iter().copied().sum()]
///     }
/// }
/// let j = jacobian::jacobian(&Wide, &[1.0; 10])?;
/// assert_eq!(j.plan.mode, jacobian::Mode::Reverse);
/// assert_eq!(j.plan.sweeps, 1);
/// assert!(j.plan.to_string().starts_with("reverse"));
/// # Ok::<(), jacobian::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The mode that ran: `Forward` or `Reverse`, never `Auto`.
    pub mode: Mode,
    /// Sweeps run: forward chunks, or reverse adjoint sweeps (after one recording).
    pub sweeps: usize,
    /// Inputs.
    pub n: usize,
    /// Outputs.
    pub m: usize,
    /// Why this mode, in words.
    pub reason: String,
}

impl Plan {
    /// The cheaper mode for an m×n Jacobian: forward when n ≤ m.
    pub(crate) fn choose(n: usize, m: usize) -> Mode {
        if n <= m { Mode::Forward } else { Mode::Reverse }
    }

    pub(crate) fn new(mode: Mode, n: usize, m: usize, sweeps: usize, forced: bool) -> Plan {
        let why = if forced {
            "mode forced by the caller".to_string()
        } else if mode == Mode::Forward {
            format!("n = {n} inputs ≤ m = {m} outputs: a forward sweep gives columns")
        } else {
            format!("m = {m} outputs < n = {n} inputs: a reverse sweep gives rows")
        };
        Plan {
            mode,
            sweeps,
            n,
            m,
            reason: why,
        }
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.mode {
            Mode::Forward => "forward mode",
            _ => "reverse mode",
        };
        let unit = match self.mode {
            Mode::Forward => "tangent sweep",
            _ => "adjoint sweep",
        };
        let s = if self.sweeps == 1 { "" } else { "s" };
        write!(
            f,
            "{what}: {} {unit}{s} for a {}×{} Jacobian ({})",
            self.sweeps, self.m, self.n, self.reason
        )
    }
}
