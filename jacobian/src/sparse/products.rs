//! The compressed products of a prepared sparse Hessian, by one of two routes: forward over
//! reverse on a tape recorded afresh at each call (the colours in sweeps of lanes), or one
//! Hessian-vector product per colour by a [`PreparedHvp`] (reverse over forward: the gradient
//! of `∇f·v`, recorded once and re-evaluated, or compiled to machine code).

use super::compressed::{self, Compressed, Seeds};
use crate::PreparedHvp;
use crate::plan::Compilation;
use crate::prepared::Preparation;
use crate::prepared::compilation::fastest;
use shared_ops::{Error, Function};

/// The route, holding `f`.
pub(super) enum Products<F> {
    /// Forward over reverse, `f` recorded afresh at each call.
    Afresh(F),
    /// One product per colour by the prepared products of `∇f·v`.
    Prepared(Box<PreparedHvp<F>>),
}

impl<F: Function> Products<F> {
    pub fn function(&self) -> &F {
        match self {
            Products::Afresh(f) => f,
            Products::Prepared(hvp) => hvp.function(),
        }
    }

    /// The route `preparation` asks for, for compressed products by `seeds` at `x`: which
    /// preparation runs (`Record` for forward over reverse), and for `Compile`, what compiling
    /// made, its calls timed against those of forward over reverse. Where the products cannot
    /// be compiled, forward over reverse runs (it is faster than products interpreted), and
    /// the compilation says why.
    pub fn prepare(
        f: F,
        x: &[f64],
        seeds: Seeds<'_>,
        preparation: Preparation,
        out: &mut Compressed,
    ) -> Result<(Self, Preparation, Option<Compilation>), Error> {
        if !matches!(preparation, Preparation::Reevaluate | Preparation::Compile) {
            return Ok((Products::Afresh(f), Preparation::Record, None));
        }
        let afresh = if preparation == Preparation::Compile {
            fastest(|| compressed::hessian(&f, x, seeds, out))?
        } else {
            0.0
        };
        let hvp = PreparedHvp::with_preparation(f, x, preparation)?;
        let plan = hvp.plan();
        let compiled = plan.compilation.as_ref().is_some_and(|c| c.code_bytes > 0);
        if preparation == Preparation::Reevaluate {
            return Ok((Products::Prepared(Box::new(hvp)), preparation, None));
        }
        let mut c = plan.compilation.clone().unwrap_or_else(|| Compilation {
            declined: Some(plan.reason.clone()),
            ..Compilation::default()
        });
        if !compiled {
            let why = c.declined.take().unwrap_or_default();
            c.declined = Some(format!("{why}; forward over reverse runs instead"));
            (c.interpreted_call, c.compiled_call) = (0.0, 0.0);
            let f = hvp.into_function();
            return Ok((Products::Afresh(f), Preparation::Record, Some(c)));
        }
        let mut p = Products::Prepared(Box::new(hvp));
        let products = fastest(|| p.run(x, seeds, out))?;
        c.interpreted_call = afresh;
        c.compiled_call = products;
        c.break_even_calls = (products < afresh).then(|| c.seconds / (afresh - products));
        c.declined = None;
        Ok((p, Preparation::Compile, Some(c)))
    }

    /// The compressed products at `x` (of the prepared length) into `out`: f, ∇f and the
    /// n × k matrix of `H·s_c`, `s_c` the indicator of colour c.
    pub fn run(&mut self, x: &[f64], seeds: Seeds<'_>, out: &mut Compressed) -> Result<(), Error> {
        let hvp = match self {
            Products::Afresh(f) => return compressed::hessian(f, x, seeds, out),
            Products::Prepared(hvp) => hvp,
        };
        let colours = &seeds.0.colours;
        // One colour (or none, for no input): the product along all-ones, as forward over
        // reverse takes it.
        let (n, k) = (x.len(), seeds.0.count.max(1));
        out.b.clear();
        out.b.resize(n * k, 0.0);
        let mut v = vec![0.0; n];
        for c in 0..k {
            for (v, &colour) in v.iter_mut().zip(colours) {
                *v = if colour == c { 1.0 } else { 0.0 };
            }
            let (product, gradient) = hvp.product(x, &v)?;
            for (row, p) in out.b.chunks_exact_mut(k).zip(product) {
                row[c] = p;
            }
            if c == 0 {
                out.gradient = gradient;
            }
        }
        let y = hvp.function().eval(x);
        if y.len() != 1 {
            return Err(Error::NotScalar { outputs: y.len() });
        }
        out.value = y;
        (out.k, out.sweeps, out.lanes) = (k, k, 1);
        Ok(())
    }
}
