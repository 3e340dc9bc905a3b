//! Sparsity patterns and their colourings: validity on generated patterns, the lower bound,
//! the known optimum of banded patterns, errors.

use jacobian::sparse::{Order, Pattern, colour_columns, colour_rows};
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
