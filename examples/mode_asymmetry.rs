//! Why two modes: forward and reverse Jacobian time over a grid of input and output sizes.
//!
//! A forward sweep gives one *column* of the Jacobian (16 with the 16-tangent dual), a reverse
//! sweep one *row* (8 with the 8-adjoint sweep), so a full m×n Jacobian costs about ⌈n/16⌉
//! forward sweeps or one recording plus ⌈m/8⌉ reverse sweeps. This program measures both on the
//! dense tanh layer f(x) = tanh(A·sin x), A an m×n matrix, for n and m = 1, 2, 4, …, 512 (both
//! modes forced, one thread), prints the ratio forward time / reverse time and where it crosses
//! 1, and draws the chart `docs/mode_asymmetry.svg` (or the path given as the first argument).
//!
//! Run: `cargo run --release --example mode_asymmetry [-- path/to/chart.svg]`

use jacobian::{CostReport, Function, Mode, Op, cost_report_with_runs, estimate};
use plotters::prelude::*;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The dense tanh layer `f(x) = tanh(A·sin x)` with `A_ij = sin(i + 2j)/n`: n sines, m·n
/// multiply-adds and m tanh, about 2·m·n nodes on a reverse tape.
struct DenseTanh {
    a: Vec<f64>,
    n: usize,
    m: usize,
}

impl DenseTanh {
    fn new(n: usize, m: usize) -> DenseTanh {
        let a = (0..m)
            .flat_map(|i| (0..n).map(move |j| ((i + 2 * j) as f64).sin() / n as f64))
            .collect();
        DenseTanh { a, n, m }
    }
}

impl Function for DenseTanh {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let s: Vec<T> = x.iter().map(|v| v.sin()).collect();
        self.a
            .chunks_exact(self.n)
            .map(|row| {
                row.iter()
                    .zip(&s)
                    .map(|(&a, &s)| T::constant(a) * s)
                    .sum::<T>()
                    .tanh()
            })
            .collect()
    }
    fn sizes(&self) -> Option<(usize, usize)> {
        Some((self.n, self.m))
    }
}

/// Passes over the grid, and timed runs per mode and cell in each pass.
const PASSES: usize = 3;
const RUNS: usize = 3;
/// The sizes of the grid: 1, 2, 4, …, 512.
const SIZES: [usize; 10] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];
/// The output counts drawn as lines in the chart.
const CHART_M: [usize; 5] = [1, 8, 32, 128, 512];
/// The output count of the chart's right panel (absolute times).
const TIMES_M: usize = 32;
/// One colour per line of the chart (ColorBrewer Set1: distinct, readable on white).
const COLORS: [RGBColor; 5] = [
    RGBColor(228, 26, 28),
    RGBColor(255, 127, 0),
    RGBColor(77, 175, 74),
    RGBColor(55, 126, 184),
    RGBColor(152, 78, 163),
];

/// One cell of the grid.
struct Cell {
    n: usize,
    m: usize,
    /// One cost report per pass over the grid.
    reports: Vec<CostReport>,
}

impl Cell {
    /// The median time of one Jacobian in `mode` over the passes.
    fn seconds(&self, mode: Mode) -> f64 {
        let mut t: Vec<f64> = self
            .reports
            .iter()
            .map(|r| match mode {
                Mode::Forward => r.forward.time.as_secs_f64(),
                _ => r.reverse.time.as_secs_f64(),
            })
            .collect();
        t.sort_by(f64::total_cmp);
        t[t.len() / 2]
    }
    /// The mode the plan chooses (the same in every pass).
    fn auto(&self) -> Mode {
        self.reports[0].auto.mode
    }
    /// The mode that measured faster.
    fn faster(&self) -> Mode {
        if self.ratio() <= 1.0 {
            Mode::Forward
        } else {
            Mode::Reverse
        }
    }
    /// Forward time / reverse time: above 1, reverse mode is faster.
    fn ratio(&self) -> f64 {
        self.seconds(Mode::Forward) / self.seconds(Mode::Reverse)
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
    let path = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
            manifest
                .parent()
                .unwrap_or(manifest)
                .join("docs/mode_asymmetry.svg")
        });

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
    for n in SIZES {
        print!("{n:>7}");
    }
    println!("   crossover n: measured  model");
    for m in SIZES {
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
            chosen / c.seconds(Mode::Forward).min(c.seconds(Mode::Reverse))
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
        cell(512, 4).reports[0]
    );
    println!("{}\n", cell(4, 512).reports[0]);

    draw(&cells, &path)?;
    println!("chart written to {}", path.display());
    println!("took {:.1?}", started.elapsed());
    Ok(())
}

/// The chart: left, the ratio forward/reverse against n for several m (log scales), with the
/// line of equal cost; right, both times against n for m = [`TIMES_M`].
fn draw(cells: &[Cell], path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let root = SVGBackend::new(path, (1200, 540)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(
        "Forward vs reverse mode: Jacobian of f(x) = tanh(A·sin x), A m×n (one thread)",
        ("sans-serif", 22),
    )?;
    let (left, right) = root.split_horizontally(620);
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
    let mut chart = ChartBuilder::on(&left)
        .caption(
            "time ratio forward / reverse (above 1: reverse is faster)",
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d((1.0..700.0).log_scale(), (lo..hi).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("n (inputs)")
        .y_desc("forward time / reverse time")
        .x_label_formatter(&|v| format!("{v:.0}"))
        .y_label_formatter(&|v| format!("{v}"))
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 16))
        .draw()?;
    chart
        .draw_series(LineSeries::new(
            [(1.0, 1.0), (700.0, 1.0)],
            BLACK.stroke_width(2),
        ))?
        .label("equal cost")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], BLACK.stroke_width(2)));
    for (k, &m) in CHART_M.iter().enumerate() {
        let color = COLORS[k % COLORS.len()];
        let points: Vec<(f64, f64)> = SIZES
            .iter()
            .filter_map(|&n| find(n, m).map(|c| (n as f64, c.ratio())))
            .collect();
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))?
            .label(format!("m = {m} outputs"))
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2)));
        chart.draw_series(PointSeries::of_element(points, 4, color, &|p, s, st| {
            Circle::new(p, s, st.filled())
        }))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .draw()?;

    // Right: absolute times for one m.
    let times: Vec<(f64, f64, f64)> = SIZES
        .iter()
        .filter_map(|&n| {
            find(n, TIMES_M).map(|c| {
                let us = |mode| c.seconds(mode) * 1e6;
                (n as f64, us(Mode::Forward), us(Mode::Reverse))
            })
        })
        .collect();
    let t_lo = times
        .iter()
        .map(|t| t.1.min(t.2))
        .fold(f64::INFINITY, f64::min)
        / 1.5;
    let t_hi = times.iter().map(|t| t.1.max(t.2)).fold(0.0, f64::max) * 1.5;
    let mut chart = ChartBuilder::on(&right)
        .caption(
            format!("time for m = {TIMES_M} outputs"),
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d((1.0..700.0).log_scale(), (t_lo..t_hi).log_scale())?;
    chart
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
        let grey = RGBColor(110, 110, 110);
        chart.draw_series(LineSeries::new(
            [(n, t_lo), (n, t_hi)],
            grey.stroke_width(1),
        ))?;
        chart.draw_series(std::iter::once(Text::new(
            format!(" crossover n ≈ {n:.0}"),
            (n, t_lo * 2.0),
            ("sans-serif", 14).into_font().color(&grey),
        )))?;
    }
    for (mode, color) in [(Mode::Forward, COLORS[0]), (Mode::Reverse, COLORS[3])] {
        let points: Vec<(f64, f64)> = times
            .iter()
            .map(|&(n, f, r)| (n, if mode == Mode::Forward { f } else { r }))
            .collect();
        let label = match mode {
            Mode::Forward => "forward mode: ⌈n/16⌉ sweeps",
            _ => "reverse mode: 1 recording + ⌈m/8⌉ sweeps",
        };
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))?
            .label(label)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2)));
        chart.draw_series(PointSeries::of_element(points, 4, color, &|p, s, st| {
            Circle::new(p, s, st.filled())
        }))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .draw()?;
    root.present()?;
    Ok(())
}
