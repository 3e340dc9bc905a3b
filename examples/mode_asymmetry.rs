//! Why two modes: forward and reverse Jacobian time over a grid of input and output sizes.
//!
//! A forward sweep gives one *column* of the Jacobian (16 with the 16-tangent dual), a reverse
//! sweep one *row* (8 with the 8-adjoint sweep), so a full m×n Jacobian costs about ⌈n/16⌉
//! forward sweeps or one recording plus ⌈m/8⌉ reverse sweeps. This program measures both on the
//! dense tanh layer f(x) = tanh(A·sin x), A an m×n matrix, for n and m = 1, 2, 4, …, 512 (both
//! modes forced, one thread), prints the ratio forward time / reverse time and where it crosses
//! 1, and draws the chart `target/mode_asymmetry.svg`: `-- --results` writes the results
//! page's copy `benches/mode_asymmetry.svg` instead, `-- path/to/chart.svg` any other path. Its test runs one
//! pass over n, m ≤ 16 and draws the chart in the temporary directory.
//!
//! Run: `cargo run --release --example mode_asymmetry [-- --results | path/to/chart.svg]`

use examples::chart::{self, COLORS, log2_axis};
use jacobian::{CostReport, Direction, cost_report_with_runs, estimate};
use plotters::prelude::*;
use std::path::Path;
use std::time::Instant;
use workloads::DenseTanh;

// The test profile is unoptimised: under test, one quick pass over a corner of the grid, through
// the same code.
/// Passes over the grid, and timed runs per mode and cell in each pass.
const PASSES: usize = if cfg!(test) { 1 } else { 3 };
const RUNS: usize = if cfg!(test) { 1 } else { 3 };
/// The sizes of the grid: 1, 2, 4, …, 512.
const SIZES: &[usize] = if cfg!(test) {
    &[1, 2, 4, 8, 16]
} else {
    &[1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
};
/// The output counts drawn as lines in the chart.
const CHART_M: &[usize] = if cfg!(test) {
    &[1, 8]
} else {
    &[1, 8, 32, 128, 256, 512]
};
/// The output count of the chart's right panel (absolute times).
const TIMES_M: usize = if cfg!(test) { 8 } else { 32 };
/// The two cost reports printed in full are at (n, m) = (`WIDE`, `NARROW`) and the other way.
const NARROW: usize = 4;
/// The largest size of the grid.
const WIDE: usize = SIZES[SIZES.len() - 1];

/// One cell of the grid.
struct Cell {
    n: usize,
    m: usize,
    /// One cost report per pass over the grid.
    reports: Vec<CostReport>,
}

impl Cell {
    /// The median time of one Jacobian in `mode` over the passes.
    fn seconds(&self, mode: Direction) -> f64 {
        let mut t: Vec<f64> = self
            .reports
            .iter()
            .map(|r| match mode {
                Direction::Forward => r.forward.time.as_secs_f64(),
                _ => r.reverse.time.as_secs_f64(),
            })
            .collect();
        t.sort_by(f64::total_cmp);
        t[t.len() / 2]
    }
    /// The mode the plan chooses (the same in every pass).
    fn auto(&self) -> Direction {
        self.reports[0].auto.mode
    }
    /// The mode that measured faster.
    fn faster(&self) -> Direction {
        if self.ratio() <= 1.0 {
            Direction::Forward
        } else {
            Direction::Reverse
        }
    }
    /// Forward time / reverse time: above 1, reverse mode is faster.
    fn ratio(&self) -> f64 {
        self.seconds(Direction::Forward) / self.seconds(Direction::Reverse)
    }
}

/// Where `ratio(n)` crosses 1, interpolated on log scales between grid points.
fn crossing(points: &[(usize, f64)]) -> Option<f64> {
    points.windows(2).find_map(|w| {
        let ((n0, r0), (n1, r1)) = (w[0], w[1]);
        (r0 <= 1.0 && r1 > 1.0).then(|| {
            let t = -r0.ln() / (r1.ln() - r0.ln());
            ((n0 as f64).ln() + t * ((n1 as f64).ln() - (n0 as f64).ln())).exp()
        })
    })
}

/// The smallest n at which the cost model prefers reverse mode, for m outputs.
fn model_crossing(m: usize) -> Option<usize> {
    (1..=4096).find(|&n| {
        let e = estimate(n, m);
        e.reverse < e.forward
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let started = Instant::now();
    let path = chart::chart_path("mode_asymmetry.svg", cfg!(test));

    println!("f(x) = tanh(A·sin x), A m×n: Jacobian time in each mode (forced, one thread),");
    println!(
        "the median over {PASSES} passes of the median of {RUNS} runs.\n\
         Entries: forward time / reverse time (above 1: reverse mode is faster).\n"
    );
    // PASSES passes over the whole grid, so that a burst of load from other programs hits
    // different cells in different passes; each cell keeps the median.
    let mut cells: Vec<Cell> = SIZES
        .iter()
        .flat_map(|&m| {
            SIZES.iter().map(move |&n| Cell {
                n,
                m,
                reports: Vec::new(),
            })
        })
        .collect();
    for _ in 0..PASSES {
        for c in &mut cells {
            let x: Vec<f64> = (0..c.n).map(|j| 0.1 * (j % 17) as f64 - 0.3).collect();
            c.reports
                .push(cost_report_with_runs(&DenseTanh::new(c.n, c.m), &x, RUNS)?);
        }
    }
    let cell = |n: usize, m: usize| {
        cells
            .iter()
            .find(|c| c.n == n && c.m == m)
            .expect("every grid cell is measured")
    };

    // The table: one row per m, one column per n.
    print!("{:>8} ", "m \\ n");
    for &n in SIZES {
        print!("{n:>7}");
    }
    println!("   crossover n: measured  model");
    for &m in SIZES {
        print!("{m:>8} ");
        let row: Vec<(usize, f64)> = SIZES.iter().map(|&n| (n, cell(n, m).ratio())).collect();
        for (_, r) in &row {
            print!("{r:>7.2}");
        }
        let measured = match crossing(&row) {
            Some(n) => format!("≈ {n:.0}"),
            None if row.iter().all(|r| r.1 > 1.0) => "reverse always".into(),
            None => "forward always".into(),
        };
        let model = model_crossing(m).map_or("—".into(), |n| n.to_string());
        println!("   {measured:>21}  {model:>5}");
    }

    // How the auto mode's plan compares with the measurement.
    let agree = cells.iter().filter(|c| c.auto() == c.faster()).count();
    let worst = cells
        .iter()
        .map(|c| {
            let chosen = c.seconds(c.auto());
            chosen
                / c.seconds(Direction::Forward)
                    .min(c.seconds(Direction::Reverse))
        })
        .fold(1.0, f64::max);
    println!(
        "\nThe auto mode chose the faster mode in {agree} of {} cells; where it missed, its choice \
         was at most {worst:.2}× slower.",
        cells.len()
    );
    println!(
        "Forward time grows with n (⌈n/16⌉ sweeps) and reverse time with m (⌈m/8⌉ sweeps after one \
         recording):\nreverse mode wins to the right of the crossover (wide Jacobians), forward \
         mode to the left (tall ones).\n"
    );
    println!(
        "Two cost reports in full (from the first pass):\n{}\n",
        cell(WIDE, NARROW).reports[0]
    );
    println!("{}\n", cell(NARROW, WIDE).reports[0]);

    draw(&cells, &path)?;
    println!("chart written to {}", path.display());
    println!("took {:.1?}", started.elapsed());
    Ok(())
}

/// The chart: left, the ratio forward/reverse against n for several m (log scales, ticks at
/// the grid's powers of two), with the line of equal cost; right, both times against n for
/// m = [`TIMES_M`], with the measured crossover.
fn draw(cells: &[Cell], path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let root = SVGBackend::new(path, (1200, 560)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(
        "Forward vs reverse mode: Jacobian of f(x) = tanh(A·sin x), A m×n (one thread)",
        ("sans-serif", 22),
    )?;
    let (top, note) = root.split_vertically(505);
    note.draw(&Text::new(
        "Flat for n ≤ 16: one forward sweep carries up to 16 tangents, so up to 16 inputs cost \
         one sweep; beyond, ⌈n/16⌉ sweeps.",
        (40, 14),
        ("sans-serif", 15).into_font(),
    ))?;
    let (left, right) = top.split_horizontally(620);
    let find = |n: usize, m: usize| cells.iter().find(|c| c.n == n && c.m == m);

    // Left: the ratio.
    let ratios: Vec<f64> = cells.iter().map(Cell::ratio).collect();
    let lo = ratios
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min)
        .min(0.5)
        / 1.5;
    let hi = ratios.iter().copied().fold(0.0, f64::max).max(2.0) * 1.5;
    let mut ratio_chart = ChartBuilder::on(&left)
        .caption(
            "time ratio forward / reverse (above 1: reverse is faster)",
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d(log2_axis(1.0, 700.0), (lo..hi).log_scale())?;
    ratio_chart
        .configure_mesh()
        .x_desc("n (inputs)")
        .y_desc("forward time / reverse time")
        .x_label_formatter(&|v| format!("{v:.0}"))
        .y_label_formatter(&|v| format!("{v}"))
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 16))
        .draw()?;
    ratio_chart
        .draw_series(LineSeries::new(
            [(1.0, 1.0), (700.0, 1.0)],
            BLACK.stroke_width(2),
        ))?
        .label("equal cost")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], BLACK.stroke_width(2)));
    for (k, &m) in CHART_M.iter().enumerate() {
        let points: Vec<(f64, f64)> = SIZES
            .iter()
            .filter_map(|&n| find(n, m).map(|c| (n as f64, c.ratio())))
            .collect();
        let label = format!("m = {m} outputs");
        chart::series(&mut ratio_chart, points, COLORS[k % COLORS.len()], 4, label)?;
    }
    chart::legend(&mut ratio_chart)?;

    // Right: absolute times for one m.
    let times: Vec<(f64, f64, f64)> = SIZES
        .iter()
        .filter_map(|&n| {
            find(n, TIMES_M).map(|c| {
                let us = |mode| c.seconds(mode) * 1e6;
                (n as f64, us(Direction::Forward), us(Direction::Reverse))
            })
        })
        .collect();
    let t_lo = times
        .iter()
        .map(|t| t.1.min(t.2))
        .fold(f64::INFINITY, f64::min)
        / 1.5;
    let t_hi = times.iter().map(|t| t.1.max(t.2)).fold(0.0, f64::max) * 1.5;
    let mut time_chart = ChartBuilder::on(&right)
        .caption(
            format!("time for m = {TIMES_M} outputs"),
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(log2_axis(1.0, 700.0), (t_lo..t_hi).log_scale())?;
    time_chart
        .configure_mesh()
        .x_desc("n (inputs)")
        .y_desc("Jacobian time (µs)")
        .x_label_formatter(&|v| format!("{v:.0}"))
        .y_label_formatter(&|v| format!("{v}"))
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 16))
        .draw()?;
    let measured: Vec<(usize, f64)> = times.iter().map(|t| (t.0 as usize, t.1 / t.2)).collect();
    if let Some(n) = crossing(&measured) {
        let dark = RGBColor(40, 40, 40);
        time_chart.draw_series(LineSeries::new(
            [(n, t_lo), (n, t_hi)],
            dark.stroke_width(2),
        ))?;
        // Beside the line, low in the panel, clear of the legend in the upper left.
        time_chart.draw_series(std::iter::once(Text::new(
            format!(" crossover n ≈ {n:.0}"),
            (n, t_lo * 1.6),
            ("sans-serif", 16).into_font().color(&dark),
        )))?;
    }
    let forward = times.iter().map(|&(n, f, _)| (n, f)).collect();
    chart::series(
        &mut time_chart,
        forward,
        COLORS[0],
        4,
        "forward mode: ⌈n/16⌉ sweeps",
    )?;
    let reverse = times.iter().map(|&(n, _, r)| (n, r)).collect();
    let label = "reverse mode: 1 recording + ⌈m/8⌉ sweeps";
    chart::series(&mut time_chart, reverse, COLORS[3], 4, label)?;
    chart::legend(&mut time_chart)?;
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
    fn crossing_interpolates_on_log_scales() {
        // Ratios 1/2 at n = 4 and 2 at n = 16: equal cost halfway on a log scale, at n = 8.
        let n = super::crossing(&[(1, 0.25), (4, 0.5), (16, 2.0)]).unwrap();
        assert!((n - 8.0).abs() < 1e-12, "{n}");
        assert_eq!(super::crossing(&[(1, 2.0), (2, 3.0)]), None);
    }
}
