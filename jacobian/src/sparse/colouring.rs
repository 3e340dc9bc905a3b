//! Greedy distance-2 colouring of a pattern's columns (or rows): columns of one colour share no
//! row, so one forward lane (or one reverse adjoint for rows) computes all of them at once.

use super::{Counts, Pattern};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The order in which the greedy colouring visits the columns. Greedy colouring is optimal for
/// some order; these are the usual heuristics for finding a good one.
///
/// ```
/// use jacobian::sparse::Order;
/// assert_eq!(Order::ALL.len(), 3);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Order {
    /// Columns as numbered.
    Natural,
    /// Most neighbours first (columns sharing a row with many others).
    LargestFirst,
    /// Repeatedly set aside a column of fewest remaining neighbours; colour in the reverse of
    /// that order (usually the fewest colours of the three).
    SmallestLast,
}

impl Order {
    /// Every order, for comparing them.
    pub const ALL: [Order; 3] = [Order::Natural, Order::LargestFirst, Order::SmallestLast];
}

/// A colouring of a pattern's columns (or rows): a colour per column, their number, and the lower
/// bound no colouring can go below (the largest row count for columns).
///
/// ```
/// use jacobian::sparse::{Order, Pattern, colour_columns};
/// // Columns 0 and 2 share no row: one colour.
/// let p = Pattern::from_rows(3, &[vec![0, 1], vec![1, 2]])?;
/// let c = colour_columns(&p, Order::Natural);
/// assert_eq!(c.colours, vec![0, 1, 0]);
/// assert_eq!(c.groups(), vec![vec![0, 2], vec![1]]);
/// # Ok::<(), jacobian::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Colouring {
    /// The colour of each column (or row), `0..count`.
    pub colours: Vec<usize>,
    /// The number of colours: forward lanes (or reverse adjoints) for the whole matrix.
    pub count: usize,
    /// No colouring has fewer colours than this: the most nonzeros in a row (for columns) or
    /// a column (for rows).
    pub lower_bound: usize,
    /// The order that produced it.
    pub order: Order,
}

impl Colouring {
    /// `n` columns each of its own colour: what a full pattern needs.
    pub(crate) fn distinct(n: usize, order: Order) -> Colouring {
        Colouring {
            colours: (0..n).collect(),
            count: n,
            lower_bound: n,
            order,
        }
    }

    /// The columns (or rows) of each colour.
    pub fn groups(&self) -> Vec<Vec<usize>> {
        let mut groups = vec![Vec::new(); self.count];
        for (j, &c) in self.colours.iter().enumerate() {
            groups[c].push(j);
        }
        groups
    }

    /// True if no row of `p` has two columns of one colour (the columns of a colour are
    /// structurally orthogonal), and every colour is below `count`.
    ///
    /// ```
    /// use jacobian::sparse::{Colouring, Order, Pattern};
    /// let p = Pattern::from_rows(2, &[vec![0, 1]])?;
    /// let bad = Colouring { colours: vec![0, 0], count: 1, lower_bound: 2, order: Order::Natural };
    /// assert!(!bad.is_valid_for_columns(&p));
    /// # Ok::<(), jacobian::Error>(())
    /// ```
    pub fn is_valid_for_columns(&self, p: &Pattern) -> bool {
        if self.colours.len() != p.cols() || self.colours.iter().any(|&c| c >= self.count) {
            return false;
        }
        let mut seen = vec![usize::MAX; self.count];
        (0..p.rows()).all(|i| {
            p.row(i).iter().all(|&j| {
                let c = self.colours[j];
                let fresh = seen[c] != i;
                seen[c] = i;
                fresh
            })
        })
    }

    /// True if no column of `p` has two rows of one colour (for a colouring of rows).
    pub fn is_valid_for_rows(&self, p: &Pattern) -> bool {
        self.is_valid_for_columns(&p.transpose())
    }
}

/// Colours the columns of `p` so that no row has two columns of one colour, greedily in `order`.
/// The natural order costs O(nonzeros), unless a column finds all of colours 0–63 among its
/// earlier neighbours: such a column visits its neighbours (a dense row of length r costs r²
/// however it is done). The other orders count each column's neighbours first, O(Σ over
/// nonzeros of their row's length), and [`Order::SmallestLast`] keeps them, as many as that
/// sum.
///
/// # Panics
///
/// For a pattern of 2³² rows or nonzeros or more (32-bit indices, as a tape's).
pub fn colour_columns(p: &Pattern, order: Order) -> Colouring {
    let t = std::cell::OnceCell::new();
    colour_columns_with(p, None, || t.get_or_init(|| p.transpose()), order, None)
}

/// [`colour_columns`] of `p`, given its transpose if it is `at_hand` (a row colouring's, or
/// one a driver keeps), else made by `make` only if `order` needs it: the natural order's
/// greedy colouring then sorts the rows of each column itself, more cheaply, from `p`'s
/// [`Counts`] if the caller has them.
pub(crate) fn colour_columns_with<'a>(
    p: &Pattern,
    at_hand: Option<&'a Pattern>,
    make: impl FnOnce() -> &'a Pattern,
    order: Order,
    counts: Option<Counts>,
) -> Colouring {
    let lower_bound = counts
        .as_ref()
        .map_or_else(|| p.max_row_len(), |c| c.longest_row);
    let (visit, t) = match order {
        Order::Natural => (None, at_hand),
        Order::LargestFirst => {
            let t = at_hand.unwrap_or_else(make);
            let degree = degrees(p, t);
            let mut v: Vec<usize> = (0..p.cols()).collect();
            v.sort_by_key(|&j| Reverse(degree[j]));
            (Some(v), Some(t))
        }
        Order::SmallestLast => {
            let t = at_hand.unwrap_or_else(make);
            (Some(smallest_last(p, t)), Some(t))
        }
    };
    let colours = greedy(p, t, visit.as_deref(), counts);
    let count = colours.iter().map(|&c| c + 1).max().unwrap_or(0);
    Colouring {
        colours,
        count,
        lower_bound,
        order,
    }
}

/// Colours the rows of `p` so that no column has two rows of one colour: the columns of the
/// transpose.
///
/// ```
/// use jacobian::sparse::{Order, Pattern, colour_rows};
/// // An arrow: row 0 is dense, the others diagonal.
/// let n = 6;
/// let rows: Vec<Vec<usize>> =
///     (0..n).map(|i| if i == 0 { (0..n).collect() } else { vec![i] }).collect();
/// let p = Pattern::from_rows(n, &rows)?;
/// let c = colour_rows(&p, Order::SmallestLast);
/// assert_eq!(c.count, 2); // one reverse sweep of 2 adjoints
/// assert!(c.is_valid_for_rows(&p));
/// # Ok::<(), jacobian::Error>(())
/// ```
///
/// # Panics
///
/// As [`colour_columns`], for 2³² columns or nonzeros or more.
pub fn colour_rows(p: &Pattern, order: Order) -> Colouring {
    let t = p.transpose();
    colour_columns_with(&t, Some(p), || p, order, None)
}

/// The greedy colouring: each column in turn, in the order `visit` (natural if `None`), takes
/// the least colour no neighbour has.
///
/// Each row keeps a mask of the colours below 64 its coloured columns hold, so column j's
/// forbidden colours are the union of its rows' masks: O(nonzeros) in all, through the rows of
/// each column (the transpose `t`'s, or [`rows_of_columns`] without one). A column whose rows
/// already hold all 64 goes the long way, through its neighbours, for a colour from 64 up.
fn greedy(
    p: &Pattern,
    t: Option<&Pattern>,
    visit: Option<&[usize]>,
    counts: Option<Counts>,
) -> Vec<usize> {
    match (t, visit) {
        (Some(t), Some(v)) => greedy_in(p, |j| t.row(j), v.iter().copied()),
        (Some(t), None) => greedy_in(p, |j| t.row(j), 0..p.cols()),
        (None, visit) => {
            let (starts, rows) = rows_of_columns(p, counts.unwrap_or_else(|| p.counts()).ends);
            let rows_of = |j: usize| &rows[starts[j] as usize..starts[j + 1] as usize];
            match visit {
                Some(v) => greedy_in(p, rows_of, v.iter().copied()),
                None => greedy_in(p, rows_of, 0..p.cols()),
            }
        }
    }
}

/// [`greedy`] visiting the columns in `order`, column j's rows being `rows_of(j)` (a loop of
/// its own for each kind of order and of index).
fn greedy_in<'r, I: Copy + TryInto<usize> + 'r>(
    p: &Pattern,
    rows_of: impl Fn(usize) -> &'r [I],
    order: impl Iterator<Item = usize>,
) -> Vec<usize> {
    let row = |i: I| i.try_into().ok().expect("a row index fits in usize");
    let mut colour = vec![usize::MAX; p.cols()];
    let mut used = vec![0u64; p.rows()];
    // forbidden[c] == j: colour c is taken by a neighbour of column j (beyond 64 colours).
    let mut forbidden = Vec::new();
    for j in order {
        let rows = rows_of(j);
        let taken = rows.iter().fold(0, |t, &i| t | used[row(i)]);
        let c = if taken != u64::MAX {
            taken.trailing_ones() as usize
        } else {
            beyond_64(p, rows.iter().map(|&i| row(i)), &colour, j, &mut forbidden)
        };
        colour[j] = c;
        if c < 64 {
            for &i in rows {
                used[row(i)] |= 1 << c;
            }
        }
    }
    colour
}

/// The least colour from 64 up that no neighbour of column j (through its `rows`) has, when
/// they hold every colour below 64. Out of line: the usual path is the masks'.
#[cold]
#[inline(never)]
fn beyond_64(
    p: &Pattern,
    rows: impl Iterator<Item = usize> + Clone,
    colour: &[usize],
    j: usize,
    forbidden: &mut Vec<usize>,
) -> usize {
    // At most `most` neighbours (with repeats, and fewer than n), holding every colour below
    // 64: one in 64..=most is free.
    let most: usize = rows.clone().map(|i| p.row(i).len()).sum();
    let most = most.min(p.cols() - 1);
    forbidden.resize(forbidden.len().max(most + 1), usize::MAX);
    for i in rows {
        for &k in p.row(i) {
            if let Some(f) = forbidden.get_mut(colour[k]) {
                *f = j;
            }
        }
    }
    (64..=most)
        .find(|&c| forbidden[c] != j)
        .expect("a free colour up to most")
}

/// The rows of each column, `rows[starts[j]..starts[j + 1]]` in increasing order: the
/// transpose's structure, by a counting sort from the columns' `ends`
/// ([`Counts`]); `u32`, as the tape's indices.
fn rows_of_columns(p: &Pattern, ends: Vec<u32>) -> (Vec<u32>, Vec<u32>) {
    assert!(
        p.rows() <= u32::MAX as usize,
        "colouring a pattern of {} rows: at most 2³² − 1 (a tape's indices are 32-bit too)",
        p.rows()
    );
    // Rows from the last, each written just below the end of its column, which moves down:
    // the ends become the starts, and each column's rows come out increasing.
    let mut starts = ends;
    let mut rows = vec![0u32; p.nnz()];
    for i in (0..p.rows()).rev() {
        for &j in p.row(i) {
            starts[j] -= 1;
            rows[starts[j] as usize] = i as u32;
        }
    }
    starts.push(p.nnz() as u32);
    (starts, rows)
}

/// The neighbours of column `j` (columns sharing a row with it), each once, into `out`.
fn neighbours(p: &Pattern, t: &Pattern, j: usize, mark: &mut [usize], out: &mut Vec<usize>) {
    out.clear();
    mark[j] = j;
    for &i in t.row(j) {
        for &k in p.row(i) {
            if mark[k] != j {
                mark[k] = j;
                out.push(k);
            }
        }
    }
}

/// Each column's number of neighbours.
fn degrees(p: &Pattern, t: &Pattern) -> Vec<usize> {
    let mut mark = vec![usize::MAX; p.cols()];
    let mut out = Vec::new();
    (0..p.cols())
        .map(|j| {
            neighbours(p, t, j, &mut mark, &mut out);
            out.len()
        })
        .collect()
}

/// The smallest-last order: repeatedly remove a column of least remaining degree; colour in
/// the reverse of the removals.
fn smallest_last(p: &Pattern, t: &Pattern) -> Vec<usize> {
    let n = p.cols();
    let mut mark = vec![usize::MAX; n];
    let mut buf = Vec::new();
    let adjacency: Vec<Vec<usize>> = (0..n)
        .map(|j| {
            neighbours(p, t, j, &mut mark, &mut buf);
            buf.clone()
        })
        .collect();
    let mut degree: Vec<usize> = adjacency.iter().map(Vec::len).collect();
    let mut removed = vec![false; n];
    let mut heap: BinaryHeap<Reverse<(usize, usize)>> =
        (0..n).map(|j| Reverse((degree[j], j))).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(Reverse((d, j))) = heap.pop() {
        if removed[j] || d != degree[j] {
            continue; // a stale entry
        }
        removed[j] = true;
        order.push(j);
        for &k in &adjacency[j] {
            if !removed[k] {
                degree[k] -= 1;
                heap.push(Reverse((degree[k], k)));
            }
        }
    }
    order.reverse();
    order
}

/// Star colouring of a symmetric pattern (a Hessian's): neighbours (i ≠ j with Hᵢⱼ a nonzero)
/// get different colours, and every path of four vertices uses at least three colours. Then
/// each Hᵢⱼ can be read from the compressed Hessian-vector products: for one of its two
/// endpoints, no other neighbour of the other endpoint shares its colour. Usually far fewer
/// colours than colouring the columns for structural orthogonality. Greedy in `order`, as in
/// Gebremedhin, Manne and Pothen, *What color is your Jacobian?* (SIAM Review 2005), §4.
///
/// Costs O(Σ over vertices of the sum of their neighbours' degrees).
///
/// ```
/// use jacobian::sparse::{Order, Pattern, colour_columns, colour_star};
/// // An arrow Hessian: vertex 0 meets every other. Columns need n colours; a star colouring 2.
/// let n = 6;
/// let rows: Vec<Vec<usize>> =
///     (0..n).map(|i| if i == 0 { (0..n).collect() } else { vec![0, i] }).collect();
/// let p = Pattern::from_rows(n, &rows)?;
/// assert_eq!(colour_columns(&p, Order::Natural).count, n);
/// let s = colour_star(&p, Order::Natural)?;
/// assert_eq!(s.count, 2);
/// assert!(s.is_star(&p));
/// # Ok::<(), jacobian::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::NotSymmetric`](shared_ops::Error::NotSymmetric) if `p` is not square, or has a
/// nonzero whose mirror is missing (named).
pub fn colour_star(p: &Pattern, order: Order) -> Result<Colouring, shared_ops::Error> {
    let n = p.cols();
    let t = p.transpose();
    if p.rows() != n || t != *p {
        let missing = (p.rows() == n)
            .then(|| {
                (0..n).find_map(|i| {
                    p.row(i)
                        .iter()
                        .find(|&&j| t.row(i).binary_search(&j).is_err())
                        .map(|&j| (i, j))
                })
            })
            .flatten();
        return Err(shared_ops::Error::NotSymmetric {
            rows: p.rows(),
            cols: n,
            missing,
        });
    }
    let visit: Vec<usize> = match order {
        Order::Natural => (0..n).collect(),
        Order::LargestFirst => {
            let mut v: Vec<usize> = (0..n).collect();
            v.sort_by_key(|&j| Reverse(adjacent(p, j).count()));
            v
        }
        Order::SmallestLast => smallest_last(p, p),
    };
    const NONE: usize = usize::MAX;
    let mut colour = vec![NONE; n];
    let mut forbidden = vec![NONE; n + 1];
    for &v in &visit {
        for w in adjacent(p, v) {
            if colour[w] != NONE {
                forbidden[colour[w]] = v;
            }
            // (v has no other coloured neighbour of w's colour: the distance-2 rule below kept
            // any two of them apart while v was uncoloured. So v only ends paths v – w – x – y.)
            for x in adjacent(p, w).filter(|&x| x != v && colour[x] != NONE) {
                if colour[w] == NONE || adjacent(p, x).any(|y| y != w && colour[y] == colour[w]) {
                    // v – w – x with w uncoloured: v must differ from x (distance 2); or the
                    // path v – w – x – y would be two-coloured.
                    forbidden[colour[x]] = v;
                }
            }
        }
        colour[v] = (0..).find(|&c| forbidden[c] != v).unwrap_or(n);
    }
    let count = colour.iter().map(|&c| c + 1).max().unwrap_or(0);
    // Neighbours differ: 2 colours as soon as there is an edge, 1 for a diagonal pattern.
    let edges = (0..n).any(|j| adjacent(p, j).next().is_some());
    let lower_bound = if edges { 2 } else { n.min(1) };
    Ok(Colouring {
        colours: colour,
        count,
        lower_bound,
        order,
    })
}

/// The neighbours of vertex `j` in a symmetric pattern (its row, without itself).
fn adjacent(p: &Pattern, j: usize) -> impl Iterator<Item = usize> + '_ {
    p.row(j).iter().copied().filter(move |&k| k != j)
}

impl Colouring {
    /// True if this is a star colouring of the symmetric pattern `p`: neighbours differ, and no
    /// path of four vertices is two-coloured.
    pub fn is_star(&self, p: &Pattern) -> bool {
        let n = p.cols();
        if self.colours.len() != n || self.colours.iter().any(|&c| c >= self.count) {
            return false;
        }
        let c = &self.colours;
        (0..n).all(|w| {
            adjacent(p, w).all(|x| {
                // The edge w – x, and a path v – w – x – y with c(v) = c(x), c(y) = c(w).
                c[w] != c[x]
                    && !(adjacent(p, w).any(|v| v != x && c[v] == c[x])
                        && adjacent(p, x).any(|y| y != w && c[y] == c[w]))
            })
        })
    }
}
