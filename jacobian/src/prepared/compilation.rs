//! Compiling a prepared object's recording (feature `jit`): for a Jacobian's sweeps, and
//! dropping the code. What it made is reported as a [`Compilation`](crate::Compilation).

use crate::sweeps::Recorded;

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
