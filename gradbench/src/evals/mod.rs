//! The evals, one module each, and the two runs most of them share: the objective on `f64`, and
//! its gradient by a [`PreparedGradient`] (whose plan decides between re-evaluating a compiled
//! recording and recording afresh into its own buffers).

pub mod ba;
pub mod det;
pub mod gmm;
pub mod hello;
pub mod ht;
pub mod kmeans;
pub mod llsq;
pub mod lse;
pub mod lstm;
pub mod nested;
pub mod ode;
pub mod particle;
mod pose;
pub mod saddle;

use crate::Run;
use serde_json::Value;
use wengert::{Function, PreparedGradient};

/// How a run's numbers become the eval's JSON.
pub(crate) type Shape = fn(&[f64]) -> Value;

/// A number: the first (only) output.
pub(crate) fn scalar(v: &[f64]) -> Value {
    Value::from(v[0])
}

/// The objective on `f64`.
pub(crate) struct Primal<F> {
    pub f: F,
    pub x: Vec<f64>,
    pub y: Vec<f64>,
    pub shape: Shape,
}

impl<F: Function> Primal<F> {
    pub fn boxed(f: F, x: Vec<f64>, shape: Shape) -> Box<dyn Run>
    where
        F: 'static,
    {
        Box::new(Primal {
            f,
            x,
            y: Vec::new(),
            shape,
        })
    }
}

impl<F: Function> Run for Primal<F> {
    fn run(&mut self) -> Result<(), String> {
        self.y = self.f.eval(&self.x);
        Ok(())
    }
    fn output(&self) -> Value {
        (self.shape)(&self.y)
    }
}

/// The gradient of a scalar objective, prepared ahead of time.
pub(crate) struct Gradient<F> {
    pub p: PreparedGradient<F>,
    pub x: Vec<f64>,
    pub g: Vec<f64>,
    pub shape: Shape,
}

impl<F: Function + 'static> Gradient<F> {
    pub fn boxed(f: F, x: Vec<f64>, shape: Shape) -> Result<Box<dyn Run>, String> {
        let p = PreparedGradient::new(f, &x).map_err(|e| e.to_string())?;
        Ok(Box::new(Gradient {
            p,
            x,
            g: Vec::new(),
            shape,
        }))
    }
}

impl<F: Function> Run for Gradient<F> {
    fn run(&mut self) -> Result<(), String> {
        self.g = self.p.gradient(&self.x).map_err(|e| e.to_string())?.1;
        Ok(())
    }
    fn output(&self) -> Value {
        (self.shape)(&self.g)
    }
}
