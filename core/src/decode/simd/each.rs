//! The bulk loops where the build names no vector instructions: the steps
//! of the wasm SIMD128 decoders (`wasm`), one element at a time. Builds
//! without wasm SIMD128 decode through the scalar spec instead
//! (`mode::VECTOR_DECODE`); these loops are how the tests check the steps
//! against it on every target.

use super::corrected::Corrected;
use super::f16_steps;

/// `BF16`: two bytes per element. The top half of an `f32`: only a NaN
/// gets its quiet bit, as `half` (the scalar spec) decodes it.
#[inline(never)]
pub(crate) fn decode_bf16(bytes: &[u8], out: &mut [f32]) {
    halves(bytes, out, |h| {
        let quiet = if h & 0x7FFF > 0x7F80 { 0x0040 } else { 0 };
        u32::from(h | quiet) << 16
    });
}

/// `F16`: two bytes per element ([`f16_steps`]).
#[inline(never)]
pub(crate) fn decode_f16(bytes: &[u8], out: &mut [f32]) {
    halves(bytes, out, |h| {
        f16_value(u32::from(h) << 16 | u32::from(f16_special(h)))
    });
}

/// The 16-bit step of [`f16_steps`]: the bits ORed into the top half of
/// the decoded `f32` of word `h` (0 for finite words).
fn f16_special(h: u16) -> u16 {
    let magnitude = h & f16_steps::MAGNITUDE;
    if magnitude > f16_steps::INFINITY {
        f16_steps::SPECIAL | f16_steps::QUIET
    } else if magnitude == f16_steps::INFINITY {
        f16_steps::SPECIAL
    } else {
        0
    }
}

/// The 32-bit step of [`f16_steps`] on one lane: `h << 16 | f16_special(h)`.
#[allow(clippy::cast_possible_wrap, clippy::cast_sign_loss)]
fn f16_value(lane: u32) -> u32 {
    let moved = ((lane as i32) >> f16_steps::SHIFT) as u32 & f16_steps::MOVED;
    (f32::from_bits(moved) * f16_steps::SCALE).to_bits() | lane << 16
}

/// An 8-bit format: one byte per element (the code at the byte's top).
#[inline(never)]
pub(crate) fn decode_bytes(format: &Corrected, bytes: &[u8], out: &mut [f32]) {
    for (o, &b) in out.iter_mut().zip(bytes) {
        *o = f32::from_bits(u32::from(corrected(format, b)) << 16);
    }
}

/// [`Corrected`]'s steps on one code (`lane`: the code at the byte's top):
/// the top half of its `f32`.
fn corrected(format: &Corrected, lane: u8) -> u16 {
    let index = usize::from(lane.wrapping_add(format.offset) & format.index_mask);
    let fix = match (format.low.get(index), format.high.get(index)) {
        (Some(&lo), Some(&hi)) => u16::from_le_bytes([lo, hi]),
        _ => 0,
    };
    let value = format.shifted(lane).wrapping_add(fix);
    if u16::from(lane) << 8 == format.odd_lane {
        value | format.odd_bits
    } else {
        value
    }
}

/// `bits` of every little-endian `u16` of `bytes`.
#[inline(always)]
fn halves(bytes: &[u8], out: &mut [f32], bits: impl Fn(u16) -> u32) {
    for (o, pair) in out.iter_mut().zip(bytes.chunks_exact(2)) {
        if let &[lo, hi] = pair {
            *o = f32::from_bits(bits(u16::from_le_bytes([lo, hi])));
        }
    }
}

/// The codes of `packed` (`bits` wide: 4 or 6) as `F8_E4M3` codes, into
/// `out` from its start, the same codes as `wasm`'s steps give. Code `i`
/// is bits `bits·i ..` of `packed` read as one little-endian integer
/// (docs/format.md, packing-f4 and packing-f6: the first `F4` in the low
/// nibble; element `i` of three `F6` bytes is bits `6i..6i+5` of
/// `b0 | b1 << 8 | b2 << 16`); its low five bits index `codes` and its
/// sign bit (the top one) is ORed in as `F8_E4M3`'s. Right for `F6` as the
/// negative twin of each value has its code with that bit set; `F4`'s
/// sixteen `codes` have it already.
#[allow(clippy::arithmetic_side_effects)] // `bits` is 4 or 6, `i` below `out.len()`
pub(crate) fn unpack(codes: &[u8], bits: usize, packed: &[u8], out: &mut [u8]) {
    let mask = (1u16 << bits) - 1;
    for (i, o) in out.iter_mut().take(packed.len() * 8 / bits).enumerate() {
        let at = i * bits;
        let byte = |k: usize| packed.get(at / 8 + k).copied().unwrap_or(0);
        let code = (u16::from_le_bytes([byte(0), byte(1)]) >> (at % 8)) & mask;
        let sign = if code >> (bits - 1) == 1 { 0x80 } else { 0 };
        *o = codes.get(usize::from(code & 0x1F)).copied().unwrap_or(0) | sign;
    }
}
