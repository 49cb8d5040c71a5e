//! The OCP MX sub-byte floats: FP6 (E2M3, E3M2) and FP4 (E2M1), with their
//! packing (see the module docs of [`crate::decode`] for the bit order).
//! Their tables are built from each dtype's [`FloatFormat`](crate::FloatFormat)
//! in the dtype table, as the 8-bit formats' are.

use super::layout::{format_of, lookup};
use crate::dtype::Dtype;
use crate::mode::Codes;

pub(super) static F6_E2M3: Codes<64> = Codes::new(format_of(Dtype::F6_E2M3));
pub(super) static F6_E3M2: Codes<64> = Codes::new(format_of(Dtype::F6_E3M2));
pub(super) static F4: Codes<16> = Codes::new(format_of(Dtype::F4));

const SIX_BITS: u8 = 0x3F;
const NIBBLE: u8 = 0x0F;

/// Decodes packed FP4: two elements per byte, the first in the low nibble.
/// `out` has two elements per byte of `bytes`.
#[inline]
pub(super) fn decode_f4(bytes: &[u8], out: &mut [f32]) {
    F4.with(|table| {
        for (pair, &b) in out.chunks_exact_mut(2).zip(bytes) {
            if let [first, second] = pair {
                *first = lookup(table, usize::from(b & NIBBLE));
                *second = lookup(table, usize::from(b >> 4));
            }
        }
    });
}

/// Decodes packed FP6: four elements per three bytes, read as a 24-bit
/// little-endian integer whose bits `6i..6i+5` are element `i`.
/// `out` has four elements per three bytes of `bytes`.
#[inline]
pub(super) fn decode_f6(codes: &Codes<64>, bytes: &[u8], out: &mut [f32]) {
    codes.with(|table| {
        for (quad, group) in out.chunks_exact_mut(4).zip(bytes.chunks_exact(3)) {
            if let ([e0, e1, e2, e3], &[b0, b1, b2]) = (quad, group) {
                // Bits 0..5, 6..11, 12..17, 18..23 of b0 | b1 << 8 | b2 << 16.
                *e0 = six(table, b0);
                *e1 = six(table, (b0 >> 6) | (b1 << 2));
                *e2 = six(table, (b1 >> 4) | (b2 << 4));
                *e3 = six(table, b2 >> 2);
            }
        }
    });
}

/// `table[code & 0x3F]`.
#[inline(always)]
fn six(table: &[f32; 64], code: u8) -> f32 {
    lookup(table, usize::from(code & SIX_BITS))
}

/// Decodes one `F6_E2M3` value from the low 6 bits of `code` (the top two
/// bits are ignored): sign, 2 exponent bits (bias 1), 3 mantissa bits; every
/// code is finite; max 7.5.
///
/// ```
/// use safetensors_nano::decode::f6_e2m3_to_f32;
/// assert_eq!(f6_e2m3_to_f32(0b0_01_000), 1.0);
/// assert_eq!(f6_e2m3_to_f32(0b0_11_111), 7.5);
/// assert_eq!(f6_e2m3_to_f32(0b1_00_001), -0.125);
/// ```
#[inline]
pub fn f6_e2m3_to_f32(code: u8) -> f32 {
    F6_E2M3.get(code & SIX_BITS)
}

/// Decodes one `F6_E3M2` value from the low 6 bits of `code` (the top two
/// bits are ignored): sign, 3 exponent bits (bias 3), 2 mantissa bits; every
/// code is finite; max 28.
///
/// ```
/// use safetensors_nano::decode::f6_e3m2_to_f32;
/// assert_eq!(f6_e3m2_to_f32(0b0_011_00), 1.0);
/// assert_eq!(f6_e3m2_to_f32(0b0_111_11), 28.0);
/// assert_eq!(f6_e3m2_to_f32(0b1_000_01), -0.0625);
/// ```
#[inline]
pub fn f6_e3m2_to_f32(code: u8) -> f32 {
    F6_E3M2.get(code & SIX_BITS)
}

/// Decodes one `F4` (E2M1) value from the low 4 bits of `code` (the top four
/// bits are ignored): sign, 2 exponent bits (bias 1), 1 mantissa bit; the
/// values are ±{0, 0.5, 1, 1.5, 2, 3, 4, 6}.
///
/// ```
/// use safetensors_nano::decode::f4_to_f32;
/// assert_eq!(f4_to_f32(0x7), 6.0);
/// assert_eq!(f4_to_f32(0xF), -6.0);
/// assert_eq!(f4_to_f32(0x1), 0.5);
/// ```
#[inline]
pub fn f4_to_f32(code: u8) -> f32 {
    F4.get(code & NIBBLE)
}
