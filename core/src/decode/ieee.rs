//! The 16-, 32- and 64-bit floats: `F16` and `BF16` through the `half`
//! crate, `F32` as a byte copy, `F64` rounded to nearest.

use half::slice::HalfFloatSliceExt;
use half::{bf16, f16};

/// Applies `f` to every `W`-byte little-endian element of `bytes`.
#[inline(always)]
fn each<const W: usize>(bytes: &[u8], out: &mut [f32], f: impl Fn([u8; W]) -> f32) {
    for (o, chunk) in out.iter_mut().zip(bytes.chunks_exact(W)) {
        // `chunks_exact(W)` yields W bytes: the conversion cannot fail.
        if let Ok(a) = <[u8; W]>::try_from(chunk) {
            *o = f(a);
        }
    }
}

/// `F16` through `half`'s slice conversion (SIMD where the target has it):
/// directly on aligned input on a little-endian target, otherwise through a
/// small aligned buffer on the stack.
#[inline]
pub(super) fn decode_f16(bytes: &[u8], out: &mut [f32]) {
    const BLOCK: usize = 256;
    #[cfg(target_endian = "little")]
    if let Ok(halves) = bytemuck::try_cast_slice::<u8, f16>(bytes) {
        if halves.len() == out.len() {
            halves.convert_to_f32_slice(out);
            return;
        }
    }
    let mut buf = [f16::ZERO; BLOCK];
    for (src, dst) in bytes.chunks(2 * BLOCK).zip(out.chunks_mut(BLOCK)) {
        for (h, pair) in buf.iter_mut().zip(src.chunks_exact(2)) {
            if let &[lo, hi] = pair {
                *h = f16::from_le_bytes([lo, hi]);
            }
        }
        // `dst` has one element per byte pair of `src`: at most BLOCK.
        if let Some(halves) = buf.get(..dst.len()) {
            halves.convert_to_f32_slice(dst);
        }
    }
}

/// `BF16`: the top half of an `f32`, through `half`'s slice conversion on
/// aligned input on a little-endian target (a loop the optimiser
/// vectorises), otherwise element by element.
#[inline]
pub(super) fn decode_bf16(bytes: &[u8], out: &mut [f32]) {
    #[cfg(target_endian = "little")]
    if let Ok(halves) = bytemuck::try_cast_slice::<u8, bf16>(bytes) {
        if halves.len() == out.len() {
            halves.convert_to_f32_slice(out);
            return;
        }
    }
    each(bytes, out, |a| bf16::from_le_bytes(a).to_f32());
}

/// `F32`: on a little-endian target a plain copy (any alignment).
#[inline]
pub(super) fn decode_f32(bytes: &[u8], out: &mut [f32]) {
    #[cfg(target_endian = "little")]
    {
        let dst: &mut [u8] = bytemuck::cast_slice_mut(out);
        if let Some(dst) = dst.get_mut(..bytes.len()) {
            dst.copy_from_slice(bytes);
        }
    }
    #[cfg(not(target_endian = "little"))]
    each(bytes, out, f32::from_le_bytes);
}

/// `F64`: rounded to the nearest `f32` (ties to even), overflowing to ±∞.
#[inline]
pub(super) fn decode_f64(bytes: &[u8], out: &mut [f32]) {
    #[allow(clippy::cast_possible_truncation)] // rounding is the point
    each(bytes, out, |a| f64::from_le_bytes(a) as f32);
}
