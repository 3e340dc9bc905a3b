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
