//! Float dtype conversion, chunk by chunk, for writing a tensor in another
//! dtype than it was read in (F32 → BF16, F64 → F16, F8 → F32, …).

use half::{bf16, f16};

use crate::decode::decode_f32_into;
use crate::dtype::Dtype;
use crate::error::{Error, ErrorKind};

/// Elements [`convert_into`] decodes per internal step; a multiple of 4, so
/// chunks of this many elements (or a multiple) are whole bytes for every
/// dtype — a good unit for streaming a conversion.
///
/// ```
/// use safetensors_nano::{Dtype, write::{convert_into, CONVERT_CHUNK}};
/// let src = vec![0u8; CONVERT_CHUNK * 6 / 8]; // F6_E3M2: 6 bits per element
/// let mut out = vec![0u8; CONVERT_CHUNK * 2];
/// convert_into(Dtype::F6_E3M2, &src, Dtype::F16, &mut out)?;
/// # Ok::<(), safetensors_nano::Error>(())
/// ```
pub const CONVERT_CHUNK: usize = 256;

/// Converts the float elements in `src` (little-endian `from` bytes) to
/// `to` (`F64`, `F32`, `F16` or `BF16`) into `out`, rounding to nearest,
/// ties to even, once: `F64` sources convert directly, every other float
/// dtype is first decoded exactly to `f32`. Values out of range become ±∞;
/// NaN stays NaN. Allocation-free: call it on chunks of a tensor to convert
/// while streaming (sub-byte sources need chunks of whole bytes: a multiple
/// of 2 elements for `F4`, of 4 for `F6`).
///
/// # Errors
/// [`DtypeMismatch`](ErrorKind::DtypeMismatch) when `from` is not a float
/// dtype the decoder knows (see [`Dtype::is_float`]) or `to` is not one of
/// the four targets; [`DataLengthMismatch`](ErrorKind::DataLengthMismatch)
/// when `src` is not a whole number of elements;
/// [`ByteLengthMismatch`](ErrorKind::ByteLengthMismatch) when `out` is
/// not exactly the converted size. `out` may be partly written on error
/// only if the decoder fails mid-way, which valid lengths rule out.
///
/// ```
/// use safetensors_nano::{Dtype, write::convert_into};
/// let src: Vec<u8> = [1.0f32, 1.00390625, -65520.0].iter().flat_map(|v| v.to_le_bytes()).collect();
/// let mut bf16 = [0u8; 6];
/// convert_into(Dtype::F32, &src, Dtype::BF16, &mut bf16)?;
/// // 1.00390625 is halfway between two bf16 values: ties to even gives 1.0
/// assert_eq!(bf16, [0x80, 0x3f, 0x80, 0x3f, 0x80, 0xc7]);
/// let mut f16 = [0u8; 6];
/// convert_into(Dtype::F32, &src, Dtype::F16, &mut f16)?;
/// assert_eq!(&f16[4..], &[0x00, 0xfc]); // -65520 rounds to -inf in F16
/// # Ok::<(), safetensors_nano::Error>(())
/// ```
pub fn convert_into(from: Dtype, src: &[u8], to: Dtype, out: &mut [u8]) -> Result<(), Error> {
    let width = match to {
        Dtype::F64 => 8,
        Dtype::F32 => 4,
        Dtype::F16 | Dtype::BF16 => 2,
        _ => {
            return Err(ErrorKind::DtypeMismatch {
                found: from,
                asked: to,
            }
            .into())
        }
    };
    if !from.is_float() {
        return Err(ErrorKind::DtypeMismatch {
            found: from,
            asked: to,
        }
        .into());
    }
    let bits = src
        .len()
        .checked_mul(8)
        .ok_or(Error::new(ErrorKind::TooLargeForTarget))?;
    let from_bits = usize::from(from.bits());
    let elements = bits.checked_div(from_bits).unwrap_or(0);
    // Bytes per group of elements that fills whole bytes (3 for F6: 4 elements).
    let group = match from_bits {
        4 => 1,
        6 => 3,
        b => b / 8,
    };
    let partial = src.len().checked_rem(group).unwrap_or(0);
    if partial != 0 {
        return Err(ErrorKind::DataLengthMismatch {
            expected: src.len().saturating_sub(partial) as u64,
            found: src.len() as u64,
        }
        .into());
    }
    let expected = elements
        .checked_mul(width)
        .ok_or(Error::new(ErrorKind::TooLargeForTarget))?;
    if out.len() != expected {
        return Err(ErrorKind::ByteLengthMismatch {
            expected: expected as u64,
            found: out.len() as u64,
        }
        .into());
    }
    if from == Dtype::F64 {
        for (value, dst) in src.chunks_exact(8).zip(out.chunks_exact_mut(width)) {
            let mut bytes = [0u8; 8];
            bytes.copy_from_slice(value);
            encode(f64::from_le_bytes(bytes), to, dst);
        }
        return Ok(());
    }
    let mut values = [0f32; CONVERT_CHUNK];
    let src_chunk = CONVERT_CHUNK.saturating_mul(from_bits) / 8;
    for (src, out) in src
        .chunks(src_chunk)
        .zip(out.chunks_mut(CONVERT_CHUNK.saturating_mul(width)))
    {
        let n = out.len().checked_div(width).unwrap_or(0);
        let values = values.get_mut(..n).ok_or(Error::new(ErrorKind::Sink))?;
        decode_f32_into(from, src, values)?;
        encode_exact_f32(values, to, out);
    }
    Ok(())
}

/// Writes exact `f32` values (decoded from a dtype narrower than `F64`) as
/// `to` into `out` (exactly their width each). An exact `f32` needs no
/// round-to-odd step ([`encode`]'s), so each target is one loop of the
/// correctly rounded conversion: the loop a streaming conversion spends its
/// time in.
fn encode_exact_f32(values: &[f32], to: Dtype, out: &mut [u8]) {
    match to {
        Dtype::F64 => {
            for (&v, dst) in values.iter().zip(out.chunks_exact_mut(8)) {
                dst.copy_from_slice(&f64::from(v).to_le_bytes());
            }
        }
        Dtype::F32 => {
            for (&v, dst) in values.iter().zip(out.chunks_exact_mut(4)) {
                dst.copy_from_slice(&v.to_le_bytes());
            }
        }
        Dtype::F16 => {
            for (&v, dst) in values.iter().zip(out.chunks_exact_mut(2)) {
                dst.copy_from_slice(&f16::from_f32(v).to_le_bytes());
            }
        }
        _ => {
            for (&v, dst) in values.iter().zip(out.chunks_exact_mut(2)) {
                dst.copy_from_slice(&bf16::from_f32(v).to_le_bytes());
            }
        }
    }
}

/// Writes `value` as one `to` element into `dst` (exactly its width).
/// `value` is an `f64` holding either an `F64` element or an exact `f32`.
///
/// `half`'s own `from_f64` is not correctly rounded (it drops low mantissa
/// bits, or goes through `f32` with round-to-nearest: double rounding), so
/// `F16` and `BF16` go through `f32` rounded *to odd*, which keeps enough
/// information (24 bits for an 11- or 8-bit target) for the final
/// round-to-nearest-even to be the correct one.
fn encode(value: f64, to: Dtype, dst: &mut [u8]) {
    match to {
        Dtype::F64 => dst.copy_from_slice(&value.to_le_bytes()),
        Dtype::F32 => dst.copy_from_slice(&nearest_f32(value).to_le_bytes()),
        Dtype::F16 => dst.copy_from_slice(&f16::from_f32(to_f32_round_to_odd(value)).to_le_bytes()),
        _ => dst.copy_from_slice(&bf16::from_f32(to_f32_round_to_odd(value)).to_le_bytes()),
    }
}

/// `value` rounded to the nearest `f32`, ties to even (overflow to ±∞).
#[allow(clippy::cast_possible_truncation)] // rounding is the point
fn nearest_f32(value: f64) -> f32 {
    value as f32
}

/// `value` rounded to an `f32` with round-to-odd: exact values stay, others
/// become whichever neighbour has an odd last mantissa bit. Infinities and
/// NaN pass through; values past `f32::MAX` become ±∞ (beyond both targets'
/// ranges anyway).
fn to_f32_round_to_odd(value: f64) -> f32 {
    let nearest = nearest_f32(value);
    if !nearest.is_finite() || f64::from(nearest) == value {
        return nearest;
    }
    let bits = nearest.to_bits();
    if bits & 1 == 1 {
        return nearest;
    }
    // Step one ulp towards `value`. The magnitude bits of a finite f32 are
    // below 0x7f80_0000 and, when stepping down, above 0 (|nearest| > |value| ≥ 0),
    // so neither step crosses the sign bit or overflows.
    if f64::from(nearest).abs() < value.abs() {
        f32::from_bits(bits.wrapping_add(1))
    } else {
        f32::from_bits(bits.wrapping_sub(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32_bytes(values: &[f32]) -> std::vec::Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    #[test]
    fn f16_and_bf16_round_to_nearest_even() {
        // bf16 ties: 1 + 2^-8 is halfway between 1 and 1 + 2^-7 → 1 (even);
        // 1 + 3·2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6 → 1 + 2^-6 (even).
        let src = f32_bytes(&[
            1.0 + 1.0 / 256.0,
            1.0 + 3.0 / 256.0,
            1.0 + 1.0 / 256.0 + 1e-6,
        ]);
        let mut out = [0u8; 6];
        convert_into(Dtype::F32, &src, Dtype::BF16, &mut out).unwrap();
        assert_eq!(out, [0x80, 0x3f, 0x82, 0x3f, 0x81, 0x3f]);
        // f16 ties: 1 + 2^-11 → 1; 1 + 3·2^-11 → 1 + 2^-9
        let src = f32_bytes(&[1.0 + 1.0 / 2048.0, 1.0 + 3.0 / 2048.0]);
        let mut out = [0u8; 4];
        convert_into(Dtype::F32, &src, Dtype::F16, &mut out).unwrap();
        assert_eq!(out, [0x00, 0x3c, 0x02, 0x3c]);
    }

    #[test]
    fn f64_rounds_once() {
        // 1 + 2^-11 + 2^-42 is just above an f16 tie; rounded to nearest f32
        // it lands exactly on the tie, which would then round down to 1.0.
        let v = 1.0 + 1.0 / 2048.0 + 1.0 / (1u64 << 42) as f64;
        assert_eq!(v as f32, 1.0 + 1.0 / 2048.0);
        let mut out = [0u8; 2];
        convert_into(Dtype::F64, &v.to_le_bytes(), Dtype::F16, &mut out).unwrap();
        assert_eq!(out, [0x01, 0x3c]); // correctly: up, to 1 + 2^-10
                                       // the same for bf16: 1 + 2^-8 + 2^-40
        let v = 1.0 + 1.0 / 256.0 + 1.0 / (1u64 << 40) as f64;
        convert_into(Dtype::F64, &v.to_le_bytes(), Dtype::BF16, &mut out).unwrap();
        assert_eq!(out, [0x81, 0x3f]);
    }

    /// Checks `got` is the nearest `f16`/`bf16` to `v`, ties to even, by
    /// comparing with its two neighbours (all exactly representable in f64).
    fn assert_nearest(v: f64, got: u16, decode: impl Fn(u16) -> f64, max_bits: u16) {
        let g = decode(got);
        if g.is_infinite() {
            let largest = decode(max_bits | (got & 0x8000));
            assert!(v.abs() >= largest.abs(), "{v} → inf");
            return;
        }
        let err = (v - g).abs();
        for n in [got.wrapping_add(1), got.wrapping_sub(1)] {
            let nv = decode(n);
            if nv.is_nan() || (n & 0x7fff) > (max_bits + 1) || (n ^ got) & 0x8000 != 0 {
                continue;
            }
            let nerr = (v - nv).abs();
            assert!(
                err < nerr || (err == nerr && got & 1 == 0),
                "{v}: {g} vs {nv}"
            );
        }
    }

    #[test]
    fn f64_to_f16_and_bf16_are_nearest_even() {
        let mut state = 0x1234_5678_9abc_def0u64;
        // Under Miri's interpreter a sample of the values keeps the run short.
        let count = if cfg!(miri) { 2_000u32 } else { 200_000 };
        for i in 0..count {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            // exponents around both targets' ranges, all mantissas
            let exp = 1023 - 30 + u64::from(i % 60);
            let v = f64::from_bits((state & 0x800f_ffff_ffff_ffff) | (exp << 52));
            let mut out = [0u8; 2];
            convert_into(Dtype::F64, &v.to_le_bytes(), Dtype::F16, &mut out).unwrap();
            assert_nearest(
                v,
                u16::from_le_bytes(out),
                |b| f16::from_bits(b).to_f64(),
                0x7bff,
            );
            convert_into(Dtype::F64, &v.to_le_bytes(), Dtype::BF16, &mut out).unwrap();
            assert_nearest(
                v,
                u16::from_le_bytes(out),
                |b| bf16::from_bits(b).to_f64(),
                0x7f7f,
            );
        }
    }

    /// The general path's result for one `f32` (bits `x`) as `to`: the
    /// specification the direct paths must match bit for bit.
    fn via_f64(x: u32, to: Dtype) -> u16 {
        let mut dst = [0u8; 2];
        encode(f64::from(f32::from_bits(x)), to, &mut dst);
        u16::from_le_bytes(dst)
    }

    /// Whether a direct result `got` is the general path's `expected`, bit
    /// for bit. Rust leaves the NaN a float conversion gives unspecified:
    /// hardware keeps the payload and sets the quiet bit (what the direct
    /// paths do), Miri picks any NaN; under Miri any NaN `got` for a NaN
    /// `expected` is right.
    fn same(got: u16, expected: u16, nan_above: u16) -> bool {
        let nan = |b: u16| b & 0x7fff > nan_above;
        got == expected || (cfg!(miri) && nan(got) && nan(expected))
    }

    /// What `convert_into` gives for one `F32` element (bits `x`) as `to`.
    fn direct(x: u32, to: Dtype) -> u16 {
        let mut dst = [0u8; 2];
        convert_into(Dtype::F32, &x.to_le_bytes(), to, &mut dst).unwrap();
        u16::from_le_bytes(dst)
    }

    fn assert_direct_matches_f64_path(x: u32) {
        let (got, expected) = (direct(x, Dtype::BF16), via_f64(x, Dtype::BF16));
        assert!(
            same(got, expected, 0x7f80),
            "bf16 of {x:#010x}: {got:#06x}, {expected:#06x}"
        );
        let (got, expected) = (direct(x, Dtype::F16), via_f64(x, Dtype::F16));
        assert!(
            same(got, expected, 0x7c00),
            "f16 of {x:#010x}: {got:#06x}, {expected:#06x}"
        );
    }

    /// `x`, its f32 neighbours, and the same with the sign set.
    fn around(x: u32) -> impl Iterator<Item = u32> {
        [x.wrapping_sub(1), x, x.wrapping_add(1)]
            .into_iter()
            .flat_map(|b| [b, b ^ 0x8000_0000])
    }

    #[test]
    fn direct_f32_paths_match_the_f64_path_on_special_values() {
        let special = [
            0u32,        // zero
            1,           // smallest subnormal
            0x007f_ffff, // largest subnormal
            0x0080_0000, // smallest normal
            0x3380_0000, // 2^-24, the smallest F16 subnormal
            0x3300_0000, // 2^-25, half of it: a tie that rounds to 0
            0x3340_0000, // 1.5 · 2^-25
            0x3880_0000, // 2^-14, the smallest F16 normal
            0x387f_e000, // the largest F16 subnormal
            0x3f80_0000, // 1
            0x477f_e000, // 65504, F16::MAX
            0x477f_f000, // 65520: the tie between F16::MAX and 2^16
            0x4780_0000, // 65536
            0x7f7f_0000, // BF16::MAX
            0x7f7f_8000, // the tie between BF16::MAX and 2^128
            0x7f7f_ffff, // f32::MAX
            0x7f80_0000, // infinity
            0x7f80_0001, // signalling NaNs with low and high payloads
            0x7f80_2000,
            0x7fa0_0000,
            0x7fbf_ffff,
            0x7fc0_0000, // quiet NaNs
            0x7fc0_0001,
            0x7fff_ffff,
        ];
        for x in special.into_iter().flat_map(around) {
            assert_direct_matches_f64_path(x);
        }
    }

    #[test]
    fn direct_f32_paths_match_the_f64_path_at_every_boundary_and_tie() {
        // Under Miri's interpreter a sample keeps the run short.
        let stride = if cfg!(miri) { 97 } else { 1 };
        // Every finite BF16 value, the ties above it and both neighbours of each.
        for b in (0..=0x7f7fu32).step_by(stride) {
            for x in around(b << 16).chain(around((b << 16) | 0x8000)) {
                assert_direct_matches_f64_path(x);
            }
        }
        // Every finite F16 value (as an f32), the tie above it and the
        // neighbours of each; this includes the subnormal steps and the
        // normal/subnormal and overflow edges.
        let step = |h: u16| f16::from_bits(h).to_f32();
        for h in (0..=0x7bffu16).step_by(stride) {
            let low = step(h);
            let high = if h == 0x7bff { 65536.0 } else { step(h + 1) };
            let tie = (f64::from(low) + f64::from(high)) / 2.0;
            let tie = tie as f32;
            for x in around(low.to_bits()).chain(around(tie.to_bits())) {
                assert_direct_matches_f64_path(x);
            }
        }
    }

    #[test]
    fn direct_f32_paths_match_the_f64_path_on_random_bits() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        // Under Miri's interpreter a sample keeps the run short.
        let count = if cfg!(miri) { 2_000u32 } else { 1_500_000 };
        for _ in 0..count {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            assert_direct_matches_f64_path((state >> 32) as u32);
            // Exponents near the F16 range, where its cases are.
            let near_f16 =
                ((state as u32) & 0x80ff_ffff) | ((100 + (state as u32 >> 24) % 48) << 23);
            assert_direct_matches_f64_path(near_f16);
        }
    }

    #[test]
    fn convert_into_f32_to_16_bits_over_blocks_and_remainders() {
        let mut state = 0x0123_4567_89ab_cdefu64;
        for n in [0, 1, 63, 64, 65, 300, CONVERT_CHUNK * 3 + 5] {
            let words: std::vec::Vec<u32> = (0..n)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    (state >> 32) as u32
                })
                .collect();
            let src: std::vec::Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            for to in [Dtype::BF16, Dtype::F16] {
                let mut out = std::vec![0u8; n * 2];
                convert_into(Dtype::F32, &src, to, &mut out).unwrap();
                let nan_above = if to == Dtype::F16 { 0x7c00 } else { 0x7f80 };
                for (&w, got) in words.iter().zip(out.chunks_exact(2)) {
                    let got = u16::from_le_bytes([got[0], got[1]]);
                    let expected = via_f64(w, to);
                    assert!(
                        same(got, expected, nan_above),
                        "{n} elements to {to}: {w:#010x} → {got:#06x}, {expected:#06x}"
                    );
                }
            }
        }
    }

    #[test]
    fn f16_and_bf16_to_f32_match_the_f64_path_for_every_value() {
        for from in [Dtype::F16, Dtype::BF16] {
            // Under Miri's interpreter a sample keeps the run short.
            let stride = if cfg!(miri) { 97 } else { 1 };
            let src: std::vec::Vec<u8> = (0..=u16::MAX)
                .step_by(stride)
                .flat_map(u16::to_le_bytes)
                .collect();
            let mut out = std::vec![0u8; src.len() * 2];
            convert_into(from, &src, Dtype::F32, &mut out).unwrap();
            let mut decoded = std::vec![0f32; src.len() / 2];
            decode_f32_into(from, &src, &mut decoded).unwrap();
            for (value, got) in decoded.iter().zip(out.chunks_exact(4)) {
                let mut expected = [0u8; 4];
                encode(f64::from(*value), Dtype::F32, &mut expected);
                // As in `same`: under Miri the general path's NaN is any NaN.
                let nan_under_miri = cfg!(miri)
                    && value.is_nan()
                    && f32::from_le_bytes(expected).is_nan()
                    && f32::from_le_bytes([got[0], got[1], got[2], got[3]]).is_nan();
                assert!(
                    got == expected || nan_under_miri,
                    "{from}: {:#010x}",
                    value.to_bits()
                );
            }
        }
    }

    #[test]
    fn every_source_float_dtype_and_chunking() {
        for from in Dtype::ALL.into_iter().filter(|d| d.is_float()) {
            let n = 3 * CONVERT_CHUNK + 4;
            let src: std::vec::Vec<u8> = (0..n * usize::from(from.bits()) / 8)
                .map(|i| (i * 37 % 251) as u8)
                .collect();
            let mut expected = std::vec![0f32; n];
            decode_f32_into(from, &src, &mut expected).unwrap();
            let mut out = std::vec![0u8; n * 4];
            convert_into(from, &src, Dtype::F32, &mut out).unwrap();
            for (e, got) in expected.iter().zip(out.chunks_exact(4)) {
                let got = f32::from_le_bytes(got.try_into().unwrap());
                assert!(
                    e.to_bits() == got.to_bits() || (e.is_nan() && got.is_nan()),
                    "{from}"
                );
            }
        }
    }

    #[test]
    fn errors() {
        let kind = |r: Result<(), Error>| r.unwrap_err().kind();
        assert_eq!(
            kind(convert_into(Dtype::I32, &[0; 4], Dtype::F32, &mut [0; 4])),
            ErrorKind::DtypeMismatch {
                found: Dtype::I32,
                asked: Dtype::F32
            }
        );
        assert_eq!(
            kind(convert_into(
                Dtype::F32,
                &[0; 4],
                Dtype::F8_E4M3,
                &mut [0; 1]
            )),
            ErrorKind::DtypeMismatch {
                found: Dtype::F32,
                asked: Dtype::F8_E4M3
            }
        );
        assert_eq!(
            kind(convert_into(Dtype::F32, &[0; 5], Dtype::F16, &mut [0; 2])),
            ErrorKind::DataLengthMismatch {
                expected: 4,
                found: 5
            }
        );
        assert_eq!(
            kind(convert_into(Dtype::F32, &[0; 8], Dtype::F16, &mut [0; 3])),
            ErrorKind::ByteLengthMismatch {
                expected: 4,
                found: 3
            }
        );
        assert_eq!(
            kind(convert_into(
                Dtype::F6_E2M3,
                &[0; 2],
                Dtype::F16,
                &mut [0; 2]
            )),
            ErrorKind::DataLengthMismatch {
                expected: 0,
                found: 2
            }
        );
    }
}
