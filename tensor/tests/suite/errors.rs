//! Errors: returned as values, messages name the shapes.

use super::*;

fn assert_err_mentions<T: std::fmt::Debug>(
    result: Result<T, TensorError>,
    parts: &[&str],
) -> TensorError {
    let err = result.expect_err("expected an error");
    let msg = err.to_string();
    for part in parts {
        assert!(
            msg.contains(part),
            "message {msg:?} should mention {part:?}"
        );
    }
    // It is a std error with a Debug form.
    let _: &dyn std::error::Error = &err;
    assert!(!format!("{err:?}").is_empty());
    err
}

#[test]
fn error_broadcast() {
    let a = Tensor::<f64>::zeros(&[2, 3]);
    let b = Tensor::zeros(&[4]);
    for r in [a.try_add(&b), a.try_sub(&b), a.try_mul(&b), a.try_div(&b)] {
        let e = assert_err_mentions(r, &["[2, 3]", "[4]", "broadcast"]);
        assert!(matches!(e, TensorError::Broadcast { .. }));
    }
}

#[test]
#[should_panic(expected = "mul: shapes [2, 3] and [4] cannot be broadcast together")]
fn operator_panics_with_the_same_message() {
    let _ = Tensor::<f64>::zeros(&[2, 3]) * Tensor::zeros(&[4]);
}

#[test]
fn error_matmul() {
    let m = Tensor::zeros(&[2, 3]);
    let e = assert_err_mentions(m.matmul(&Tensor::zeros(&[2])), &["[2, 3]", "[2]", "3 != 2"]);
    assert!(matches!(e, TensorError::MatMul { .. }));
    assert_err_mentions(m.matmul(&Tensor::zeros(&[2, 3])), &["[2, 3]", "3 != 2"]);
    assert_err_mentions(
        Tensor::<f64>::zeros(&[3]).matmul(&Tensor::zeros(&[4])),
        &["[3]", "[4]"],
    );
    // Batched: a stack of (2, 3) matrices needs (3, ·) on the right.
    assert_err_mentions(
        Tensor::<f64>::zeros(&[4, 2, 3]).matmul(&m),
        &["[4, 2, 3]", "3 != 2"],
    );
    assert_err_mentions(
        Tensor::<f64>::zeros(&[2, 2, 3]).matmul(&Tensor::zeros(&[3, 3, 1])),
        &["[2, 2, 3]", "[3, 3, 1]", "batch axes"],
    );
    assert_err_mentions(Tensor::scalar(1.0).matmul(&m), &["[]", "[2, 3]"]);
}

#[test]
fn error_backward_non_scalar_and_grad_shape() {
    let x = Tensor::<f64>::zeros(&[2, 3]).with_grad();
    let y = x.exp();
    let e = assert_err_mentions(y.backward(), &["[2, 3]", "backward"]);
    assert!(matches!(e, TensorError::NotScalar { .. }));
    let e = assert_err_mentions(
        y.backward_with(ArrayD::ones(IxDyn(&[3, 2]))),
        &["[2, 3]", "[3, 2]"],
    );
    assert!(matches!(e, TensorError::ShapeMismatch { .. }));
    assert!(x.grad().is_none(), "failed calls change nothing");
    assert_err_mentions(y.item(), &["[2, 3]", "item"]);
    // A (1, 1) tensor counts as a scalar.
    x.sum_axis(1, true)
        .unwrap()
        .slice_rows(0..1)
        .unwrap()
        .backward()
        .unwrap();
}

#[test]
fn error_reshape_and_construction() {
    let e = assert_err_mentions(
        Tensor::<f64>::zeros(&[2, 3]).reshape(&[4]),
        &["[2, 3]", "[4]", "6", "4"],
    );
    assert!(matches!(e, TensorError::Reshape { .. }));
    assert_err_mentions(Tensor::from_vec(&[2, 2], vec![1.0; 3]), &["[3]", "[2, 2]"]);
    assert_err_mentions(
        Tensor::zeros(&[2]).set_data(array![1.0, 2.0, 3.0]),
        &["[2]", "[3]", "set_data"],
    );
}

#[test]
fn error_axis_out_of_range() {
    let x = Tensor::<f64>::zeros(&[2, 3]);
    for r in [x.sum_axis(2, false), x.mean_axis(5, true)] {
        let e = assert_err_mentions(r, &["[2, 3]", "axis"]);
        assert!(matches!(e, TensorError::Axis { .. }));
    }
    assert_err_mentions(Tensor::scalar(1.0).select_rows(&[0]), &["[]", "axis 0"]);
    assert_err_mentions(Tensor::scalar(1.0).slice_rows(0..1), &["[]", "axis 0"]);
}

#[test]
fn error_row_index_out_of_range() {
    let x = Tensor::<f64>::zeros(&[3, 2]);
    let e = assert_err_mentions(x.select_rows(&[0, 3]), &["[3, 2]", "index 3", "axis 0"]);
    assert!(matches!(
        e,
        TensorError::Index {
            index: 3,
            axis: 0,
            ..
        }
    ));
    let e = assert_err_mentions(x.slice_rows(1..4), &["[3, 2]", "1..4", "length 3"]);
    assert!(matches!(e, TensorError::Range { .. }));
    #[allow(clippy::reversed_empty_ranges)]
    let reversed = 2..1;
    assert_err_mentions(x.slice_rows(reversed), &["[3, 2]", "2..1"]);
}
