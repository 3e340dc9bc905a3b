//! Derivatives of derivatives in every pair of modes: GradBench's two nested problems,
//! `saddle` and `particle` (from Pearlmutter and Siskind's nested-AD benchmarks).
//!
//! An inner gradient runs inside an outer one, and each can be forward or reverse mode: ff, fr,
//! rf, rr (outer letter first). The levels are apart by type: the inner derivative of a
//! forward-over-reverse run works on `Var<Dual<f64>>`, of reverse-over-reverse on
//! `Var<Var<f64>>`, so that no level can take another's perturbation for its own.
//!
//! * **saddle**: from p₁ = p₂ = the start, min over p₁ of max over p₂ of
//!   f = (p₁₀² + p₁₁²) − (p₂₀² + p₂₁²), by gradient descent outside and gradient ascent inside;
//!   the outer gradient differentiates through the whole inner ascent.
//! * **particle**: a charged particle starts at (0, 8) with velocity (0.75, 0) and moves by Euler
//!   steps in the field of charges at (10, 10 − w) and (10, 0), its acceleration the (inner)
//!   gradient of the potential Σ 1/‖x − c‖; the objective is the squared x where it crosses
//!   y = 0, and w is found by gradient descent (the outer gradient differentiates through the
//!   time loop, and through every inner gradient in it).
//!
//! Both problems are written once over the number type. A gradient "in a mode" is a
//! [`Gradient`]: it takes an [`Objective`] whose constant data are numbers of the level outside
//! (`T`), evaluates it on the level inside (`Dual<T>` or `Var<T>`), and returns the gradient as
//! `T`s, so that the level outside can differentiate it again.

use core::fmt;
use wengert::forward::{self, Dual};
use wengert::reverse::{self, Var};
use wengert::{Lift, Op};

/// A scalar function of `U`-numbers whose constant data are `T`-numbers (the level outside),
/// lifted into `U` where they meet the variables.
pub trait Objective<T> {
    /// The value at `x`.
    fn eval<U: Op + From<T>>(&self, x: &[U]) -> U;
}

/// A mode of differentiation at one level: the gradient of an [`Objective`] at `x`.
pub trait Gradient {
    /// `(f(x), ∇f(x))`, in the number type of `x`.
    fn gradient<T: Op, F: Objective<T>>(f: &F, x: &[T]) -> (T, Vec<T>);
}

/// Forward mode: one sweep of `Dual<T>` per input.
#[derive(Clone, Copy, Debug)]
pub struct Forward;

/// Reverse mode: one recording on a `Tape<T>` and one sweep.
#[derive(Clone, Copy, Debug)]
pub struct Reverse;

impl Gradient for Forward {
    fn gradient<T: Op, F: Objective<T>>(f: &F, x: &[T]) -> (T, Vec<T>) {
        forward::gradient(|v: &[Dual<T>]| f.eval(v), x)
    }
}

impl Gradient for Reverse {
    fn gradient<T: Op, F: Objective<T>>(f: &F, x: &[T]) -> (T, Vec<T>) {
        reverse::gradient(|v: &[Var<T>]| f.eval(v), x)
    }
}

/// A pair of modes: outer, inner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pair {
    /// The mode of the outer gradient.
    pub outer: Mode,
    /// The mode of the inner gradient.
    pub inner: Mode,
}

/// Forward or reverse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Tangents.
    Forward,
    /// Adjoints.
    Reverse,
}

impl Pair {
    /// ff, fr, rf, rr.
    pub const ALL: [Pair; 4] = [
        Pair::new(Mode::Forward, Mode::Forward),
        Pair::new(Mode::Forward, Mode::Reverse),
        Pair::new(Mode::Reverse, Mode::Forward),
        Pair::new(Mode::Reverse, Mode::Reverse),
    ];

    pub const fn new(outer: Mode, inner: Mode) -> Pair {
        Pair { outer, inner }
    }
}

impl Pair {
    /// The pair named `ff`, `fr`, `rf` or `rr` (outer first).
    pub fn named(name: &str) -> Option<Pair> {
        Pair::ALL.into_iter().find(|p| p.to_string() == name)
    }
}

impl fmt::Display for Pair {
    /// `ff`, `fr`, `rf` or `rr`, outer first.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = |m: Mode| if m == Mode::Forward { 'f' } else { 'r' };
        write!(f, "{}{}", c(self.outer), c(self.inner))
    }
}

/// The gradient-descent solver of GradBench (shared by saddle and particle): steps of `η·∇f`
/// with η from 10⁻⁵, doubled after ten improving steps and halved after a failed one; it stops
/// when ‖∇f‖ ≤ 10⁻⁵ or a step would move less than 10⁻⁵. Comparisons read primal values, so the
/// loop runs the same way on any number type.
pub fn argmin<T: Op>(f: impl Fn(&[T]) -> T, grad: impl Fn(&[T]) -> Vec<T>, x0: &[T]) -> Vec<T> {
    let norm = |v: &[T]| v.iter().map(|a| a.value() * a.value()).sum::<f64>().sqrt();
    let (mut x, mut fx, mut gx) = (x0.to_vec(), f(x0), grad(x0));
    let (mut i, mut eta) = (0, T::constant(1e-5));
    loop {
        if norm(&gx) <= 1e-5 {
            return x;
        }
        if i == 10 {
            eta *= T::constant(2.0);
            i = 0;
            continue;
        }
        let xp: Vec<T> = x.iter().zip(&gx).map(|(&a, &g)| a - eta * g).collect();
        let step: Vec<T> = x.iter().zip(&xp).map(|(&a, &b)| a - b).collect();
        if norm(&step) <= 1e-5 {
            return x;
        }
        let fxp = f(&xp);
        if fxp < fx {
            (x, fx) = (xp, fxp);
            gx = grad(&x);
            i += 1;
        } else {
            eta /= T::constant(2.0);
            i = 0;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// saddle

/// f(p₁, p₂) = (p₁₀² + p₁₁²) − (p₂₀² + p₂₁²).
fn saddle_f<U: Op>(p1: [U; 2], p2: [U; 2]) -> U {
    (p1[0] * p1[0] + p1[1] * p1[1]) - (p2[0] * p2[0] + p2[1] * p2[1])
}

/// −f(p₁, ·) for the inner ascent (an argmax is the argmin of the negated function), p₁ fixed.
struct Inner<T>([T; 2]);

impl<T: Op> Objective<T> for Inner<T> {
    fn eval<U: Op + From<T>>(&self, p2: &[U]) -> U {
        -saddle_f([self.0[0].lift(), self.0[1].lift()], [p2[0], p2[1]])
    }
}

/// max over p₂ of f(p₁, p₂), by gradient ascent from `start` in mode `I`.
fn inner_max<T: Op, I: Gradient>(p1: [T; 2], start: [f64; 2]) -> T {
    let inner = Inner(p1);
    let start = [T::constant(start[0]), T::constant(start[1])];
    let p2 = argmin(|p| inner.eval(p), |p| I::gradient(&inner, p).1, &start);
    saddle_f(p1, [p2[0], p2[1]])
}

/// The outer objective p₁ ↦ max over p₂ of f(p₁, p₂), whose gradient runs through the ascent
/// (from the start it holds).
struct Outer<I>([f64; 2], core::marker::PhantomData<I>);

impl<I: Gradient> Objective<f64> for Outer<I> {
    fn eval<U: Op + From<f64>>(&self, p1: &[U]) -> U {
        inner_max::<U, I>([p1[0], p1[1]], self.0)
    }
}

fn saddle_in<O: Gradient, I: Gradient>(start: [f64; 2]) -> [f64; 4] {
    let outer = Outer::<I>(start, core::marker::PhantomData);
    let r1 = argmin(|p| outer.eval(p), |p| O::gradient(&outer, p).1, &start);
    // The last ascent at the optimum, with the outer mode's gradient (as GradBench does).
    let inner = Inner([r1[0], r1[1]]);
    let r2 = argmin(|p| inner.eval(p), |p| O::gradient(&inner, p).1, &start);
    [r1[0], r1[1], r2[0], r2[1]]
}

/// GradBench's `saddle` in the given pair of modes: `[p₁₀, p₁₁, p₂₀, p₂₁]` at the saddle point
/// found from `start` (GradBench's is (1, 1), where it expects 8.246324826140356e-06 four
/// times).
pub fn saddle(pair: Pair, start: [f64; 2]) -> [f64; 4] {
    match (pair.outer, pair.inner) {
        (Mode::Forward, Mode::Forward) => saddle_in::<Forward, Forward>(start),
        (Mode::Forward, Mode::Reverse) => saddle_in::<Forward, Reverse>(start),
        (Mode::Reverse, Mode::Forward) => saddle_in::<Reverse, Forward>(start),
        (Mode::Reverse, Mode::Reverse) => saddle_in::<Reverse, Reverse>(start),
    }
}

// ---------------------------------------------------------------------------------------------
// particle

/// The potential p(x) = Σ 1/‖x − c‖ of the charges at (10, 10 − w) and (10, 0).
struct Potential<T> {
    w: T,
}

impl<T: Op> Objective<T> for Potential<T> {
    fn eval<U: Op + From<T>>(&self, x: &[U]) -> U {
        let ten = U::constant(10.0);
        let charges = [[ten, ten - self.w.lift::<U>()], [ten, U::zero()]];
        charges
            .iter()
            .map(|c| {
                let (dx, dy) = (x[0] - c[0], x[1] - c[1]);
                (dx * dx + dy * dy).sqrt().recip()
            })
            .sum()
    }
}

/// The squared x where the particle crosses y = 0, for the charge parameter `w`; the
/// acceleration −∇p at each Euler step in mode `I`.
fn landing<T: Op, I: Gradient>(w: T) -> T {
    let field = Potential { w };
    let dt = T::constant(0.1);
    let (mut x, mut v) = (
        [T::zero(), T::constant(8.0)],
        [T::constant(0.75), T::zero()],
    );
    loop {
        let (_, g) = I::gradient(&field, &x);
        let next = [x[0] + dt * v[0], x[1] + dt * v[1]];
        if next[1].value() <= 0.0 {
            break;
        }
        x = next;
        v = [v[0] - dt * g[0], v[1] - dt * g[1]];
    }
    // Interpolate to y = 0 along the last velocity.
    let t = -x[1] / v[1];
    let x0 = x[0] + t * v[0];
    x0 * x0
}

struct Landing<I>(core::marker::PhantomData<I>);

impl<I: Gradient> Objective<f64> for Landing<I> {
    fn eval<U: Op + From<f64>>(&self, w: &[U]) -> U {
        landing::<U, I>(w[0])
    }
}

fn particle_in<O: Gradient, I: Gradient>(w0: f64) -> f64 {
    let f = Landing::<I>(core::marker::PhantomData);
    argmin(|w| f.eval(w), |w| O::gradient(&f, w).1, &[w0])[0]
}

/// GradBench's `particle` in the given pair of modes: the charge parameter w found by gradient
/// descent from `w0` (GradBench's is 0, where it expects 0.2071918746486116).
pub fn particle(pair: Pair, w0: f64) -> f64 {
    match (pair.outer, pair.inner) {
        (Mode::Forward, Mode::Forward) => particle_in::<Forward, Forward>(w0),
        (Mode::Forward, Mode::Reverse) => particle_in::<Forward, Reverse>(w0),
        (Mode::Reverse, Mode::Forward) => particle_in::<Reverse, Forward>(w0),
        (Mode::Reverse, Mode::Reverse) => particle_in::<Reverse, Reverse>(w0),
    }
}
