//! The bulk decoders of [`decode_f32_into`](super::decode_f32_into) for
//! `F16`, `BF16`, the 8-bit floats and the packed `F6`s and `F4`: the same
//! bits as the scalar decoders ([`layout`](super::layout)'s tables and
//! `half`, which stay the spec: tests compare every code), computed four
//! lanes at a time with no branch and no table.
//!
//! - [`lanes`]: the lane type the tricks are written against (wasm SIMD128
//!   in the npm package's reader; elsewhere plain arrays the optimiser
//!   vectorises).
//! - [`bf16`]: `BF16` → `f32` is a shift (and a quiet bit for NaN).
//! - [`rebias`]: every other format, by moving its bits into an `f32`'s
//!   places and one multiplication.
//! - here: the block loops, and the unpacking of `F4` and `F6` codes into
//!   one byte each.

mod bf16;
pub(crate) mod lanes;
mod rebias;
// The bulk loops: wasm SIMD128 where the build enables it, else the same
// tricks on one `u32` lane per element (which the tests compare with the
// scalar spec everywhere; `mode::VECTOR_DECODE` says which builds decode
// through them).
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
mod each;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod wasm;
// (`ByteFormat`: the constants `decode_bytes` takes for a format of up to
// 8 bits.)
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
pub(super) use each::{decode_bf16, decode_bytes, decode_f16, ByteFormat};
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub(super) use wasm::{decode_bf16, decode_bytes, decode_f16, ByteFormat};

use crate::decode::layout::format_of;
use crate::dtype::Dtype;

// The formats of up to 8 bits.
pub(crate) static F8_E5M2: ByteFormat = ByteFormat::for_bytes(format_of(Dtype::F8_E5M2));
pub(crate) static F8_E4M3: ByteFormat = ByteFormat::for_bytes(format_of(Dtype::F8_E4M3));
pub(crate) static F8_E8M0: ByteFormat = ByteFormat::for_bytes(format_of(Dtype::F8_E8M0));
pub(crate) static F8_E4M3FNUZ: ByteFormat = ByteFormat::for_bytes(format_of(Dtype::F8_E4M3FNUZ));
pub(crate) static F8_E5M2FNUZ: ByteFormat = ByteFormat::for_bytes(format_of(Dtype::F8_E5M2FNUZ));
pub(crate) static F6_E2M3: ByteFormat = ByteFormat::for_bytes(format_of(Dtype::F6_E2M3));
pub(crate) static F6_E3M2: ByteFormat = ByteFormat::for_bytes(format_of(Dtype::F6_E3M2));
pub(crate) static F4: ByteFormat = ByteFormat::for_bytes(format_of(Dtype::F4));

/// `F4`: two codes per byte, the first in the low nibble.
pub(super) fn decode_f4(bytes: &[u8], out: &mut [f32]) {
    decode_packed(&F4, STRETCH / 2, nibbles, bytes, out);
}

/// An `F6`: four codes per three bytes.
pub(super) fn decode_f6(format: &ByteFormat, bytes: &[u8], out: &mut [f32]) {
    decode_packed(format, STRETCH / 4 * 3, sixes, bytes, out);
}

/// A packed format: unpacked `stretch_bytes` (the bytes of `STRETCH`
/// codes) at a time into one code per byte (`unpack`), then decoded as
/// 8-bit codes.
#[inline(never)]
fn decode_packed(
    format: &ByteFormat,
    stretch_bytes: usize,
    unpack: fn(&[u8], &mut [u8]),
    bytes: &[u8],
    out: &mut [f32],
) {
    for (packed, out) in bytes.chunks(stretch_bytes).zip(out.chunks_mut(STRETCH)) {
        let mut codes = [0u8; STRETCH];
        unpack(packed, &mut codes);
        decode_bytes(format, codes.get(..out.len()).unwrap_or(&[]), out);
    }
}

/// How many `F4` or `F6` codes are unpacked at a time (on the stack).
const STRETCH: usize = 256;

/// `F4` codes, each at the top of a byte: the low nibble first
/// (docs/format.md, packing-f4).
fn nibbles(mut packed: &[u8], mut codes: &mut [u8]) {
    while let (Some((&[b], rest)), Some(([first, second], more))) = (
        packed.split_first_chunk::<1>(),
        core::mem::take(&mut codes).split_first_chunk_mut::<2>(),
    ) {
        *first = b << 4;
        *second = b & 0xF0;
        (packed, codes) = (rest, more);
    }
}

/// `F6` codes, each at the top of a byte: element `i` of three bytes is
/// bits `6i..6i+5` of `b0 | b1 << 8 | b2 << 16` (docs/format.md,
/// packing-f6).
fn sixes(mut packed: &[u8], mut codes: &mut [u8]) {
    while let (Some((&[b0, b1, b2], rest)), Some(([e0, e1, e2, e3], more))) = (
        packed.split_first_chunk::<3>(),
        core::mem::take(&mut codes).split_first_chunk_mut::<4>(),
    ) {
        *e0 = b0 << 2;
        *e1 = ((b0 >> 4) & 0x0C) | (b1 << 4);
        *e2 = ((b1 >> 2) & 0x3C) | (b2 << 6);
        *e3 = b2 & 0xFC;
        (packed, codes) = (rest, more);
    }
}

#[cfg(test)]
mod tests {
    //! Every code of every format through the lanes, against the scalar
    //! decoders (the spec): in every position of a block and of a partial
    //! last block.
    use super::*;
    use crate::decode::{fp8, mx};
    use crate::mode::Codes;
    use half::{bf16, f16};
    use std::vec::Vec;

    /// `decode` on `bytes` placed after each of `0..lead` leading elements
    /// and cut to each length up to one block more, against `spec`.
    fn same(
        what: &str,
        bytes: &[u8],
        group: usize,
        per_group: usize,
        decode: impl Fn(&[u8], &mut [f32]),
        spec: &[u32],
    ) {
        let mut out = std::vec![0.0f32; spec.len()];
        decode(bytes, &mut out);
        for (i, (got, want)) in out.iter().zip(spec).enumerate() {
            assert_eq!(got.to_bits(), *want, "{what}: element {i}");
        }
        // Shifted by whole groups, cut short: each element in every lane
        // position and in the zero-padded tail.
        for skip in 0..8 {
            for keep in [1, 2, 3, 5, 7, 9, 13, 17] {
                let start = skip * group;
                let end = (start + keep * group).min(bytes.len());
                let Some(part) = bytes.get(start..end) else {
                    continue;
                };
                let n = part.len() / group * per_group;
                let mut out = std::vec![f32::NAN; n];
                decode(part, &mut out);
                let want = &spec[skip * per_group..skip * per_group + n];
                let got: Vec<u32> = out.iter().map(|v| v.to_bits()).collect();
                assert_eq!(got, want, "{what}: from group {skip}, {keep} groups");
            }
        }
    }

    fn table<const N: usize>(codes: &Codes<N>) -> Vec<u32> {
        codes.with(|t| t.iter().map(|v| v.to_bits()).collect())
    }

    #[test]
    fn every_8_bit_code_equals_the_table() {
        let all: Vec<u8> = (0..=255).collect();
        for (name, lanes, codes) in [
            ("F8_E5M2", &F8_E5M2, &fp8::F8_E5M2),
            ("F8_E4M3", &F8_E4M3, &fp8::F8_E4M3),
            ("F8_E8M0", &F8_E8M0, &fp8::F8_E8M0),
            ("F8_E4M3FNUZ", &F8_E4M3FNUZ, &fp8::F8_E4M3FNUZ),
            ("F8_E5M2FNUZ", &F8_E5M2FNUZ, &fp8::F8_E5M2FNUZ),
        ] {
            let spec = table(codes);
            same(name, &all, 1, 1, |b, o| decode_bytes(lanes, b, o), &spec);
        }
    }

    #[test]
    fn every_f4_and_f6_code_equals_the_table() {
        // F4: codes 0..16, then reversed, two per byte (first in the low nibble).
        let codes: Vec<u8> = (0..16).chain((0..16).rev()).collect();
        let packed: Vec<u8> = codes.chunks(2).map(|p| p[0] | p[1] << 4).collect();
        let t = table(&mx::F4);
        let spec: Vec<u32> = codes.iter().map(|&c| t[usize::from(c)]).collect();
        same("F4", &packed, 1, 2, decode_f4, &spec);
        // F6: codes 0..64 then reversed, four per three bytes.
        let codes: Vec<u8> = (0..64).chain((0..64).rev()).collect();
        let packed: Vec<u8> = codes
            .chunks(4)
            .flat_map(|q| {
                let w = u32::from(q[0])
                    | u32::from(q[1]) << 6
                    | u32::from(q[2]) << 12
                    | u32::from(q[3]) << 18;
                [w as u8, (w >> 8) as u8, (w >> 16) as u8]
            })
            .collect();
        for (name, lanes, codes_of) in [
            ("F6_E2M3", &F6_E2M3, &mx::F6_E2M3),
            ("F6_E3M2", &F6_E3M2, &mx::F6_E3M2),
        ] {
            let t = table(codes_of);
            let spec: Vec<u32> = codes.iter().map(|&c| t[usize::from(c)]).collect();
            same(name, &packed, 3, 4, |b, o| decode_f6(lanes, b, o), &spec);
        }
    }

    /// Every 16-bit word, then random words with the edges between
    /// (zeros, subnormals, infinities, NaNs with payloads) mixed in.
    fn words() -> Vec<u16> {
        // Under Miri's interpreter a sample keeps the run short.
        let (stride, random) = if cfg!(miri) { (97, 200) } else { (1, 20_000) };
        let mut all: Vec<u16> = (0..=u16::MAX).step_by(stride).collect();
        let edges = [
            0x0000, 0x8000, 0x0001, 0x03FF, 0x0400, 0x7BFF, 0x7C00, 0x7C01, 0x7DFF, 0x7E00, 0xFC00,
            0xFFFF, 0x007F, 0x0080, 0x7F7F, 0x7F80, 0x7F81, 0x7FBF, 0x7FC0, 0xFF80,
        ];
        let mut x: u32 = 0x1234_5678;
        for i in 0..random {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            all.push(if i % 7 == 0 {
                edges[(x >> 8) as usize % edges.len()]
            } else {
                (x >> 16) as u16
            });
        }
        all
    }

    #[test]
    fn every_16_bit_word_equals_half() {
        let words = words();
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let spec: Vec<u32> = words
            .iter()
            .map(|&w| f16::from_bits(w).to_f32().to_bits())
            .collect();
        same("F16", &bytes, 2, 1, decode_f16, &spec);
        let spec: Vec<u32> = words
            .iter()
            .map(|&w| bf16::from_bits(w).to_f32().to_bits())
            .collect();
        same("BF16", &bytes, 2, 1, decode_bf16, &spec);
    }
}
