//! The four seed examples, each differentiated in forward and in reverse mode.
//!
//! Run: `cargo run --release --example seeds`

use forward::{Dual, derivative};
use jacobian::{Function, Mode, Op, jacobian_with};
use reverse::Tape;
use shared_ops::Unary;

/// 1. x = 2, y = x², z = y + 3.
fn z<T: Op>(x: T) -> T {
    let y = x * x;
    y + 3.0
}

/// 2. a = 2, b = 3, c = a·b, d = c + 1.
fn d<T: Op>(a: T, b: T) -> T {
    let c = a * b;
    c + T::one()
}

/// 3. L = Σ tanh(W·x), with W and x packed as [W₀₀, W₀₁, W₁₀, W₁₁, x₀, x₁].
struct TanhLayer;
impl Function for TanhLayer {
    fn eval<T: Op>(&self, p: &[T]) -> Vec<T> {
        let (w, x) = p.split_at(4);
        vec![(w[0] * x[0] + w[1] * x[1]).tanh() + (w[2] * x[0] + w[3] * x[1]).tanh()]
    }
}

/// 4. A user-defined operation: the logistic sigmoid, with the derivative written by hand as
///    s(1 − s). Nothing in the library was edited to add it.
#[derive(Clone, Copy)]
struct Sigmoid;
impl Unary for Sigmoid {
    const NAME: &'static str = "sigmoid";
    fn eval<T: Op>(self, x: T) -> (T, T) {
        let s = T::one() / (T::one() + (-x).exp());
        (s, s * (T::one() - s))
    }
}

fn main() -> Result<(), jacobian::Error> {
    println!("1. z = x² + 3 at x = 2");
    let (zv, dz) = derivative(z, 2.0);
    println!("   forward: z = {zv}, dz/dx = {dz}");
    let tape = Tape::new();
    let x = tape.var(2.0);
    let zr = z(x);
    println!(
        "   reverse: z = {}, dz/dx = {}",
        zr.value(),
        tape.gradient(zr).wrt(x)
    );

    println!("2. d = a·b + 1 at a = 2, b = 3");
    let da = d(Dual::variable(2.0), Dual::from(3.0)).tangent;
    let db = d(Dual::from(2.0), Dual::variable(3.0)).tangent;
    println!("   forward (two sweeps): ∂d/∂a = {da}, ∂d/∂b = {db}");
    let tape = Tape::new();
    let (a, b) = (tape.var(2.0), tape.var(3.0));
    let g = tape.gradient(d(a, b));
    println!(
        "   reverse (one sweep):  ∂d/∂a = {}, ∂d/∂b = {}",
        g.wrt(a),
        g.wrt(b)
    );

    // At x = [2, 3], W·x = [8, 18]: tanh has saturated and the gradients are tiny (exact all
    // the same: tanh' is not computed as 1 − tanh², which would cancel). At x = [0.2, −0.1]
    // they are of order one.
    for x in [[2.0, 3.0], [0.2, -0.1]] {
        println!("3. L = Σ tanh(W·x), x = {x:?}, W = [[1, 2], [3, 4]]");
        let p = [1.0, 2.0, 3.0, 4.0, x[0], x[1]];
        for mode in [Mode::Forward, Mode::Reverse] {
            let j = jacobian_with(&TanhLayer, &p, mode)?;
            let r = j.matrix.row(0);
            println!(
                "   {mode:?}: ∂L/∂W = [[{:+.6e}, {:+.6e}], [{:+.6e}, {:+.6e}]], ∂L/∂x = [{:+.6e}, {:+.6e}]",
                r[0], r[1], r[2], r[3], r[4], r[5]
            );
            println!("      ({})", j.plan);
        }
    }

    println!("4. a user-defined sigmoid at x = 0.8");
    let (s, ds) = derivative(|x| x.apply1(Sigmoid), 0.8);
    let (_, d2s) = derivative(|x: Dual<f64>| derivative(|w| w.apply1(Sigmoid), x).1, 0.8);
    println!("   forward: σ = {s:.12}, σ' = {ds:.12}, σ'' (nested) = {d2s:.12}");
    let tape = Tape::new();
    let x = tape.var(0.8);
    let y = x.apply1(Sigmoid);
    println!("   reverse: σ' = {:.12}", tape.gradient(y).wrt(x));
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn runs() {
        super::main().unwrap();
    }
}
