//! The bulk decoders of [`decode_f32_into`](super::decode_f32_into) for
//! `F16`, `BF16`, the 8-bit floats and the packed `F6`s and `F4`: the same
//! bits as the scalar decoders ([`layout`](super::layout)'s tables and
//! `half`, which stay the spec: tests compare every code), computed many
//! lanes at a time with no branch and no per-element load.
//!
//! - [`corrected`]: the 8-bit floats in two integer steps on 16-bit lanes.
//! - [`f16_steps`]: `F16` in a step on 16-bit words and one multiplication.
//! - `wasm`: the decoders of the npm package's reader on wasm SIMD128
//!   (`BF16` is a shift, and a quiet bit for NaN, besides the two above),
//!   and the unpacking of `F4` and `F6` codes.
//! - `each`: elsewhere, the same steps one element at a time, which the
//!   tests compare with the scalar spec.
//! - here: the packed formats, a stretch at a time: their codes unpacked
//!   (`unpack`, `wasm`'s or `each`'s) into one byte each, the `F8_E4M3`
//!   code of the same value (every `F4` and `F6` value is one), then
//!   decoded as those. So the packed formats add only their unpacking to
//!   the 8-bit decoder, which keeps the reader's `.wasm` small.

mod corrected;
mod f16_steps;
// The bulk loops: wasm SIMD128 where the build enables it, else the same
// steps one element at a time (which the tests compare with the scalar
// spec everywhere; `mode::VECTOR_DECODE` says which builds decode through
// them).
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
mod each;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod wasm;
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
pub(super) use each::{decode_bf16, decode_bytes, decode_f16, unpack};
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub(super) use wasm::{decode_bf16, decode_bytes, decode_f16, unpack};

/// A format of up to 8 bits, as `decode_bytes` takes it (both loops run
/// the same [`Corrected`](corrected::Corrected) steps).
type ByteFormat = corrected::Corrected;

use crate::decode::layout::{f32_bits, format_of};
use crate::dtype::{Dtype, FloatFormat};

// The formats of up to 8 bits.
pub(crate) static F8_E5M2: ByteFormat = ByteFormat::for_bytes(format_of(Dtype::F8_E5M2));
pub(crate) static F8_E4M3: ByteFormat = ByteFormat::for_bytes(format_of(Dtype::F8_E4M3));
pub(crate) static F8_E8M0: ByteFormat = ByteFormat::for_bytes(format_of(Dtype::F8_E8M0));
pub(crate) static F8_E4M3FNUZ: ByteFormat = ByteFormat::for_bytes(format_of(Dtype::F8_E4M3FNUZ));
pub(crate) static F8_E5M2FNUZ: ByteFormat = ByteFormat::for_bytes(format_of(Dtype::F8_E5M2FNUZ));

// The packed formats' codes as `F8_E4M3` codes of the same values: every
// `F4` code, the `F6`s' codes with the sign bit clear (`unpack` ORs a set
// one in as `F8_E4M3`'s: each value's negative twin has that code, which
// the assertion below checks at compile time).
pub(crate) static F6_E2M3: [u8; 32] = as_e4m3(format_of(Dtype::F6_E2M3));
pub(crate) static F6_E3M2: [u8; 32] = as_e4m3(format_of(Dtype::F6_E3M2));
static F4: [u8; 16] = as_e4m3(format_of(Dtype::F4));
const _: () = assert!(
    top_bit_is_sign(format_of(Dtype::F6_E2M3), 32)
        && top_bit_is_sign(format_of(Dtype::F6_E3M2), 32),
    "an F6 code with its top bit set is not the negative of the code without it"
);

/// Whether code `half + k` of `format` is the negative of code `k` (the
/// same `f32` bits but the sign) for every `k` below `half`.
#[allow(clippy::arithmetic_side_effects)] // `k` below `half`, a code count
const fn top_bit_is_sign(format: FloatFormat, half: u32) -> bool {
    let mut k = 0;
    while k < half {
        match (f32_bits(format, k), f32_bits(format, half + k)) {
            (Some(positive), Some(negative)) if negative == positive ^ 0x8000_0000 => k += 1,
            _ => return false,
        }
    }
    true
}

/// The `F8_E4M3` code of each code `0..N` of `format` (at compile time: it
/// runs in `static` initialisers, and fails to compile if a value has no
/// `F8_E4M3` code).
#[allow(
    clippy::arithmetic_side_effects,
    clippy::cast_possible_truncation,
    clippy::indexing_slicing
)]
const fn as_e4m3<const N: usize>(format: FloatFormat) -> [u8; N] {
    let e4m3 = format_of(Dtype::F8_E4M3);
    let mut out = [0u8; N];
    let mut code = 0;
    while code < N {
        let want = f32_bits(format, code as u32);
        assert!(want.is_some(), "a code of the format is not an f32");
        let mut c = 0;
        while !matches!((f32_bits(e4m3, c), want), (Some(a), Some(b)) if a == b) {
            c += 1;
            assert!(c < 256, "a value has no F8_E4M3 code");
        }
        out[code] = c as u8;
        code += 1;
    }
    out
}

/// `F4`: two codes per byte, the first in the low nibble.
pub(super) fn decode_f4(bytes: &[u8], out: &mut [f32]) {
    decode_packed(&F4, 4, bytes, out);
}

/// An `F6` (`codes`: its codes with the sign bit clear as `F8_E4M3`
/// codes): four codes per three bytes.
pub(super) fn decode_f6(codes: &[u8; 32], bytes: &[u8], out: &mut [f32]) {
    decode_packed(codes, 6, bytes, out);
}

/// A packed format of `bits`-bit codes (`codes`: them as `F8_E4M3` codes,
/// for `F6` only those with the sign bit clear, as `unpack` takes them):
/// unpacked `STRETCH` codes at a time into one `F8_E4M3` code per byte,
/// then decoded as those.
#[inline(never)]
#[allow(clippy::arithmetic_side_effects)] // `bits` is 4 or 6
fn decode_packed(codes: &[u8], bits: usize, bytes: &[u8], out: &mut [f32]) {
    let stretch_bytes = STRETCH * bits / 8;
    let mut unpacked = [0u8; STRETCH];
    for (packed, out) in bytes.chunks(stretch_bytes).zip(out.chunks_mut(STRETCH)) {
        unpack(codes, bits, packed, &mut unpacked);
        decode_bytes(&F8_E4M3, unpacked.get(..out.len()).unwrap_or(&[]), out);
    }
}

/// How many `F4` or `F6` codes are unpacked at a time (on the stack).
const STRETCH: usize = 256;

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
        // Shifted by whole groups, cut short: each element in every
        // position of a block of up to 16 elements (the widest, `BF16`'s
        // and the 8-bit floats') and in the zero-padded tail.
        for skip in 0..16 {
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
