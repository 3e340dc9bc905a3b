//! Sparse Jacobians: why a few sweeps give a whole sparse matrix.
//!
//! A forward sweep gives one column of the Jacobian; but two columns that share no row can be
//! seeded in the *same* lane, since no output mixes them, and their entries read back apart.
//! Detection finds the pattern, colouring groups the columns, and the number of colours, not n,
//! sets the cost.
//!
//! 1. A 5×5 grid residual (a 5-point Laplacian and a cubic term): its 25×25 Jacobian drawn with
//!    the colour of each column. Greedy colouring finds 7 colours where 5 would do (i + 2j
//!    mod 5), so 1 sweep of 8 lanes instead of 2 sweeps of 16. The same Jacobian is drawn as the
//!    picture `sparse_colouring.svg`, beside the compressed matrix the sweep computes (one
//!    column per colour): into `target/`, or with `-- --docs` the guide's copy in
//!    `docs/guide/img/`, which the test checks against what the code draws.
//! 2. The tridiagonal Fᵢ = xᵢ₋₁ − 2xᵢ + xᵢ₊₁ + sin xᵢ at n = 10 000 (500 under test): the four
//!    strategies timed.
//! 3. The Hessian of Rosenbrock: its star colouring, whose 3 Hessian-vector products recover
//!    every entry.
//!
//! Run: `cargo run --release --example sparse [-- --docs]`

use examples::picture::{self, Svg};
use jacobian::sparse::{
    SparseJacobian, Strategy, sparse_cost_report, sparse_hessian, sparse_jacobian,
};
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

/// One colour per colour class (Tableau 10, repeated past ten).
const PALETTE: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];

/// The picture of a Jacobian sparse by columns: the pattern with each nonzero in its column's
/// colour, and beside it the compressed matrix J·S that the forward sweep computes, S having one
/// column per colour (a 1 in row j of column c when column j has colour c). Each row's nonzeros
/// land in columns of different colours, so every entry is read back from J·S.
fn draw(j: &SparseJacobian) -> String {
    let (m, n) = (j.matrix.nrows(), j.matrix.ncols());
    let colours = j.colours.iter().max().map_or(0, |&c| c + 1);
    let colour = |c: usize| PALETTE[c % PALETTE.len()];
    let cell = 14.0;
    let (left, top) = (40.0, 92.0);
    let right = left + n as f64 * cell + 150.0;
    let width = right + colours as f64 * cell + 140.0;
    let height = top + m as f64 * cell + 96.0;
    let mut svg = Svg::new(width, height);
    let title = format!(
        "A {m}×{n} Jacobian, its columns in {colours} colours: {}",
        if j.plan.sweeps == 1 {
            format!("one forward sweep of {} lanes", j.plan.lanes)
        } else {
            format!("{} forward sweeps of {} lanes", j.plan.sweeps, j.plan.lanes)
        }
    );
    svg.text(width / 2.0, 30.0, 18.0, "middle", "#222", &title);

    // The two matrices' frames, their headers (each column's colour) and their names.
    for (x0, cols, name) in [(left, n, "J"), (right, colours, "J·S")] {
        svg.rect(
            x0,
            top,
            cols as f64 * cell,
            m as f64 * cell,
            "#f6f6f6",
            "#bbb",
        );
        for c in 0..cols {
            let k = if name == "J" { j.colours[c] } else { c };
            let x = x0 + c as f64 * cell;
            svg.rect(x + 1.0, top - 16.0, cell - 2.0, 10.0, colour(k), "none");
        }
        let label = format!("{name}: {m}×{cols}");
        svg.text(x0, top - 26.0, 14.0, "start", "#222", &label);
    }
    for (row, col, _) in j.matrix.triplet_iter() {
        let k = j.colours[col];
        let y = top + row as f64 * cell;
        svg.rect(
            left + col as f64 * cell + 1.0,
            y + 1.0,
            cell - 2.0,
            cell - 2.0,
            colour(k),
            "none",
        );
        svg.rect(
            right + k as f64 * cell + 1.0,
            y + 1.0,
            cell - 2.0,
            cell - 2.0,
            colour(k),
            "none",
        );
    }
    let mid = top + m as f64 * cell / 2.0;
    let (from, to) = (left + n as f64 * cell + 20.0, right - 20.0);
    svg.line((from, mid), (to, mid), "#555", 1.5, false, true);
    svg.text(
        (from + to) / 2.0,
        mid - 10.0,
        13.0,
        "middle",
        "#333",
        "one lane",
    );
    svg.text(
        (from + to) / 2.0,
        mid + 20.0,
        13.0,
        "middle",
        "#333",
        "per colour",
    );

    let notes = [
        format!(
            "J: {} nonzeros; columns of one colour share no row, so one lane seeds them all.",
            j.matrix.nnz()
        ),
        "J·S: the sweep's result; each row's entries lie in different colours, so each is read back."
            .to_string(),
    ];
    for (k, note) in notes.iter().enumerate() {
        let y = height - 50.0 + 20.0 * k as f64;
        svg.text(left, y, 13.0, "start", "#444", note);
    }
    svg.finish()
}

/// The grid residual's sparse Jacobian at u = 0.5 everywhere, which the picture draws: sparse
/// by columns, as the plan chooses.
///
/// # Panics
///
/// If the plan chose another strategy: the picture draws column colours.
fn grid_jacobian() -> Result<SparseJacobian, jacobian::Error> {
    let j = sparse_jacobian(&Grid { k: 5 }, &[0.5; 25])?;
    assert_eq!(
        j.plan.strategy,
        Strategy::Columns,
        "the picture draws column colours"
    );
    Ok(j)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    run(false)
}

fn run(under_test: bool) -> Result<(), Box<dyn std::error::Error>> {
    println!(
        "1. The Jacobian of a 5×5 grid residual, each nonzero drawn with its column's colour:\n"
    );
    let j = grid_jacobian()?;
    println!("{}", j.spy());
    println!("{}", j.plan);
    let path = picture::write("sparse_colouring.svg", &draw(&j), under_test)?;
    println!("picture: {}\n", path.display());

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
    use super::*;

    #[test]
    fn runs() {
        super::run(true).unwrap();
    }

    #[test]
    fn the_guide_shows_what_the_code_draws() {
        let j = grid_jacobian().unwrap();
        picture::check("sparse_colouring.svg", &draw(&j), "sparse");
    }
}
