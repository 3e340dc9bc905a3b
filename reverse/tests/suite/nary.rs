//! n-ary nodes (`Sum`, `Op::dot`, `Var::from_partials`) give the gradients of the chains of
//! binary operations they replace, in one node each; nested sums, constants, structural zeros
//! and the panic for Vars of two tapes.

use proptest::prelude::*;
use reverse::{Float, Op, Tape, Var};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// An operand: input `j` (taken modulo the number of inputs, so repeats are common) or a
/// constant.
#[derive(Clone, Copy, Debug)]
enum Item {
    V(usize),
    C(f64),
}

fn item() -> impl Strategy<Value = Item> {
    prop_oneof![
        3 => (0..8usize).prop_map(Item::V),
        1 => (-2.0..2.0_f64).prop_map(Item::C),
    ]
}

fn lift(items: &[Item], x: &[Var]) -> Vec<Var> {
    items
        .iter()
        .map(|&it| match it {
            Item::V(j) => x[j % x.len()],
            Item::C(c) => Var::constant(c),
        })
        .collect()
}

fn inputs() -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(-2.0..2.0_f64, 1..5)
}

/// |a − b| ≤ tol·max(|a|, |b|, 1).
fn close(a: f64, b: f64, tol: f64) -> bool {
    a == b || (a - b).abs() <= tol * a.abs().max(b.abs()).max(1.0)
}

fn all_close(a: &[f64], b: &[f64], tol: f64) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(&a, &b)| close(a, b, tol))
}

/// Two sums of the same terms in different orders: |aⱼ − bⱼ| ≤ 1e-14·max(scaleⱼ, 1), with
/// scaleⱼ the sum of the terms' magnitudes (what bounds the rounding when the sum cancels).
fn close_to_terms(a: &[f64], b: &[f64], scale: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .zip(scale)
            .all(|((&a, &b), &s)| a == b || (a - b).abs() <= 1e-14 * s.max(1.0))
}

/// The left fold with binary `+` (what `Sum` replaces); 0 for no items.
fn fold_add(vs: &[Var]) -> Var {
    vs.iter()
        .copied()
        .reduce(|a, b| a + b)
        .unwrap_or(Var::constant(0.0))
}

/// A smooth use of a result, so that its adjoint is not just 1.
fn after(s: Var, x0: Var) -> Var {
    (s * x0).sin() + s * s
}

/// The panic message of `f`, which must panic.
fn panic_message(f: impl FnOnce()) -> String {
    let err = catch_unwind(AssertUnwindSafe(f)).expect_err("expected a panic");
    if let Some(s) = err.downcast_ref::<String>() {
        s.clone()
    } else if let Some(s) = err.downcast_ref::<&str>() {
        s.to_string()
    } else {
        String::from("<non-string panic>")
    }
}

/// The two tape numbers `#a` … `#b` of a mixed-tape message, in order.
fn tape_numbers(msg: &str) -> Vec<u64> {
    msg.split('#')
        .skip(1)
        .filter_map(|s| {
            let digits: String = s.chars().take_while(|c| c.is_ascii_digit()).collect();
            digits.parse().ok()
        })
        .collect()
}

fn assert_mixed_message(msg: &str) {
    assert!(
        msg.contains("outer tape #") && msg.contains("inner tape #"),
        "message should name both tapes: {msg}"
    );
    assert!(msg.contains("cannot be combined"), "{msg}");
    let nums = tape_numbers(msg);
    assert_eq!(nums.len(), 2, "{msg}");
    assert!(nums[0] < nums[1], "outer tape first: {msg}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    /// (a) `Sum` is one node with a unit edge per variable term, and gives the value and the
    /// gradient of the left fold of `+`.
    #[test]
    fn sum_equals_a_fold_of_additions(x in inputs(), items in prop::collection::vec(item(), 0..12)) {
        let tape = Tape::new();
        let xs = tape.vars(&x);
        let terms = lift(&items, &xs);
        let vars = terms.iter().filter(|v| !v.is_constant()).count();

        let (nodes, units) = (tape.len(), tape.stats().unit_edges);
        let s: Var = terms.iter().copied().sum();
        prop_assert_eq!(tape.len() - nodes, usize::from(vars > 0), "a sum is one node");
        prop_assert_eq!(tape.stats().unit_edges - units, vars, "one unit edge per variable term");
        prop_assert_eq!(s.is_constant(), vars == 0);
        // By reference too.
        let s_ref: Var = terms.iter().sum();

        let f = fold_add(&terms);
        prop_assert_eq!(s.value().to_bits(), f.value().to_bits(), "same additions, same order");
        prop_assert_eq!(s_ref.value().to_bits(), f.value().to_bits());

        let (ys, yf, yr) = (after(s, xs[0]), after(f, xs[0]), after(s_ref, xs[0]));
        let gs = tape.gradient(ys).wrt_all(&xs);
        let gf = tape.gradient(yf).wrt_all(&xs);
        let gr = tape.gradient(yr).wrt_all(&xs);
        prop_assert!(all_close(&gs, &gf, 1e-14), "sum {gs:?} vs fold {gf:?}");
        prop_assert!(all_close(&gr, &gf, 1e-14), "sum of refs {gr:?} vs fold {gf:?}");
        // The sum alone: each input's adjoint is the number of times it appears.
        if vars > 0 {
            let counts: Vec<f64> = (0..x.len())
                .map(|j| items.iter().filter(|it| matches!(it, Item::V(k) if k % x.len() == j)).count() as f64)
                .collect();
            prop_assert_eq!(tape.gradient(s).wrt_all(&xs), counts);
        }
    }

    /// (b) `Op::dot` is one node with a weighted edge per variable operand, and gives the value
    /// and the gradient of Σ aᵢbᵢ by binary operations; constants and variables mix, a variable
    /// may appear several times and in both vectors.
    #[test]
    fn dot_equals_a_sum_of_products(
        x in inputs(),
        pairs in prop::collection::vec((item(), item()), 0..10),
    ) {
        let tape = Tape::new();
        let xs = tape.vars(&x);
        let a = lift(&pairs.iter().map(|p| p.0).collect::<Vec<_>>(), &xs);
        let b = lift(&pairs.iter().map(|p| p.1).collect::<Vec<_>>(), &xs);
        let operands = a.iter().chain(&b).filter(|v| !v.is_constant()).count();

        let (nodes, edges) = (tape.len(), tape.stats().edges);
        let d = Var::dot(&a, &b);
        prop_assert_eq!(tape.len() - nodes, usize::from(operands > 0), "a dot product is one node");
        prop_assert_eq!(tape.stats().edges - edges, operands, "one edge per variable operand");
        prop_assert_eq!(d.is_constant(), operands == 0);

        let products: Vec<Var> = a.iter().zip(&b).map(|(&p, &q)| p * q).collect();
        let f = fold_add(&products);
        let ordered = shared_ops::dot_order(products.len(), |i| products[i].value());
        prop_assert_eq!(d.value().to_bits(), ordered.to_bits(), "same products, the order of Op::dot");
        // The generic path (`T::dot`) and plain f64 agree on the value.
        fn gdot<T: Op>(a: &[T], b: &[T]) -> T {
            T::dot(a, b)
        }
        let av: Vec<f64> = a.iter().map(|v| v.value()).collect();
        let bv: Vec<f64> = b.iter().map(|v| v.value()).collect();
        prop_assert_eq!(gdot(&av, &bv).to_bits(), d.value().to_bits());
        prop_assert_eq!(gdot(&a, &b).value().to_bits(), d.value().to_bits());

        // The dot alone, in closed form: ∂/∂xⱼ = Σ over occurrences of the other factor; and
        // the sum of the terms' magnitudes, which bounds the rounding of either order of
        // summation (the sum itself may cancel far below its terms).
        let (mut want, mut terms) = (vec![0.0; x.len()], vec![0.0; x.len()]);
        for (k, &(p, q)) in pairs.iter().enumerate() {
            if let Item::V(j) = p {
                want[j % x.len()] += b[k].value();
                terms[j % x.len()] += b[k].value().abs();
            }
            if let Item::V(j) = q {
                want[j % x.len()] += a[k].value();
                terms[j % x.len()] += a[k].value().abs();
            }
        }
        let gd = tape.gradient(after(d, xs[0])).wrt_all(&xs);
        let gf = tape.gradient(after(f, xs[0])).wrt_all(&xs);
        // Through `after`: its derivative scales the dot's terms, and x₀ has a term of its own.
        // The two orders of summation round the dot's value apart by up to its terms'
        // magnitude (`size`, in units of 1e-14), and `after`'s derivative moves with that
        // value: by up to x₀² + 2 per unit for the dot's terms, 1 + |dv·x₀| for x₀'s own.
        let (dv, x0) = (d.value(), x[0]);
        let outer = (x0 * (dv * x0).cos()).abs() + 2.0 * dv.abs();
        let size: f64 = av.iter().zip(&bv).map(|(p, q)| (p * q).abs()).sum();
        let scale: Vec<f64> = terms
            .iter()
            .enumerate()
            .map(|(j, t)| {
                let own = if j == 0 { (dv * (dv * x0).cos()).abs() + 1.0 + (dv * x0).abs() } else { 0.0 };
                outer * t + own + size * ((x0 * x0 + 2.0) * t + own)
            })
            .collect();
        prop_assert!(close_to_terms(&gd, &gf, &scale), "dot {gd:?} vs binary {gf:?}");
        let g = tape.gradient(d).wrt_all(&xs);
        prop_assert!(close_to_terms(&g, &want, &terms), "dot {g:?} vs closed form {want:?}");
    }

    /// (c) `from_partials` with hand-written partials of f(x) = x₀x₁x₂ + sin x₃ gives the
    /// gradient of the binary expression, also deeper in a computation.
    #[test]
    fn from_partials_equals_the_binary_expression(x in prop::collection::vec(-2.0..2.0_f64, 4)) {
        let tape = Tape::new();
        let v = tape.vars(&x);
        let nodes = tape.len();
        let f = Var::from_partials(
            x[0] * x[1] * x[2] + x[3].sin(),
            &[(v[0], x[1] * x[2]), (v[1], x[0] * x[2]), (v[2], x[0] * x[1]), (v[3], x[3].cos())],
        );
        prop_assert_eq!(tape.len() - nodes, 1);
        let b = v[0] * v[1] * v[2] + v[3].sin();
        prop_assert_eq!(f.value().to_bits(), b.value().to_bits());
        let gf = tape.gradient(f).wrt_all(&v);
        let gb = tape.gradient(b).wrt_all(&v);
        prop_assert!(all_close(&gf, &gb, 1e-14), "{gf:?} vs {gb:?}");
        let gf = tape.gradient(after(f, v[1])).wrt_all(&v);
        let gb = tape.gradient(after(b, v[1])).wrt_all(&v);
        prop_assert!(all_close(&gf, &gb, 1e-14), "{gf:?} vs {gb:?}");

        // A constant operand is skipped; a variable given twice gets both partials.
        let edges = tape.stats().edges;
        let sq = Var::from_partials(
            x[0] * x[0] + 2.0 * x[1],
            &[(v[0], x[0]), (Var::constant(5.0), 7.0), (v[0], x[0]), (v[1], 2.0)],
        );
        prop_assert_eq!(tape.stats().edges - edges, 3);
        let g = tape.gradient(sq).wrt_all(&v);
        prop_assert_eq!(g, vec![x[0] + x[0], 2.0, 0.0, 0.0]);
        // Only constants: a constant, nothing recorded.
        let nodes = tape.len();
        let c = Var::from_partials(3.0, &[(Var::constant(1.0), 2.0)]);
        prop_assert!(c.is_constant());
        prop_assert_eq!(c.value(), 3.0);
        prop_assert_eq!(tape.len(), nodes);
    }

    /// (d) Sums whose items record nodes, including sums of their own, while the outer sum
    /// collects its operands: Σᵢ Σⱼ xᵢ·yⱼ, whose gradient is (Σy, …, Σx, …).
    #[test]
    fn nested_sums(
        x in prop::collection::vec(-2.0..2.0_f64, 0..6),
        y in prop::collection::vec(-2.0..2.0_f64, 0..6),
    ) {
        let (n, m) = (x.len(), y.len());
        let tape = Tape::new();
        let xv = tape.vars(&x);
        let yv = tape.vars(&y);
        let nodes = tape.len();
        let s: Var = (0..n).map(|i| (0..m).map(|j| xv[i] * yv[j]).sum::<Var>()).sum();
        let want_nodes = if n > 0 && m > 0 { n * m + n + 1 } else { 0 };
        prop_assert_eq!(tape.len() - nodes, want_nodes, "n·m products, n inner sums, 1 outer sum");

        let f = fold_add(&(0..n).map(|i| fold_add(&(0..m).map(|j| xv[i] * yv[j]).collect::<Vec<_>>())).collect::<Vec<_>>());
        prop_assert_eq!(s.value().to_bits(), f.value().to_bits());
        let all: Vec<Var> = xv.iter().chain(&yv).copied().collect();
        let (sx, sy): (f64, f64) = (x.iter().sum(), y.iter().sum());
        let want: Vec<f64> = x.iter().map(|_| sy).chain(y.iter().map(|_| sx)).collect();
        if n > 0 && m > 0 {
            let g = tape.gradient(s).wrt_all(&all);
            prop_assert!(all_close(&g, &want, 1e-14), "{g:?} vs {want:?}");
            let g = tape.gradient(after(s, xv[0])).wrt_all(&all);
            let gf = tape.gradient(after(f, xv[0])).wrt_all(&all);
            prop_assert!(all_close(&g, &gf, 1e-14), "{g:?} vs {gf:?}");
        } else {
            prop_assert!(s.is_constant());
            prop_assert_eq!(s.value(), 0.0);
        }

        // Three levels, the middle one interleaving its own nodes with the items' sums:
        // Σᵢ xᵢ·(Σⱼ (yⱼ + Σₖ yₖ)) = Σx · (m + m)·Σy... written with products recorded between.
        let t: Var = xv
            .iter()
            .map(|&xi| xi * yv.iter().map(|&yj| yj + yv.iter().copied().sum::<Var>()).sum::<Var>())
            .sum();
        let tf = fold_add(&xv
            .iter()
            .map(|&xi| xi * fold_add(&yv.iter().map(|&yj| yj + fold_add(&yv)).collect::<Vec<_>>()))
            .collect::<Vec<_>>());
        prop_assert!(close(t.value(), tf.value(), 1e-14));
        let g = tape.gradient(t + xv.first().copied().unwrap_or(Var::constant(0.0))).wrt_all(&all);
        let gf = tape.gradient(tf + xv.first().copied().unwrap_or(Var::constant(0.0))).wrt_all(&all);
        prop_assert!(all_close(&g, &gf, 1e-13), "{g:?} vs {gf:?}");
    }
}

/// (d) A sum mixing constants and variables (starting with constants) records one node with an
/// edge per variable; a sum of constants records nothing.
#[test]
fn sums_of_constants_and_variables() {
    let tape = Tape::new();
    let x = tape.vars(&[1.5, -0.5]);
    let c = |v| Var::constant(v);

    let n = tape.len();
    let s: Var = [c(1.0), c(2.0), x[0], c(3.0), x[1], x[0]].into_iter().sum();
    assert_eq!(tape.len(), n + 1);
    assert_eq!(s.value(), 1.0 + 2.0 + 1.5 + 3.0 - 0.5 + 1.5);
    assert_eq!(tape.gradient(s).wrt_all(&x), vec![2.0, 1.0]);

    let n = tape.len();
    let stats = tape.stats();
    let k: Var = [c(1.0), c(2.5), c(-4.0)].into_iter().sum();
    assert!(k.is_constant());
    assert_eq!(k.value(), -0.5);
    let e: Var = core::iter::empty::<Var>().sum();
    assert!(e.is_constant() && e.value() == 0.0);
    assert_eq!(tape.len(), n, "a sum of constants records nothing");
    assert_eq!(tape.stats(), stats);

    // Items that record a constant-only sum (nothing) and variables.
    let n = tape.len();
    let s: Var = (0..3_u32)
        .map(|i| x[i as usize % 2] * [c(1.0), c(f64::from(i))].into_iter().sum::<Var>())
        .sum();
    assert_eq!(tape.len(), n + 3 + 1, "three products and one sum");
    assert_eq!(tape.gradient(s).wrt_all(&x), vec![1.0 + 3.0, 2.0]);
}

/// (d) The items of a sum on the outer tape run an inner recording (a `Tape<Var<f64>>` whose
/// sums record their values' additions on the outer tape) while the outer sum stages its
/// operands.
#[test]
fn sum_over_items_that_differentiate_inside() {
    // Σᵢ d/du [u·Σⱼ xⱼ + u²] at u = xᵢ  =  Σᵢ (Σⱼ xⱼ + 2xᵢ)  = (n + 2)·Σx, gradient (n + 2)·1.
    let x = [0.5, -1.25, 2.0];
    let (value, g) = reverse::gradient(
        |xs: &[Var]| {
            xs.iter()
                .map(|&xi| {
                    let inner = |u: &[Var<Var>]| {
                        let sx: Var<Var> = xs.iter().map(|&xj| Var::constant(xj)).sum();
                        let terms = [u[0] * sx, u[0] * u[0]];
                        terms.into_iter().sum::<Var<Var>>()
                    };
                    reverse::gradient(inner, &[xi]).1[0]
                })
                .sum::<Var>()
        },
        &x,
    );
    let sx: f64 = x.iter().sum();
    assert!(close(value, 5.0 * sx, 1e-15), "{value}");
    assert_eq!(g, vec![5.0; 3]);
}

/// (e) Structural zeros: a node with an infinite partial (√ or ln at 0) whose adjoint is zero,
/// behind a sum or a dot node, contributes 0, not 0·∞ = NaN.
#[test]
fn structural_zeros_through_sum_and_dot_nodes() {
    let tape = Tape::new();
    let x = tape.vars(&[0.0, 2.0, 3.0]);
    let s = x[0].sqrt(); // ∂s/∂x₀ = +∞
    let l = x[0].ln(); // value −∞, ∂l/∂x₀ = +∞

    // A sum with √0 in it, multiplied by a constant 0, plus x₁: x₀ gets 0.
    let sum: Var = [s, x[1], x[2]].into_iter().sum();
    let y = sum * 0.0 + x[1];
    assert_eq!(tape.gradient(y).wrt_all(&x), vec![0.0, 1.0, 0.0]);

    // An unused sum and an unused dot over √0: nothing reaches x₀.
    let _unused: Var = [s, x[1]].into_iter().sum();
    let _unused_dot = Var::dot(&[s, x[1]], &[x[2], s]);
    let y = x[1] * x[2];
    assert_eq!(tape.gradient(y).wrt_all(&x), vec![0.0, 3.0, 2.0]);

    // s − s is an exact 0 (one edge of partial 0) inside a sum: √'s ∞ is not reached.
    let d: Var = [s - s, x[1]].into_iter().sum();
    assert_eq!(tape.gradient(d * x[2]).wrt_all(&x), vec![0.0, 3.0, 2.0]);

    // A dot whose weight for √0 is a constant 0: the edge's partial is 0, √0's adjoint is 0.
    let dot = Var::dot(&[s, x[1]], &[Var::constant(0.0), x[2]]);
    let g = tape.gradient(dot.sin()).wrt_all(&x);
    assert_eq!(g[0], 0.0);
    assert!(close(g[1], 3.0 * 6.0_f64.cos(), 1e-15) && close(g[2], 2.0 * 6.0_f64.cos(), 1e-15));

    // A dot with an infinite value (ln 0 = −∞) as the partial of a variable whose adjoint is
    // zero (the dot is multiplied by a constant 0): x₀ and x₁ get 0, not NaN.
    let dot = Var::dot(&[l, x[2]], &[x[1], x[1]]);
    let y = dot * 0.0 + x[2];
    assert_eq!(tape.gradient(y).wrt_all(&x), vec![0.0, 0.0, 1.0]);
    // Used (adjoint 1), the infinities are real: ∂/∂x₁ = ln 0 + x₂ = −∞, ∂/∂x₀ = x₁/x₀ = +∞.
    let g = tape.gradient(dot).wrt_all(&x);
    assert_eq!(g, vec![f64::INFINITY, f64::NEG_INFINITY, 2.0]);
}

/// Vars of two tapes in one n-ary node panic with a message naming both tapes, before the
/// tapes are corrupted: each still records and sweeps correctly afterwards.
#[test]
fn mixed_tapes_in_nary_nodes_panic_with_both_tape_numbers() {
    let t1 = Tape::new();
    let t2 = Tape::new();
    let a = t1.var(1.5);
    let b = t2.var(-2.0);
    let a2 = t1.var(0.5);

    let msg = panic_message(|| {
        let _: Var = [a, a2, b].into_iter().sum();
    });
    assert_mixed_message(&msg);
    let msg = panic_message(|| {
        let _: Var = [b, Var::constant(1.0), a].into_iter().sum();
    });
    assert_mixed_message(&msg);
    let msg = panic_message(|| {
        let _ = Var::dot(&[a, a2], &[a2, b]);
    });
    assert_mixed_message(&msg);
    let msg = panic_message(|| {
        let _ = Var::from_partials(1.0, &[(a, 1.0), (b, 2.0)]);
    });
    assert_mixed_message(&msg);

    // Both tapes still work, n-ary nodes included.
    let y: Var = [a, a2, a * a2].into_iter().sum();
    assert_eq!(t1.gradient(y).wrt_all(&[a, a2]), vec![1.0 + 0.5, 1.0 + 1.5]);
    let z = Var::dot(&[b, b], &[b, Var::constant(3.0)]);
    assert_eq!(t2.gradient(z).wrt(b), 2.0 * -2.0 + 3.0);

    // A dot of mismatched lengths panics with both lengths.
    let msg = panic_message(|| {
        let _ = Var::dot(&[a, a2], &[a]);
    });
    assert!(msg.contains("lengths 2 and 1"), "{msg}");
}

/// A mixed-tape panic caught *inside* an enclosing sum on the same tape must not leave the
/// aborted sum's operands behind to be collected by the enclosing one.
///
/// A sum stages each variable operand on its tape before it sees the next; a regression test
/// for the time the operands of an aborted sum stayed staged, and the enclosing sum collected
/// them (x₀ got an extra unit edge). Now the aborted sum unstages them as it unwinds.
#[test]
fn mixed_tape_panic_inside_an_enclosing_sum_leaves_no_operand_behind() {
    let t1 = Tape::new();
    let t2 = Tape::new();
    let x = t1.vars(&[1.0, 2.0]);
    let foreign = t2.var(3.0);
    let s: Var = (0..2)
        .map(|i| {
            if i == 1 {
                // Staged x[0] on t1, then met t2's Var: panics, caught here.
                let r = catch_unwind(AssertUnwindSafe(|| {
                    let _: Var = [x[0], foreign].into_iter().sum();
                }));
                assert!(r.is_err());
            }
            x[i]
        })
        .sum();
    assert_eq!(s.value(), 3.0);
    assert_eq!(t1.gradient(s).wrt_all(&x), vec![1.0, 1.0]);
}
