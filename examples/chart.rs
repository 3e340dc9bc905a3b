//! What the examples' charts share (plotters, SVG): where a chart is written, log axes with
//! ticks at the powers of two where the data are, a measured series as a line with its points
//! and a legend entry, and the legend box.
//!
//! ```
//! use examples::chart::powers_of_two;
//! assert_eq!(powers_of_two(1.0, 700.0), vec![1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0]);
//! ```

use plotters::coord::combinators::{LogCoord, WithKeyPoints};
use plotters::coord::ranged1d::Ranged;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

/// One colour per line (ColorBrewer Set1: distinct, readable on white).
pub const COLORS: [RGBColor; 6] = [
    RGBColor(228, 26, 28),
    RGBColor(255, 127, 0),
    RGBColor(77, 175, 74),
    RGBColor(55, 126, 184),
    RGBColor(152, 78, 163),
    RGBColor(166, 86, 40),
];

/// Where an example writes its chart `name`: the path given as the first argument; with
/// `--docs`, the tracked copy in `docs/` that the guide shows; with `--results`, the copy in
/// `benches/` that the results page shows (a chart of measured times); otherwise `target/`, so
/// that a run does not change the repository.
///
/// ```
/// let p = examples::chart::output_path("demo.svg", &[]);
/// assert!(p.ends_with("target/demo.svg"));
/// let d = examples::chart::output_path("demo.svg", &["--docs".into()]);
/// assert!(d.ends_with("docs/demo.svg"));
/// let r = examples::chart::output_path("demo.svg", &["--results".into()]);
/// assert!(r.ends_with("benches/demo.svg"));
/// ```
pub fn output_path(name: &str, args: &[String]) -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = manifest.parent().unwrap_or(manifest);
    match args.first().map(String::as_str) {
        Some("--docs") => root.join("docs").join(name),
        Some("--results") => root.join("benches").join(name),
        Some(path) => PathBuf::from(path),
        None => root.join("target").join(name),
    }
}

/// Where an example writes its chart `name`: as [`output_path`] says, from the example's
/// command line; under test (`under_test`: the example's `cfg!(test)`), in the temporary
/// directory, since the test harness's arguments are not the example's and a test writes
/// nothing into the repository.
///
/// ```
/// let p = examples::chart::chart_path("demo.svg", true);
/// assert_eq!(p, std::env::temp_dir().join("demo.svg"));
/// ```
pub fn chart_path(name: &str, under_test: bool) -> PathBuf {
    if under_test {
        return std::env::temp_dir().join(name);
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    output_path(name, &args)
}

/// The powers of two in `[lo, hi]`: the tick marks of a log axis over sizes 1, 2, 4, …
pub fn powers_of_two(lo: f64, hi: f64) -> Vec<f64> {
    (0..64)
        .map(|k| 2f64.powi(k))
        .skip_while(|&v| v < lo)
        .take_while(|&v| v <= hi)
        .collect()
}

/// A log axis over `[lo, hi]` whose ticks are the powers of two.
pub fn log2_axis(lo: f64, hi: f64) -> WithKeyPoints<LogCoord<f64>> {
    (lo..hi).log_scale().with_key_points(powers_of_two(lo, hi))
}

/// Draws `points` as a line of `color` with a dot at each point (`dot` pixels), and gives it a
/// legend entry `label`.
pub fn series<DB: DrawingBackend, X, Y>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
    points: Vec<(f64, f64)>,
    color: RGBColor,
    dot: u32,
    label: impl Into<String>,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    chart
        .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))?
        .label(label)
        .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2)));
    chart.draw_series(PointSeries::of_element(points, dot, color, &|p, s, st| {
        Circle::new(p, s, st.filled())
    }))?;
    Ok(())
}

/// The legend box, in the upper left corner.
pub fn legend<'a, DB: DrawingBackend + 'a, X, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .draw()
}
