//! Sparsity patterns and their colourings: validity on generated patterns, the lower bound,
//! the known optimum of banded patterns, errors.

use jacobian::sparse::{Order, Pattern, colour_columns, colour_rows, colour_star};
use proptest::prelude::*;

/// The pattern of a band of half-width `k`: row i has columns i − k ..= i + k.
fn band(n: usize, k: usize) -> Pattern {
    let rows: Vec<Vec<usize>> = (0..n)
        .map(|i| (i.saturating_sub(k)..(i + k + 1).min(n)).collect())
        .collect();
    Pattern::from_rows(n, &rows).unwrap()
}

#[test]
fn banded_patterns_take_their_lower_bound() {
    for order in Order::ALL {
        let c = colour_columns(&band(10_000, 1), order);
        assert_eq!((c.count, c.lower_bound), (3, 3), "{order:?}");
        for k in [2, 5] {
            let p = band(200, k);
            let c = colour_columns(&p, order);
            assert!(c.is_valid_for_columns(&p));
            assert_eq!(c.lower_bound, 2 * k + 1);
            if order != Order::LargestFirst {
                assert_eq!(c.count, 2 * k + 1, "{order:?}, k = {k}");
            }
        }
    }
}

#[test]
fn a_dense_row_needs_every_column_its_own_colour_but_rows_share() {
    let n = 8;
    let rows: Vec<Vec<usize>> = (0..n)
        .map(|i| if i == 0 { (0..n).collect() } else { vec![i] })
        .collect();
    let p = Pattern::from_rows(n, &rows).unwrap();
    let c = colour_columns(&p, Order::Natural);
    assert_eq!(c.count, n);
    let r = colour_rows(&p, Order::SmallestLast);
    assert_eq!((r.count, r.lower_bound), (2, 2));
    assert!(r.is_valid_for_rows(&p));
    assert!(
        !r.is_valid_for_columns(&p),
        "a row colouring is not a column colouring here"
    );
}

#[test]
fn out_of_range_columns_are_errors_naming_the_row() {
    let err = Pattern::from_rows(4, &[vec![0], vec![1, 7]]).unwrap_err();
    assert_eq!(err.to_string(), "a column of row 1 is 7, outside 0..4");
}

#[test]
fn the_transpose_of_the_transpose_is_the_pattern() {
    let p = Pattern::from_rows(5, &[vec![4, 0, 4], vec![], vec![2, 3, 1]]).unwrap();
    assert_eq!(p.row(0), &[0, 4]);
    assert_eq!(p.nnz(), 5);
    assert_eq!(p.transpose().transpose(), p);
    assert_eq!(p.transpose().rows(), 5);
}

fn pattern() -> impl Strategy<Value = Pattern> {
    (1..30usize, 1..30usize).prop_flat_map(|(m, n)| {
        prop::collection::vec(prop::collection::vec(0..n, 0..6), m)
            .prop_map(move |rows| Pattern::from_rows(n, &rows).unwrap())
    })
}

proptest! {
    /// Every order gives a valid colouring of columns and of rows, between the lower bound
    /// and the number of columns (rows); and the check rejects a colouring with one colour
    /// merged into another where that breaks orthogonality.
    #[test]
    fn colourings_are_valid_and_bounded(p in pattern()) {
        for order in Order::ALL {
            let c = colour_columns(&p, order);
            prop_assert!(c.is_valid_for_columns(&p), "{order:?}");
            prop_assert!(c.lower_bound <= c.count.max(1) && c.count <= p.cols());
            prop_assert_eq!(c.lower_bound, p.max_row_len());
            prop_assert_eq!(c.groups().iter().map(Vec::len).sum::<usize>(), p.cols());
            let r = colour_rows(&p, order);
            prop_assert!(r.is_valid_for_rows(&p), "{order:?}");
            prop_assert!(r.count <= p.rows());
            if c.count >= 2 {
                // Greedy gives every colour but 0 a reason: some column of colour 1 meets
                // colour 0 in a row, so merging 1 into 0 must be rejected.
                let mut merged = c.clone();
                for x in &mut merged.colours {
                    if *x == 1 {
                        *x = 0;
                    }
                }
                prop_assert!(!merged.is_valid_for_columns(&p));
            }
        }
    }
}

/// Patterns with long rows: more than 64 colours, past the colouring's one-word masks.
fn wide_pattern() -> impl Strategy<Value = Pattern> {
    (1..12usize, 60..140usize).prop_flat_map(|(m, n)| {
        prop::collection::vec(prop::collection::vec(0..n, 0..100), m)
            .prop_map(move |rows| Pattern::from_rows(n, &rows).unwrap())
    })
}

proptest! {
    /// The natural order's greedy colouring exactly: each column takes the least colour that
    /// no earlier column sharing a row with it has (so every lesser colour is such a
    /// neighbour's), below and above 64 colours alike.
    #[test]
    fn natural_greedy_takes_the_least_free_colour(p in wide_pattern()) {
        let c = colour_columns(&p, Order::Natural);
        prop_assert!(c.is_valid_for_columns(&p));
        let t = p.transpose();
        for j in 0..p.cols() {
            let mut taken = vec![false; c.colours[j]];
            for &i in t.row(j) {
                for &k in p.row(i).iter().filter(|&&k| k < j) {
                    if let Some(x) = taken.get_mut(c.colours[k]) {
                        *x = true;
                    }
                }
            }
            prop_assert!(taken.iter().all(|&x| x), "column {j} could take a lesser colour");
        }
    }
}

#[test]
fn a_dense_row_of_150_columns_takes_150_colours() {
    let p = Pattern::from_rows(150, &[(0..150).collect(), vec![3, 149]]).unwrap();
    for order in Order::ALL {
        let c = colour_columns(&p, order);
        assert_eq!(c.count, 150, "{order:?}");
        assert!(c.is_valid_for_columns(&p));
    }
    assert_eq!(colour_columns(&p, Order::Natural).colours[149], 149);
}

/// A symmetric pattern from a random one: P + Pᵀ plus the diagonal.
fn symmetric() -> impl Strategy<Value = Pattern> {
    (1..30usize).prop_flat_map(|n| {
        prop::collection::vec(prop::collection::vec(0..n, 0..4), n).prop_map(move |rows| {
            let mut sym: Vec<Vec<usize>> = (0..n).map(|i| vec![i]).collect();
            for (i, row) in rows.iter().enumerate() {
                for &j in row {
                    sym[i].push(j);
                    sym[j].push(i);
                }
            }
            Pattern::from_rows(n, &sym).unwrap()
        })
    })
}

proptest! {
    /// Star colourings are star colourings (neighbours differ, no two-coloured path of four),
    /// in every order, within their bounds.
    #[test]
    fn star_colourings_are_valid(p in symmetric()) {
        for order in Order::ALL {
            let s = colour_star(&p, order).unwrap();
            prop_assert!(s.is_star(&p), "{order:?}: {:?}", s.colours);
            prop_assert!(s.lower_bound <= s.count.max(1));
            prop_assert!(s.count <= p.cols());
        }
    }
}

#[test]
fn star_colouring_of_a_path_and_of_a_tridiagonal_hessian() {
    // A path 0 – 1 – 2 – 3 coloured 0, 1, 0, 1 is two-coloured: not a star colouring.
    let path =
        Pattern::from_rows(4, &[vec![0, 1], vec![0, 1, 2], vec![1, 2, 3], vec![2, 3]]).unwrap();
    let two = jacobian::sparse::Colouring {
        colours: vec![0, 1, 0, 1],
        count: 2,
        lower_bound: 2,
        order: Order::Natural,
    };
    assert!(!two.is_star(&path));
    // A tridiagonal Hessian: 3 colours suffice (as for its columns).
    let n: usize = 1000;
    let rows: Vec<Vec<usize>> = (0..n)
        .map(|i| (i.saturating_sub(1)..(i + 2).min(n)).collect())
        .collect();
    let p = Pattern::from_rows(n, &rows).unwrap();
    for order in Order::ALL {
        let s = colour_star(&p, order).unwrap();
        assert!(s.is_star(&p));
        assert!(s.count <= 4, "{order:?}: {}", s.count);
    }
    assert_eq!(colour_star(&p, Order::Natural).unwrap().count, 3);
}

#[test]
fn star_colouring_refuses_an_unsymmetric_pattern() {
    let p = Pattern::from_rows(3, &[vec![0, 2], vec![1], vec![2]]).unwrap();
    let err = colour_star(&p, Order::Natural).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the 3×3 pattern is not symmetric: (0, 2) is a nonzero but (2, 0) is not"
    );
    let wide = Pattern::from_rows(3, &[vec![0]]).unwrap();
    assert_eq!(
        colour_star(&wide, Order::Natural).unwrap_err().to_string(),
        "the pattern is 1×3, not square"
    );
}
