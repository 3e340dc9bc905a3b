//! [`Compilation`]: what compiling a prepared object's recording made and what it repays, and
//! the calls that compile a recording for a Jacobian (feature `jit`).

use crate::sweeps::Recorded;
use core::fmt;

/// What compiling a prepared object's recording to machine code made (feature `jit`), and
/// what it repays: reported by [`PreparedPlan`](crate::PreparedPlan) and by the
/// [`Plan`](crate::Plan) of a [`PreparedJacobian`](crate::PreparedJacobian)'s calls.
///
/// ```
/// use jacobian::Compilation;
/// let c = Compilation {
///     code_bytes: 2048,
///     seconds: 0.01,
///     interpreted_call: 3e-4,
///     compiled_call: 1e-4,
///     break_even_calls: Some(50.0),
///     ..Compilation::default()
/// };
/// assert_eq!(
///     c.to_string(),
///     "2.0 KiB of machine code compiled in 10.0 ms; a call 0.300 ms interpreted, 0.100 ms \
///      compiled; compiling repaid after 50 calls"
/// );
/// let no = Compilation { declined: Some("the feature `jit` is off".into()), ..c.clone() };
/// assert!(no.to_string().ends_with("; the calls run interpreted: the feature `jit` is off"));
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Compilation {
    /// Bytes of machine code kept (0 where none is: dropped, or never made).
    pub code_bytes: usize,
    /// Seconds compiling took.
    pub seconds: f64,
    /// Seconds of one call interpreted, the fastest of three timed before compiling (0 where
    /// nothing was compiled).
    pub interpreted_call: f64,
    /// Seconds of one compiled call, timed likewise after.
    pub compiled_call: f64,
    /// The calls after which the compile time is repaid by the faster calls (`None` where the
    /// compiled calls are not faster).
    pub break_even_calls: Option<f64>,
    /// The calls made before compiling: 0 where the object compiled while it was prepared.
    pub after_calls: usize,
    /// Why the calls run interpreted, where they do: the compiler's error, or compiled calls
    /// that were not faster (whose code is dropped).
    pub declined: Option<String>,
}

impl fmt::Display for Compilation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.compiled_call > 0.0 {
            write!(
                f,
                "{:.1} KiB of machine code compiled in {:.1} ms",
                self.code_bytes as f64 / 1024.0,
                self.seconds * 1e3
            )?;
            if self.after_calls > 0 {
                write!(f, " after {} calls", self.after_calls)?;
            }
            write!(
                f,
                "; a call {:.3} ms interpreted, {:.3} ms compiled",
                self.interpreted_call * 1e3,
                self.compiled_call * 1e3
            )?;
            if let Some(n) = self.break_even_calls {
                write!(f, "; compiling repaid after {} calls", n.ceil())?;
            }
        } else {
            write!(f, "not compiled")?;
        }
        match &self.declined {
            Some(why) if self.compiled_call > 0.0 => {
                write!(f, "; the calls run interpreted: {why}")
            }
            Some(why) => write!(f, ": {why}"),
            None => Ok(()),
        }
    }
}

/// Compiles `r`'s recording for the reverse sweeps of `lanes` adjoints: its forward pass, its
/// scalar sweep and (for more than one lane) its vector sweep. Bytes of code and seconds, or
/// why it cannot be compiled.
pub(super) fn compile_for_lanes(r: &mut Recorded, lanes: usize) -> Result<(usize, f64), String> {
    #[cfg(feature = "jit")]
    {
        let whole = r.rec.compile().map_err(|e| e.to_string())?;
        let (mut bytes, mut seconds) = (whole.bytes, whole.time.as_secs_f64());
        if lanes > 1 {
            match r.rec.compile_lanes(lanes) {
                Ok(code) => {
                    bytes += code.bytes;
                    seconds += code.time.as_secs_f64();
                }
                Err(e) => {
                    r.rec.forget_code();
                    return Err(e.to_string());
                }
            }
        }
        Ok((bytes, seconds))
    }
    #[cfg(not(feature = "jit"))]
    {
        let _ = (r, lanes);
        Err(NO_JIT.to_string())
    }
}

/// Why nothing is compiled without the feature.
#[cfg(not(feature = "jit"))]
pub(super) const NO_JIT: &str = "the feature `jit` is off";

/// Drops the machine code of `r`'s recording, if it has any.
pub(super) fn forget_code(r: &mut Recorded) {
    #[cfg(feature = "jit")]
    r.rec.forget_code();
    #[cfg(not(feature = "jit"))]
    let _ = r;
}
