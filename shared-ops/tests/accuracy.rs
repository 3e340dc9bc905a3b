//! Every partial of the rule table against a 200-bit reference (`reference/partials.py`, mpmath,
//! rounded to the nearest f64): within 4 units in the last place, or 1e-15 relative, over the
//! whole domain: tails to |x| = 700, edges (|a| → 1 for asin and atanh, a → 1 for acosh), tiny
//! and huge arguments.

use shared_ops::rules::*;
use shared_ops::{Binary, Unary};

const TABLE: &str = include_str!("reference/partials.csv");
const MAX_ULPS: u64 = 4;

/// The f64s in order as integers, so that their difference counts the doubles between them.
fn ordered(x: f64) -> i64 {
    let bits = x.to_bits() as i64;
    if bits < 0 { i64::MIN - bits } else { bits }
}

/// The number of doubles from `a` to `b` (0 for equal values, ±0 and equal infinities).
fn ulps(a: f64, b: f64) -> u64 {
    if a == b {
        0
    } else if a.is_nan() || b.is_nan() {
        u64::MAX
    } else {
        ordered(a).abs_diff(ordered(b))
    }
}

fn accurate(got: f64, want: f64) -> bool {
    let relative = want.abs() >= f64::MIN_POSITIVE && (got - want).abs() <= 1e-15 * want.abs();
    ulps(got, want) <= MAX_ULPS || relative
}

/// ∂/∂a of the one-argument rule called `name` in the table.
fn unary(name: &str) -> Box<dyn Fn(f64) -> f64> {
    fn d<R: Unary>(r: R) -> Box<dyn Fn(f64) -> f64> {
        Box::new(move |x| r.eval(x).1)
    }
    match name {
        "recip" => d(Recip),
        "sqrt" => d(Sqrt),
        "cbrt" => d(Cbrt),
        "exp" => d(Exp),
        "exp2" => d(Exp2),
        "exp_m1" => d(ExpM1),
        "ln" => d(Ln),
        "log2" => d(Log2),
        "log10" => d(Log10),
        "ln_1p" => d(Ln1p),
        "sin" => d(Sin),
        "cos" => d(Cos),
        "tan" => d(Tan),
        "asin" => d(Asin),
        "acos" => d(Acos),
        "atan" => d(Atan),
        "sinh" => d(Sinh),
        "cosh" => d(Cosh),
        "tanh" => d(Tanh),
        "asinh" => d(Asinh),
        "acosh" => d(Acosh),
        "atanh" => d(Atanh),
        "sigmoid" => d(Sigmoid),
        _ => match name.strip_prefix("powi") {
            Some(n) => d(Powi(n.parse().expect("powi's exponent"))),
            None => panic!("the table names an unknown rule {name}"),
        },
    }
}

/// (∂/∂a, ∂/∂b) of the two-argument rule called `name` in the table.
fn binary(name: &str) -> fn(f64, f64) -> (f64, f64) {
    fn d<R: Binary>(r: R, a: f64, b: f64) -> (f64, f64) {
        let (_, da, db) = r.eval(a, b);
        (da, db)
    }
    match name {
        "div" => |a, b| d(Div, a, b),
        "powf" => |a, b| d(Powf, a, b),
        "log" => |a, b| d(Log, a, b),
        "atan2" => |a, b| d(Atan2, a, b),
        "hypot" => |a, b| d(Hypot, a, b),
        _ => panic!("the table names an unknown rule {name}"),
    }
}

#[test]
fn every_partial_is_within_4_ulps_of_the_reference() {
    let mut misses = Vec::new();
    let mut worst: Vec<(String, u64)> = Vec::new();
    let mut rows = 0;
    for line in TABLE.lines().filter(|l| !l.starts_with('#')) {
        let mut fields = line.split(',');
        let name = fields.next().expect("a rule");
        let v: Vec<f64> = fields.map(|f| f.parse().expect("a number")).collect();
        let checks: Vec<(&str, f64, f64)> = match v.len() {
            2 => vec![("∂a", unary(name)(v[0]), v[1])],
            4 => {
                let (da, db) = binary(name)(v[0], v[1]);
                vec![("∂a", da, v[2]), ("∂b", db, v[3])]
            }
            _ => panic!("a row of 2 or 4 numbers: {line}"),
        };
        let inputs = if v.len() == 2 {
            format!("{:e}", v[0])
        } else {
            format!("{:e}, {:e}", v[0], v[1])
        };
        for (which, got, want) in checks {
            rows += 1;
            let u = ulps(got, want);
            match worst.iter_mut().find(|(n, _)| n == name) {
                Some(w) => w.1 = w.1.max(u),
                None => worst.push((name.to_string(), u)),
            }
            if !accurate(got, want) {
                misses.push(format!(
                    "{name}({inputs}) {which}: {got:e}, reference {want:e}, {u} ulps"
                ));
            }
        }
    }
    println!("{rows} partials checked; the largest distance per rule, in ulps:");
    for (name, u) in &worst {
        println!("  {name:>8} {u}");
    }
    assert!(rows > 1500, "the table has {rows} partials");
    assert!(
        misses.is_empty(),
        "{} partials off:\n{}",
        misses.len(),
        misses.join("\n")
    );
}

#[test]
fn the_distance_in_ulps_counts_doubles() {
    assert_eq!(ulps(1.0, 1.0 + f64::EPSILON), 1);
    assert_eq!(ulps(-0.0, 0.0), 0);
    assert_eq!(ulps(f64::from_bits(1), -f64::from_bits(1)), 2);
    assert_eq!(ulps(f64::MAX, f64::INFINITY), 1);
    assert_eq!(ulps(f64::NAN, 1.0), u64::MAX);
    assert!(!accurate(0.0, 1e-310) && accurate(1e-310, 1e-310));
}

const SLICES: &str = include_str!("reference/slices.csv");

/// The vectorised kernels of `Unary::eval_slice` (`rules/slices.rs`) against their own 200-bit
/// reference (`reference/slices.py`): values within 2 ulps, partials as accurate as the rule
/// table's, at 2 200 points from subnormal inputs to the largest double; and `f32` slices,
/// computed in `f64` and rounded, within 1 ulp of `f32` of the exact values.
#[test]
fn the_vectorised_kernels_are_as_accurate_as_the_table() {
    let rows: Vec<[f64; 3]> = SLICES
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            assert_eq!(f[0], "tanh", "a rule the test does not know: {l}");
            [1, 2, 3].map(|i| f[i].parse().expect("a number"))
        })
        .collect();
    assert!(rows.len() > 2000, "the table has {} rows", rows.len());
    let x: Vec<f64> = rows.iter().map(|r| r[0]).collect();
    let (mut y, mut d) = (vec![0.0; x.len()], vec![0.0; x.len()]);
    Tanh.eval_slice(&x, &mut y, Some(&mut d));
    let (mut worst_y, mut worst_d, mut misses) = (0, 0, Vec::new());
    for (i, [x, want_y, want_d]) in rows.iter().enumerate() {
        let (uy, ud) = (ulps(y[i], *want_y), ulps(d[i], *want_d));
        (worst_y, worst_d) = (worst_y.max(uy), worst_d.max(ud));
        if uy > 2 || !accurate(d[i], *want_d) {
            misses.push(format!(
                "tanh({x:e}): {:e} ({uy} ulps), ∂ {:e} ({ud} ulps)",
                y[i], d[i]
            ));
        }
    }
    // The values alone take the same path.
    let mut alone = vec![0.0; x.len()];
    Tanh.eval_slice(&x, &mut alone, None);
    assert!(
        alone
            .iter()
            .zip(&y)
            .all(|(a, b)| a.to_bits() == b.to_bits())
    );

    let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
    let (mut y32, mut d32) = (vec![0.0_f32; x.len()], vec![0.0_f32; x.len()]);
    Tanh.eval_slice_f32(&x32, &mut y32, Some(&mut d32));
    for (i, &x) in x32.iter().enumerate() {
        // f64's libm and rule are far finer than f32's ulp: a reference for the f32 point.
        let (want_y, want_d) = Tanh.eval(f64::from(x));
        let ulp32 = |v: f64| f64::from(f32::EPSILON) * v.abs().max(f64::from(f32::MIN_POSITIVE));
        if (f64::from(y32[i]) - want_y).abs() > ulp32(want_y)
            || (f64::from(d32[i]) - want_d).abs() > ulp32(want_d).max(1e-45)
        {
            misses.push(format!("f32 tanh({x:e}): {:e}, ∂ {:e}", y32[i], d32[i]));
        }
    }
    println!(
        "tanh over {} points: values within {worst_y} ulps, partials within {worst_d}",
        x.len()
    );
    assert!(
        misses.is_empty(),
        "{} points off:\n{}",
        misses.len(),
        misses.join("\n")
    );
}

/// The kernels keep the rule's values at the edges exactly: signed zeros, infinities, NaN,
/// subnormal arguments.
#[test]
fn the_vectorised_kernels_at_the_edges() {
    let x = [
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        5e-324,
        -5e-324,
    ];
    let (mut y, mut d) = ([9.0; 7], [9.0; 7]);
    Tanh.eval_slice(&x, &mut y, Some(&mut d));
    assert_eq!(y[0].to_bits(), 0.0_f64.to_bits());
    assert_eq!(y[1].to_bits(), (-0.0_f64).to_bits());
    assert_eq!((y[2], d[2], y[3], d[3]), (1.0, 0.0, -1.0, 0.0));
    assert!(y[4].is_nan() && d[4].is_nan());
    assert_eq!((y[5], y[6], d[5], d[0]), (5e-324, -5e-324, 1.0, 1.0));
}

#[test]
#[should_panic(expected = "eval_slice: 3 points, but 2 values and 3 partials")]
fn a_short_slice_is_refused() {
    Tanh.eval_slice(&[1.0, 2.0, 3.0], &mut [0.0; 2], Some(&mut [0.0; 3]));
}

/// The `f32` kernel (a shorter series and one division) over a dense grid of `f32` inputs,
/// every 2¹¹-th float from 2⁻⁴⁰ to the point where tanh rounds to 1 and the derivative to 0:
/// values and partials within one `f32` ulp of the `f64` rule, and odd.
#[test]
fn the_f32_kernel_is_within_an_f32_ulp_everywhere() {
    let x: Vec<f32> = (2.0_f32.powi(-40).to_bits()..60.0_f32.to_bits())
        .step_by(1 << 11)
        .map(f32::from_bits)
        .flat_map(|v| [v, -v])
        .collect();
    assert!(x.len() > 200_000, "{} points", x.len());
    let (mut y, mut d) = (vec![0.0_f32; x.len()], vec![0.0_f32; x.len()]);
    Tanh.eval_slice_f32(&x, &mut y, Some(&mut d));
    let ulp32 = |v: f64| f64::from(f32::EPSILON) * v.abs().max(f64::from(f32::MIN_POSITIVE));
    let mut misses = Vec::new();
    for (i, &a) in x.iter().enumerate() {
        let (want_y, want_d) = Tanh.eval(f64::from(a));
        if (f64::from(y[i]) - want_y).abs() > ulp32(want_y)
            || (f64::from(d[i]) - want_d).abs() > ulp32(want_d).max(1e-45)
        {
            misses.push(format!("tanh({a:e}): {:e}, ∂ {:e}", y[i], d[i]));
        }
    }
    assert!(
        misses.is_empty(),
        "{} points off: {:?}",
        misses.len(),
        &misses[..misses.len().min(10)]
    );
}
