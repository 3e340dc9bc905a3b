//! Compiling a prepared object's recording (feature `jit`): for a Jacobian's sweeps, and
//! dropping the code. What it made is reported as a [`Compilation`](crate::Compilation).

use crate::plan::Compilation;
use crate::sweeps::Recorded;
use shared_ops::Error;
use std::time::Instant;

/// Compiles a prepared object `s`, timing `call` (the fastest of three) before and after:
/// `compile` makes the code (its bytes and seconds, or why not) and makes the calls run it;
/// with `only_if_faster`, `forget` drops it again where the compiled calls are not faster (and
/// may fail as a call does).
/// What it made, after `after_calls` calls of the object.
pub(super) fn compile_timed<S>(
    s: &mut S,
    mut call: impl FnMut(&mut S) -> Result<(), Error>,
    compile: impl FnOnce(&mut S) -> Result<(usize, f64), String>,
    forget: impl FnOnce(&mut S) -> Result<(), Error>,
    only_if_faster: bool,
    after_calls: usize,
) -> Result<Compilation, Error> {
    let interpreted = fastest(|| call(s))?;
    let (code_bytes, seconds) = match compile(s) {
        Ok(made) => made,
        Err(why) => {
            return Ok(Compilation {
                after_calls,
                declined: Some(why),
                ..Compilation::default()
            });
        }
    };
    let compiled = fastest(|| call(s))?;
    let mut c = Compilation {
        code_bytes,
        seconds,
        interpreted_call: interpreted,
        compiled_call: compiled,
        break_even_calls: (compiled < interpreted).then(|| seconds / (interpreted - compiled)),
        after_calls,
        declined: None,
    };
    if only_if_faster && compiled >= interpreted {
        forget(s)?;
        c.code_bytes = 0;
        c.declined = Some("compiled calls were not faster".into());
    }
    Ok(c)
}

/// The fastest of three calls of `call`, in seconds: what compiling is judged by.
pub(crate) fn fastest(mut call: impl FnMut() -> Result<(), Error>) -> Result<f64, Error> {
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let t = Instant::now();
        call()?;
        best = best.min(t.elapsed().as_secs_f64());
    }
    Ok(best)
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
