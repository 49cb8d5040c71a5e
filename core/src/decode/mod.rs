//! Decoding float element bytes into `f32`.
//!
//! [`decode_f32_into`] turns the little-endian bytes of any float dtype except
//! `C64` into `f32`s; the `*_to_f32` functions decode a single sub-16-bit
//! value. Everything here is allocation-free, panic-free and exact: every
//! value of `F16`, `BF16`, the five `F8`s, the two `F6`s and `F4` is an `f32`,
//! and `F64` is rounded to the nearest `f32` (ties to even, overflow to ±∞),
//! as `f64 as f32` does. The 8-, 6- and 4-bit formats decode through 256-,
//! 64- and 16-entry tables that are computed at compile time from each
//! dtype's bit layout, as the dtype table states it ([`Dtype::float_format`];
//! on wasm32, where the `.wasm`'s size counts, by the same function at run
//! time, once per [`decode_f32_into`] call); `F16` and `BF16` go through the
//! [`half`] crate.
//!
//! Decoded NaNs are the quiet NaN with the code's sign, as `ml_dtypes` decodes
//! them (`F16`/`BF16` NaNs keep their payload, quieted, as `half` does).
//!
//! # Bit order of the packed sub-byte dtypes
//!
//! - **`F4`** (OCP MX FP4, E2M1): two elements per byte, the **first element
//!   in the low nibble** (bits 3..0) and the second in the high nibble
//!   (bits 7..4), as PyTorch's `float4_e2m1fn_x2` packs them.
//! - **`F6_E2M3`, `F6_E3M2`** (OCP MX FP6): four elements per three bytes.
//!   No producer of packed FP6 tensors exists to copy, so safetensors-nano
//!   follows the OCP MX v1.0 element encodings with a little-endian bit
//!   order: the three bytes `b0 b1 b2` form the 24-bit integer
//!   `b0 | b1 << 8 | b2 << 16`, and element `i` (0..4) is its bits
//!   `6i..6i+5` (element 0 is the low 6 bits of `b0`). Within an element the
//!   top bit is the sign, then the exponent, then the mantissa.
//!
//! Element counts must fill whole bytes: an `F4` buffer holds an even number
//! of elements, an `F6` buffer a multiple of four (the header validation of a
//! file guarantees both).
//!
//! ```
//! use safetensors_nano::{decode::decode_f32_into, Dtype};
//! // F4 codes 0x2 (1.0) then 0xF (-6.0) in one byte; first in the low nibble.
//! let mut out = [0.0; 2];
//! decode_f32_into(Dtype::F4, &[0xF2], &mut out)?;
//! assert_eq!(out, [1.0, -6.0]);
//!
//! // F6_E3M2 codes 0x0C (1.0), 0x1F (28.0), 0x21 (-0.0625), 0x00 (0.0),
//! // element i at bits 6i..6i+5 of a 24-bit little-endian integer.
//! let bits: u32 = 0x0C | 0x1F << 6 | 0x21 << 12;
//! let mut out = [9.0; 4];
//! decode_f32_into(Dtype::F6_E3M2, &bits.to_le_bytes()[..3], &mut out)?;
//! assert_eq!(out, [1.0, 28.0, -0.0625, 0.0]);
//! # Ok::<(), safetensors_nano::Error>(())
//! ```

mod fp8;
mod ieee;
pub(crate) mod layout;
mod mx;
mod simd;

pub use fp8::{
    f8_e4m3_to_f32, f8_e4m3fnuz_to_f32, f8_e5m2_to_f32, f8_e5m2fnuz_to_f32, f8_e8m0_to_f32,
};
pub use mx::{f4_to_f32, f6_e2m3_to_f32, f6_e3m2_to_f32};

use crate::dtype::Dtype;
use crate::error::{Error, ErrorKind};
use crate::mode::VECTOR_DECODE;

/// Decodes every element of `bytes` (little-endian, packed as described in
/// the [module docs](self)) into `out`, which must hold exactly as many
/// elements.
///
/// Meant to be called on large tensors chunk by chunk: any chunk that is a
/// whole number of elements works (for `F6`, a multiple of 3 bytes).
///
/// # Errors
///
/// - [`ErrorKind::DtypeMismatch`] when `dtype` is not a float or is `C64`
///   (see [`Dtype::is_float`]);
/// - [`ErrorKind::DataLengthMismatch`] when `bytes` is not a whole number of
///   elements (e.g. 5 bytes of `F32`, or 4 bytes of `F6`); `expected` is the
///   byte length `out.len()` elements need (or, if that is not a whole
///   number of bytes either, the longest whole prefix of `bytes`);
/// - [`ErrorKind::LengthMismatch`] when `bytes` holds `expected` elements but
///   `out` has `found`.
///
/// `out` is untouched when an error is returned.
///
/// ```
/// use safetensors_nano::{decode::decode_f32_into, Dtype, ErrorKind};
/// let bytes = [0x3C, 0x7C, 0xC0];                  // F8_E5M2: 1.0, inf, -2.0
/// let mut out = [0.0f32; 3];
/// decode_f32_into(Dtype::F8_E5M2, &bytes, &mut out)?;
/// assert_eq!(out, [1.0, f32::INFINITY, -2.0]);
///
/// let bf16 = [0x80, 0x3F, 0x40, 0xC0];             // BF16: 1.0, -3.0
/// let mut out = [0.0f32; 2];
/// decode_f32_into(Dtype::BF16, &bf16, &mut out)?;
/// assert_eq!(out, [1.0, -3.0]);
///
/// let err = decode_f32_into(Dtype::I8, &bytes, &mut [0.0; 3]).unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::DtypeMismatch { found: Dtype::I8, asked: Dtype::F32 });
/// let err = decode_f32_into(Dtype::F8_E5M2, &bytes, &mut [0.0; 2]).unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::LengthMismatch { expected: 3, found: 2 });
/// # Ok::<(), safetensors_nano::Error>(())
/// ```
pub fn decode_f32_into(dtype: Dtype, bytes: &[u8], out: &mut [f32]) -> Result<(), Error> {
    if !dtype.is_float() {
        return Err(Error::new(ErrorKind::DtypeMismatch {
            found: dtype,
            asked: Dtype::F32,
        }));
    }
    check_lengths(dtype, bytes.len() as u64, out.len() as u64)?;
    // `VECTOR_DECODE` is a constant: a build has one arm of each pair.
    match dtype {
        Dtype::F4 if VECTOR_DECODE => simd::decode_f4(bytes, out),
        Dtype::F6_E2M3 if VECTOR_DECODE => simd::decode_f6(&simd::F6_E2M3, bytes, out),
        Dtype::F6_E3M2 if VECTOR_DECODE => simd::decode_f6(&simd::F6_E3M2, bytes, out),
        Dtype::F8_E5M2 if VECTOR_DECODE => simd::decode_bytes(&simd::F8_E5M2, bytes, out),
        Dtype::F8_E4M3 if VECTOR_DECODE => simd::decode_bytes(&simd::F8_E4M3, bytes, out),
        Dtype::F8_E8M0 if VECTOR_DECODE => simd::decode_bytes(&simd::F8_E8M0, bytes, out),
        Dtype::F8_E4M3FNUZ if VECTOR_DECODE => simd::decode_bytes(&simd::F8_E4M3FNUZ, bytes, out),
        Dtype::F8_E5M2FNUZ if VECTOR_DECODE => simd::decode_bytes(&simd::F8_E5M2FNUZ, bytes, out),
        Dtype::F16 if VECTOR_DECODE => simd::decode_f16(bytes, out),
        Dtype::BF16 if VECTOR_DECODE => simd::decode_bf16(bytes, out),
        Dtype::F4 => mx::decode_f4(bytes, out),
        Dtype::F6_E2M3 => mx::decode_f6(&mx::F6_E2M3, bytes, out),
        Dtype::F6_E3M2 => mx::decode_f6(&mx::F6_E3M2, bytes, out),
        Dtype::F8_E5M2 => fp8::decode(&fp8::F8_E5M2, bytes, out),
        Dtype::F8_E4M3 => fp8::decode(&fp8::F8_E4M3, bytes, out),
        Dtype::F8_E8M0 => fp8::decode(&fp8::F8_E8M0, bytes, out),
        Dtype::F8_E4M3FNUZ => fp8::decode(&fp8::F8_E4M3FNUZ, bytes, out),
        Dtype::F8_E5M2FNUZ => fp8::decode(&fp8::F8_E5M2FNUZ, bytes, out),
        Dtype::F16 => ieee::decode_f16(bytes, out),
        Dtype::BF16 => ieee::decode_bf16(bytes, out),
        Dtype::F32 => ieee::decode_f32(bytes, out),
        Dtype::F64 => ieee::decode_f64(bytes, out),
        // Excluded by `is_float` above.
        Dtype::BOOL
        | Dtype::U8
        | Dtype::I8
        | Dtype::I16
        | Dtype::U16
        | Dtype::I32
        | Dtype::U32
        | Dtype::C64
        | Dtype::I64
        | Dtype::U64 => {
            return Err(Error::new(ErrorKind::DtypeMismatch {
                found: dtype,
                asked: Dtype::F32,
            }))
        }
    }
    Ok(())
}

/// `Ok` when `byte_len` bytes are exactly `elements` elements of `dtype`.
fn check_lengths(dtype: Dtype, byte_len: u64, elements: u64) -> Result<(), Error> {
    let needed = bytes_for(dtype, elements);
    if needed == Some(byte_len) {
        return Ok(());
    }
    let kind = match elements_in(dtype, byte_len) {
        Some(expected) => ErrorKind::LengthMismatch {
            expected,
            found: elements,
        },
        None => ErrorKind::DataLengthMismatch {
            expected: match needed {
                Some(needed) => needed,
                None => whole_prefix(dtype, byte_len),
            },
            found: byte_len,
        },
    };
    Err(Error::new(kind))
}

/// Bytes per group and elements per group: the smallest whole-byte unit.
const fn group(dtype: Dtype) -> (u64, u64) {
    match dtype.bits() {
        4 => (1, 2),
        6 => (3, 4),
        bits => ((bits / 8) as u64, 1),
    }
}

/// The longest prefix of `byte_len` bytes that is a whole number of groups.
const fn whole_prefix(dtype: Dtype, byte_len: u64) -> u64 {
    let (group_bytes, _) = group(dtype);
    match byte_len.checked_rem(group_bytes) {
        Some(partial) => byte_len.saturating_sub(partial),
        None => 0,
    }
}

/// How many elements of `dtype` `byte_len` bytes hold, or `None` when they
/// are not a whole number of elements (or the count overflows `u64`).
///
/// Sub-byte dtypes pack whole groups: `F4` two elements per byte, `F6_*`
/// four elements per three bytes.
///
/// ```
/// use safetensors_nano::{decode::elements_in, Dtype};
/// assert_eq!(elements_in(Dtype::F32, 12), Some(3));
/// assert_eq!(elements_in(Dtype::F32, 13), None);
/// assert_eq!(elements_in(Dtype::F4, 3), Some(6));
/// assert_eq!(elements_in(Dtype::F6_E2M3, 6), Some(8));
/// assert_eq!(elements_in(Dtype::F6_E2M3, 4), None);
/// ```
pub const fn elements_in(dtype: Dtype, byte_len: u64) -> Option<u64> {
    let (group_bytes, group_elements) = group(dtype);
    match byte_len.checked_rem(group_bytes) {
        Some(0) => match byte_len.checked_div(group_bytes) {
            Some(groups) => groups.checked_mul(group_elements),
            None => None,
        },
        _ => None,
    }
}

/// How many bytes `elements` elements of `dtype` take, or `None` when that is
/// not a whole number of bytes (an odd count of `F4`, a count of `F6` that
/// is not a multiple of 4) or overflows `u64`.
///
/// Use it to size chunks for [`decode_f32_into`].
///
/// ```
/// use safetensors_nano::{decode::bytes_for, Dtype};
/// assert_eq!(bytes_for(Dtype::BF16, 1024), Some(2048));
/// assert_eq!(bytes_for(Dtype::F4, 6), Some(3));
/// assert_eq!(bytes_for(Dtype::F4, 5), None);
/// assert_eq!(bytes_for(Dtype::F6_E3M2, 8), Some(6));
/// assert_eq!(bytes_for(Dtype::F64, u64::MAX), None);
/// ```
pub const fn bytes_for(dtype: Dtype, elements: u64) -> Option<u64> {
    let (group_bytes, group_elements) = group(dtype);
    match elements.checked_rem(group_elements) {
        Some(0) => match elements.checked_div(group_elements) {
            Some(groups) => groups.checked_mul(group_bytes),
            None => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits(x: f32) -> u32 {
        x.to_bits()
    }

    #[test]
    fn known_fp8_values() {
        assert_eq!(f8_e4m3_to_f32(0x7E), 448.0);
        assert_eq!(f8_e4m3_to_f32(0xFE), -448.0);
        assert!(f8_e4m3_to_f32(0x7F).is_nan());
        assert!(f8_e4m3_to_f32(0xFF).is_nan());
        assert_eq!(f8_e4m3_to_f32(0x08), f32::from_bits(0x3c800000)); // smallest normal
        assert_eq!(f8_e4m3_to_f32(0x07), 7.0 * f32::from_bits(0x3b000000)); // largest subnormal

        assert_eq!(f8_e5m2_to_f32(0x7C), f32::INFINITY);
        assert_eq!(f8_e5m2_to_f32(0xFC), f32::NEG_INFINITY);
        assert!(f8_e5m2_to_f32(0x7D).is_nan());
        assert_eq!(f8_e5m2_to_f32(0x7B), 57344.0);
        assert_eq!(f8_e5m2_to_f32(0x01), f32::from_bits(0x37800000));

        assert_eq!(f8_e8m0_to_f32(0x7F), 1.0);
        assert_eq!(f8_e8m0_to_f32(0xFE), f32::from_bits(0x7f000000));
        assert_eq!(f8_e8m0_to_f32(0x00), f32::from_bits(0x400000));
        assert!(f8_e8m0_to_f32(0xFF).is_nan());

        assert!(f8_e4m3fnuz_to_f32(0x80).is_nan());
        assert_eq!(f8_e4m3fnuz_to_f32(0x7F), 240.0);
        assert_eq!(f8_e4m3fnuz_to_f32(0xFF), -240.0);
        assert_eq!(bits(f8_e4m3fnuz_to_f32(0x00)), 0);
        assert!(f8_e5m2fnuz_to_f32(0x80).is_nan());
        assert_eq!(f8_e5m2fnuz_to_f32(0x7F), 57344.0);
        assert_eq!(f8_e5m2fnuz_to_f32(0x01), f32::from_bits(0x37000000));
    }

    #[test]
    fn known_mx_values() {
        assert_eq!(f4_to_f32(0x7), 6.0);
        assert_eq!(f4_to_f32(0xF), -6.0);
        assert_eq!(bits(f4_to_f32(0x8)), bits(-0.0));
        assert_eq!(f4_to_f32(0x1), 0.5);
        assert_eq!(f4_to_f32(0xF7), 6.0); // the high nibble is ignored
        assert_eq!(f6_e2m3_to_f32(0x1F), 7.5);
        assert_eq!(f6_e2m3_to_f32(0x3F), -7.5);
        assert_eq!(f6_e2m3_to_f32(0x01), 0.125);
        assert_eq!(f6_e3m2_to_f32(0x1F), 28.0);
        assert_eq!(f6_e3m2_to_f32(0x3F), -28.0);
        assert_eq!(f6_e3m2_to_f32(0x01), 0.0625);
        assert_eq!(bits(f6_e3m2_to_f32(0x20)), bits(-0.0));
    }

    #[test]
    fn every_nan_has_the_codes_sign() {
        let fns: [fn(u8) -> f32; 5] = [
            f8_e5m2_to_f32,
            f8_e4m3_to_f32,
            f8_e8m0_to_f32,
            f8_e4m3fnuz_to_f32,
            f8_e5m2fnuz_to_f32,
        ];
        for f in fns {
            for code in 0..=255u8 {
                let v = f(code);
                if v.is_nan() {
                    assert_eq!(bits(v) & 0x7FFF_FFFF, 0x7FC0_0000, "code {code:#04x}");
                }
            }
        }
    }

    /// wasm32 builds each table at run time ([`layout::LayoutCodes`])
    /// instead of reading the one computed at compile time
    /// ([`layout::TableCodes`]): the same bits, for every code of every
    /// format, whichever of the two this target's statics are (the tables
    /// themselves are checked against `ml_dtypes` in `tests/decode.rs`).
    #[test]
    fn run_time_tables_equal_the_compile_time_ones() {
        use crate::dtype::FloatFormat;
        use crate::mode::Codes;
        use layout::{format_of, LayoutCodes, TableCodes};
        fn same<const N: usize>(codes: &Codes<N>, format: FloatFormat) -> usize {
            let stored = TableCodes::<N>::new(format);
            let computed = LayoutCodes::<N>::new(format);
            stored.with(|table| {
                computed.with(|built| {
                    codes.with(|ours| {
                        for code in 0..N {
                            let one = u8::try_from(code).unwrap();
                            let t = bits(table[code]);
                            assert_eq!(bits(built[code]), t, "code {code:#04x}");
                            assert_eq!(bits(ours[code]), t, "code {code:#04x}");
                            assert_eq!(bits(computed.get(one)), t, "code {code:#04x}");
                            assert_eq!(bits(stored.get(one)), t, "code {code:#04x}");
                            assert_eq!(bits(codes.get(one)), t, "code {code:#04x}");
                        }
                    });
                });
            });
            N
        }
        let eight = [
            (&fp8::F8_E5M2, Dtype::F8_E5M2),
            (&fp8::F8_E4M3, Dtype::F8_E4M3),
            (&fp8::F8_E8M0, Dtype::F8_E8M0),
            (&fp8::F8_E4M3FNUZ, Dtype::F8_E4M3FNUZ),
            (&fp8::F8_E5M2FNUZ, Dtype::F8_E5M2FNUZ),
        ];
        let counted: usize = eight
            .into_iter()
            .map(|(codes, dtype)| same(codes, format_of(dtype)))
            .sum::<usize>()
            + same(&mx::F6_E2M3, format_of(Dtype::F6_E2M3))
            + same(&mx::F6_E3M2, format_of(Dtype::F6_E3M2))
            + same(&mx::F4, format_of(Dtype::F4));
        assert_eq!(counted, 5 * 256 + 2 * 64 + 16);
    }

    /// `f32_bits` refuses what an `f32` cannot hold (so that `Codes::new`
    /// fails to compile for such a format rather than build a wrong table).
    #[test]
    fn formats_wider_than_f32_are_refused() {
        use crate::dtype::{FloatFormat, FloatSpecials};
        use layout::f32_bits;
        let base = FloatFormat {
            signed: false,
            exponent_bits: 8,
            mantissa_bits: 0,
            bias: 127,
            subnormals: false,
            specials: FloatSpecials::Finite,
        };
        assert_eq!(f32_bits(base, 254), Some(0x7F00_0000));
        assert_eq!(f32_bits(base, 255), None); // 2^128
        let small = FloatFormat { bias: 160, ..base };
        assert_eq!(f32_bits(small, 11), Some(1)); // 2^-149
        assert_eq!(f32_bits(small, 10), None); // 2^-150
        let wide = FloatFormat {
            exponent_bits: 1,
            mantissa_bits: 24,
            bias: 0,
            subnormals: true,
            ..base
        };
        assert_eq!(f32_bits(wide, 1 << 23), Some(0x3F80_0000)); // 2^23 × 2^-23
        assert_eq!(f32_bits(wide, 1 << 24), None); // a 25-bit significand
    }

    #[test]
    fn f6_unpacks_each_bit_position() {
        // A single set bit in each of the 24 positions lands in exactly one
        // element: element i = bits 6i..6i+5.
        for bit in 0..24u32 {
            let packed = (1u32 << bit).to_le_bytes();
            let mut out = [0.0f32; 4];
            let result = decode_f32_into(Dtype::F6_E3M2, packed.get(..3).unwrap_or(&[]), &mut out);
            assert!(result.is_ok());
            for (i, v) in out.iter().enumerate() {
                let expected = if bit as usize / 6 == i {
                    f6_e3m2_to_f32(1 << (bit % 6))
                } else {
                    0.0
                };
                assert_eq!(bits(*v), bits(expected), "bit {bit}, element {i}");
            }
        }
    }

    #[test]
    fn lengths() {
        assert_eq!(elements_in(Dtype::F4, u64::MAX), None);
        assert_eq!(elements_in(Dtype::F6_E2M3, 3 * (u64::MAX / 3)), None);
        assert_eq!(elements_in(Dtype::C64, 16), Some(2));
        assert_eq!(
            bytes_for(Dtype::F6_E2M3, 4 * (u64::MAX / 4)),
            Some(3 * (u64::MAX / 4))
        );
        assert_eq!(bytes_for(Dtype::BOOL, 7), Some(7));
        for dtype in Dtype::ALL {
            for n in 0..64u64 {
                if let Some(b) = bytes_for(dtype, n) {
                    assert_eq!(elements_in(dtype, b), Some(n), "{dtype:?} {n}");
                }
            }
        }
    }

    #[test]
    fn errors_leave_out_untouched() {
        let mut out = [7.0f32; 4];
        let e = decode_f32_into(Dtype::F6_E2M3, &[0; 4], &mut out).unwrap_err();
        assert_eq!(
            e.kind(),
            ErrorKind::DataLengthMismatch {
                expected: 3,
                found: 4
            }
        );
        let e = decode_f32_into(Dtype::F32, &[0; 5], &mut out[..3]).unwrap_err();
        assert_eq!(
            e.kind(),
            ErrorKind::DataLengthMismatch {
                expected: 12,
                found: 5
            }
        );
        // `out` itself cannot be packed (5 F6 elements): the whole prefix.
        let e = decode_f32_into(Dtype::F6_E2M3, &[0; 4], &mut [0.0; 5]).unwrap_err();
        assert_eq!(
            e.kind(),
            ErrorKind::DataLengthMismatch {
                expected: 3,
                found: 4
            }
        );
        let e = decode_f32_into(Dtype::F4, &[0; 2], &mut out[..3]).unwrap_err();
        assert_eq!(
            e.kind(),
            ErrorKind::LengthMismatch {
                expected: 4,
                found: 3
            }
        );
        let e = decode_f32_into(Dtype::C64, &[0; 8], &mut out[..1]).unwrap_err();
        assert_eq!(
            e.kind(),
            ErrorKind::DtypeMismatch {
                found: Dtype::C64,
                asked: Dtype::F32
            }
        );
        assert_eq!(out, [7.0; 4]);
    }
}
