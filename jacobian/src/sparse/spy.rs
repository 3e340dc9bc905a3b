//! Spy plots: a sparsity pattern drawn in text, each nonzero shown by the colour that computed
//! it, so that one can see why a few lanes give the whole matrix.

use super::plan::thousands;
use super::{Pattern, SparseHessian, SparseJacobian, Strategy};
use nalgebra_sparse::CsrMatrix;

/// The widest plot, in characters (taller or wider matrices are drawn in blocks).
const WIDTH: usize = 64;
/// The tallest plot, in lines.
const HEIGHT: usize = 32;

/// The letter of colour `c`: `a`…`z`, then `A`…`Z`, then `+` for any later colour.
fn letter(c: usize) -> char {
    match c {
        0..=25 => (b'a' + c as u8) as char,
        26..=51 => (b'A' + (c - 26) as u8) as char,
        _ => '+',
    }
}

/// Draws an m×n pattern: `colour(i, j)` is the colour of nonzero (i, j), if any. A character
/// stands for a block of rows and columns: `.` if it holds no nonzero, its colour's letter if
/// all its nonzeros share a colour, `#` if they do not.
fn draw(
    rows: usize,
    cols: usize,
    nonzeros: impl Iterator<Item = (usize, usize, Option<usize>)>,
) -> String {
    let (h, w) = (rows.clamp(1, HEIGHT), cols.clamp(1, WIDTH));
    let (bh, bw) = (rows.div_ceil(h).max(1), cols.div_ceil(w).max(1));
    let (h, w) = (rows.div_ceil(bh).max(1), cols.div_ceil(bw).max(1));
    // None: empty; Some(Some(c)): one colour; Some(None): several (or uncoloured).
    let mut cells: Vec<Option<Option<usize>>> = vec![None; h * w];
    for (i, j, c) in nonzeros {
        let cell = &mut cells[(i / bh) * w + j / bw];
        *cell = match *cell {
            None => Some(c),
            Some(old) if old == c => Some(c),
            Some(_) => Some(None),
        };
    }
    let mut out = String::new();
    if bh > 1 || bw > 1 {
        out.push_str(&format!("(each character: {bh}×{bw} entries)\n"));
    }
    for r in 0..h {
        out.extend(cells[r * w..(r + 1) * w].iter().map(|c| match c {
            None => '.',
            Some(Some(c)) => letter(*c),
            Some(None) => '#',
        }));
        out.push('\n');
    }
    out
}

fn header(m: &CsrMatrix<f64>, colours: usize, what: &str) -> String {
    let noun = if colours == 1 { "colour" } else { "colours" };
    format!(
        "{}×{}, {} nonzeros, {colours} {noun} ({what})\n",
        thousands(m.nrows()),
        thousands(m.ncols()),
        thousands(m.nnz()),
    )
}

impl SparseJacobian {
    /// The pattern as a text plot, each nonzero drawn with the letter of the colour of its
    /// column (sparse by columns) or row (sparse by rows): entries of one letter in one row
    /// (or column) never meet, which is why one lane per letter gives them all.
    ///
    /// ```
    /// use jacobian::{Function, Op};
    /// struct F;
    /// impl Function for F {
    ///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
    ///         (0..x.len()).map(|i| x[i] * x[(i + 1) % x.len()]).collect()
    ///     }
    /// }
    /// let j = jacobian::sparse::sparse_jacobian(&F, &[1.0; 4])?;
    /// let spy = j.spy();
    /// assert!(spy.starts_with("4×4, 8 nonzeros, 2 colours (one forward lane per letter)"));
    /// assert!(spy.ends_with("ab..\n.ba.\n..ab\na..b\n"), "{spy}");
    /// # Ok::<(), jacobian::Error>(())
    /// ```
    pub fn spy(&self) -> String {
        let (by_columns, what) = match self.plan.strategy {
            Strategy::Columns => (true, "one forward lane per letter"),
            Strategy::Rows => (false, "one reverse adjoint per letter"),
            _ => (true, "dense sweeps, no colours"),
        };
        let c = &self.colours;
        let count = c.iter().max().map_or(0, |&k| k + 1);
        let colour = |i: usize, j: usize| match (c.is_empty(), by_columns) {
            (true, _) => None,
            (false, true) => Some(c[j]),
            (false, false) => Some(c[i]),
        };
        let m = &self.matrix;
        header(m, count, what)
            + &draw(
                m.nrows(),
                m.ncols(),
                m.triplet_iter().map(|(i, j, _)| (i, j, colour(i, j))),
            )
    }
}

impl SparseHessian {
    /// The pattern as a text plot, each nonzero drawn with its column's star colour (see
    /// [`SparseJacobian::spy`]).
    ///
    /// ```
    /// use jacobian::{Function, Op};
    /// struct F;
    /// impl Function for F {
    ///     fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
    ///         vec![x[0] * x[1] + x[1] * x[2]]
    ///     }
    /// }
    /// let h = jacobian::sparse::sparse_hessian(&F, &[1.0; 3])?;
    /// assert!(h.spy().ends_with(".b.\na.a\n.b.\n"), "{}", h.spy());
    /// # Ok::<(), jacobian::Error>(())
    /// ```
    pub fn spy(&self) -> String {
        let c = &self.colours;
        let count = c.iter().max().map_or(0, |&k| k + 1);
        let m = &self.matrix;
        header(m, count, "one Hessian-vector product lane per letter")
            + &draw(
                m.nrows(),
                m.ncols(),
                m.triplet_iter().map(|(i, j, _)| (i, j, c.get(j).copied())),
            )
    }
}

impl Pattern {
    /// The pattern as a text plot (`*` for a nonzero), as [`SparseJacobian::spy`] draws it.
    ///
    /// ```
    /// let p = jacobian::sparse::Pattern::from_rows(3, &[vec![0, 1], vec![2]])?;
    /// assert_eq!(p.spy(), "**.\n..*\n");
    /// # Ok::<(), jacobian::Error>(())
    /// ```
    pub fn spy(&self) -> String {
        let plot = draw(
            self.rows(),
            self.cols(),
            (0..self.rows()).flat_map(|i| self.row(i).iter().map(move |&j| (i, j, None))),
        );
        plot.replace('#', "*")
    }
}
