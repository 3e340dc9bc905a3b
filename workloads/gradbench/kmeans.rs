use super::{Nary, Reduce};
use crate::{Function, Op};
use shared_ops::num_traits::Float;

/// GradBench `kmeans`: the cost `Σᵢ minⱼ ‖Cⱼ − Pᵢ‖²` of k centroids C (the inputs, k·d numbers,
/// row-major) for n fixed points P in d dimensions. The suite's `dir` is one Newton step,
/// the gradient divided by the Hessian's diagonal; the Hessian *is* diagonal (each centroid
/// coordinate appears in squared differences only), so one Hessian-vector product along the
/// all-ones vector gives that diagonal, and the same forward-over-reverse sweep gives the
/// gradient too ([`jacobian::hvp`]).
///
/// ```
/// use workloads::gradbench::Kmeans;
/// let f = Kmeans::new(5, 30, 3);
/// let c = f.input();
/// let p = jacobian::hvp(&f, &c, &vec![1.0; c.len()])?;
/// let dir: Vec<f64> = p.gradient.iter().zip(&p.product).map(|(g, h)| g / h).collect();
/// workloads::assert_close(&dir, &f.dir(&c), 1e-13, "Newton direction");
/// # Ok::<(), jacobian::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Kmeans {
    /// The points, row-major n×d.
    pub points: Vec<f64>,
    /// Clusters.
    pub k: usize,
    /// Points.
    pub n: usize,
    /// Dimensions.
    pub d: usize,
}

impl Kmeans {
    /// n points uniform in [0, 1)ᵈ (GradBench: `np.random.rand`), for k clusters.
    pub fn new(k: usize, n: usize, d: usize) -> Kmeans {
        let points = super::Rng::new(31337).uniforms(n * d);
        Kmeans { points, k, n, d }
    }

    /// The benchmark input: the first k points as the initial centroids (GradBench's choice).
    pub fn input(&self) -> Vec<f64> {
        self.points[..self.k * self.d].to_vec()
    }

    /// The cost, for any `Float` with the reductions `r`.
    pub fn objective<T: Float>(&self, c: &[T], r: &impl Reduce<T>) -> T {
        let d = self.d;
        let mut diff = vec![T::zero(); d];
        r.sum(self.points.chunks(d).map(|p| {
            let mut best = T::infinity();
            for cj in c.chunks(d) {
                for ((e, &a), &b) in diff.iter_mut().zip(cj).zip(p) {
                    *e = a - super::c(b);
                }
                best = best.min(r.dot(&diff, &diff));
            }
            best
        }))
    }

    /// The Newton direction by hand: each point's nearest centroid (the first at a tie, as
    /// `min` picks) gets 2(Cⱼ − Pᵢ) in the gradient and 2 per coordinate on the diagonal.
    pub fn dir(&self, c: &[f64]) -> Vec<f64> {
        let d = self.d;
        let (mut g, mut h) = (vec![0.0; c.len()], vec![0.0; c.len()]);
        for p in self.points.chunks(d) {
            let dist = |cj: &[f64]| {
                cj.iter()
                    .zip(p)
                    .map(|(a, b)| (a - b) * (a - b))
                    .sum::<f64>()
            };
            let (mut j, mut best) = (0, f64::INFINITY);
            for (jj, cj) in c.chunks(d).enumerate() {
                let e = dist(cj);
                if e < best {
                    (j, best) = (jj, e);
                }
            }
            for l in 0..d {
                g[j * d + l] += 2.0 * (c[j * d + l] - p[l]);
                h[j * d + l] += 2.0;
            }
        }
        g.iter().zip(&h).map(|(g, h)| g / h).collect()
    }
}

impl Function for Kmeans {
    fn eval<T: Op>(&self, c: &[T]) -> Vec<T> {
        vec![self.objective(c, &Nary)]
    }
    fn sizes(&self) -> Option<(usize, usize)> {
        Some((self.k * self.d, 1))
    }
}
