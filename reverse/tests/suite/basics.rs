//! The closure drivers and the basic tape: values, gradients, Jacobian rows, structural zeros.

use reverse::{Float, Tape, Var, gradient, jacobian_rows, vjp};
use shared_ops::Op;

fn panic_message(f: impl FnOnce() + std::panic::UnwindSafe) -> String {
    let err = std::panic::catch_unwind(f).expect_err("expected a panic");
    match err.downcast_ref::<String>() {
        Some(s) => s.clone(),
        None => err
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .unwrap_or_default(),
    }
}

#[test]
fn var_is_small_copy_and_static() {
    fn assert_copy_static<T: Copy + 'static + Send + Sync>() {}
    assert_copy_static::<Var>();
    // Layout as contract: a `Var` travels by value through user code, in three registers.
    assert_eq!(std::mem::size_of::<Var>(), 24);
    // Layout as contract: `TapeStats::bytes` documents these sizes. 4 bytes per node, 12 per
    // weighted edge (partial and parent), 4 per unit edge (±1).
    let tape = Tape::new();
    let (x, y) = (tape.var(1.0), tape.var(2.0));
    let _ = (x * y).sin() - x;
    let s = tape.stats();
    assert_eq!((s.nodes, s.edges, s.unit_edges), (5, 3, 2));
    assert_eq!(s.bytes, 5 * 4 + 3 * 12 + 2 * 4);
}

#[test]
fn var_after_tape_dropped_panics_clearly() {
    let msg = panic_message(|| {
        let x = {
            let tape = Tape::new();
            tape.var(1.0)
        };
        let _ = x * x;
    });
    assert!(
        msg.contains("after its tape #") && msg.contains("was dropped"),
        "{msg}"
    );
}

#[test]
fn var_of_outer_tape_in_inner_recording_panics_clearly() {
    let msg = panic_message(|| {
        let outer = Tape::new();
        let x = outer.var(1.0);
        let inner = Tape::new();
        let y = inner.var(2.0);
        let _ = x + y;
    });
    assert!(
        msg.contains("inner tape") && msg.contains("is recording"),
        "{msg}"
    );
}

#[test]
fn var_sent_to_another_thread_panics_clearly() {
    let tape = Tape::new();
    let x = tape.var(1.0);
    let msg = std::thread::spawn(move || {
        panic_message(|| {
            let _ = x.sin();
        })
    })
    .join()
    .unwrap();
    assert!(msg.contains("another thread"), "{msg}");
    // The tape itself is unharmed.
    let y = x.sin();
    assert_eq!(tape.gradient(y).wrt(x), 1.0_f64.cos());
}

#[test]
fn adjoints_of_another_tape_panic_clearly() {
    let msg = panic_message(|| {
        let a = Tape::new();
        let x = a.var(1.0);
        let g = a.gradient(x * x);
        let b = Tape::new();
        let z = b.var(1.0);
        let _ = g.wrt(z);
    });
    assert!(msg.contains("used with tape"), "{msg}");
}

#[test]
fn constants_work_everywhere() {
    let c: Var = num_traits::NumCast::from(2.5).unwrap();
    let z = Var::zero_const();
    assert!(c.is_constant() && z.is_constant());
    assert_eq!((c * c + z).value(), 6.25);
    let tape = Tape::new();
    let x = tape.var(3.0);
    let y = c * x + Var::constant(1.0) + 2.0 * x - x / 2.0;
    assert_eq!(tape.gradient(y).wrt(x), 2.5 + 2.0 - 0.5);
    // Constant-only arithmetic records nothing.
    let before = tape.len();
    let _ = (c * c).sin().exp();
    assert_eq!(tape.len(), before);
}

trait ZeroConst {
    fn zero_const() -> Self;
}
impl ZeroConst for Var {
    fn zero_const() -> Self {
        <Var as num_traits::Zero>::zero()
    }
}

#[test]
fn record_once_sweep_many() {
    let tape = Tape::new();
    let x = tape.vars(&[1.0, 2.0, 3.0]);
    let ys = [x[0] * x[1], x[1] * x[2], x[0].sin()];
    let n = tape.len();
    let rows: Vec<Vec<f64>> = ys.iter().map(|&y| tape.gradient(y).wrt_all(&x)).collect();
    assert_eq!(rows[0], vec![2.0, 1.0, 0.0]);
    assert_eq!(rows[1], vec![0.0, 3.0, 2.0]);
    assert_eq!(rows[2], vec![1.0_f64.cos(), 0.0, 0.0]);
    assert_eq!(tape.len(), n, "sweeping does not record");
    // The vector sweep carries three adjoints and gives the same rows.
    let v = tape.sweep_vec(&[
        (ys[0], [1.0, 0.0, 0.0]),
        (ys[1], [0.0, 1.0, 0.0]),
        (ys[2], [0.0, 0.0, 1.0]),
    ]);
    for (j, &xj) in x.iter().enumerate() {
        let lanes = v.wrt(xj);
        for i in 0..3 {
            assert_eq!(lanes[i], rows[i][j]);
        }
    }
}

#[test]
fn nested_recordings() {
    // A user's reverse-mode code calls a driver that records its own tape inside.
    let outer = Tape::new();
    let x = outer.var(0.5);
    let (_, inner_grad) = gradient(|v| v[0] * v[0] * v[0], &[x.value()]);
    assert_eq!(inner_grad, vec![0.75]);
    let y = x * Var::constant(inner_grad[0]);
    assert_eq!(outer.gradient(y).wrt(x), 0.75);
}

#[test]
fn out_of_order_drops_keep_the_stack_sound() {
    let a = Tape::<f64>::new();
    let b = Tape::new();
    drop(a);
    let x = b.var(2.0);
    assert_eq!(b.gradient(x * x).wrt(x), 4.0);
}

#[test]
fn clear_reuses_the_buffer_and_invalidates_vars() {
    let mut tape = Tape::new();
    let x = tape.var(1.0);
    let _ = x * x;
    tape.clear();
    assert!(tape.is_empty());
    let y = tape.var(3.0);
    assert_eq!(tape.gradient(y * y).wrt(y), 6.0);
    let msg = panic_message(move || {
        let _ = x + x;
    });
    assert!(msg.contains("dropped"), "{msg}");
}

#[test]
fn closure_drivers_and_errors() {
    let (y, g) = gradient(|x| (x[0] * x[1]).exp(), &[1.0, 0.0]);
    assert_eq!((y, g), (1.0, vec![0.0, 1.0]));
    let (v, wj) = vjp(|x| vec![x[0] * 2.0, x[0] * x[1]], &[3.0, 4.0], &[1.0, 0.5]).unwrap();
    assert_eq!((v, wj), (vec![6.0, 12.0], vec![4.0, 1.5]));
    let err = vjp(|x| x.to_vec(), &[1.0, 2.0], &[1.0, 2.0, 3.0]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "adjoint seed has length 3, but must have length 2"
    );
    assert_eq!(
        jacobian_rows(|x| x.to_vec(), &[] as &[f64]),
        (vec![], vec![])
    );
    // An output that does not depend on the inputs has a zero gradient.
    let (_, g) = gradient(|_| Var::constant(5.0), &[1.0, 2.0]);
    assert_eq!(g, vec![0.0, 0.0]);
}

#[test]
fn structural_zeros_in_reverse() {
    // sqrt at 0 feeding an output that does not use it: the zero adjoint contributes nothing.
    let (_, j) = jacobian_rows(|x| vec![x[0].sqrt(), x[1]], &[0.0, 1.0]);
    assert_eq!(j, vec![vec![f64::INFINITY, 0.0], vec![0.0, 1.0]]);
    // powf with a constant exponent at a negative base: ln(a) is never multiplied.
    let (_, g) = gradient(|x| x[0].powf(Var::constant(2.0)), &[-3.0]);
    assert_eq!(g, vec![-6.0]);
    // A zero partial times an infinite adjoint: abs'(0) = 0 stops the ∞ of sqrt'(0).
    let (_, g) = gradient(|x| x[0].abs().sqrt(), &[0.0]);
    assert_eq!(g, vec![0.0]);
}

#[test]
fn nalgebra_matrix_of_vars() {
    use nalgebra::{DMatrix, DVector};
    let tape = Tape::new();
    let w = DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 3.0, 4.0]).map(|v| tape.var(v));
    let x = DVector::from_vec(vec![tape.var(2.0), tape.var(3.0)]);
    let y = &w * &x;
    let l: Var = y.iter().map(|v| v.tanh()).sum();
    let g = tape.gradient(l);
    let z = [8.0_f64, 18.0];
    let s = [1.0 - z[0].tanh().powi(2), 1.0 - z[1].tanh().powi(2)];
    assert!((g.wrt(x[0]) - (s[0] * 1.0 + s[1] * 3.0)).abs() < 1e-12);
    assert!((g.wrt(w[(1, 1)]) - s[1] * 3.0).abs() < 1e-12);
}

#[test]
fn traces_keep_custom_op_names() {
    #[derive(Clone, Copy)]
    struct Twice;
    impl shared_ops::Unary for Twice {
        const NAME: &'static str = "twice";
        fn eval<T: Op>(self, x: T) -> (T, T) {
            (x + x, T::constant(2.0))
        }
    }
    let tape = Tape::new();
    let x = tape.var(1.5);
    let y = x.apply1(Twice);
    assert_eq!(y.value(), 3.0);
    assert_eq!(tape.gradient(y).wrt(x), 2.0);
}

/// A shift by a constant (`x − c`, `x + c`, `c + x`, `c − x`) is a node of its own, with one
/// unit edge, so that its adjoint is its own (∂f/∂s, not ∂f/∂x) and the derivatives through it
/// are exact.
#[test]
fn a_shift_by_a_constant_is_a_node_with_its_own_adjoint() {
    let tape = Tape::new();
    let x = tape.vars(&[3.0, 5.0]);
    let before = tape.len();
    let (s, t, u) = (x[0] - 1.5, x[0] + 2.0, 2.0 + x[1]);
    assert_eq!(
        tape.len(),
        before + 3,
        "a node each for x − c, x + c, c + x"
    );
    assert_eq!((s.value(), t.value(), u.value()), (1.5, 5.0, 7.0));
    let _ = 1.0 - x[0];
    assert_eq!(tape.len(), before + 4, "and for c − x");
    // f = s·t + s·u + x₀·u: ∂f/∂x₀ = t + s + u + u, ∂f/∂x₁ = s + x₀, ∂f/∂s = t + u.
    let f = s * t + s * u + x[0] * u;
    let g = tape.gradient(f);
    assert_eq!(g.wrt_all(&x), vec![5.0 + 1.5 + 7.0 + 7.0, 1.5 + 3.0]);
    assert_eq!((g.wrt(s), g.wrt(t), g.wrt(u)), (5.0 + 7.0, 1.5, 1.5 + 3.0));
}

/// On a replayable tape a shift is a node without edges that keeps its value: re-evaluation
/// recomputes it, a guard on it compares its own value (not its operand's), and the sweeps are
/// those of a plain tape.
#[test]
fn a_shift_on_a_replayable_tape_is_recomputed_and_guarded_by_its_own_value() {
    let f = |x: &[Var]| {
        let s = x[0] - 1.0;
        // A decision on the shifted value: 0.2 < 0.5 at the recording.
        if s < Var::constant(0.5) {
            s * x[1]
        } else {
            s + x[1]
        }
    };
    let tape = Tape::replayable();
    let x = tape.vars(&[1.2, 3.0]);
    let (s, y) = (x[0] - 1.0, f(&x));
    let mut rec = tape.finish();
    // x₀ = 1.4: s = 0.4 < 0.5 still (x₀ itself is not below 0.5: a guard that read x₀ would
    // fail here).
    rec.reevaluate(&[1.4, 2.0]).unwrap();
    assert_eq!(rec.value(s), 1.4 - 1.0);
    assert_eq!(rec.value(y), (1.4 - 1.0) * 2.0);
    let replayed = rec.gradient(y).wrt_all(&x);
    let fresh = Tape::new();
    let xf = fresh.vars(&[1.4, 2.0]);
    let want = fresh.gradient(f(&xf)).wrt_all(&xf);
    assert_eq!(replayed, want);
    assert_eq!(want, vec![2.0, 1.4 - 1.0]);
    // x₀ = 1.6: s = 0.6, the branch flips and the guard says so.
    let err = rec.reevaluate(&[1.6, 2.0]).unwrap_err();
    assert!(matches!(err, reverse::ReplayError::Guard(_)), "{err}");
}

/// The integer a piece of `floor` or `%` is named by is the same decision for every NaN: a
/// recording at one NaN re-evaluates at another (of the other sign), and its guard fails where
/// the integer changes.
#[test]
fn a_piece_named_by_a_nan_holds_for_every_nan() {
    let tape = Tape::replayable();
    let x = tape.vars(&[-f64::NAN, 3.0]);
    let (f, r) = (x[0].floor(), x[0] % x[1]);
    assert!(f.value().is_sign_negative() && f.value().is_nan());
    let mut rec = tape.finish();
    rec.reevaluate(&[f64::NAN, 3.0]).unwrap();
    assert!(rec.value(f).is_nan() && rec.value(f).is_sign_positive());
    assert!(rec.value(r).is_nan());
    let err = rec.reevaluate(&[1.5, 3.0]).unwrap_err();
    assert!(err.to_string().contains("guard 0 failed"), "{err}");
}

/// A piecewise-constant rule records nothing on a plain tape, yet the Vars of two recordings
/// still cannot meet in it.
#[test]
fn a_flat_rule_of_vars_of_two_tapes_panics() {
    /// 1 where a ≥ b, else 0.
    #[derive(Clone, Copy)]
    struct AtLeast;
    impl shared_ops::Binary for AtLeast {
        const NAME: &'static str = "at_least";
        const FLAT: bool = true;
        fn eval<T: Op>(self, a: T, b: T) -> (T, T, T) {
            let step = if a.value() >= b.value() { 1.0 } else { 0.0 };
            (T::constant(step), T::zero(), T::zero())
        }
    }
    let outer = Tape::new();
    let x = outer.var(1.0);
    let msg = panic_message(move || {
        let inner = Tape::new();
        let _ = x.apply2(inner.var(2.0), AtLeast);
    });
    assert!(msg.contains("two recordings cannot be combined"), "{msg}");
    // With a constant, or a Var of the same tape, the result is a constant.
    let (low, high) = (
        x.apply2(Var::constant(0.5), AtLeast),
        x.apply2(outer.var(3.0), AtLeast),
    );
    assert!(low.is_constant() && high.is_constant());
    assert_eq!((low.value(), high.value()), (1.0, 0.0));
}
