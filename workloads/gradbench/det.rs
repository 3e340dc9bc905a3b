use crate::{Function, Op};
use shared_ops::num_traits::Float;

/// GradBench `det`: the determinant of an ℓ×ℓ matrix (row-major input) by recursive expansion
/// along the first row of each minor, O(ℓ!) operations, in the arithmetic order of the suite's
/// C++ reference (`det_by_minor` of cmpad: minors by relinking row and column lists, no copies).
/// Its gradient is the matrix of cofactors (GradBench: ℓ from 5 to 11).
///
/// ```
/// use workloads::{Function, gradbench::Det};
/// let f = Det::new(3);
/// assert_eq!(f.eval(&[2.0, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 4.0]), vec![24.0]);
/// let x = f.input();
/// let (_, g) = jacobian::gradient(&f, &x)?;
/// workloads::assert_close(&g, &f.cofactors(&x), 1e-12, "cofactors");
/// # Ok::<(), jacobian::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Det {
    /// The matrix is ℓ×ℓ.
    pub ell: usize,
}

impl Det {
    /// The determinant of ℓ×ℓ matrices.
    pub fn new(ell: usize) -> Det {
        Det { ell }
    }

    /// The benchmark input: ℓ² uniforms in [0, 1) (GradBench: `np.random.rand(ℓ * ℓ)`).
    pub fn input(&self) -> Vec<f64> {
        super::Rng::new(31337).uniforms(self.ell * self.ell)
    }

    /// The determinant of `a`, for any `Float` (a sum of products: no reductions needed).
    pub fn objective<T: Float>(&self, a: &[T]) -> T {
        let l = self.ell;
        let mut r: Vec<usize> = (1..=l).collect();
        r.push(0);
        let mut c = r.clone();
        det_minor(a, l, l, &mut r, &mut c)
    }

    /// The gradient by hand: `∂det/∂aᵢⱼ = (−1)^(i+j) det(A without row i and column j)`.
    pub fn cofactors(&self, a: &[f64]) -> Vec<f64> {
        let l = self.ell;
        if l == 1 {
            return vec![1.0];
        }
        let mut out = Vec::with_capacity(l * l);
        for i in 0..l {
            for j in 0..l {
                let minor: Vec<f64> = (0..l)
                    .filter(|&r| r != i)
                    .flat_map(|r| (0..l).filter(move |&c| c != j).map(move |c| a[r * l + c]))
                    .collect();
                let sign = if (i + j) % 2 == 0 { 1.0 } else { -1.0 };
                out.push(sign * Det::new(l - 1).eval(&minor)[0]);
            }
        }
        out
    }
}

/// The determinant of the minor of the m rows and columns still linked in `r` and `c` (each
/// `r[k]` is the row after row k; `r[ℓ]` heads the list).
fn det_minor<T: Float>(a: &[T], ell: usize, m: usize, r: &mut [usize], c: &mut [usize]) -> T {
    let r0 = r[ell];
    let mut cj = c[ell];
    if m == 1 {
        return a[r0 * ell + cj];
    }
    let mut det = T::zero();
    let mut positive = true;
    r[ell] = r[r0]; // remove row r0 from the sub-minors
    let mut cj1 = ell;
    for _ in 0..m {
        let m0j = a[r0 * ell + cj];
        c[cj1] = c[cj]; // remove column cj
        let sub = det_minor(a, ell, m - 1, r, c);
        c[cj1] = cj; // and put it back
        det = if positive {
            det + m0j * sub
        } else {
            det - m0j * sub
        };
        cj1 = cj;
        cj = c[cj];
        positive = !positive;
    }
    r[ell] = r0;
    det
}

impl Function for Det {
    fn eval<T: Op>(&self, a: &[T]) -> Vec<T> {
        vec![self.objective(a)]
    }
    fn sizes(&self) -> Option<(usize, usize)> {
        Some((self.ell * self.ell, 1))
    }
}
