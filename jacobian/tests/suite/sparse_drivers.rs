//! Sparse Jacobians and Hessians on generated sparse functions: detection gives a superset of
//! the nonzeros, compressed sweeps equal the dense drivers (bit for bit within a mode), prepared
//! objects equal one-shot calls, and the errors and fallbacks of detection.

use approx::assert_relative_eq;
use jacobian::sparse::{
    Detection, Order, PreparedSparseHessian, PreparedSparseJacobian, SparseOptions,
    Strategy as Chosen, hessian_pattern, jacobian_pattern, sparse_hessian, sparse_hessian_with,
    sparse_jacobian, sparse_jacobian_with,
};
use jacobian::{Error, Function, Mode, Op, hessian, jacobian_with};
use proptest::prelude::*;

/// One term of a generated function: an operation on one or two inputs.
#[derive(Clone, Debug)]
struct Term {
    kind: u8,
    a: usize,
    b: usize,
}

impl Term {
    fn eval<T: Op>(&self, x: &[T]) -> T {
        let (a, b) = (x[self.a], x[self.b]);
        match self.kind % 8 {
            0 => a * b,
            1 => a.sin() * T::constant(2.0) + b,
            2 => (a / T::constant(3.0)).exp() - b * b,
            3 => a.max(b) * a,
            4 => (a * a + T::one()).ln() * b.cos(),
            5 => a.abs() + b.tanh(),
            6 => a / (T::constant(2.0) + b.sin()),
            _ => a.hypot(b),
        }
    }
}

/// A function whose output i sums its terms: m outputs, each reading a few of n inputs.
#[derive(Clone, Debug)]
struct Generated {
    n: usize,
    rows: Vec<Vec<Term>>,
}

impl Function for Generated {
    fn sizes(&self) -> Option<(usize, usize)> {
        Some((self.n, self.rows.len()))
    }

    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        self.rows
            .iter()
            .map(|terms| terms.iter().map(|t| t.eval(x)).sum())
            .collect()
    }
}

/// The sum of every output: a scalar for the Hessian tests.
struct Scalar(Generated);

impl Function for Scalar {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        vec![self.0.eval(x).into_iter().sum()]
    }
}

fn generated() -> impl Strategy<Value = (Generated, Vec<f64>)> {
    (2usize..24, 1usize..20).prop_flat_map(|(n, m)| {
        let term = (0u8..8, 0..n, 0..n).prop_map(|(kind, a, b)| Term { kind, a, b });
        let rows = prop::collection::vec(prop::collection::vec(term, 0..4), m);
        let x = prop::collection::vec(-2.0..2.0f64, n);
        (rows, x).prop_map(move |(rows, x)| (Generated { n, rows }, x))
    })
}

/// Every nonzero of `dense` lies in the CSR matrix's pattern.
fn covers(pattern: &jacobian::sparse::Pattern, dense: &nalgebra::DMatrix<f64>) -> bool {
    (0..dense.nrows())
        .all(|i| (0..dense.ncols()).all(|j| dense[(i, j)] == 0.0 || p_has(pattern, i, j)))
}

fn p_has(p: &jacobian::sparse::Pattern, i: usize, j: usize) -> bool {
    p.row(i).binary_search(&j).is_ok()
}

/// Output i is `(Σ over lists[i].0 of sin xₖ) · (Σ over lists[i].1 of xₖ)`, each sum a chain
/// of binary additions: its pattern, global or local, is exactly the union of the two lists.
/// The chains grow sets one input at a time and the product joins two grown sets, small and
/// large alike.
#[derive(Clone, Debug)]
struct Chains {
    n: usize,
    lists: Vec<(Vec<usize>, Vec<usize>)>,
}

impl Function for Chains {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let chain = |l: &[usize], sin: bool| {
            l.iter().fold(T::zero(), |acc, &k| {
                acc + if sin { x[k].sin() } else { x[k] }
            })
        };
        self.lists
            .iter()
            .map(|(l, r)| chain(l, true) * chain(r, false))
            .collect()
    }
    fn sizes(&self) -> Option<(usize, usize)> {
        Some((self.n, self.lists.len()))
    }
}

fn chains() -> impl Strategy<Value = Chains> {
    let n = 40;
    let list = || prop::collection::vec(0..n, 0..25);
    prop::collection::vec((list(), list()), 1..6).prop_map(move |lists| Chains { n, lists })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn patterns_cover_the_nonzeros((f, x) in generated()) {
        let dense = jacobian_with(&f, &x, Mode::Forward).unwrap().matrix;
        let global = jacobian_pattern(&f, &x, Detection::Global).unwrap();
        let local = jacobian_pattern(&f, &x, Detection::Local).unwrap();
        prop_assert!(covers(&global, &dense));
        prop_assert!(covers(&local, &dense));
        // Local detection leaves out only what the point decides (the loser of max).
        for i in 0..global.rows() {
            prop_assert!(local.row(i).iter().all(|&j| p_has(&global, i, j)));
        }
    }

    #[test]
    fn patterns_of_chains_are_exact(f in chains()) {
        // No branches: both kinds give the exact pattern (local from the recording's edges).
        for detection in [Detection::Global, Detection::Local] {
            let p = jacobian_pattern(&f, &vec![0.5; f.n], detection).unwrap();
            for (i, (l, r)) in f.lists.iter().enumerate() {
                let mut want: Vec<usize> = l.iter().chain(r).copied().collect();
                want.sort_unstable();
                want.dedup();
                prop_assert_eq!(p.row(i), &want[..], "row {} ({:?})", i, detection);
            }
        }
    }

    #[test]
    fn compressed_sweeps_equal_the_dense_drivers((f, x) in generated()) {
        let forward = jacobian_with(&f, &x, Mode::Forward).unwrap();
        let reverse = jacobian_with(&f, &x, Mode::Reverse).unwrap();
        for detection in [Detection::Global, Detection::Local] {
            for (mode, dense) in [(Mode::Forward, &forward), (Mode::Reverse, &reverse)] {
                for order in Order::ALL {
                    let options = SparseOptions { mode, detection, order, threads: true };
                    let s = sparse_jacobian_with(&f, &x, options).unwrap();
                    // Compressed lanes compute the same products as unit seeds: bit for bit.
                    prop_assert_eq!(s.to_dense(), dense.matrix.clone(), "{:?}", options);
                    prop_assert_eq!(&s.value, &dense.value);
                }
            }
        }
        // Every strategy of a prepared object, forced: the same matrix.
        let mut prepared = PreparedSparseJacobian::new(&f, &x).unwrap();
        for strategy in Chosen::ALL {
            prepared.use_strategy(strategy);
            let s = prepared.jacobian(&x).unwrap();
            prop_assert_eq!(s.plan.strategy, strategy);
            let dense = match strategy {
                Chosen::DenseForward | Chosen::Columns => &forward,
                _ => &reverse,
            };
            prop_assert_eq!(s.to_dense(), dense.matrix.clone(), "{:?}", strategy);
        }
        let auto = sparse_jacobian(&f, &x).unwrap();
        // The colourings' lower bounds: the longest row for columns, the longest column (the
        // transpose's row) for rows.
        let p = jacobian::sparse::jacobian_pattern(&f, &x, Detection::Auto).unwrap();
        let longest = |q: &jacobian::sparse::Pattern| (0..q.rows()).map(|i| q.row(i).len()).max();
        prop_assert_eq!(auto.plan.column_bound, longest(&p).unwrap_or(0));
        prop_assert_eq!(auto.plan.row_bound, longest(&p.transpose()).unwrap_or(0));
        for (a, b) in auto.to_dense().iter().zip(forward.matrix.iter()) {
            prop_assert!((a - b).abs() <= 1e-12 * (1.0 + b.abs()));
        }
    }

    #[test]
    fn sparse_hessians_equal_dense_ones((f, x) in generated()) {
        let f = Scalar(f);
        let dense = hessian(&f, &x).unwrap();
        let pattern = hessian_pattern(&f, &x, Detection::Global).unwrap();
        prop_assert!(covers(&pattern, &dense.matrix));
        for detection in [Detection::Global, Detection::Local] {
            let options = SparseOptions { mode: Mode::Forward, detection, ..SparseOptions::default() };
            let s = sparse_hessian_with(&f, &x, options).unwrap();
            prop_assert_eq!(s.value, dense.value);
            for (i, j, v) in s.triplets() {
                let want = dense.matrix[(i, j)];
                prop_assert!((v - want).abs() <= 1e-12 * (1.0 + want.abs()), "({}, {}): {} vs {}", i, j, v, want);
                // Exactly symmetric: both triangles read one compressed entry.
                prop_assert_eq!(v, s.matrix.get_entry(j, i).unwrap().into_value());
            }
        }
    }

    #[test]
    fn prepared_objects_equal_one_shot_calls((f, x) in generated(), shift in -1.0..1.0f64) {
        let y: Vec<f64> = x.iter().map(|v| v + shift).collect();
        let mut prepared = PreparedSparseJacobian::new(&f, &x).unwrap();
        let at_y = prepared.jacobian(&y).unwrap();
        let fresh = sparse_jacobian_with(&f, &y, SparseOptions { detection: Detection::Global, ..SparseOptions::default() }).unwrap();
        prop_assert_eq!(at_y.triplets(), fresh.triplets());
        // Written over the last result: the same values, the same pattern.
        let mut into = prepared.jacobian(&x).unwrap();
        prepared.jacobian_into(&y, &mut into).unwrap();
        prop_assert_eq!(into.triplets(), fresh.triplets());
        prop_assert_eq!(&into.value, &fresh.value);
        // After a change of strategy the old result is replaced whole (its colours too).
        prepared.use_strategy(Chosen::DenseReverse);
        prepared.jacobian_into(&y, &mut into).unwrap();
        prop_assert_eq!(into.plan.strategy, Chosen::DenseReverse);
        prop_assert!(into.colours.is_empty());
        // Local detection by rows keeps its recording: it must serve x only, never y.
        let local_rows = SparseOptions { mode: Mode::Reverse, detection: Detection::Local, ..SparseOptions::default() };
        let mut by_rows = PreparedSparseJacobian::with_options(&f, &x, local_rows).unwrap();
        let want = jacobian_with(&f, &y, Mode::Reverse).unwrap();
        let got = by_rows.jacobian(&y).unwrap();
        prop_assert_eq!(&got.value, &want.value);
        // Where the branches (the winners of max) are those of x, the local pattern holds.
        let same_branches = jacobian_pattern(&f, &y, Detection::Local).unwrap()
            == jacobian_pattern(&f, &x, Detection::Local).unwrap();
        if same_branches {
            prop_assert_eq!(got.to_dense(), want.matrix.clone());
        }
        let s = Scalar(f.clone());
        let mut h = PreparedSparseHessian::new(&s, &x).unwrap();
        let want = sparse_hessian(&s, &y).unwrap();
        prop_assert_eq!(h.hessian(&y).unwrap().triplets(), want.triplets());
        // In place, over a result shaped before any call and then over itself; and the
        // diagonal alone: the same bits as the whole Hessian's diagonal.
        let mut into = h.output();
        for _ in 0..2 {
            h.hessian_into(&y, &mut into).unwrap();
            prop_assert_eq!(into.triplets(), want.triplets());
            prop_assert_eq!(&into.gradient, &want.gradient);
        }
        let d = h.diagonal(&y).unwrap();
        let dense = want.to_dense();
        prop_assert_eq!(&d.gradient, &want.gradient);
        prop_assert_eq!(d.value.to_bits(), want.value.to_bits());
        for (i, v) in d.diagonal.iter().enumerate() {
            prop_assert_eq!(v.to_bits(), dense[(i, i)].to_bits(), "diagonal {}", i);
        }
    }
}

/// A prepared Hessian's sweeps seed by the colouring it has now: the pairs its products couple
/// trade places when x₀ ≤ 0, for a star colouring of as many colours, and a call after the
/// first writes only the primals.
#[test]
fn a_prepared_hessian_seeds_by_the_colouring_it_has_now() {
    struct Trades;
    impl Function for Trades {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            let (a, b) = if x[0] > T::zero() { (1, 2) } else { (2, 1) };
            vec![x[0] * x[a] + x[b] * x[3] + x[0].sin()]
        }
    }
    let mut h = PreparedSparseHessian::new(Trades, &[1.0, 2.0, 3.0, 4.0]).unwrap();
    let check = |h: &mut PreparedSparseHessian<Trades>, x: &[f64]| {
        let mut got = nalgebra::DMatrix::zeros(4, 4);
        for (i, j, v) in h.hessian(x).unwrap().triplets() {
            got[(i, j)] = v;
        }
        assert_relative_eq!(got, hessian(&Trades, x).unwrap().matrix, epsilon = 1e-12);
    };
    let before = h.colouring().colours.clone();
    for x in [[1.5, 2.0, 3.0, 4.0], [0.5, -1.0, 2.0, 1.0]] {
        check(&mut h, &x);
        check(&mut h, &x);
    }
    let x = [-1.0, 2.0, 3.0, 4.0];
    h.redetect(&x).unwrap();
    assert_ne!(h.colouring().colours, before);
    assert_eq!(h.colouring().count, before.iter().max().unwrap() + 1);
    for x in [x, [-0.5, 1.0, -2.0, 3.0]] {
        check(&mut h, &x);
        check(&mut h, &x);
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

#[test]
fn the_tridiagonal_jacobian_is_exact_and_explains_itself() {
    let n = 10_000;
    let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
    let j = sparse_jacobian(&Tridiagonal, &x).unwrap();
    assert_eq!(j.plan.strategy, Chosen::Columns);
    assert_eq!((j.plan.column_colours, j.plan.column_bound), (Some(3), 3));
    assert_eq!(j.matrix.nnz(), 3 * n - 2);
    for (i, k, v) in j.triplets() {
        let want = if i == k { x[i].cos() - 2.0 } else { 1.0 };
        assert_eq!(v, want, "({i}, {k})");
    }
    let plan = j.plan.to_string();
    assert!(
        plan.starts_with(
            "sparse by columns: 3 colours for 10 000 columns: 1 sweep of 3 lanes instead of 625 sweeps of 16 (global detection, 29 998 nonzeros in 10000×10000"
        ),
        "{plan}"
    );
    // By rows the same matrix, bit for bit (each entry is one partial).
    let rows = SparseOptions {
        mode: Mode::Reverse,
        ..SparseOptions::default()
    };
    let r = sparse_jacobian_with(&Tridiagonal, &x, rows).unwrap();
    assert_eq!(
        (r.plan.strategy, r.plan.row_colours),
        (Chosen::Rows, Some(3))
    );
    assert_eq!(r.triplets(), j.triplets());
}

/// Branches on a value: global detection refuses it.
struct Branchy;

impl Function for Branchy {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        if x[0] > T::zero() {
            vec![x[0] * x[1], x[2]]
        } else {
            vec![x[2] * x[1], x[0]]
        }
    }
}

#[test]
fn global_detection_refuses_a_branch_and_auto_falls_back_to_local() {
    let err = jacobian_pattern(&Branchy, &[1.0, 2.0, 3.0], Detection::Global).unwrap_err();
    assert!(matches!(err, Error::NeedsValues { .. }));
    assert!(
        err.to_string()
            .contains("use local detection (Detection::Local)"),
        "{err}"
    );
    let j = sparse_jacobian(&Branchy, &[1.0, 2.0, 3.0]).unwrap();
    assert_eq!(j.plan.detection, Detection::Local);
    assert!(j.plan.fallback.as_deref().unwrap().contains("comparison"));
    assert!(j.plan.to_string().contains("global detection gave up at"));
    assert_eq!(j.triplets(), vec![(0, 0, 2.0), (0, 1, 1.0), (1, 2, 1.0)]);
}

/// A branch on a piecewise-constant function of an input: its derivative is zero, but its
/// value still depends on x, so the branch does too.
struct BranchOnFloor;

impl Function for BranchOnFloor {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let k = x[0].floor();
        vec![
            if k > T::zero() { x[1] } else { x[2] },
            k * x[1],
            k.signum() + x[2],
        ]
    }
}

#[test]
fn a_branch_on_floor_of_an_input_is_refused_by_global_detection() {
    let err = jacobian_pattern(&BranchOnFloor, &[1.5, 2.0, 3.0], Detection::Global).unwrap_err();
    assert!(matches!(err, Error::NeedsValues { .. }), "{err}");
    // Local detection follows the branch at each point; floor and signum are flat, so x₀ is
    // in no row (its recording holds them as constants).
    for (x0, taken) in [(1.5, 1), (-0.5, 2)] {
        let p = jacobian_pattern(&BranchOnFloor, &[x0, 2.0, 3.0], Detection::Local).unwrap();
        assert_eq!(
            (p.row(0), p.row(1), p.row(2)),
            (&[taken][..], &[1][..], &[2][..])
        );
        let j = sparse_jacobian(&BranchOnFloor, &[x0, 2.0, 3.0]).unwrap();
        assert_eq!(j.plan.detection, Detection::Local);
        assert!(j.plan.fallback.as_deref().unwrap().contains("comparison"));
        let mut want = nalgebra::DMatrix::zeros(3, 3);
        (want[(0, taken)], want[(1, 1)], want[(2, 2)]) = (1.0, x0.floor(), 1.0);
        assert_eq!(j.to_dense(), want);
    }
    // Without a branch, a floor result is an operand like any other, valid for every x.
    struct NoBranch;
    impl Function for NoBranch {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            vec![x[0].floor() * x[1] + x[0].ceil().floor(), x[1].round()]
        }
    }
    let p = jacobian_pattern(&NoBranch, &[1.5, 2.0], Detection::Global).unwrap();
    assert_eq!((p.row(0), p.row(1)), (&[1][..], &[][..]));
    assert_eq!(
        jacobian_pattern(&NoBranch, &[1.5, 2.0], Detection::Local).unwrap(),
        p
    );
}

/// A user's piecewise-constant rules (`Unary::FLAT`, `Binary::FLAT`) depend on no input in
/// either kind of detection, and on a tape passes no adjoint; its value is still the rule's.
#[test]
fn a_users_flat_rule_depends_on_no_input() {
    #[derive(Clone, Copy)]
    struct Step;
    impl shared_ops::Unary for Step {
        const NAME: &'static str = "step";
        const FLAT: bool = true;
        fn eval<T: Op>(self, x: T) -> (T, T) {
            let step = if x.value() >= 0.0 { 1.0 } else { 0.0 };
            (T::constant(step), T::zero())
        }
    }
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
    struct F;
    impl Function for F {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            let s = (x[0] * x[1]).apply1(Step);
            let t = x[0].apply2(x[2], AtLeast);
            let rows = [s * x[2] + x[1], s + s.sin(), t * x[1]];
            vec![s, rows[0], rows[1], rows[2], t + x[0].apply2(x[1], AtLeast)]
        }
    }
    let x = [0.5, 2.0, 3.0];
    for detection in [Detection::Global, Detection::Local] {
        let p = jacobian_pattern(&F, &x, detection).unwrap();
        assert_eq!(
            (p.row(0), p.row(1), p.row(2)),
            (&[][..], &[1, 2][..], &[][..])
        );
        assert_eq!((p.row(3), p.row(4)), (&[1][..], &[][..]));
    }
    let j = sparse_jacobian(&F, &x).unwrap();
    assert_eq!(j.value, vec![1.0, 5.0, 1.0 + 1f64.sin(), 0.0, 0.0]);
    assert_eq!(
        j.to_dense(),
        jacobian_with(&F, &x, Mode::Reverse).unwrap().matrix
    );
    assert_eq!(j.triplets(), vec![(1, 1, 1.0), (1, 2, 1.0), (3, 1, 0.0)]);
}

/// Global detection holds sets of up to four inputs in the tracer and larger ones in the
/// arena: every way the two meet gives the exact union (each row's expected set beside it).
#[test]
fn sets_held_in_the_tracer_meet_the_arena_exactly() {
    struct Meetings;
    impl Function for Meetings {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            let small = x[3] * x[1] + x[2]; // {1, 2, 3}, held
            let five = small - x[0] * x[4]; // {0..5}: four and one make five, in the arena
            let eight = (x[5] + x[6]) * (x[7] + x[8]) + (x[9] + x[10]) / (x[11] + x[12]);
            vec![
                small,
                five,
                small + (x[2] * x[3]).sin(), // a held set and its own subset
                small * (x[3] - x[6]),       // overlapping held sets: {1, 2, 3, 6}, held
                small * (x[6] - x[7]),       // held sets whose union has five
                eight,                       // held sets whose union has eight
                five + (x[9] + x[1]),        // a node and a held set: a new node
                five + (x[4] + x[1]),        // a node and a held subset: the node
                [x[1], x[9], x[1], x[12]].into_iter().sum(), // a sum of held sets
                [five, x[9], eight].into_iter().sum(), // a sum of nodes and a held set
                x[2].floor() + x[3],         // piecewise constant: only x₃
                x[2].floor() * T::constant(2.0) + x[3].floor(), // no input at all
                (x[12] * x[12]).exp().ln_1p(), // one input through rules of one argument
                (small + x[6]) + x[0],       // four held and a smaller input: five
                (small + x[6]) + x[9],       // four held and a larger input: five
            ]
        }
    }
    let want: [&[usize]; 15] = [
        &[1, 2, 3],
        &[0, 1, 2, 3, 4],
        &[1, 2, 3],
        &[1, 2, 3, 6],
        &[1, 2, 3, 6, 7],
        &[5, 6, 7, 8, 9, 10, 11, 12],
        &[0, 1, 2, 3, 4, 9],
        &[0, 1, 2, 3, 4],
        &[1, 9, 12],
        &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
        &[3],
        &[],
        &[12],
        &[0, 1, 2, 3, 6],
        &[1, 2, 3, 6, 9],
    ];
    let x = [0.5; 13];
    let global = jacobian_pattern(&Meetings, &x, Detection::Global).unwrap();
    // Local detection reads the recording, which holds floor's results as constants.
    let local = jacobian_pattern(&Meetings, &x, Detection::Local).unwrap();
    for (i, row) in want.iter().enumerate() {
        assert_eq!(global.row(i), *row, "row {i}");
        assert_eq!(local.row(i), *row, "row {i}");
    }
    // A branch on a held set is refused like one on a node.
    struct Branch;
    impl Function for Branch {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            let s = x[0] + x[1];
            vec![if s > T::zero() { s } else { x[2] }]
        }
    }
    let err = jacobian_pattern(&Branch, &[1.0, 1.0, 1.0], Detection::Global).unwrap_err();
    assert!(err.to_string().contains("comparison"), "{err}");
}

/// A node minus one input (a stencil's row and its centre's nonlinear term) is held as the
/// node and the input, united only when needed: every way it meets the rest gives the exact
/// set, and the Jacobian's values are the dense ones.
#[test]
fn a_node_and_one_more_input_meet_everything_exactly() {
    struct NodeAnd;
    impl Function for NodeAnd {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            let five = (x[0] + x[1] + x[2] + x[3]) + x[4]; // {0..5}, a node
            let named = five - x[6]; // the node and input 6
            let centre = five - x[2].exp(); // the node and input 2, which it holds
            let (two, three) = (T::constant(2.0), T::constant(3.0));
            vec![
                named,
                centre,
                named * three + two,                      // constants keep both
                two - named,                              // a constant first
                named.sin(),                              // a rule of one argument
                named.floor(),                            // piecewise constant: nothing
                named - x[6].cos(),                       // the same input again
                named + x[7],                             // another input
                named * named,                            // two of them
                named * five,                             // and a node
                named + (x[8] + x[9]),                    // and a held set of two
                [named, x[10], centre].into_iter().sum(), // in a sum
                named / two,                              // a constant, by another rule
                x[11] - five,                             // the input first
                (x[11] - five) * x[5],                    // then a second input
            ]
        }
    }
    let want: [&[usize]; 15] = [
        &[0, 1, 2, 3, 4, 6],
        &[0, 1, 2, 3, 4],
        &[0, 1, 2, 3, 4, 6],
        &[0, 1, 2, 3, 4, 6],
        &[0, 1, 2, 3, 4, 6],
        &[],
        &[0, 1, 2, 3, 4, 6],
        &[0, 1, 2, 3, 4, 6, 7],
        &[0, 1, 2, 3, 4, 6],
        &[0, 1, 2, 3, 4, 6],
        &[0, 1, 2, 3, 4, 6, 8, 9],
        &[0, 1, 2, 3, 4, 6, 10],
        &[0, 1, 2, 3, 4, 6],
        &[0, 1, 2, 3, 4, 11],
        &[0, 1, 2, 3, 4, 5, 11],
    ];
    let x: Vec<f64> = (0..12).map(|i| 0.3 + 0.1 * i as f64).collect();
    let global = jacobian_pattern(&NodeAnd, &x, Detection::Global).unwrap();
    let local = jacobian_pattern(&NodeAnd, &x, Detection::Local).unwrap();
    for (i, row) in want.iter().enumerate() {
        assert_eq!(global.row(i), *row, "row {i}");
        assert_eq!(local.row(i), *row, "row {i}");
    }
    let j = sparse_jacobian(&NodeAnd, &x).unwrap();
    let dense = jacobian_with(&NodeAnd, &x, Mode::Forward).unwrap().matrix;
    assert_eq!(j.to_dense(), dense);
}

#[test]
fn max_and_abs_keep_both_operands_in_a_global_pattern() {
    struct Kinks;
    impl Function for Kinks {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            vec![x[0].max(x[1]), x[2].abs(), x[3].sqrt()]
        }
    }
    // At the kinks: max at a tie, abs at 0, sqrt at 0 (an infinite partial).
    let x = [1.0, 1.0, 0.0, 0.0];
    let p = jacobian_pattern(&Kinks, &x, Detection::Global).unwrap();
    assert_eq!(
        (p.row(0), p.row(1), p.row(2)),
        (&[0, 1][..], &[2][..], &[3][..])
    );
    let j = sparse_jacobian(&Kinks, &x).unwrap();
    let dense = jacobian_with(&Kinks, &x, Mode::Forward).unwrap().matrix;
    assert_eq!(j.to_dense(), dense);
    assert_eq!(j.to_dense()[(2, 3)], f64::INFINITY);
    // Local detection from the recording: the tie of max splits ½ and ½, both operands kept.
    let local = jacobian_pattern(&Kinks, &[2.0, 1.0, 0.0, 0.0], Detection::Local).unwrap();
    assert_eq!(local.row(0), &[0], "the loser of max is not recorded");
}

#[test]
fn bad_input_is_an_error_naming_the_sizes() {
    let mut p = PreparedSparseJacobian::new(Tridiagonal, &[1.0; 5]).unwrap();
    let err = p.jacobian(&[1.0; 4]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "input has length 4, but the function takes 5 inputs"
    );
    assert!(matches!(
        sparse_hessian(&Tridiagonal, &[1.0; 3]),
        Err(Error::NotScalar { outputs: 3 })
    ));
}

#[test]
fn nan_inputs_keep_the_pattern_and_propagate() {
    let x = [1.0, f64::NAN, 2.0];
    let j = sparse_jacobian(&Tridiagonal, &x).unwrap();
    assert_eq!(j.matrix.nnz(), 7);
    assert!(j.to_dense()[(1, 1)].is_nan());
    assert_eq!(j.to_dense()[(2, 2)], 2.0_f64.cos() - 2.0);
}

#[test]
fn the_sparse_hessian_of_rosenbrock_matches_the_formula() {
    struct Rosenbrock;
    impl Function for Rosenbrock {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            vec![
                x.windows(2)
                    .map(|w| {
                        let (a, b) = (T::one() - w[0], w[1] - w[0] * w[0]);
                        a * a + b * b * 100.0
                    })
                    .sum(),
            ]
        }
    }
    let n = 500;
    let x: Vec<f64> = (0..n).map(|i| 1.0 + 0.1 * (i as f64).cos()).collect();
    let h = sparse_hessian(&Rosenbrock, &x).unwrap();
    assert_eq!((h.plan.colours, h.matrix.nnz()), (3, 3 * n - 2));
    for (i, j, v) in h.triplets() {
        let want = if i == j {
            let mut d = 0.0;
            if i + 1 < n {
                d += 2.0 + 1200.0 * x[i] * x[i] - 400.0 * x[i + 1];
            }
            if i > 0 {
                d += 200.0;
            }
            d
        } else {
            -400.0 * x[i.min(j)]
        };
        assert_relative_eq!(v, want, max_relative = 1e-13);
    }
}

#[test]
fn hessian_patterns_follow_each_operation_class() {
    struct Classes;
    impl Function for Classes {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            vec![
                x[0] * x[1]                  // a product: the cross term only
                    + x[2] / x[3]            // a quotient: cross, and the divisor with itself
                    + x[4].sin()             // nonlinear: itself
                    + x[5].floor() * x[6]    // floor is flat: x₅ drops out, x₆ is linear
                    + x[7].max(x[8])         // piecewise linear: nothing
                    + x[9].powf(x[10])       // nonlinear in both: every pair
                    + (x[11] - x[12]).abs(), // linear: nothing
            ]
        }
    }
    let p = hessian_pattern(&Classes, &[1.5; 13], Detection::Global).unwrap();
    let entries: Vec<(usize, usize)> = (0..13)
        .flat_map(|i| p.row(i).iter().map(move |&j| (i, j)))
        .filter(|&(i, j)| i <= j)
        .collect();
    assert_eq!(
        entries,
        vec![(0, 1), (2, 3), (3, 3), (4, 4), (9, 9), (9, 10), (10, 10)]
    );
    // And the Jacobian pattern (the gradient's): everything but x₅.
    let g = jacobian_pattern(&Classes, &[1.5; 13], Detection::Global).unwrap();
    assert_eq!(g.row(0), &[0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12]);
}

/// Local Hessian detection carries values through arithmetic with constants (a fast path of
/// the tracer) and follows the branch they decide; global detection refuses it.
#[test]
fn local_hessian_detection_follows_a_branch_on_constant_arithmetic() {
    struct Affine;
    impl Function for Affine {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            let z = x[0] * 2.0 + 1.0 - 3.0; // 2x₀ − 2
            let w = T::constant(4.0) * x[0] - T::constant(8.0) + T::constant(0.5) * z; // 5x₀ − 9
            vec![if z > T::zero() && w > T::zero() {
                x[1] * x[1]
            } else {
                x[2] * x[2]
            }]
        }
    }
    for (x0, taken) in [(2.0, 1), (1.5, 2), (0.0, 2)] {
        let p = hessian_pattern(&Affine, &[x0, 1.0, 1.0], Detection::Local).unwrap();
        assert_eq!((p.nnz(), p.row(taken)), (1, &[taken][..]), "x₀ = {x0}");
    }
    let err = hessian_pattern(&Affine, &[2.0, 1.0, 1.0], Detection::Global).unwrap_err();
    assert!(matches!(err, Error::NeedsValues { .. }), "{err}");
}

#[test]
fn a_test_of_a_value_is_refused_by_global_detection_too() {
    struct NanGuard;
    impl Function for NanGuard {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            vec![if x[0].is_nan() { x[1] } else { x[0] * x[1] }]
        }
    }
    let err = jacobian_pattern(&NanGuard, &[1.0, 2.0], Detection::Global).unwrap_err();
    assert_eq!(
        err.to_string(),
        "global sparsity detection met a test of a value (is_nan), which needs values it does not carry: use local detection (Detection::Local), whose pattern holds at this x"
    );
    // Comparisons between constants need no values of the inputs: no refusal.
    struct ConstantBranch;
    impl Function for ConstantBranch {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            let k = T::constant(2.0);
            vec![if k > T::one() { x[0] * k } else { x[1] }]
        }
    }
    let p = jacobian_pattern(&ConstantBranch, &[1.0, 2.0], Detection::Global).unwrap();
    assert_eq!(p.row(0), &[0]);
}

#[test]
fn a_function_of_no_input_has_an_empty_pattern_and_no_colours() {
    struct Constant;
    impl Function for Constant {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            vec![T::constant(2.0), x[0].floor()]
        }
    }
    for mode in [Mode::Forward, Mode::Reverse, Mode::Auto] {
        let options = SparseOptions {
            mode,
            ..SparseOptions::default()
        };
        let j = sparse_jacobian_with(&Constant, &[1.5, 0.5], options).unwrap();
        assert_eq!(
            (j.matrix.nnz(), j.value.clone()),
            (0, vec![2.0, 1.0]),
            "{mode:?}"
        );
    }
}

/// A prepared sparse Hessian keeps its lifted inputs between calls: a sweep that fails (an
/// `f` that stops being scalar, or one that panics) must not leave its colour seeds behind
/// for the next call. 12 inputs with a dense Hessian: 12 colours, two sweeps of 8 lanes, so a
/// seed left by the second sweep would land in the next call's first.
#[test]
fn a_prepared_sparse_hessian_is_clean_after_a_failed_sweep() {
    use std::panic::{AssertUnwindSafe, catch_unwind};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// In its `k`-th evaluation after being armed with `k`: two outputs if `panics` is false,
    /// else a panic.
    struct Flaky {
        left: Arc<AtomicUsize>,
        panics: bool,
    }
    impl Function for Flaky {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            let sum = x.iter().fold(T::zero(), |s, &v| s + v);
            let cubes = x.iter().fold(T::zero(), |s, &v| s + v * v * v);
            let mut y = vec![(sum * sum).sin() + cubes];
            let left = self.left.load(Ordering::Relaxed);
            self.left.store(left.saturating_sub(1), Ordering::Relaxed);
            if left == 1 {
                assert!(!self.panics, "f fails in this evaluation");
                y.push(sum);
            }
            y
        }
    }
    let at = |t: f64| (0..12).map(|i| 0.1 * i as f64 - t).collect::<Vec<_>>();
    let options = SparseOptions {
        mode: Mode::Forward,
        ..SparseOptions::default()
    };
    for panics in [false, true] {
        let left = Arc::new(AtomicUsize::new(0));
        let flaky = Flaky {
            left: left.clone(),
            panics,
        };
        let mut p = PreparedSparseHessian::with_options(flaky, &at(0.0), options).unwrap();
        let plan = p.hessian(&at(0.0)).unwrap().plan;
        assert_eq!((plan.colours, plan.sweeps, plan.lanes), (12, 2, 8));
        for t in [0.3, -0.2] {
            // The second sweep fails.
            left.store(2, Ordering::Relaxed);
            match catch_unwind(AssertUnwindSafe(|| p.hessian(&at(t)))) {
                Ok(result) => assert!(!panics && result.is_err(), "two outputs are an error"),
                Err(_) => assert!(panics, "the function panicked"),
            }
            let again = p.hessian(&at(t)).unwrap();
            let fresh = Flaky {
                left: Arc::new(AtomicUsize::new(0)),
                panics,
            };
            let want = sparse_hessian_with(&fresh, &at(t), options).unwrap();
            assert_eq!(again.matrix, want.matrix, "panics = {panics}, t = {t}");
            assert_eq!(again.gradient, want.gradient);
        }
    }
}

#[test]
fn a_full_hessian_pattern_goes_dense_without_colouring() {
    // sin(Σ xᵢ²) couples every pair; the later terms couple fewer inputs and change nothing.
    struct SinQuad;
    impl Function for SinQuad {
        fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
            let q = x.iter().fold(T::zero(), |s, &v| s + v * v);
            vec![q.sin() + x[0] * x[1] + x[2].exp()]
        }
    }
    let x: Vec<f64> = (0..12).map(|i| 0.1 * i as f64 - 0.4).collect();
    let n = x.len();
    let p = hessian_pattern(&SinQuad, &x, Detection::Global).unwrap();
    assert_eq!(p.nnz(), n * n);
    let s = sparse_hessian(&SinQuad, &x).unwrap();
    assert!(!s.plan.compressed);
    assert!(s.plan.reason.contains("full"), "{}", s.plan.reason);
    assert_eq!((s.plan.colours, s.matrix.nnz()), (n, n * n));
    let dense = hessian(&SinQuad, &x).unwrap();
    let q: f64 = x.iter().map(|v| v * v).sum();
    for (i, j, v) in s.triplets() {
        assert_relative_eq!(v, dense.matrix[(i, j)], max_relative = 1e-13);
        let exact = 2.0 * q.cos() * f64::from(u8::from(i == j)) - 4.0 * q.sin() * x[i] * x[j]
            + f64::from(u8::from((i, j) == (0, 1) || (i, j) == (1, 0)))
            + f64::from(u8::from((i, j) == (2, 2))) * x[2].exp();
        assert_relative_eq!(v, exact, max_relative = 1e-12, epsilon = 1e-14);
    }
}
