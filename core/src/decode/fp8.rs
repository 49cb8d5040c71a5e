//! The five 8-bit float formats: one 256-entry table each, built at compile
//! time from the dtype's [`FloatFormat`](crate::FloatFormat) in the dtype
//! table (on wasm32, at run time: see [`Codes`]).

use super::layout::{format_of, lookup};
use crate::dtype::Dtype;
use crate::mode::Codes;

pub(super) static F8_E5M2: Codes<256> = Codes::new(format_of(Dtype::F8_E5M2));
pub(super) static F8_E4M3: Codes<256> = Codes::new(format_of(Dtype::F8_E4M3));
pub(super) static F8_E8M0: Codes<256> = Codes::new(format_of(Dtype::F8_E8M0));
pub(super) static F8_E4M3FNUZ: Codes<256> = Codes::new(format_of(Dtype::F8_E4M3FNUZ));
pub(super) static F8_E5M2FNUZ: Codes<256> = Codes::new(format_of(Dtype::F8_E5M2FNUZ));

/// Decodes one byte per element through the table of `codes`.
#[inline]
pub(super) fn decode(codes: &Codes<256>, bytes: &[u8], out: &mut [f32]) {
    codes.with(|table| {
        for (o, &b) in out.iter_mut().zip(bytes) {
            *o = lookup(table, usize::from(b));
        }
    });
}

/// Decodes one `F8_E5M2` value: sign, 5 exponent bits (bias 15), 2 mantissa
/// bits, IEEE-like with ±infinity (`0x7C`, `0xFC`) and NaN; max 57344.
///
/// ```
/// use safetensors_nano::decode::f8_e5m2_to_f32;
/// assert_eq!(f8_e5m2_to_f32(0x3C), 1.0);
/// assert_eq!(f8_e5m2_to_f32(0x7B), 57344.0);
/// assert_eq!(f8_e5m2_to_f32(0xFC), f32::NEG_INFINITY);
/// assert!(f8_e5m2_to_f32(0x7F).is_nan());
/// ```
#[inline]
pub fn f8_e5m2_to_f32(code: u8) -> f32 {
    F8_E5M2.get(code)
}

/// Decodes one `F8_E4M3` (E4M3FN) value: sign, 4 exponent bits (bias 7),
/// 3 mantissa bits; no infinities, NaN is `0x7F`/`0xFF`; max 448.
///
/// ```
/// use safetensors_nano::decode::f8_e4m3_to_f32;
/// assert_eq!(f8_e4m3_to_f32(0x38), 1.0);
/// assert_eq!(f8_e4m3_to_f32(0x7E), 448.0);
/// assert_eq!(f8_e4m3_to_f32(0x01), f32::from_bits(0x3b000000));
/// assert!(f8_e4m3_to_f32(0xFF).is_nan());
/// ```
#[inline]
pub fn f8_e4m3_to_f32(code: u8) -> f32 {
    F8_E4M3.get(code)
}

/// Decodes one `F8_E8M0` value: an unsigned power-of-two scale
/// 2^(code − 127); `0xFF` is NaN and there is no zero.
///
/// ```
/// use safetensors_nano::decode::f8_e8m0_to_f32;
/// assert_eq!(f8_e8m0_to_f32(0x7F), 1.0);
/// assert_eq!(f8_e8m0_to_f32(0x80), 2.0);
/// assert_eq!(f8_e8m0_to_f32(0x00), f32::from_bits(0x400000));
/// assert!(f8_e8m0_to_f32(0xFF).is_nan());
/// ```
#[inline]
pub fn f8_e8m0_to_f32(code: u8) -> f32 {
    F8_E8M0.get(code)
}

/// Decodes one `F8_E4M3FNUZ` value: sign, 4 exponent bits (bias 8),
/// 3 mantissa bits; no infinities, no −0: `0x80` is the NaN; max 240.
///
/// ```
/// use safetensors_nano::decode::f8_e4m3fnuz_to_f32;
/// assert_eq!(f8_e4m3fnuz_to_f32(0x40), 1.0);
/// assert_eq!(f8_e4m3fnuz_to_f32(0x7F), 240.0);
/// assert!(f8_e4m3fnuz_to_f32(0x80).is_nan());
/// ```
#[inline]
pub fn f8_e4m3fnuz_to_f32(code: u8) -> f32 {
    F8_E4M3FNUZ.get(code)
}

/// Decodes one `F8_E5M2FNUZ` value: sign, 5 exponent bits (bias 16),
/// 2 mantissa bits; no infinities, no −0: `0x80` is the NaN; max 57344.
///
/// ```
/// use safetensors_nano::decode::f8_e5m2fnuz_to_f32;
/// assert_eq!(f8_e5m2fnuz_to_f32(0x40), 1.0);
/// assert_eq!(f8_e5m2fnuz_to_f32(0x7F), 57344.0);
/// assert!(f8_e5m2fnuz_to_f32(0x80).is_nan());
/// ```
#[inline]
pub fn f8_e5m2fnuz_to_f32(code: u8) -> f32 {
    F8_E5M2FNUZ.get(code)
}
