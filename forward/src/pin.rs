//! An optimisation barrier for the tangent of a [`Dual`](crate::Dual).
//!
//! A `Dual<f64>` computes its primal and its tangent side by side, and LLVM's SLP vectoriser
//! packs the two into one SSE register wherever their operations match (a sum, a difference),
//! then unpacks them with shuffles wherever they differ (every product: `a·b` against
//! `ȧ·b + a·ḃ`). On Rosenbrock the shuffles cost more than the packing saves. Passing each
//! computed tangent through an empty `asm!` block, which takes it in a register and gives it
//! back untouched, hides the match from the vectoriser and costs no instruction: f on
//! duals went from 2.23× f to 1.93× (scratch program, minima, n = 100 to 10 000) and
//! `jacobian::jvp` at n = 1 000 from 2.61× to 2.33× (criterion, see the README).
//!
//! Only unchecked duals (`Dual<_, Unchecked>`, the type `jacobian::jvp` sweeps with) are pinned.
//! Checked ones, nested duals among them, keep the packing: an outer operation does the same
//! to both halves of an inner dual, so there the vectoriser's match pays. Pinning them too made
//! the `taylor` bench's nested duals 8–24% slower.
//!
//! `DualVec` does not use it: its lanes are meant to be vectorised together.

/// `t`, unchanged bit for bit. On x86-64 an `f64` or `f32` passes through an empty `asm!`
/// block; any other type, or another architecture, is returned as it is. The type test is
/// resolved at compile time.
///
/// Builds with debug assertions (unoptimised ones) skip the block: it only steers the
/// optimiser, and unoptimised its locals enlarge every operation's stack frame (four nested
/// duals overflowed a test thread's 2 MiB stack).
#[inline(always)]
pub(crate) fn pinned<T: 'static>(t: T) -> T {
    #[cfg(all(target_arch = "x86_64", not(debug_assertions)))]
    let t = {
        let mut t = t;
        let any: &mut dyn core::any::Any = &mut t;
        if let Some(v) = any.downcast_mut::<f64>() {
            *v = pin_f64(*v);
        } else if let Some(v) = any.downcast_mut::<f32>() {
            *v = pin_f32(*v);
        }
        t
    };
    t
}

/// `v` through an empty `asm!` block in an SSE register.
#[cfg(target_arch = "x86_64")]
#[cfg_attr(debug_assertions, allow(dead_code))] // only tests call it there
#[inline(always)]
#[allow(unsafe_code)]
fn pin_f64(mut v: f64) -> f64 {
    // SAFETY: the template is a comment: no instruction runs, so no memory, stack, flag or
    // register other than `v`'s is touched, and `v`'s register holds `v` on the way out.
    unsafe {
        core::arch::asm!("/* {0} */", inout(xmm_reg) v, options(pure, nomem, nostack, preserves_flags));
    }
    v
}

/// [`pin_f64`] for `f32`.
#[cfg(target_arch = "x86_64")]
#[cfg_attr(debug_assertions, allow(dead_code))] // only tests call it there
#[inline(always)]
#[allow(unsafe_code)]
fn pin_f32(mut v: f32) -> f32 {
    // SAFETY: as for `pin_f64`.
    unsafe {
        core::arch::asm!("/* {0} */", inout(xmm_reg) v, options(pure, nomem, nostack, preserves_flags));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Every bit pattern comes back as it went in: NaN payloads, signed zeros, infinities,
        /// subnormals.
        #[test]
        fn a_pinned_float_keeps_its_bits(bits in any::<u64>(), small in any::<u32>()) {
            let (x, y) = (f64::from_bits(bits), f32::from_bits(small));
            prop_assert_eq!(pinned(x).to_bits(), bits);
            prop_assert_eq!(pinned(y).to_bits(), small);
            #[cfg(target_arch = "x86_64")]
            {
                prop_assert_eq!(pin_f64(x).to_bits(), bits);
                prop_assert_eq!(pin_f32(y).to_bits(), small);
            }
        }
    }

    #[test]
    fn the_edges_keep_their_bits() {
        let edges = [
            0.0_f64.to_bits(),
            (-0.0_f64).to_bits(),
            f64::INFINITY.to_bits(),
            f64::NEG_INFINITY.to_bits(),
            f64::NAN.to_bits(),
            0x7ff0_0000_0000_0001, // a signalling NaN: no arithmetic may quiet it
            0xfff8_dead_beef_0001, // a negative quiet NaN with a payload
            1,                     // the least subnormal
            f64::MAX.to_bits(),
        ];
        for bits in edges {
            assert_eq!(pinned(f64::from_bits(bits)).to_bits(), bits, "{bits:#x}");
            #[cfg(target_arch = "x86_64")]
            assert_eq!(pin_f64(f64::from_bits(bits)).to_bits(), bits, "{bits:#x}");
        }
        for bits in [
            (-0.0_f32).to_bits(),
            0x7f80_0001,
            f32::NEG_INFINITY.to_bits(),
            1,
        ] {
            assert_eq!(pinned(f32::from_bits(bits)).to_bits(), bits, "{bits:#x}");
            #[cfg(target_arch = "x86_64")]
            assert_eq!(pin_f32(f32::from_bits(bits)).to_bits(), bits, "{bits:#x}");
        }
    }

    #[test]
    fn other_types_pass_through() {
        let d = crate::Dual::new(1.5_f64, -0.0);
        let p = pinned(d);
        assert_eq!((p.primal, p.tangent.to_bits()), (1.5, (-0.0_f64).to_bits()));
        assert_eq!(pinned([1u8, 2, 3]), [1, 2, 3]);
    }
}
