//! Sparse Jacobians: why a few sweeps give a whole sparse matrix.
//!
//! A forward sweep gives one column of the Jacobian; but two columns that share no row can be
//! seeded in the *same* lane, since no output mixes them, and their entries read back apart.
//! Detection finds the pattern, colouring groups the columns, and the number of colours, not n,
//! sets the cost.
//!
//! 1. A 5×5 grid residual (a 5-point Laplacian and a cubic term): its 25×25 Jacobian drawn with
//!    the colour of each column. Greedy colouring finds 7 colours where 5 would do (i + 2j
//!    mod 5), so 1 sweep of 8 lanes instead of 2 sweeps of 16.
//! 2. The tridiagonal Fᵢ = xᵢ₋₁ − 2xᵢ + xᵢ₊₁ + sin xᵢ at n = 10 000 (500 under test): the four
//!    strategies timed.
//! 3. The Hessian of Rosenbrock: its star colouring, whose 3 Hessian-vector products recover
//!    every entry.
//!
//! Run: `cargo run --release --example sparse`

use jacobian::sparse::{sparse_cost_report, sparse_hessian, sparse_jacobian};
use jacobian::{Function, Op};

/// The residual of −Δu + u³ = 1 on a k×k grid with zero boundary values.
struct Grid {
    k: usize,
}

impl Function for Grid {
    fn eval<T: Op>(&self, u: &[T]) -> Vec<T> {
        let k = self.k;
        let at = |i: usize, j: usize| {
            if i < k && j < k {
                u[i * k + j]
            } else {
                T::zero()
            }
        };
        let mut r = Vec::with_capacity(k * k);
        for i in 0..k {
            for j in 0..k {
                let c = at(i, j);
                let laplacian = c * 4.0
                    - at(i.wrapping_sub(1), j)
                    - at(i + 1, j)
                    - at(i, j.wrapping_sub(1))
                    - at(i, j + 1);
                r.push(laplacian + c * c * c - T::one());
            }
        }
        r
    }
}

/// Fᵢ = xᵢ₋₁ − 2xᵢ + xᵢ₊₁ + sin xᵢ.
struct Tridiagonal;

impl Function for Tridiagonal {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let n = x.len();
        let at = |i: usize| if i < n { x[i] } else { T::zero() };
        (0..n)
            .map(|i| at(i.wrapping_sub(1)) - x[i] * 2.0 + at(i + 1) + x[i].sin())
            .collect()
    }
}

/// Σ (1 − xᵢ)² + 100 (xᵢ₊₁ − xᵢ²)².
struct Rosenbrock;

impl Function for Rosenbrock {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let term = |w: &[T]| {
            let (a, b) = (T::one() - w[0], w[1] - w[0] * w[0]);
            a * a + b * b * 100.0
        };
        vec![x.windows(2).map(term).sum()]
    }
}

fn main() -> Result<(), jacobian::Error> {
    println!(
        "1. The Jacobian of a 5×5 grid residual, each nonzero drawn with its column's colour:\n"
    );
    let grid = Grid { k: 5 };
    let j = sparse_jacobian(&grid, &[0.5; 25])?;
    println!("{}", j.spy());
    println!("{}\n", j.plan);

    // The test profile is unoptimised: under test, a smaller n through the same code.
    let n = if cfg!(test) { 500 } else { 10_000 };
    println!("2. The tridiagonal function at n = {n}, four strategies (one thread):\n");
    let x: Vec<f64> = (0..n).map(|i| (0.01 * i as f64).sin()).collect();
    let report = sparse_cost_report(&Tridiagonal, &x, 5)?;
    println!("{report}\n");

    println!("3. The Hessian of Rosenbrock at n = 12, drawn with its star colouring:\n");
    let h = sparse_hessian(&Rosenbrock, &[1.2; 12])?;
    println!("{}", h.spy());
    println!("{}", h.plan);
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn runs() {
        super::main().unwrap();
    }
}
