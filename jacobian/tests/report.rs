use jacobian::{Function, Op};
struct Curve;
impl Function for Curve {
    fn eval<T: Op>(&self, p: &[T]) -> Vec<T> {
        (0..50)
            .map(|k| p[0] * (p[1] * T::constant(k as f64 / 10.0)).sin())
            .collect()
    }
}
#[test]
fn show() {
    println!("{}", jacobian::cost_report(&Curve, &[1.0, 2.0]).unwrap());
}
