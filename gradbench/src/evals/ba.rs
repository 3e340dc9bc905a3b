//! `ba`: bundle adjustment (ADBench's), n cameras and m points seen in p observations, each
//! giving two weighted reprojection errors and one weight error.
//!
//! A camera has 11 parameters `[r₀ r₁ r₂ C₀ C₁ C₂ f u₀ v₀ k₁ k₂]`: a rotation as a Rodrigues
//! vector r, the centre C, the focal length f, the principal point (u₀, v₀) and two radial
//! distortion coefficients. Observation i sees point `i mod m` from camera `i mod n` with
//! weight wᵢ and measured feature `featᵢ`:
//!
//! ```text
//! X_cam = R(r)·(X − C)                          Rodrigues' rotation
//! p     = (X_cam,₀, X_cam,₁) / X_cam,₂           projection
//! proj  = p·(1 + k₁‖p‖² + k₂‖p‖⁴)·f + (u₀, v₀)
//! rows 2i, 2i + 1: wᵢ·(proj − featᵢ)             reprojection errors
//! row 2p + i:      1 − wᵢ²                       weight error
//! ```
//!
//! The eval sends one camera, one point, one weight and one feature, which every camera,
//! point, observation and feature copies. The objective is written once, as
//! [`BundleAdjustment`], over any [`Op`], as a function of all `11n + 3m + p` parameters
//! (cameras, then points, then weights) with its `3p` residuals as outputs. `objective`
//! evaluates it on `f64` and answers the first observation's residuals and the count of each
//! kind. `jacobian` computes its whole sparse Jacobian by a [`PreparedSparseJacobian`]: the
//! pattern detected (globally: the rotation has no branch on a value), coloured and planned,
//! and one Jacobian taken, when the message is prepared; the compressed sweeps run afresh on
//! one thread at every run. The answer is the suite's deduplicated form of the Jacobian in
//! compressed sparse rows: the first 30 entries of each array and its last.

use crate::Run;
use crate::evals::Primal;
use crate::json;
use serde_json::Value;
use wengert::sparse::{PreparedSparseJacobian, SparseJacobian, SparseOptions};
use wengert::{Function, Op};

/// The functions of `ba`.
const FUNCTIONS: [&str; 2] = ["objective", "jacobian"];

/// Parameters per camera.
const CAMERA: usize = 11;

/// Entries per observation in the suite's Jacobian rows: the camera's 11, the point's 3, the
/// weight.
const ROW: usize = CAMERA + 3 + 1;

/// The most parameters (and residuals) a problem may have: sparsity detection numbers them in
/// 32 bits.
const LIMIT: usize = 1 << 31;

/// Prepares a function of `ba`: `objective` (`{reproj_error, w_err}`) or `jacobian`
/// (`{rows, cols, vals}`).
pub fn prepare(function: &str, input: &Value) -> Result<Box<dyn Run>, String> {
    if !FUNCTIONS.contains(&function) {
        return Err(crate::run::unknown("ba", function, &FUNCTIONS));
    }
    let (f, params) = read(input)?;
    if function == "objective" {
        return Ok(Primal::boxed(f, params, objective));
    }
    let options = SparseOptions {
        threads: false,
        ..SparseOptions::default()
    };
    let (n, m, p) = (f.n, f.m, f.p);
    let mut prepared =
        PreparedSparseJacobian::with_options(f, &params, options).map_err(|e| e.to_string())?;
    // One Jacobian now builds what every run reuses (how the compressed sweeps are read back,
    // the result's buffers), so that each run costs the same.
    let mut jacobian = prepared.output();
    prepared
        .jacobian_into(&params, &mut jacobian)
        .map_err(|e| e.to_string())?;
    Ok(Box::new(Jacobian {
        prepared,
        params,
        jacobian,
        n,
        m,
        p,
        vals: Vec::new(),
    }))
}

/// The residuals of a bundle adjustment problem as a function of its parameters
/// `[cameras (11n), points (3m), weights (p)]`: rows 2i and 2i + 1 the reprojection errors of
/// observation i, row 2p + i its weight error.
#[derive(Clone, Debug, PartialEq)]
pub struct BundleAdjustment {
    /// Cameras (at least 1).
    pub n: usize,
    /// Points (at least 1).
    pub m: usize,
    /// Observations.
    pub p: usize,
    /// The measured feature of every observation.
    pub feat: [f64; 2],
}

impl BundleAdjustment {
    /// Length of the parameters: 11n + 3m + p.
    pub fn params(&self) -> usize {
        CAMERA * self.n + 3 * self.m + self.p
    }
}

impl Function for BundleAdjustment {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let (cams, rest) = x.split_at(CAMERA * self.n);
        let (points, weights) = rest.split_at(3 * self.m);
        let mut r = Vec::with_capacity(3 * self.p);
        for (i, &w) in weights.iter().enumerate() {
            let (cam, point) = (i % self.n, i % self.m);
            let proj = project(
                &cams[CAMERA * cam..CAMERA * (cam + 1)],
                &points[3 * point..3 * point + 3],
            );
            r.push(w * (proj[0] - self.feat[0]));
            r.push(w * (proj[1] - self.feat[1]));
        }
        r.extend(weights.iter().map(|&w| T::one() - w * w));
        r
    }

    fn sizes(&self) -> Option<(usize, usize)> {
        Some((self.params(), 3 * self.p))
    }
}

/// `a × b`.
fn cross<T: Op>(a: &[T], b: &[T]) -> [T; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// Below this squared angle the rotation takes this squared angle instead (see [`rotate`]).
const TINY: f64 = 1e-300;

/// Rotates `x` by the Rodrigues vector `rot` (axis ω = rot/θ, angle θ = ‖rot‖) in ADBench's
/// form, `x cos θ + (ω × x) sin θ + ω (ω·x)(1 − cos θ)`.
///
/// ADBench branches at θ = 0, where ω is undefined, to the first-order form `x + rot × x`.
/// Here θ² is raised to at least 10⁻³⁰⁰ by a `max` instead, which sparsity detection follows
/// without values: at rot = 0 the value is `x` exactly (cos 10⁻¹⁵⁰ rounds to 1, ω is 0) and
/// the derivative is the first-order form's (`d(ω × x) sin θ = d rot × x`, the constant angle
/// carrying none), as in ADBench; for θ² ≥ 10⁻³⁰⁰ nothing changes.
fn rotate<T: Op>(rot: &[T], x: &[T]) -> [T; 3] {
    let sqtheta = rot[0] * rot[0] + rot[1] * rot[1] + rot[2] * rot[2];
    let theta = sqtheta.max(T::constant(TINY)).sqrt();
    let (sin, cos) = (theta.sin(), theta.cos());
    let inverse = theta.recip();
    let w = [rot[0] * inverse, rot[1] * inverse, rot[2] * inverse];
    let w_cross_x = cross(&w, x);
    let tmp = (w[0] * x[0] + w[1] * x[1] + w[2] * x[2]) * (T::one() - cos);
    core::array::from_fn(|i| x[i] * cos + w_cross_x[i] * sin + w[i] * tmp)
}

/// The projection of `point` by the 11 parameters of `cam`, distorted and in pixels.
fn project<T: Op>(cam: &[T], point: &[T]) -> [T; 2] {
    let centred = [point[0] - cam[3], point[1] - cam[4], point[2] - cam[5]];
    let x = rotate(&cam[..3], &centred);
    let p = [x[0] / x[2], x[1] / x[2]];
    let rsq = p[0] * p[0] + p[1] * p[1];
    let l = T::one() + cam[9] * rsq + cam[10] * rsq * rsq;
    [p[0] * l * cam[6] + cam[7], p[1] * l * cam[6] + cam[8]]
}

/// The objective's answer from the 3p residuals: observation 0's two reprojection errors and
/// its weight error, each with its count p.
fn objective(r: &[f64]) -> Value {
    let p = r.len() / 3;
    serde_json::json!({
        "reproj_error": {"elements": [r[0], r[1]], "repeated": p},
        "w_err": {"element": r[2 * p], "repeated": p},
    })
}

/// The Jacobian, prepared, and the entries the suite reads from it.
struct Jacobian {
    prepared: PreparedSparseJacobian<BundleAdjustment>,
    params: Vec<f64>,
    jacobian: SparseJacobian,
    n: usize,
    m: usize,
    p: usize,
    /// The 31 values of the answer (empty before the first run).
    vals: Vec<f64>,
}

impl Jacobian {
    /// The columns of the suite's rows 0 and 1, in its order: camera 0's 11, point 0's 3, the
    /// weight of observation 0.
    fn columns(&self) -> Vec<usize> {
        let (points, weights) = (CAMERA * self.n, CAMERA * self.n + 3 * self.m);
        (0..CAMERA)
            .chain(points..points + 3)
            .chain([weights])
            .collect()
    }

    /// The suite's row pointer at row `i`: 15 entries in each of the 2p reprojection rows, one
    /// in each weight row.
    fn row_start(&self, i: usize) -> usize {
        let reprojection = 2 * self.p;
        if i <= reprojection {
            ROW * i
        } else {
            ROW * reprojection + (i - reprojection)
        }
    }

    /// The values of row `row` at `columns` (zero where the row has no structural nonzero),
    /// or an error if the row has a nonzero in another column.
    fn row_values(&self, row: usize, columns: &[usize]) -> Result<Vec<f64>, String> {
        let a = &self.jacobian.matrix;
        let (start, end) = (a.row_offsets()[row], a.row_offsets()[row + 1]);
        let (cols, vals) = (&a.col_indices()[start..end], &a.values()[start..end]);
        if let Some(c) = cols.iter().find(|c| !columns.contains(c)) {
            return Err(format!(
                "the Jacobian's row {row} has a nonzero in column {c}, outside the suite's \
                 layout {columns:?}"
            ));
        }
        Ok(columns
            .iter()
            .map(|c| cols.binary_search(c).map_or(0.0, |k| vals[k]))
            .collect())
    }
}

impl Run for Jacobian {
    fn run(&mut self) -> Result<(), String> {
        self.prepared
            .jacobian_into(&self.params, &mut self.jacobian)
            .map_err(|e| e.to_string())?;
        let columns = self.columns();
        let mut vals = self.row_values(0, &columns)?;
        vals.extend(self.row_values(1, &columns)?);
        let last_weight = CAMERA * self.n + 3 * self.m + self.p - 1;
        vals.extend(self.row_values(3 * self.p - 1, &[last_weight])?);
        self.vals = vals;
        Ok(())
    }

    /// `{rows, cols, vals}`: the first 30 entries of each array of the suite's CSR matrix and
    /// its last (of the row pointer, the first `min(30, 3p + 1)`).
    fn output(&self) -> Value {
        let rows: Vec<usize> = (0..(2 * ROW).min(3 * self.p + 1))
            .map(|i| self.row_start(i))
            .chain([self.row_start(3 * self.p)])
            .collect();
        let columns = self.columns();
        let last_weight = CAMERA * self.n + 3 * self.m + self.p - 1;
        let cols: Vec<usize> = columns
            .iter()
            .chain(&columns)
            .copied()
            .chain([last_weight])
            .collect();
        serde_json::json!({"rows": rows, "cols": cols, "vals": self.vals})
    }
}

/// The input's problem and its parameters (the camera, point and weight copied), every size
/// checked.
fn read(input: &Value) -> Result<(BundleAdjustment, Vec<f64>), String> {
    let n = json::count(input, "n")?;
    let m = json::count(input, "m")?;
    let p = json::count(input, "p")?;
    let cam = json::vector(input, "cam")?;
    json::expect_len("cam", cam.len(), CAMERA)?;
    let x = json::vector(input, "x")?;
    json::expect_len("x", x.len(), 3)?;
    let w = json::number(input, "w")?;
    let feat = json::vector(input, "feat")?;
    json::expect_len("feat", feat.len(), 2)?;
    if n == 0 || m == 0 || p == 0 {
        return Err(format!(
            "`n`, `m` and `p` must be at least 1, got n = {n}, m = {m}, p = {p}"
        ));
    }
    let size = CAMERA
        .checked_mul(n)
        .zip(m.checked_mul(3))
        .and_then(|(a, b)| a.checked_add(b))
        .and_then(|s| s.checked_add(p))
        .filter(|&s| s < LIMIT && p < LIMIT / 3)
        .ok_or_else(|| {
            format!(
                "the problem is too large: n = {n}, m = {m}, p = {p} make more than 2³¹ \
                 parameters or residuals"
            )
        })?;
    let mut params = Vec::with_capacity(size);
    for _ in 0..n {
        params.extend_from_slice(&cam);
    }
    for _ in 0..m {
        params.extend_from_slice(&x);
    }
    params.resize(size, w);
    let f = BundleAdjustment {
        n,
        m,
        p,
        feat: [feat[0], feat[1]],
    };
    Ok((f, params))
}
