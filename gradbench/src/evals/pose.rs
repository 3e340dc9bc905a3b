//! The pose of `ht`'s hand model: each bone's Euler angles from theta, rotations by Euler
//! angles and by an axis-angle vector, and the 4×4 transforms they make, over any [`Op`].

use wengert::Op;

/// A 4×4 matrix of constants, row by row.
pub(super) type Matrix4 = [[f64; 4]; 4];

/// Each bone's Euler angles `(a₀, a₁, a₂)` from theta, as ADBench lays them out: five fingers
/// of four bones from bone 2 on, the first three bones of a finger moving (the first about two
/// axes, the others about one), the fourth and bones 0 and 1 still.
pub(super) fn joint_angles<T: Op>(theta: &[T], bones: usize) -> Vec<[T; 3]> {
    let mut angles = vec![[T::zero(); 3]; bones];
    let mut next = 6;
    for finger in 0..5 {
        for joint in 0..3 {
            let bone = 2 + 4 * finger + joint;
            let axes = if joint == 0 { 2 } else { 1 };
            if let Some(a) = angles.get_mut(bone) {
                a[..axes].copy_from_slice(&theta[next..next + axes]);
            }
            next += axes;
        }
    }
    angles
}

/// The rotation of Euler angles `(a₀, a₁, a₂)`: `Rz(a₁)·Ry(a₂)·Rx(a₀)`.
pub(super) fn euler<T: Op>(a: [T; 3]) -> [[T; 3]; 3] {
    let (sx, cx) = a[0].sin_cos();
    let (sy, cy) = a[2].sin_cos();
    let (sz, cz) = a[1].sin_cos();
    [
        [cz * cy, cz * sy * sx - sz * cx, sz * sx + cz * sy * cx],
        [sz * cy, cz * cx + sz * sy * sx, sz * sy * cx - cz * sx],
        [-sy, cy * sx, cy * cx],
    ]
}

/// `base · [[r, 0], [0, 1]]`: a rest transform rotated by `r`.
pub(super) fn posed<T: Op>(base: &Matrix4, r: &[[T; 3]; 3]) -> [[T; 4]; 4] {
    std::array::from_fn(|i| {
        let b = &base[i];
        let mut row = [T::constant(b[3]); 4];
        for (j, entry) in row.iter_mut().take(3).enumerate() {
            *entry = r[0][j] * b[0] + r[1][j] * b[1] + r[2][j] * b[2];
        }
        row
    })
}

/// `a · b`.
pub(super) fn product<T: Op>(a: &[[T; 4]; 4], b: &[[T; 4]; 4]) -> [[T; 4]; 4] {
    std::array::from_fn(|i| std::array::from_fn(|j| (0..4).map(|k| a[i][k] * b[k][j]).sum()))
}

/// The rotation of the axis-angle vector `w` (Rodrigues' formula); the identity when
/// `‖w‖ < 10⁻⁴`, as ADBench has it.
pub(super) fn rodrigues<T: Op>(w: [T; 3]) -> [[T; 3]; 3] {
    let norm = (w[0] * w[0] + w[1] * w[1] + w[2] * w[2]).sqrt();
    let (one, zero) = (T::one(), T::zero());
    if norm < T::constant(1e-4) {
        return [[one, zero, zero], [zero, one, zero], [zero, zero, one]];
    }
    let (x, y, z) = (w[0] / norm, w[1] / norm, w[2] / norm);
    let (s, c) = norm.sin_cos();
    let d = one - c;
    [
        [
            x * x + (one - x * x) * c,
            x * y * d - z * s,
            x * z * d + y * s,
        ],
        [
            x * y * d + z * s,
            y * y + (one - y * y) * c,
            y * z * d - x * s,
        ],
        [
            x * z * d - y * s,
            z * y * d + x * s,
            z * z + (one - z * z) * c,
        ],
    ]
}
