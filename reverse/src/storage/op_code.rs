//! The tape's operation codes: one byte per node, naming the operation that made it, for
//! traces, graph export and re-evaluation.
//!
//! The rule table (`shared_ops::rules`) knows nothing of tapes. A rule reaches the tape as a
//! type `R: Unary` or `R: Binary`; [`OpCode::unary`] and [`OpCode::binary`] recognise the
//! built-in rules by their type (a comparison of constant `TypeId`s, which the optimiser folds
//! away) and give every other rule [`OpCode::Custom`], whose node keeps the rule itself. A
//! user's rule is never mistaken for a built-in one, whatever its `NAME`.

use core::any::TypeId;
use shared_ops::rules::*;
use shared_ops::{Binary, Op, Unary};

/// Whether `R` is the rule type `S`.
#[inline(always)]
pub(crate) fn is<R: 'static, S: 'static>() -> bool {
    TypeId::of::<R>() == TypeId::of::<S>()
}

macro_rules! op_codes {
    (
        nodes: $($node:ident $label:literal),*;
        unary: $($u:ident)*;
        binary: $($b:ident)*;
    ) => {
        /// The operation that made a tape node.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u8)]
        pub(crate) enum OpCode {
            $($node,)*
            /// `powi`, whose exponent the program keeps beside the node.
            Powi,
            $($u,)*
            $($b,)*
        }

        impl OpCode {
            /// The operation's name as shown in traces: the rule's `NAME` for a rule.
            pub(crate) const fn name(self) -> &'static str {
                match self {
                    $(OpCode::$node => $label,)*
                    OpCode::Powi => Powi::NAME,
                    $(OpCode::$u => $u::NAME,)*
                    $(OpCode::$b => $b::NAME,)*
                }
            }

            /// The code of a one-argument rule: its own for a built-in rule, else `Custom`.
            #[inline(always)]
            pub(crate) fn unary<R: Unary>() -> OpCode {
                $(if is::<R, $u>() { return OpCode::$u; })*
                if is::<R, Powi>() { OpCode::Powi } else { OpCode::Custom }
            }

            /// The code of a two-argument rule: its own for a built-in rule, else `Custom`.
            #[inline(always)]
            pub(crate) fn binary<R: Binary>() -> OpCode {
                $(if is::<R, $b>() { return OpCode::$b; })*
                OpCode::Custom
            }

            /// Whether the code is that of a built-in one-argument rule.
            pub(crate) fn is_unary(self) -> bool {
                matches!(self, $(OpCode::$u)|* | OpCode::Powi)
            }
        }

        /// Evaluates the built-in one-argument rule of `op` (`param`: the exponent of `powi`).
        #[inline(always)]
        pub(crate) fn unary<T: Op>(op: OpCode, param: u32, x: T) -> (T, T) {
            match op {
                $(OpCode::$u => $u.eval(x),)*
                OpCode::Powi => Powi(param as i32).eval(x),
                _ => unreachable!("{} is not a one-argument rule", op.name()),
            }
        }

        /// Evaluates the built-in two-argument rule of `op`.
        #[inline(always)]
        pub(crate) fn binary<T: Op>(op: OpCode, a: T, b: T) -> (T, T, T) {
            match op {
                $(OpCode::$b => $b.eval(a, b),)*
                _ => unreachable!("{} is not a two-argument rule", op.name()),
            }
        }

        /// The built-in one-argument rules but `powi` (which has a parameter).
        #[cfg(feature = "jit")]
        pub(crate) const UNARY: &[OpCode] = &[$(OpCode::$u),*];

        /// The built-in one-argument rule of `op` on `f64` as a function that compiled code
        /// calls: [`unary`]'s value and derivative, for any of [`UNARY`].
        #[cfg(feature = "jit")]
        pub(crate) fn unary_c(op: OpCode) -> Option<extern "C" fn(f64) -> Pair> {
            match op {
                $(OpCode::$u => {
                    extern "C" fn f(x: f64) -> Pair {
                        let (value, derivative) = $u.eval(x);
                        Pair { value, derivative }
                    }
                    Some(f)
                })*
                _ => None,
            }
        }
    };
}

/// A value and its derivative, as the C convention returns two numbers (in two registers on
/// the processors Cranelift compiles for).
#[cfg(feature = "jit")]
#[repr(C)]
pub(crate) struct Pair {
    pub value: f64,
    pub derivative: f64,
}

op_codes! {
    nodes: Input "input", Custom "custom", Sum "sum", Dot "dot", Node "node", MulAdd "mul_add";
    unary: Neg Recip Sqrt Cbrt Exp Exp2 ExpM1 Ln Log2 Log10 Ln1p Sin Cos Tan Asin Acos Atan
        Sinh Cosh Tanh Asinh Acosh Atanh Abs Floor Ceil Round Trunc Signum Fract Sigmoid Relu;
    binary: Add Sub Mul Div Rem Powf Log Atan2 Hypot Max Min;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy)]
    struct MySin;
    impl Unary for MySin {
        const NAME: &'static str = "sin";
        fn eval<T: Op>(self, x: T) -> (T, T) {
            (x.sin(), x.cos())
        }
    }

    #[test]
    fn built_in_rules_are_recognised_by_type_not_by_name() {
        assert_eq!(OpCode::unary::<Sin>(), OpCode::Sin);
        assert_eq!(OpCode::unary::<Powi>(), OpCode::Powi);
        assert_eq!(OpCode::unary::<MySin>(), OpCode::Custom);
        assert_eq!(OpCode::binary::<Atan2>(), OpCode::Atan2);
        assert_eq!(OpCode::Sin.name(), "sin");
        assert_eq!(OpCode::MulAdd.name(), "mul_add");
        assert!(OpCode::Powi.is_unary() && !OpCode::Hypot.is_unary());
        // Layout as contract: `TapeStats` documents one byte of operation per program node.
        assert_eq!(core::mem::size_of::<OpCode>(), 1);
    }

    #[test]
    fn dispatch_evaluates_the_rule_of_the_code() {
        assert_eq!(unary(OpCode::unary::<Tanh>(), 0, 0.3), Tanh.eval(0.3));
        assert_eq!(unary(OpCode::Powi, 3, 2.0), (8.0, 12.0));
        assert_eq!(
            binary(OpCode::binary::<Hypot>(), 3.0, 4.0),
            Hypot.eval(3.0, 4.0)
        );
    }
}
