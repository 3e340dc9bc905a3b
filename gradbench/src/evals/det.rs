//! `det`: the determinant of an ℓ×ℓ matrix by expansion along the first row of each minor
//! (ℓ! products, as GradBench asks); `gradient` (the cofactors, row by row) by a prepared
//! reverse-mode gradient.

use super::{Gradient, Primal, scalar};
use crate::{Run, json};
use serde_json::Value;
use wengert::{Function, Op};

struct Det {
    ell: usize,
}

/// The determinant of the minor of `a` (ℓ×ℓ, row by row) on rows `row..ℓ` and the columns not
/// in `used`: expanded along its first row, signs alternating over the columns left.
fn minor<T: Op>(a: &[T], ell: usize, row: usize, used: &mut [bool]) -> T {
    if row == ell {
        return T::one();
    }
    let mut det = T::zero();
    let mut positive = true;
    for j in 0..ell {
        if used[j] {
            continue;
        }
        used[j] = true;
        let term = a[row * ell + j] * minor(a, ell, row + 1, used);
        used[j] = false;
        det = if positive { det + term } else { det - term };
        positive = !positive;
    }
    det
}

impl Function for Det {
    fn eval<T: Op>(&self, a: &[T]) -> Vec<T> {
        vec![minor(a, self.ell, 0, &mut vec![false; self.ell])]
    }
}

/// Prepares `primal` or `gradient` of `{A, ell}` (A row by row).
pub fn prepare(function: &str, input: &Value) -> Result<Box<dyn Run>, String> {
    let a = json::vector(input, "A")?;
    let ell = json::count(input, "ell")?;
    json::expect_len("A", a.len(), ell * ell)?;
    if ell == 0 {
        return Err("`ell` is 0: the matrix is empty".into());
    }
    let f = Det { ell };
    match function {
        "primal" => Ok(Primal::boxed(f, a, scalar)),
        "gradient" => Gradient::boxed(f, a, json::array),
        _ => Err(crate::run::unknown(
            "det",
            function,
            &["primal", "gradient"],
        )),
    }
}
