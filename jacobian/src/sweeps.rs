//! The sweeps themselves: chunked forward, and one recording replayed by reverse sweeps.

use forward::DualVec;
use nalgebra::DMatrix;
use reverse::{Adjoints, Tape, Var};
use shared_ops::{Error, Function};

type Swept = (Vec<f64>, DMatrix<f64>, usize);

/// Checks an output length against what `f` declares.
pub(crate) fn check_declared<F: Function>(f: &F, m: usize, during: &str) -> Result<(), Error> {
    match f.sizes() {
        Some((_, declared)) if declared != m => Err(Error::OutputLength {
            expected: declared,
            found: m,
            during: during.to_string(),
        }),
        _ => Ok(()),
    }
}

/// Tangents per forward sweep: the widest of 1, 2, 4, 8 that the input needs.
pub(crate) fn forward<F: Function>(f: &F, x: &[f64], m: Option<usize>) -> Result<Swept, Error> {
    match x.len() {
        1 => forward_chunked::<1, F>(f, x, m),
        2 => forward_chunked::<2, F>(f, x, m),
        3..=4 => forward_chunked::<4, F>(f, x, m),
        _ => forward_chunked::<8, F>(f, x, m),
    }
}

/// ⌈n/N⌉ forward sweeps, each seeding N inputs with unit tangents and filling N columns.
fn forward_chunked<const N: usize, F: Function>(
    f: &F,
    x: &[f64],
    m: Option<usize>,
) -> Result<Swept, Error> {
    let n = x.len();
    let mut xs: Vec<DualVec<f64, N>> = x.iter().map(|&v| DualVec::from(v)).collect();
    let mut value: Vec<f64> = Vec::new();
    let mut matrix = DMatrix::zeros(0, 0);
    let sweeps = n.div_ceil(N);
    for s in 0..sweeps {
        let cols = s * N..((s + 1) * N).min(n);
        for (l, j) in cols.clone().enumerate() {
            xs[j].tangent[l] = 1.0;
        }
        let ys = f.eval(&xs);
        for (l, j) in cols.clone().enumerate() {
            xs[j].tangent[l] = 0.0;
        }
        if s == 0 {
            let expected = m.unwrap_or(ys.len());
            if ys.len() != expected {
                return Err(Error::OutputLength {
                    expected,
                    found: ys.len(),
                    during: "forward sweep 1".into(),
                });
            }
            check_declared(f, ys.len(), "forward sweep 1")?;
            value = ys.iter().map(|y| y.primal).collect();
            matrix = DMatrix::zeros(ys.len(), n);
        } else if ys.len() != value.len() {
            return Err(Error::OutputLength {
                expected: value.len(),
                found: ys.len(),
                during: format!("forward sweep {}", s + 1),
            });
        }
        for (l, j) in cols.enumerate() {
            for (i, y) in ys.iter().enumerate() {
                matrix[(i, j)] = y.tangent[l];
            }
        }
    }
    Ok((value, matrix, sweeps))
}

/// Records `f` once; returns the tape, the inputs and the outputs.
fn record<F: Function>(
    f: &F,
    x: &[f64],
    m: Option<usize>,
) -> Result<(Tape, Vec<Var>, Vec<Var>), Error> {
    let tape = Tape::with_capacity(8 * x.len());
    let xs = tape.vars(x);
    let ys = f.eval(&xs);
    if let Some(expected) = m
        && ys.len() != expected
    {
        return Err(Error::OutputLength {
            expected,
            found: ys.len(),
            during: "the reverse recording".into(),
        });
    }
    check_declared(f, ys.len(), "the reverse recording")?;
    Ok((tape, xs, ys))
}

/// One recording, then one reverse sweep per output, each filling a row.
pub(crate) fn reverse<F: Function>(f: &F, x: &[f64], m: Option<usize>) -> Result<Swept, Error> {
    let (tape, xs, ys) = record(f, x, m)?;
    let mut matrix = DMatrix::zeros(ys.len(), x.len());
    let mut adj = Adjoints::default();
    for (i, &y) in ys.iter().enumerate() {
        tape.sweep_into(&[(y, 1.0)], &mut adj);
        for (j, &xj) in xs.iter().enumerate() {
            matrix[(i, j)] = adj.wrt(xj);
        }
    }
    Ok((ys.iter().map(|y| y.value()).collect(), matrix, ys.len()))
}

/// `wᵀJ` (or the gradient when `w` is `None` and m = 1) by one recording and one sweep.
pub(crate) fn vjp<F: Function>(
    f: &F,
    x: &[f64],
    w: Option<&[f64]>,
) -> Result<(Vec<f64>, Vec<f64>), Error> {
    let (tape, xs, ys) = record(f, x, None)?;
    let seeds: Vec<(Var, f64)> = match w {
        Some(w) if w.len() != ys.len() => {
            return Err(Error::SeedLength {
                seed: "adjoint",
                expected: ys.len(),
                found: w.len(),
            });
        }
        Some(w) => ys.iter().copied().zip(w.iter().copied()).collect(),
        None => ys.iter().map(|&y| (y, 1.0)).collect(),
    };
    let values = ys.iter().map(|y| y.value()).collect();
    Ok((values, tape.sweep(&seeds).wrt_all(&xs)))
}
