use super::{c, pattern};
use crate::gradbench::Rng;
use crate::{Function, Op};
use jacobian::sparse::Pattern;
use shared_ops::num_traits::Float;

/// GradBench `ba` (ADBench's bundle adjustment): the residuals of N cameras and M points seen
/// in P observations, each observation giving two weighted reprojection errors and one weight
/// error.
///
/// A camera has 11 parameters `[r₁ r₂ r₃ C₁ C₂ C₃ f u₀ v₀ k₁ k₂]`: a rotation as a Rodrigues
/// vector r, the centre C, the focal length f, the principal point (u₀, v₀) and two radial
/// distortion coefficients. Observation i sees point `i mod M` from camera `i mod N` (the
/// suite's assignment) with weight wᵢ and measured feature `featᵢ`:
///
/// ```text
/// X_cam = R(r)·(X − C)                    Rodrigues' rotation
/// p     = (X_cam,₀, X_cam,₁) / X_cam,₂     projection
/// proj  = p·(1 + k₁‖p‖² + k₂‖p‖⁴)·f + (u₀, v₀)
/// reprojection errors 2i, 2i + 1: wᵢ·(proj − featᵢ)
/// weight error 2P + i:            1 − wᵢ²
/// ```
///
/// The inputs are all cameras (11N), then all points (3M), then the weights (P); the outputs the
/// 2P reprojection errors, then the P weight errors, as GradBench orders them. GradBench's
/// sizes are ADBench's BAL problems, e.g. 49 cameras, 7 776 points and 31 843 observations
/// (55 710 inputs, 95 529 outputs).
///
/// Each reprojection row depends on 14 inputs: the camera's 11 but for the other coordinate of
/// the principal point (u₀ for the y row, v₀ for the x row), the point's 3 and the weight.
/// GradBench's sparse Jacobian stores 15 columns in each of those rows (the camera's whole
/// block), so its 31 entries per observation are these 29 structural nonzeros and 2 zeros.
///
/// The data are generated, not read from ADBench's files: cameras near the identity (small
/// rotations and centres), points in front of them (depth 4 to 6), weights near 1, and the
/// features the exact projections plus a deterministic noise of half a pixel.
///
/// ```
/// use workloads::{Function, sparse::BundleAdjustment};
/// let f = BundleAdjustment::new(3, 5, 11);
/// assert_eq!(f.sizes(), Some((3 * 11 + 5 * 3 + 11, 3 * 11)));
/// assert_eq!(f.observation(7), (1, 2)); // camera 7 mod 3, point 7 mod 5
/// let x = f.input();
/// let r = f.eval(&x);
/// assert_eq!(r[2 * 11], 1.0 - x[48] * x[48]); // the first weight error
/// let j = jacobian::jacobian(&f, &x)?;
/// assert_eq!(j.matrix[(22, 48)], -2.0 * x[48]);
/// assert_eq!(f.pattern().nnz(), 11 * 29);
/// # Ok::<(), jacobian::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct BundleAdjustment {
    /// Cameras (N).
    pub n_cams: usize,
    /// Points (M).
    pub n_points: usize,
    /// Observations (P).
    pub n_obs: usize,
    /// The measured feature of each observation, `[x, y]` pairs: 2P numbers.
    pub features: Vec<f64>,
    /// The generated cameras, points and weights (the benchmark input).
    params: Vec<f64>,
}

impl BundleAdjustment {
    /// Parameters per camera.
    pub const CAMERA: usize = 11;

    /// A problem of `n_cams` cameras, `n_points` points and `n_obs` observations, with
    /// generated data (see the type's documentation).
    ///
    /// # Panics
    ///
    /// If there are no cameras or no points (observation i needs camera `i mod N` and point
    /// `i mod M`).
    pub fn new(n_cams: usize, n_points: usize, n_obs: usize) -> BundleAdjustment {
        assert!(
            n_cams > 0 && n_points > 0,
            "bundle adjustment needs a camera and a point, found {n_cams} cameras and {n_points} points"
        );
        let mut rng = Rng::new(4242);
        let mut params = Vec::with_capacity(Self::CAMERA * n_cams + 3 * n_points + n_obs);
        for _ in 0..n_cams {
            params.extend(rng.normals(3).iter().map(|r| 0.01 * r)); // rotation
            params.extend(rng.normals(3).iter().map(|v| 0.1 * v)); // centre
            params.push(400.0 + 20.0 * rng.uniform()); // focal length
            params.extend(rng.normals(2).iter().map(|v| 2.0 * v)); // principal point
            params.push(-0.05 + 0.01 * rng.normal()); // k₁
            params.push(0.01 * rng.normal()); // k₂
        }
        for _ in 0..n_points {
            params.push(2.0 * rng.uniform() - 1.0);
            params.push(2.0 * rng.uniform() - 1.0);
            params.push(4.0 + 2.0 * rng.uniform());
        }
        params.extend((0..n_obs).map(|_| 0.8 + 0.4 * rng.uniform()));

        let mut f = BundleAdjustment {
            n_cams,
            n_points,
            n_obs,
            features: Vec::new(),
            params,
        };
        let (cams, points, _) = f.split(&f.params);
        let mut features = Vec::with_capacity(2 * n_obs);
        for i in 0..n_obs {
            let (cam, point) = f.observation(i);
            let proj = project(
                &cams[cam * Self::CAMERA..(cam + 1) * Self::CAMERA],
                &points[3 * point..3 * point + 3],
            );
            features.extend(proj.iter().map(|p| p + 0.5 * rng.normal()));
        }
        f.features = features;
        f
    }

    /// The benchmark input: the generated cameras, points and weights.
    pub fn input(&self) -> Vec<f64> {
        self.params.clone()
    }

    /// The camera and the point of observation i: `(i mod N, i mod M)`.
    pub fn observation(&self, i: usize) -> (usize, usize) {
        (i % self.n_cams, i % self.n_points)
    }

    /// Input length: 11N + 3M + P.
    fn inputs(&self) -> usize {
        Self::CAMERA * self.n_cams + 3 * self.n_points + self.n_obs
    }

    /// The cameras, the points and the weights of an input.
    fn split<'a, T>(&self, x: &'a [T]) -> (&'a [T], &'a [T], &'a [T]) {
        let (cams, rest) = x.split_at(Self::CAMERA * self.n_cams);
        let (points, weights) = rest.split_at(3 * self.n_points);
        (cams, points, weights)
    }

    /// The 3P residuals, for any `Float`.
    ///
    /// # Panics
    ///
    /// If `x` does not have 11N + 3M + P entries.
    pub fn residuals<T: Float>(&self, x: &[T]) -> Vec<T> {
        assert_eq!(
            x.len(),
            self.inputs(),
            "bundle adjustment takes 11·{} + 3·{} + {} inputs",
            self.n_cams,
            self.n_points,
            self.n_obs
        );
        let (cams, points, weights) = self.split(x);
        let mut r = Vec::with_capacity(3 * self.n_obs);
        for (i, (&w, feat)) in weights
            .iter()
            .zip(self.features.chunks_exact(2))
            .enumerate()
        {
            let (cam, point) = self.observation(i);
            let proj = project(
                &cams[cam * Self::CAMERA..(cam + 1) * Self::CAMERA],
                &points[3 * point..3 * point + 3],
            );
            r.push(w * (proj[0] - c(feat[0])));
            r.push(w * (proj[1] - c(feat[1])));
        }
        r.extend(weights.iter().map(|&w| T::one() - w * w));
        r
    }

    /// The structural nonzeros: 14 in each reprojection row (see the type's documentation), the
    /// weight alone in each weight row.
    pub fn pattern(&self) -> Pattern {
        let (points, weights) = (
            Self::CAMERA * self.n_cams,
            Self::CAMERA * self.n_cams + 3 * self.n_points,
        );
        let mut rows = Vec::with_capacity(3 * self.n_obs);
        for i in 0..self.n_obs {
            let (cam, point) = self.observation(i);
            let base = Self::CAMERA * cam;
            for coordinate in 0..2 {
                // Rotation, centre and focal length; this coordinate of the principal point;
                // the distortion; the point; the weight.
                let mut row: Vec<usize> = (base..base + 7).collect();
                row.extend([base + 7 + coordinate, base + 9, base + 10]);
                row.extend(points + 3 * point..points + 3 * point + 3);
                row.push(weights + i);
                rows.push(row);
            }
        }
        rows.extend((0..self.n_obs).map(|i| vec![weights + i]));
        pattern(self.inputs(), &rows)
    }
}

impl Function for BundleAdjustment {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        self.residuals(x)
    }
    fn sizes(&self) -> Option<(usize, usize)> {
        Some((self.inputs(), 3 * self.n_obs))
    }
}

/// One observation of [`BundleAdjustment`] as a function of its own 15 parameters (the
/// camera's 11, the point's 3, the weight): its two reprojection errors, whose 2×15 Jacobian
/// is one block of the BA Jacobian. What a BA solver differentiates 31 843 times per step.
///
/// ```
/// use workloads::{Function, sparse::{BaBlock, BundleAdjustment}};
/// let ba = BundleAdjustment::new(2, 3, 4);
/// let (block, x) = BaBlock::of(&ba, 1);
/// assert_eq!(block.sizes(), Some((15, 2)));
/// assert_eq!(block.eval(&x), ba.eval(&ba.input())[2..4].to_vec());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BaBlock {
    /// The measured feature `[x, y]`.
    pub feature: [f64; 2],
}

impl BaBlock {
    /// Observation i of `ba`, and its 15 parameters at `ba`'s input.
    pub fn of(ba: &BundleAdjustment, i: usize) -> (BaBlock, Vec<f64>) {
        let x = ba.input();
        let (cams, points, weights) = ba.split(&x);
        let (cam, point) = ba.observation(i);
        let c11 = BundleAdjustment::CAMERA;
        let mut params = cams[cam * c11..(cam + 1) * c11].to_vec();
        params.extend_from_slice(&points[3 * point..3 * point + 3]);
        params.push(weights[i]);
        let feature = [ba.features[2 * i], ba.features[2 * i + 1]];
        (BaBlock { feature }, params)
    }
}

impl Function for BaBlock {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        let proj = project(&x[..11], &x[11..14]);
        let w = x[14];
        vec![
            w * (proj[0] - self.feature[0]),
            w * (proj[1] - self.feature[1]),
        ]
    }
    fn sizes(&self) -> Option<(usize, usize)> {
        Some((15, 2))
    }
}

/// `a × b`.
fn cross<T: Float>(a: &[T], b: &[T]) -> [T; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// Rotates `x` by the Rodrigues vector `rot` (axis `rot/θ`, angle `θ = ‖rot‖`), in ADBench's
/// form: `x cos θ + (ω × x) sin θ + ω (ω·x)(1 − cos θ)` with `ω = rot/θ`, and to first order,
/// `x + rot × x`, at θ = 0 exactly (where ω is undefined).
fn rotate<T: Float>(rot: &[T], x: &[T]) -> [T; 3] {
    let sqtheta = rot[0] * rot[0] + rot[1] * rot[1] + rot[2] * rot[2];
    if sqtheta != T::zero() {
        let theta = sqtheta.sqrt();
        let (sin, cos) = (theta.sin(), theta.cos());
        let inverse = theta.recip();
        let w = [rot[0] * inverse, rot[1] * inverse, rot[2] * inverse];
        let w_cross_x = cross(&w, x);
        let tmp = (w[0] * x[0] + w[1] * x[1] + w[2] * x[2]) * (T::one() - cos);
        core::array::from_fn(|i| x[i] * cos + w_cross_x[i] * sin + w[i] * tmp)
    } else {
        let rot_cross_x = cross(rot, x);
        core::array::from_fn(|i| x[i] + rot_cross_x[i])
    }
}

/// The projection of `point` by the 11 parameters of `cam`, distorted and in pixels.
fn project<T: Float>(cam: &[T], point: &[T]) -> [T; 2] {
    let centred = [point[0] - cam[3], point[1] - cam[4], point[2] - cam[5]];
    let x = rotate(&cam[..3], &centred);
    let p = [x[0] / x[2], x[1] / x[2]];
    let rsq = p[0] * p[0] + p[1] * p[1];
    let l = T::one() + cam[9] * rsq + cam[10] * rsq * rsq;
    [p[0] * l * cam[6] + cam[7], p[1] * l * cam[6] + cam[8]]
}
