//! `kmeans`: the cost Σᵢ minⱼ ‖Pᵢ − Cⱼ‖² of the centroids C, and `dir`, the Newton direction
//! J·H⁻¹ of the cost's gradient J over its Hessian's diagonal H, by the second-order API: a
//! prepared sparse Hessian, whose pattern (found by following the nearest centroids) is the
//! diagonal, read in its diagonal-only form.

use super::{Primal, scalar};
use crate::{Run, json};
use serde_json::Value;
use wengert::sparse::{HessianDiagonal, PreparedSparseHessian};
use wengert::{Function, Op};

/// The points, row by row, with their dimension.
struct Kmeans {
    points: Vec<f64>,
    d: usize,
}

impl Function for Kmeans {
    fn eval<T: Op>(&self, c: &[T]) -> Vec<T> {
        let mut diff = vec![T::zero(); self.d];
        let cost: T = self
            .points
            .chunks(self.d)
            .map(|p| {
                let mut best: Option<T> = None;
                for cj in c.chunks(self.d) {
                    for ((e, &a), &b) in diff.iter_mut().zip(cj).zip(p) {
                        *e = a - b;
                    }
                    // One dot product: one node on a tape, not d products and a sum.
                    let e = T::dot(&diff, &diff);
                    // The first nearest wins a tie, as in the suite's reference.
                    if best.is_none_or(|b| e < b) {
                        best = Some(e);
                    }
                }
                best.unwrap_or_else(T::zero)
            })
            .sum();
        vec![cost]
    }
}

/// Prepares `cost` or `dir` of `{points, centroids}` (arrays of rows).
pub fn prepare(function: &str, input: &Value) -> Result<Box<dyn Run>, String> {
    let (n, d, points) = json::matrix(input, "points")?;
    let (k, dc, c) = json::matrix(input, "centroids")?;
    if n == 0 || k == 0 || dc != d {
        return Err(format!(
            "`kmeans` needs points and centroids of one dimension: {n} points of {d}, \
             {k} centroids of {dc}"
        ));
    }
    let f = Kmeans { points, d };
    match function {
        "cost" => Ok(Primal::boxed(f, c, scalar)),
        "dir" => {
            let p = PreparedSparseHessian::new(f, &c).map_err(|e| e.to_string())?;
            Ok(Box::new(Dir {
                p,
                c,
                d,
                h: HessianDiagonal::default(),
            }))
        }
        _ => Err(crate::run::unknown("kmeans", function, &["cost", "dir"])),
    }
}

struct Dir {
    p: PreparedSparseHessian<Kmeans>,
    c: Vec<f64>,
    d: usize,
    h: HessianDiagonal,
}

impl Run for Dir {
    fn run(&mut self) -> Result<(), String> {
        self.p
            .diagonal_into(&self.c, &mut self.h)
            .map_err(|e| e.to_string())
    }
    fn output(&self) -> Value {
        let dir: Vec<f64> = self
            .h
            .gradient
            .iter()
            .zip(&self.h.diagonal)
            .map(|(g, h)| g / h)
            .collect();
        json::rows(&dir, self.d)
    }
}
