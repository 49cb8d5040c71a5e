//! The bulk loops where the build names no vector instructions: the lane
//! tricks on one `u32` per element. Builds without wasm SIMD128 decode
//! through the scalar spec instead (`mode::VECTOR_DECODE`); these loops are
//! how the tests check the tricks, which the npm reader runs on `v128`,
//! against it on every target.

use super::bf16::bf16;
use super::rebias::{Rebias, F16};

/// A format of up to 8 bits, as [`decode_bytes`] takes it.
pub(crate) type ByteFormat = Rebias;

/// `BF16`: two bytes per element.
#[inline(never)]
pub(crate) fn decode_bf16(bytes: &[u8], out: &mut [f32]) {
    halves(bytes, out, bf16::<u32>);
}

/// `F16`: two bytes per element.
#[inline(never)]
pub(crate) fn decode_f16(bytes: &[u8], out: &mut [f32]) {
    halves(bytes, out, |x: u32| F16.apply(x));
}

/// An 8-bit format: one byte per element (the code at the byte's top).
#[inline(never)]
pub(crate) fn decode_bytes(format: &Rebias, bytes: &[u8], out: &mut [f32]) {
    for (o, &b) in out.iter_mut().zip(bytes) {
        *o = f32::from_bits(format.apply(u32::from(b) << 24));
    }
}

/// `trick` on every little-endian `u16` of `bytes`, put at the top of a lane.
#[inline(always)]
fn halves(bytes: &[u8], out: &mut [f32], trick: impl Fn(u32) -> u32) {
    for (o, pair) in out.iter_mut().zip(bytes.chunks_exact(2)) {
        if let &[lo, hi] = pair {
            *o = f32::from_bits(trick(u32::from(u16::from_le_bytes([lo, hi])) << 16));
        }
    }
}
