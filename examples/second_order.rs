//! Second derivatives: why forward over reverse is the usual way to a Hessian.
//!
//! First the seed example x = 2, y = x², z = y + 3, traced in forward over reverse: the tape
//! holds dual numbers, so every partial and every adjoint carries a tangent, and the tangent of
//! x's adjoint is d²z/dx² = 2.
//!
//! Then the four mode pairs are timed on the Hessian of a dense function (every entry of the
//! Hessian non-zero, O(n) operations), `f(x) = ln Σ exp(xᵢ) + Σ sin(xᵢ)·x₍ᵢ₊₁₎`, for n = 1, 2,
//! 4, …, 512 (one thread), printed as a table with the pair `hessian` chooses, and drawn as the
//! chart `target/second_order.svg` (`-- --results`: the results page's copy
//! `benches/second_order.svg`). Its test times n ≤ 8 and draws the chart in the temporary
//! directory.
//!
//! Run: `cargo run --release --example second_order [-- --results | path/to/chart.svg]`

use examples::chart::{self, log2_axis};
use forward::Dual;
use jacobian::{Function, Op, Pair};
use plotters::prelude::*;
use reverse::Tape;
use std::path::Path;
use std::time::Instant;

/// `f(x) = ln Σ exp(xᵢ) + Σ sin(xᵢ)·xᵢ₊₁` (cyclic): the log-sum-exp couples every pair of
/// inputs, so the Hessian is dense, while f costs only O(n).
struct Dense;
impl Function for Dense {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let n = x.len();
        let top = x.iter().fold(x[0], |m, &v| m.max(v));
        let lse = x.iter().map(|&v| (v - top).exp()).sum::<T>().ln() + top;
        let ring: T = (0..n).map(|i| x[i].sin() * x[(i + 1) % n]).sum();
        vec![lse + ring]
    }
}

// The test profile is unoptimised: under test, the same code over small sizes and short timings.
/// The sizes timed, and the colours of the pairs (from the charts' palette).
const SIZES: &[usize] = if cfg!(test) {
    &[1, 2, 4, 8]
} else {
    &[1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
};
const COLORS: [RGBColor; 4] = [
    chart::COLORS[0],
    chart::COLORS[3],
    chart::COLORS[2],
    chart::COLORS[4],
];
/// A pair whose estimated time for one Hessian exceeds this is not timed at larger n.
const BUDGET: f64 = 0.5;
/// The time, in seconds, that the runs of one timing take in all (at least three runs).
const TIMING: f64 = if cfg!(test) { 0.002 } else { 0.05 };

/// The median of `runs` timings of `work`, in seconds (enough runs for [`TIMING`] in all).
fn median_seconds(mut work: impl FnMut()) -> f64 {
    let start = Instant::now();
    work();
    let once = start.elapsed().as_secs_f64();
    let runs = ((TIMING / once.max(1e-9)) as usize).clamp(3, 2001);
    let mut t: Vec<f64> = (0..runs)
        .map(|_| {
            let s = Instant::now();
            work();
            s.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

/// The seed example in forward over reverse, node by node; returns x's adjoint, whose tangent
/// is d²z/dx².
fn trace_seed() -> Dual<f64> {
    println!("The seed example, x = 2, y = x², z = y + 3, in forward over reverse.");
    println!("The tape holds duals a + bε: x is seeded with tangent 1, so every value carries");
    println!("its derivative in x, every partial its derivative in x too.\n");
    // Traced, so that every operation has a node and an adjoint to print: a plain tape folds
    // the shift z = y + 3 into y's node, and asking for z's own adjoint there panics.
    let tape: Tape<Dual<f64>> = Tape::traced();
    let x = tape.var(Dual::variable(2.0));
    let y = x * x;
    let z = y + <reverse::Var<Dual<f64>> as Op>::constant(3.0);
    println!("  recording          value (primal + tangent ε)   partial on the edge");
    println!("  x                  {}", x.value());
    println!(
        "  y = x·x            {:<28} ∂y/∂x = 2x = {}",
        y.value().to_string(),
        x.value() + x.value()
    );
    println!(
        "  z = y + 3          {:<28} ∂z/∂y = 1",
        z.value().to_string()
    );
    let adjoints = tape.gradient(z);
    println!("\n  reverse sweep      adjoint (its tangent is the derivative of the adjoint in x)");
    println!("  z̄ = 1              {}", adjoints.wrt(z));
    println!("  ȳ = z̄·∂z/∂y        {}", adjoints.wrt(y));
    println!("  x̄ = ȳ·∂y/∂x        {}", adjoints.wrt(x));
    let xbar = adjoints.wrt(x);
    println!(
        "\n  dz/dx = {} (the adjoint), d²z/dx² = {} (the tangent of the adjoint)\n",
        xbar.primal, xbar.tangent
    );
    xbar
}

/// One row of the table: the median time of each pair (`None`: over budget), `Auto` and f.
struct Row {
    n: usize,
    seconds: [Option<f64>; 4],
    auto_seconds: f64,
    eval_seconds: f64,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    trace_seed();

    let path = chart::chart_path("second_order.svg", cfg!(test));
    println!("Hessian of f(x) = ln Σ exp(xᵢ) + Σ sin(xᵢ)·xᵢ₊₁ (dense), one thread, median times");
    println!("(ratios to one plain evaluation of f in brackets; — over the time budget).\n");
    print!("{:>5} {:>10}", "n", "f");
    for p in Pair::ALL {
        print!(" {:>24}", p.to_string());
    }
    println!("  auto chooses");

    let mut rows: Vec<Row> = Vec::new();
    let mut over = [false; 4];
    for &n in SIZES {
        let x: Vec<f64> = (0..n).map(|i| (0.7 * i as f64).sin()).collect();
        let eval_seconds = median_seconds(|| {
            std::hint::black_box(Dense.eval(std::hint::black_box(&x)));
        });
        let mut seconds = [None; 4];
        for (k, pair) in Pair::ALL.into_iter().enumerate() {
            if over[k] {
                continue;
            }
            let t = median_seconds(|| {
                std::hint::black_box(jacobian::hessian_with(&Dense, &x, pair).unwrap());
            });
            seconds[k] = Some(t);
            // The next size is at least 4× the work for a Hessian of O(n) operations.
            over[k] = 4.0 * t > BUDGET;
        }
        let h = jacobian::hessian(&Dense, &x)?;
        let auto_seconds = median_seconds(|| {
            std::hint::black_box(jacobian::hessian(&Dense, &x).unwrap());
        });
        print!("{n:>5} {:>10}", micros(eval_seconds));
        for s in seconds {
            match s {
                Some(s) => print!(
                    " {:>24}",
                    format!("{} ({:.0}×)", micros(s), s / eval_seconds)
                ),
                None => print!(" {:>24}", "—"),
            }
        }
        println!("  {} ({})", h.plan.pair, micros(auto_seconds));
        rows.push(Row {
            n,
            seconds,
            auto_seconds,
            eval_seconds,
        });
    }
    println!(
        "\nForward over reverse records f once per chunk of 8 columns on a tape of 8-tangent duals\n\
         and sweeps it once: about ⌈n/8⌉ gradients of dual numbers, O(n) work per chunk.\n\
         Reverse over reverse records f and its whole sweep once, then sweeps that ⌈n/8⌉ times:\n\
         its recording is large, but each later sweep is cheap, so it wins for large n on long\n\
         chains of cheap operations like this one, and loses on dot products (many edges).\n\
         Reverse over forward records the non-zero tangent operations too, up to N+1 nodes per\n\
         operation of f. Forward over forward needs ⌈n/8⌉(⌈n/8⌉+1)/2 sweeps: O(n²) sweeps\n\
         of O(n) work for O(n²) entries."
    );
    let worst = rows
        .iter()
        .map(|r| {
            let best = r
                .seconds
                .iter()
                .flatten()
                .copied()
                .fold(f64::INFINITY, f64::min);
            r.auto_seconds / best
        })
        .fold(0.0, f64::max);
    println!("auto was at most {worst:.2}× the fastest pair timed at each n");
    draw(&rows, &path)?;
    println!("chart: {}", path.display());
    Ok(())
}

fn micros(s: f64) -> String {
    if s < 1e-3 {
        format!("{:.2} µs", s * 1e6)
    } else {
        format!("{:.2} ms", s * 1e3)
    }
}

/// Time of one Hessian against n, one line per pair, log scales; `Auto`'s pick circled.
fn draw(rows: &[Row], path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
    root.fill(&WHITE)?;
    let all = rows
        .iter()
        .flat_map(|r| r.seconds.iter().flatten().copied());
    let (lo, hi) = all.fold((f64::INFINITY, 0.0_f64), |(lo, hi), t| {
        (lo.min(t), hi.max(t))
    });
    let mut plot = ChartBuilder::on(&root)
        .caption(
            "Hessian of a dense function: time by mode pair (one thread)",
            ("sans-serif", 20),
        )
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(log2_axis(0.8, 700.0), (lo / 1.5..hi * 1.5).log_scale())?;
    plot.configure_mesh()
        .x_desc("n (inputs)")
        .y_desc("seconds per Hessian")
        .x_label_formatter(&|v| format!("{v:.0}"))
        .y_label_formatter(&|v| format!("{v:.0e}"))
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 16))
        .draw()?;
    for (k, pair) in Pair::ALL.into_iter().enumerate() {
        let points: Vec<(f64, f64)> = rows
            .iter()
            .filter_map(|r| r.seconds[k].map(|t| (r.n as f64, t)))
            .collect();
        chart::series(&mut plot, points, COLORS[k], 3, pair.to_string())?;
    }
    let evals: Vec<(f64, f64)> = rows.iter().map(|r| (r.n as f64, r.eval_seconds)).collect();
    plot.draw_series(LineSeries::new(evals, BLACK.stroke_width(1)))?
        .label("f itself")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], BLACK.stroke_width(1)));
    let picks: Vec<(f64, f64)> = rows.iter().map(|r| (r.n as f64, r.auto_seconds)).collect();
    plot.draw_series(PointSeries::of_element(picks, 8, BLACK, &|p, s, st| {
        Circle::new(p, s, st.stroke_width(2))
    }))?
    .label("hessian (auto)")
    .legend(|(x, y)| Circle::new((x + 10, y), 6, BLACK.stroke_width(2)));
    chart::legend(&mut plot)?;
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn runs() {
        super::main().unwrap();
    }

    #[test]
    fn the_seed_example_has_second_derivative_two() {
        // z = x² + 3 at x = 2: dz/dx = 4, d²z/dx² = 2.
        let xbar = super::trace_seed();
        assert_eq!((xbar.primal, xbar.tangent), (4.0, 2.0));
    }
}
