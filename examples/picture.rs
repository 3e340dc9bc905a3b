//! The guide's pictures: small hand-written SVG, where each lives, and the check that the copy in
//! the repository is what the code draws now.
//!
//! A picture of the guide (`docs/guide/img/NAME.svg`) is drawn by the example its chapter names,
//! from numbers the code counts (values, adjoints, colourings, the cost model), never from
//! timings, so the same code draws the same bytes on every machine. The example writes it with
//! `-- --docs`; its test draws it in memory and [`check`]s it against the copy, failing with the
//! command that redraws it.
//!
//! ```
//! use examples::picture::Svg;
//! let mut svg = Svg::new(120.0, 40.0);
//! svg.text(60.0, 25.0, 14.0, "middle", "#000", "x < y & z");
//! let s = svg.finish();
//! assert!(s.starts_with("<svg ") && s.ends_with("</svg>\n"));
//! assert!(s.contains("x &lt; y &amp; z"));
//! ```

use std::fmt::Write;
use std::path::{Path, PathBuf};

/// Where the guide's picture `name` lives: `docs/guide/img/` of the workspace.
///
/// ```
/// let p = examples::picture::guide_path("graph.svg");
/// assert!(p.ends_with("docs/guide/img/graph.svg"));
/// ```
pub fn guide_path(name: &str) -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = manifest.parent().unwrap_or(manifest);
    root.join("docs").join("guide").join("img").join(name)
}

/// Where an example run writes its picture `name`: with `--docs` as its first argument, the
/// guide's copy ([`guide_path`]); with another argument, that path; otherwise `target/`, so that
/// a plain run does not change the repository.
///
/// ```
/// let p = examples::picture::output_path("graph.svg", &[]);
/// assert!(p.ends_with("target/graph.svg"));
/// let d = examples::picture::output_path("graph.svg", &["--docs".into()]);
/// assert_eq!(d, examples::picture::guide_path("graph.svg"));
/// ```
pub fn output_path(name: &str, args: &[String]) -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = manifest.parent().unwrap_or(manifest);
    match args.first().map(String::as_str) {
        Some("--docs") => guide_path(name),
        Some(path) => PathBuf::from(path),
        None => root.join("target").join(name),
    }
}

/// Writes `svg` where the example's command line says ([`output_path`]) and returns the path;
/// under test (`under_test`: the example's `cfg!(test)`), in the temporary directory, since the
/// test harness's arguments are not the example's and a test changes nothing in the repository.
///
/// # Errors
///
/// If the folder cannot be made or the file cannot be written.
pub fn write(name: &str, svg: &str, under_test: bool) -> std::io::Result<PathBuf> {
    let path = if under_test {
        std::env::temp_dir().join(name)
    } else {
        let args: Vec<String> = std::env::args().skip(1).collect();
        output_path(name, &args)
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&path, svg)?;
    Ok(path)
}

/// Asserts that the guide's copy of picture `name` is `svg`, byte for byte.
///
/// # Panics
///
/// If the copy is missing or differs, naming the command (`example`'s `-- --docs` run) that
/// draws it again.
#[track_caller]
pub fn check(name: &str, svg: &str, example: &str) {
    let path = guide_path(name);
    let kept = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        kept == svg,
        "{} is not what the code draws now; redraw it with \
         `cargo run --release --example {example} -- --docs`",
        path.display()
    );
}

/// An SVG document written by hand: the few shapes the guide's pictures need, with numbers
/// printed to two decimals so that the text is the same on every machine.
///
/// ```
/// use examples::picture::Svg;
/// let mut svg = Svg::new(10.0, 10.0);
/// svg.circle(1.0 / 3.0, 2.5, -0.001, "#000");
/// assert!(svg.finish().contains("<circle cx=\"0.33\" cy=\"2.5\" r=\"0\" fill=\"#000\"/>"));
/// ```
pub struct Svg {
    out: String,
}

/// A number as SVG takes it: two decimals, trailing zeros dropped.
fn n(v: f64) -> String {
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.into() }
}

/// Text with the characters XML reserves escaped.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

impl Svg {
    /// A white canvas of `width` × `height` pixels, with an arrowhead marker (`#arrow`).
    pub fn new(width: f64, height: f64) -> Svg {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
             viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\">",
            w = n(width),
            h = n(height)
        );
        out.push_str(
            "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" \
             markerWidth=\"8\" markerHeight=\"8\" orient=\"auto-start-reverse\">\
             <path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#555\"/></marker></defs>\n",
        );
        let _ = writeln!(
            out,
            "<rect width=\"{}\" height=\"{}\" fill=\"#fff\"/>",
            n(width),
            n(height)
        );
        Svg { out }
    }

    /// A rectangle; `stroke` `"none"` for none.
    pub fn rect(&mut self, x: f64, y: f64, w: f64, h: f64, fill: &str, stroke: &str) {
        let _ = writeln!(
            self.out,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"3\" fill=\"{fill}\" \
             stroke=\"{stroke}\"/>",
            n(x),
            n(y),
            n(w),
            n(h)
        );
    }

    /// A line of `width` pixels; `dashed` draws it in dashes, `arrow` ends it in an arrowhead.
    #[allow(clippy::too_many_arguments)]
    pub fn line(
        &mut self,
        (x1, y1): (f64, f64),
        (x2, y2): (f64, f64),
        color: &str,
        width: f64,
        dashed: bool,
        arrow: bool,
    ) {
        let _ = writeln!(
            self.out,
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{color}\" \
             stroke-width=\"{}\"{}{}/>",
            n(x1),
            n(y1),
            n(x2),
            n(y2),
            n(width),
            if dashed {
                " stroke-dasharray=\"6 4\""
            } else {
                ""
            },
            if arrow {
                " marker-end=\"url(#arrow)\""
            } else {
                ""
            }
        );
    }

    /// A polyline through `points`.
    pub fn polyline(&mut self, points: &[(f64, f64)], color: &str, width: f64) {
        let mut d = String::new();
        for (k, (x, y)) in points.iter().enumerate() {
            let _ = write!(d, "{}{},{}", if k == 0 { "" } else { " " }, n(*x), n(*y));
        }
        let _ = writeln!(
            self.out,
            "<polyline points=\"{d}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"{}\"/>",
            n(width)
        );
    }

    /// A filled circle.
    pub fn circle(&mut self, x: f64, y: f64, r: f64, fill: &str) {
        let _ = writeln!(
            self.out,
            "<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{fill}\"/>",
            n(x),
            n(y),
            n(r)
        );
    }

    /// Text at (x, y) (its baseline), `anchor` `"start"`, `"middle"` or `"end"`.
    pub fn text(&mut self, x: f64, y: f64, size: f64, anchor: &str, color: &str, text: &str) {
        let _ = writeln!(
            self.out,
            "<text x=\"{}\" y=\"{}\" font-size=\"{}\" text-anchor=\"{anchor}\" \
             fill=\"{color}\">{}</text>",
            n(x),
            n(y),
            n(size),
            escape(text)
        );
    }

    /// The document.
    pub fn finish(mut self) -> String {
        self.out.push_str("</svg>\n");
        self.out
    }
}
