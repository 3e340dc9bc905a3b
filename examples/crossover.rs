//! Where forward mode stops paying: the sweeps each mode runs for an m×n Jacobian, the cost
//! model that turns them into a choice, and the chart of that choice.
//!
//! A forward sweep fills columns of the Jacobian (up to 16 per sweep), a reverse sweep rows (up
//! to 8 per sweep, after one recording). So forward mode's cost grows with n and not with m,
//! reverse mode's with m and not with n. This program counts the sweeps each mode runs on the
//! dense layer f(x) = tanh(A·sin x) for a tall, a wide and a square shape, then draws the chart
//! `crossover.svg` from numbers the library computes, not from timings:
//!
//! * left, the plan's estimate of each mode's cost in evaluations of f ([`wengert::estimate`])
//!   against n: one line for forward mode (it does not depend on m), one flat line for reverse
//!   mode per m, and where they cross;
//! * right, for n and m from 1 to 512, the mode [`wengert::jacobian`] chooses, read from the
//!   plan of a real run.
//!
//! The chart goes to `target/` (`-- --docs`: the guide's copy in `docs/guide/img/`). The
//! measured counterpart, with times, is `cargo run --release --example mode_asymmetry`. The
//! test draws the chart in memory and checks it against the guide's copy.
//!
//! Run: `cargo run --release --example crossover [-- --docs]`

use examples::picture::{self, Svg};
use wengert::{Function, Mode, Op, estimate, jacobian, jacobian_with};
use workloads::DenseTanh;

/// The sizes of the chart's grid: 1, 2, 4, …, 512.
const SIZES: [usize; 10] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];
/// The output counts drawn as reverse-mode lines in the left panel.
const LINES_M: [usize; 3] = [1, 8, 64];
/// The colours of the two modes (forward blue, reverse orange), and of the lines per m.
const FORWARD: &str = "#2f6db5";
const REVERSE: &str = "#e07b00";
const REVERSE_LINES: [&str; 3] = ["#f2b45c", "#e07b00", "#8a4a00"];

/// yᵢ = x₍ᵢ mod n₎ · x₍ᵢ₊₁ mod n₎ for i < m: any n, any m, cheap, so that the plan of every cell
/// of the chart comes from a real run in a moment.
struct Ring {
    m: usize,
}

impl Function for Ring {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let n = x.len();
        (0..self.m).map(|i| x[i % n] * x[(i + 1) % n]).collect()
    }
}

/// "1 sweep", "4 sweeps".
fn sweeps(k: usize) -> String {
    format!("{k} sweep{}", if k == 1 { "" } else { "s" })
}

/// The sweeps each mode runs on the dense layer, counted by the plans of forced runs.
fn count_sweeps() -> Result<(), wengert::Error> {
    println!("f(x) = tanh(A·sin x), A m×n: the sweeps of each mode, counted by the plans\n");
    println!(
        "{:>5} {:>5}  {:>24}  {:>34}  plan chooses",
        "n", "m", "forward", "reverse"
    );
    for (n, m) in [(4, 256), (256, 4), (64, 64)] {
        let f = DenseTanh::new(n, m);
        let x: Vec<f64> = (0..n).map(|j| 0.1 * (j % 17) as f64 - 0.3).collect();
        let fw = jacobian_with(&f, &x, Mode::Forward)?.plan;
        let rv = jacobian_with(&f, &x, Mode::Reverse)?.plan;
        let auto = jacobian(&f, &x)?.plan;
        let forward = format!("{} of {} tangents", sweeps(fw.sweeps), fw.lanes);
        let reverse = format!(
            "{} of {} adjoints, {} nodes",
            sweeps(rv.sweeps),
            rv.lanes,
            rv.tape.nodes
        );
        println!(
            "{n:>5} {m:>5}  {forward:>24}  {reverse:>34}  {:?}",
            auto.mode
        );
    }
    println!(
        "\nForward sweeps: ⌈n/N⌉ whatever m. Reverse: one recording, then ⌈m/Q⌉ sweeps whatever n.\n"
    );
    Ok(())
}

/// The mode the plan of a real run chooses for each (n, m) of [`SIZES`], by row of m.
fn choices() -> Result<Vec<Vec<Mode>>, wengert::Error> {
    SIZES
        .iter()
        .map(|&m| {
            SIZES
                .iter()
                .map(|&n| {
                    let x: Vec<f64> = (0..n).map(|j| 1.0 + 0.01 * j as f64).collect();
                    Ok(jacobian(&Ring { m }, &x)?.plan.mode.into())
                })
                .collect()
        })
        .collect()
}

/// The smallest n at which the estimate of reverse mode is below forward mode's, for m outputs.
fn crossover(m: usize) -> Option<usize> {
    (1..=4096).find(|&n| {
        let e = estimate(n, m);
        e.reverse < e.forward
    })
}

/// Panel geometry: the left panel's plot area, the right panel's grid.
const WIDTH: f64 = 1100.0;
const HEIGHT: f64 = 520.0;
const PLOT: (f64, f64, f64, f64) = (80.0, 70.0, 420.0, 340.0); // x, y, width, height
const GRID: (f64, f64, f64) = (660.0, 70.0, 34.0); // x, y, cell

/// x of n on the left panel's log₂ axis, 1 … 512.
fn px(n: f64) -> f64 {
    PLOT.0 + PLOT.2 * n.log2() / 9.0
}

/// y of a cost on the left panel's log₁₀ axis, 1 … 200.
fn py(c: f64) -> f64 {
    PLOT.1 + PLOT.3 * (1.0 - c.log10() / 200_f64.log10())
}

/// The chart: left, the estimated cost of each mode against n; right, the plan's choice over
/// (n, m).
fn draw(choices: &[Vec<Mode>]) -> String {
    let mut svg = Svg::new(WIDTH, HEIGHT);
    svg.text(
        WIDTH / 2.0,
        30.0,
        19.0,
        "middle",
        "#222",
        "Forward or reverse: the cost model of the plan, for an m×n Jacobian",
    );

    // Left panel: axes and ticks.
    let (x0, y0, w, h) = PLOT;
    svg.text(
        x0 + w / 2.0,
        y0 - 12.0,
        15.0,
        "middle",
        "#222",
        "estimated cost, in evaluations of f",
    );
    for n in SIZES {
        let x = px(n as f64);
        svg.line((x, y0), (x, y0 + h), "#e6e6e6", 1.0, false, false);
        svg.text(x, y0 + h + 18.0, 12.0, "middle", "#444", &n.to_string());
    }
    for c in [1.0, 10.0, 100.0] {
        let y = py(c);
        svg.line((x0, y), (x0 + w, y), "#e6e6e6", 1.0, false, false);
        svg.text(x0 - 8.0, y + 4.0, 12.0, "end", "#444", &format!("{c}"));
    }
    svg.line((x0, y0 + h), (x0 + w, y0 + h), "#444", 1.0, false, false);
    svg.line((x0, y0), (x0, y0 + h), "#444", 1.0, false, false);
    svg.text(
        x0 + w / 2.0,
        y0 + h + 40.0,
        14.0,
        "middle",
        "#222",
        "n (inputs)",
    );

    // Forward mode: ⌈n/N⌉ sweeps of N tangents, whatever m (the steps: N grows to 16).
    let forward: Vec<(f64, f64)> = (1..=512)
        .map(|n| (px(n as f64), py(estimate(n, 1).forward)))
        .collect();
    svg.polyline(&forward, FORWARD, 2.5);
    // Reverse mode: one recording and ⌈m/Q⌉ sweeps, whatever n: flat lines, one per m.
    for (k, m) in LINES_M.into_iter().enumerate() {
        let y = py(estimate(1, m).reverse);
        svg.line((x0, y), (x0 + w, y), REVERSE_LINES[k], 2.5, false, false);
        // Labels below the line, clear of the staircase right of the crossing, but those of
        // the middle line, which lies close above the lowest.
        let dy = if k == 1 { -7.0 } else { 16.0 };
        let label = format!("reverse, m = {m}");
        svg.text(x0 + 6.0, y + dy, 12.0, "start", REVERSE_LINES[k], &label);
        if let Some(n) = crossover(m) {
            let x = px(n as f64);
            svg.circle(x, y, 4.5, "#222");
            svg.text(x + 6.0, y + dy, 12.0, "start", "#222", &format!("n = {n}"));
        }
    }
    svg.text(
        px(512.0) - 4.0,
        py(estimate(512, 1).forward) - 8.0,
        12.0,
        "end",
        FORWARD,
        "forward, any m",
    );

    // Right panel: the plan's choice over the grid, m upwards, n to the right.
    let (gx, gy, cell) = GRID;
    let side = cell * SIZES.len() as f64;
    svg.text(
        gx + side / 2.0,
        gy - 12.0,
        15.0,
        "middle",
        "#222",
        "the mode jacobian() chooses",
    );
    for (r, row) in choices.iter().enumerate() {
        for (c, mode) in row.iter().enumerate() {
            let fill = if *mode == Mode::Forward {
                FORWARD
            } else {
                REVERSE
            };
            let y = gy + side - (r + 1) as f64 * cell;
            svg.rect(
                gx + c as f64 * cell,
                y,
                cell - 2.0,
                cell - 2.0,
                fill,
                "none",
            );
        }
    }
    for (k, s) in SIZES.iter().enumerate() {
        let label = s.to_string();
        let centre = (k as f64 + 0.5) * cell - 1.0;
        svg.text(
            gx + centre,
            gy + side + 16.0,
            12.0,
            "middle",
            "#444",
            &label,
        );
        svg.text(
            gx - 6.0,
            gy + side - centre + 4.0,
            12.0,
            "end",
            "#444",
            &label,
        );
    }
    // The diagonal n = m: the boundary is not on it.
    svg.line((gx, gy + side), (gx + side, gy), "#222", 1.5, true, false);
    svg.text(
        gx + side / 2.0,
        gy + side + 38.0,
        14.0,
        "middle",
        "#222",
        "n (inputs)",
    );
    svg.text(gx - 44.0, gy + side / 2.0, 14.0, "middle", "#222", "m");
    let legend_y = gy + side + 62.0;
    svg.rect(gx, legend_y - 11.0, 14.0, 14.0, FORWARD, "none");
    svg.text(gx + 20.0, legend_y, 13.0, "start", "#222", "forward");
    svg.rect(gx + 100.0, legend_y - 11.0, 14.0, 14.0, REVERSE, "none");
    svg.text(gx + 120.0, legend_y, 13.0, "start", "#222", "reverse");
    svg.line(
        (gx + 200.0, legend_y - 4.0),
        (gx + 230.0, legend_y - 4.0),
        "#222",
        1.5,
        true,
        false,
    );
    svg.text(gx + 236.0, legend_y, 13.0, "start", "#222", "n = m");

    let notes = [
        "Forward mode pays per input, reverse mode per output and once for its recording:",
        "reverse mode wins to the right of each crossing, where the Jacobian is wide.",
    ];
    for (k, note) in notes.iter().enumerate() {
        svg.text(
            x0,
            HEIGHT - 36.0 + 18.0 * k as f64,
            13.0,
            "start",
            "#444",
            note,
        );
    }
    svg.finish()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    run(false)
}

fn run(under_test: bool) -> Result<(), Box<dyn std::error::Error>> {
    count_sweeps()?;
    for m in LINES_M {
        let n = crossover(m).map_or("never".into(), |n| n.to_string());
        println!("m = {m:>3}: the plan prefers reverse mode from n = {n}");
    }
    let path = picture::write("crossover.svg", &draw(&choices()?), under_test)?;
    println!("chart: {}", path.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs() {
        super::run(true).unwrap();
    }

    #[test]
    fn the_guide_shows_what_the_code_draws() {
        picture::check("crossover.svg", &draw(&choices().unwrap()), "crossover");
    }

    #[test]
    fn each_mode_pays_for_its_own_side() {
        // Forward sweeps depend on n only, reverse sweeps on m only.
        let x = [0.5; 40];
        let sweeps = |m, mode| jacobian_with(&Ring { m }, &x, mode).unwrap().plan.sweeps;
        assert_eq!(sweeps(1, Mode::Forward), sweeps(30, Mode::Forward));
        assert_eq!(sweeps(3, Mode::Reverse), 1);
        assert!(sweeps(30, Mode::Reverse) > sweeps(3, Mode::Reverse));
    }
}
