use super::c;
use crate::{Function, Op};
use reverse::checkpoint::Recurrence;
use shared_ops::num_traits::Float;

/// GradBench `ode` (after cmpad's `an_ode`): the system `y₀' = x₀`, `yᵢ' = xᵢ·yᵢ₋₁` from
/// `y(0) = 0` to `t = 2`, by `s` classic Runge–Kutta steps of `h = 2/s`; the output is the last
/// component of `y(2)`, differentiated with respect to the n parameters x (and the initial
/// state). GradBench runs n from 1000 to 100 000 with s from 1 to 100; here it is the long loop
/// of checkpointing, a few components over 10⁵ steps.
///
/// Each step is the suite's `ode.hpp`, operation for operation, with its four stages fused
/// into one pass over the components (stage k of component i reads stage k − 1 of component
/// i − 1 only), so that a step allocates nothing.
///
/// ```
/// use workloads::gradbench::Ode;
/// use reverse::checkpoint::{checkpointed_gradient, run};
/// let f = Ode::new(4, 1000);
/// let (x, y0) = (f.input(), f.initial_state());
/// let y = run(&f, &x, &y0, f.s);
/// // RK4 is exact to O(h⁴) on this polynomial solution.
/// assert!((y - Ode::solution(&x)).abs() < 1e-12 * y);
/// let g = checkpointed_gradient(&f, &x, &y0, f.s, 20)?;
/// workloads::assert_close(&g.wrt_params, &Ode::solution_gradient(&x), 1e-12, "∂y/∂x");
/// # Ok::<(), reverse::Error>(())
/// ```
///
/// As a [`Function`] it is the whole integration from `y(0) = 0`, one recording of all s
/// steps (what GradBench's `gradient` differentiates):
///
/// ```
/// use workloads::{Function, gradbench::Ode};
/// let f = Ode::new(3, 10);
/// let x = f.input();
/// let (y, g) = jacobian::gradient(&f, &x)?;
/// assert!((y - Ode::solution(&x)).abs() < 1e-6 * y);
/// workloads::assert_close(&g, &Ode::solution_gradient(&x), 1e-6, "∂y/∂x");
/// # Ok::<(), jacobian::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ode {
    /// Components of y (and parameters x).
    pub n: usize,
    /// Runge–Kutta steps.
    pub s: usize,
}

impl Ode {
    /// The system of n components, integrated by s steps.
    pub fn new(n: usize, s: usize) -> Ode {
        Ode { n, s }
    }

    /// The benchmark parameters: n uniforms in [0, 1) (GradBench: `np.random.rand(n)`).
    pub fn input(&self) -> Vec<f64> {
        super::Rng::new(31337).uniforms(self.n)
    }

    /// `y(0) = 0`.
    pub fn initial_state(&self) -> Vec<f64> {
        vec![0.0; self.n]
    }

    /// The exact `yₙ₋₁(2) = x₀x₁⋯xₙ₋₁·2ⁿ/n!` (by induction `yᵢ(t) = x₀⋯xᵢ·tⁱ⁺¹/(i + 1)!`).
    pub fn solution(x: &[f64]) -> f64 {
        let n = x.len() as i32;
        let factorial: f64 = (1..=n).map(f64::from).product();
        x.iter().product::<f64>() * 2f64.powi(n) / factorial
    }

    /// One Runge–Kutta step from `y` to `next`, for any `Float`.
    fn rk4<T: Float>(&self, x: &[T], y: &[T], next: &mut [T]) {
        let h = c::<T>(2.0 / self.s as f64);
        let (two, six) = (c::<T>(2.0), c::<T>(6.0));
        // The stages of component i − 1, which those of component i read.
        let (mut t1, mut t2, mut t3) = (T::zero(), T::zero(), T::zero());
        for i in 0..self.n {
            // ode_fun: z₀ = x₀, zᵢ = xᵢ·(its argument)ᵢ₋₁.
            let z = |arg: T| if i == 0 { x[0] } else { x[i] * arg };
            let k1 = z(y[i.saturating_sub(1)]);
            let k2 = z(t1);
            let k3 = z(t2);
            let k4 = z(t3);
            (t1, t2, t3) = (y[i] + h * k1 / two, y[i] + h * k2 / two, y[i] + h * k3);
            next[i] = y[i] + h * (k1 + two * k2 + two * k3 + k4) / six;
        }
    }

    /// y(2) from `y(0) = 0` by all s steps, for any `Float` (GradBench's `primal`).
    pub fn state<T: Float>(&self, x: &[T]) -> Vec<T> {
        let mut y = vec![T::zero(); self.n];
        let mut next = y.clone();
        for _ in 0..self.s {
            self.rk4(x, &y, &mut next);
            core::mem::swap(&mut y, &mut next);
        }
        y
    }

    /// yₙ₋₁(2), the output differentiated, for any `Float`.
    pub fn objective<T: Float>(&self, x: &[T]) -> T {
        self.state(x)[self.n - 1]
    }

    /// The exact `∂yₙ₋₁(2)/∂xⱼ = yₙ₋₁(2)/xⱼ` (for nonzero x).
    pub fn solution_gradient(x: &[f64]) -> Vec<f64> {
        let y = Ode::solution(x);
        x.iter().map(|xj| y / xj).collect()
    }
}

impl Recurrence for Ode {
    fn sizes(&self) -> (usize, usize) {
        (self.n, self.n)
    }

    fn step<T: Op>(&self, _i: usize, x: &[T], y: &[T], next: &mut [T]) {
        self.rk4(x, y, next);
    }

    fn output<T: Op>(&self, _x: &[T], y: &[T]) -> T {
        y[self.n - 1]
    }
}

impl Function for Ode {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        vec![self.objective(x)]
    }

    fn sizes(&self) -> Option<(usize, usize)> {
        Some((self.n, 1))
    }
}
