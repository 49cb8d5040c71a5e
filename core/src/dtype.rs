//! The 22 element types of the format.

use core::fmt;

/// Declares [`Dtype`] and its facts from one table: per dtype its doc, its
/// name (the variant's), bits, alignment, [`DtypeKind`], [`FloatFormat`]
/// where it is a float, and the [`JsView`] of the npm package. Every
/// accessor below is a `match` on the table, which compiles to the same
/// lookup tables as hand-written ones (the firmware's parser budget).
macro_rules! dtypes {
    ($(
        $(#[doc = $doc:literal])*
        $dtype:ident: $bits:literal bits, align $align:literal, $kind:ident $(($float:ident))?, $view:ident;
    )*) => {
        /// An element type, in the reference implementation's enum order.
        ///
        /// The derived `Ord` follows that order; the reference writer sorts tensors by
        /// it (descending), so [`Dtype::ALL`] and the ordering here are part of the
        /// byte-exact writer contract.
        ///
        /// ```
        /// use safetensors_nano::Dtype;
        /// assert_eq!(Dtype::from_name(b"BF16"), Some(Dtype::BF16));
        /// assert_eq!(Dtype::BF16.bits(), 16);
        /// assert!(Dtype::U64 > Dtype::BOOL);
        /// ```
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[cfg_attr(feature = "defmt", derive(defmt::Format))]
        #[repr(u8)]
        pub enum Dtype {
            $($(#[doc = $doc])* $dtype,)*
        }

        impl Dtype {
            /// Every dtype, in the reference enum order (ascending).
            ///
            /// ```
            /// use safetensors_nano::Dtype;
            /// assert_eq!(Dtype::ALL.len(), 22);
            /// assert_eq!(Dtype::ALL[0], Dtype::BOOL);
            /// ```
            pub const ALL: [Dtype; 22] = [$(Dtype::$dtype,)*];

            /// The name as written in a header, e.g. `"F8_E4M3"`.
            ///
            /// ```
            /// assert_eq!(safetensors_nano::Dtype::F8_E4M3.name(), "F8_E4M3");
            /// ```
            pub const fn name(self) -> &'static str {
                match self {
                    $(Dtype::$dtype => stringify!($dtype),)*
                }
            }

            /// Size of one element in bits (4, 6, 8, 16, 32 or 64).
            ///
            /// ```
            /// assert_eq!(safetensors_nano::Dtype::F6_E2M3.bits(), 6);
            /// ```
            pub const fn bits(self) -> u8 {
                match self {
                    $(Dtype::$dtype => $bits,)*
                }
            }

            /// Alignment in bytes that a typed view of this dtype needs (1 for
            /// sub-byte and byte types; `C64` needs 4, the alignment of its `f32` parts).
            ///
            /// ```
            /// use safetensors_nano::Dtype;
            /// assert_eq!(Dtype::BF16.align(), 2);
            /// assert_eq!(Dtype::C64.align(), 4);
            /// ```
            pub const fn align(self) -> usize {
                match self {
                    $(Dtype::$dtype => $align,)*
                }
            }

            /// What kind of number an element is.
            ///
            /// ```
            /// use safetensors_nano::{Dtype, DtypeKind};
            /// assert_eq!(Dtype::BOOL.kind(), DtypeKind::Bool);
            /// assert_eq!(Dtype::U16.kind(), DtypeKind::Uint);
            /// assert_eq!(Dtype::C64.kind(), DtypeKind::Complex);
            /// ```
            pub const fn kind(self) -> DtypeKind {
                match self {
                    $(Dtype::$dtype => DtypeKind::$kind,)*
                }
            }

            /// The bit layout of a float dtype's elements (`None` for the
            /// others, `C64` included: its parts are `F32`s).
            ///
            /// ```
            /// use safetensors_nano::{Dtype, FloatSpecials};
            /// let e4m3 = Dtype::F8_E4M3.float_format().unwrap();
            /// assert_eq!((e4m3.exponent_bits, e4m3.mantissa_bits, e4m3.bias), (4, 3, 7));
            /// assert_eq!(e4m3.specials, FloatSpecials::AllOnesNan);
            /// assert!(Dtype::I8.float_format().is_none());
            /// ```
            pub const fn float_format(self) -> Option<FloatFormat> {
                match self {
                    $(Dtype::$dtype => float_format!($($float)?),)*
                }
            }

            /// The JavaScript typed array that the npm package's `view()`
            /// gives for this dtype.
            ///
            /// ```
            /// use safetensors_nano::{Dtype, JsView};
            /// assert_eq!(Dtype::BF16.js_view(), JsView::Uint16Array);
            /// assert_eq!(Dtype::C64.js_view(), JsView::Float32Array);
            /// ```
            pub const fn js_view(self) -> JsView {
                match self {
                    $(Dtype::$dtype => JsView::$view,)*
                }
            }
        }
    };
}

/// `Some` of a named [`FloatFormat`], or `None` (a row of `dtypes!` without one).
macro_rules! float_format {
    () => {
        None
    };
    ($float:ident) => {
        Some(FloatFormat::$float)
    };
}

dtypes! {
    /// Boolean, one byte: 0 is false, anything else true.
    BOOL: 8 bits, align 1, Bool, Uint8Array;
    /// OCP MX FP4 (E2M1), two elements per byte, first element in the low nibble.
    F4: 4 bits, align 1, Float(MX_E2M1), Uint8Array;
    /// OCP MX FP6 (E2M3), four elements per three bytes.
    F6_E2M3: 6 bits, align 1, Float(MX_E2M3), Uint8Array;
    /// OCP MX FP6 (E3M2), four elements per three bytes.
    F6_E3M2: 6 bits, align 1, Float(MX_E3M2), Uint8Array;
    /// Unsigned 8-bit integer.
    U8: 8 bits, align 1, Uint, Uint8Array;
    /// Signed 8-bit integer.
    I8: 8 bits, align 1, Int, Int8Array;
    /// FP8 E5M2 (IEEE-like, with infinities and NaN).
    F8_E5M2: 8 bits, align 1, Float(E5M2), Uint8Array;
    /// FP8 E4M3FN (no infinities, NaN = 0x7F/0xFF).
    F8_E4M3: 8 bits, align 1, Float(E4M3FN), Uint8Array;
    /// FP8 E8M0: an unsigned power-of-two scale, 0xFF = NaN.
    F8_E8M0: 8 bits, align 1, Float(E8M0), Uint8Array;
    /// FP8 E4M3FNUZ (bias 8, no negative zero, 0x80 = NaN).
    F8_E4M3FNUZ: 8 bits, align 1, Float(E4M3FNUZ), Uint8Array;
    /// FP8 E5M2FNUZ (bias 16, no negative zero, 0x80 = NaN).
    F8_E5M2FNUZ: 8 bits, align 1, Float(E5M2FNUZ), Uint8Array;
    /// Signed 16-bit integer.
    I16: 16 bits, align 2, Int, Int16Array;
    /// Unsigned 16-bit integer.
    U16: 16 bits, align 2, Uint, Uint16Array;
    /// IEEE 754 half precision.
    F16: 16 bits, align 2, Float(BINARY16), Float16Array;
    /// bfloat16.
    BF16: 16 bits, align 2, Float(BFLOAT16), Uint16Array;
    /// Signed 32-bit integer.
    I32: 32 bits, align 4, Int, Int32Array;
    /// Unsigned 32-bit integer.
    U32: 32 bits, align 4, Uint, Uint32Array;
    /// IEEE 754 single precision.
    F32: 32 bits, align 4, Float(BINARY32), Float32Array;
    /// Complex number: two `F32` (real, imaginary).
    C64: 64 bits, align 4, Complex, Float32Array;
    /// IEEE 754 double precision.
    F64: 64 bits, align 8, Float(BINARY64), Float64Array;
    /// Signed 64-bit integer.
    I64: 64 bits, align 8, Int, BigInt64Array;
    /// Unsigned 64-bit integer.
    U64: 64 bits, align 8, Uint, BigUint64Array;
}

/// What kind of number a dtype's elements are ([`Dtype::kind`]).
///
/// ```
/// use safetensors_nano::{Dtype, DtypeKind};
/// let ints = Dtype::ALL.iter().filter(|d| d.kind() == DtypeKind::Int).count();
/// assert_eq!(ints, 4);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DtypeKind {
    /// A boolean byte.
    Bool,
    /// An unsigned integer.
    Uint,
    /// A signed (two's complement) integer.
    Int,
    /// A real floating-point number ([`Dtype::float_format`] says how).
    Float,
    /// A complex number: two floats, real then imaginary.
    Complex,
}

impl DtypeKind {
    /// The kind's name in lower case, e.g. `"uint"` (as the npm package's
    /// generated tables spell it).
    ///
    /// ```
    /// assert_eq!(safetensors_nano::DtypeKind::Complex.name(), "complex");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            DtypeKind::Bool => "bool",
            DtypeKind::Uint => "uint",
            DtypeKind::Int => "int",
            DtypeKind::Float => "float",
            DtypeKind::Complex => "complex",
        }
    }
}

/// Which codes of a float format are not ordinary finite numbers.
///
/// ```
/// use safetensors_nano::{Dtype, FloatSpecials};
/// let f = Dtype::F8_E5M2FNUZ.float_format().unwrap();
/// assert_eq!(f.specials, FloatSpecials::NegativeZeroNan);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FloatSpecials {
    /// None: every code is a finite number (OCP MX FP6 and FP4).
    Finite,
    /// IEEE 754: the all-ones exponent is ±infinity (mantissa 0) or NaN.
    Ieee,
    /// All exponent and mantissa bits set is NaN (either sign); no
    /// infinities (the "FN" formats, and E8M0 whose only such code is 0xFF).
    AllOnesNan,
    /// The negative-zero code (sign bit alone) is the one NaN; no
    /// infinities, no −0 (the "FNUZ" formats).
    NegativeZeroNan,
}

/// The bit layout of a float dtype's elements: `[sign] exponent mantissa`
/// from the most significant bit down. A code with exponent field `e` and
/// mantissa field `m` is `±1.m × 2^(e − bias)`, or with subnormals and
/// `e = 0`, `±0.m × 2^(1 − bias)`; [`specials`](FloatFormat::specials) says
/// which codes are infinities and NaN instead. This is the one statement
/// of each format: the decoders in [`decode`](crate::decode) build their
/// tables of the 4-, 6- and 8-bit formats from it, and the npm package's
/// generated JS tables are written from it.
///
/// ```
/// use safetensors_nano::Dtype;
/// let bf16 = Dtype::BF16.float_format().unwrap();
/// assert_eq!((bf16.exponent_bits, bf16.mantissa_bits, bf16.bias), (8, 7, 127));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FloatFormat {
    /// Whether the top bit is a sign bit.
    pub signed: bool,
    /// Width of the exponent field.
    pub exponent_bits: u8,
    /// Width of the mantissa field.
    pub mantissa_bits: u8,
    /// Exponent bias.
    pub bias: i16,
    /// Whether exponent field 0 encodes subnormals rather than normal numbers.
    pub subnormals: bool,
    /// Which codes are not finite numbers.
    pub specials: FloatSpecials,
}

impl FloatFormat {
    const fn ieee(
        exponent_bits: u8,
        mantissa_bits: u8,
        bias: i16,
        specials: FloatSpecials,
    ) -> Self {
        FloatFormat {
            signed: true,
            exponent_bits,
            mantissa_bits,
            bias,
            subnormals: true,
            specials,
        }
    }

    const MX_E2M1: Self = Self::ieee(2, 1, 1, FloatSpecials::Finite);
    const MX_E2M3: Self = Self::ieee(2, 3, 1, FloatSpecials::Finite);
    const MX_E3M2: Self = Self::ieee(3, 2, 3, FloatSpecials::Finite);
    const E5M2: Self = Self::ieee(5, 2, 15, FloatSpecials::Ieee);
    const E4M3FN: Self = Self::ieee(4, 3, 7, FloatSpecials::AllOnesNan);
    const E8M0: Self = FloatFormat {
        signed: false,
        exponent_bits: 8,
        mantissa_bits: 0,
        bias: 127,
        subnormals: false,
        specials: FloatSpecials::AllOnesNan,
    };
    const E4M3FNUZ: Self = Self::ieee(4, 3, 8, FloatSpecials::NegativeZeroNan);
    const E5M2FNUZ: Self = Self::ieee(5, 2, 16, FloatSpecials::NegativeZeroNan);
    const BINARY16: Self = Self::ieee(5, 10, 15, FloatSpecials::Ieee);
    const BFLOAT16: Self = Self::ieee(8, 7, 127, FloatSpecials::Ieee);
    const BINARY32: Self = Self::ieee(8, 23, 127, FloatSpecials::Ieee);
    const BINARY64: Self = Self::ieee(11, 52, 1023, FloatSpecials::Ieee);
}

/// A JavaScript typed array: what the npm package's `Tensor.view()` returns
/// for a dtype ([`Dtype::js_view`]). Sub-byte types, `BOOL` and the 8-bit
/// floats are viewed as their bytes, `BF16` as its bits, `C64` as
/// interleaved real and imaginary `f32`s.
///
/// ```
/// use safetensors_nano::{Dtype, JsView};
/// assert_eq!(Dtype::F4.js_view(), JsView::Uint8Array);
/// assert_eq!(JsView::BigInt64Array.name(), "BigInt64Array");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(clippy::enum_variant_names)] // named as the JS constructors
pub enum JsView {
    /// `Uint8Array`.
    Uint8Array,
    /// `Int8Array`.
    Int8Array,
    /// `Uint16Array`.
    Uint16Array,
    /// `Int16Array`.
    Int16Array,
    /// `Float16Array` where the runtime has it, else `Uint16Array` of the bits.
    Float16Array,
    /// `Uint32Array`.
    Uint32Array,
    /// `Int32Array`.
    Int32Array,
    /// `Float32Array`.
    Float32Array,
    /// `Float64Array`.
    Float64Array,
    /// `BigInt64Array`.
    BigInt64Array,
    /// `BigUint64Array`.
    BigUint64Array,
}

impl JsView {
    /// The JS constructor's name.
    ///
    /// ```
    /// assert_eq!(safetensors_nano::JsView::Float16Array.name(), "Float16Array");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            JsView::Uint8Array => "Uint8Array",
            JsView::Int8Array => "Int8Array",
            JsView::Uint16Array => "Uint16Array",
            JsView::Int16Array => "Int16Array",
            JsView::Float16Array => "Float16Array",
            JsView::Uint32Array => "Uint32Array",
            JsView::Int32Array => "Int32Array",
            JsView::Float32Array => "Float32Array",
            JsView::Float64Array => "Float64Array",
            JsView::BigInt64Array => "BigInt64Array",
            JsView::BigUint64Array => "BigUint64Array",
        }
    }
}

impl Dtype {
    /// The dtype with this exact (case-sensitive) name.
    ///
    /// ```
    /// use safetensors_nano::Dtype;
    /// assert_eq!(Dtype::from_name(b"F32"), Some(Dtype::F32));
    /// assert_eq!(Dtype::from_name(b"f32"), None);
    /// ```
    #[cfg_attr(not(small), inline(always))]
    pub fn from_name(name: &[u8]) -> Option<Dtype> {
        // One probe of a perfect hash, then one comparison: a few dozen
        // bytes of code where a `match` on the names takes hundreds.
        let (&first, _) = name.split_first()?;
        let fifth = name.get(4).or(name.last()).copied().unwrap_or(first);
        let index = *NAMES.by_hash.get(name_hash(first, fifth, name.len()))?;
        let dtype = Dtype::from_index(u32::from(index))?;
        let start = usize::from(*NAMES.starts.get(usize::from(index))?);
        let end = usize::from(*NAMES.starts.get(usize::from(index).checked_add(1)?)?);
        (NAMES.bytes.get(start..end)? == name).then_some(dtype)
    }

    /// Whether this is a floating-point dtype that
    /// [`decode_f32_into`](crate::decode::decode_f32_into) can decode (every
    /// float except the complex `C64`).
    ///
    /// ```
    /// use safetensors_nano::Dtype;
    /// assert!(Dtype::F8_E8M0.is_float());
    /// assert!(!Dtype::I8.is_float());
    /// assert!(!Dtype::C64.is_float());
    /// ```
    pub const fn is_float(self) -> bool {
        matches!(self.kind(), DtypeKind::Float)
    }

    /// Bytes taken by `elements` elements, or `None` when the bit count
    /// overflows `u64` or is not a whole number of bytes.
    ///
    /// ```
    /// use safetensors_nano::Dtype;
    /// assert_eq!(Dtype::F4.byte_len(6), Some(3));
    /// assert_eq!(Dtype::F4.byte_len(3), None);
    /// assert_eq!(Dtype::F32.byte_len(u64::MAX), None);
    /// ```
    pub const fn byte_len(self, elements: u64) -> Option<u64> {
        match elements.checked_mul(self.bits() as u64) {
            Some(bits) if bits % 8 == 0 => Some(bits / 8),
            _ => None,
        }
    }

    pub(crate) fn from_index(index: u32) -> Option<Dtype> {
        Dtype::ALL.get(usize::try_from(index).ok()?).copied()
    }
}

/// A perfect hash of the 22 dtype names: their first byte, their fifth byte
/// (the last for shorter names) and their length tell them apart modulo 32.
const fn name_hash(first: u8, fifth: u8, len: usize) -> usize {
    (first as usize)
        .wrapping_sub(fifth as usize)
        .wrapping_add(len.wrapping_mul(5))
        & 31
}

/// Bytes in all dtype names together.
#[allow(clippy::indexing_slicing)] // evaluated at compile time
const NAMES_LEN: usize = {
    let mut total = 0;
    let mut i = 0;
    while i < Dtype::ALL.len() {
        total += Dtype::ALL[i].name().len();
        i += 1;
    }
    total
};

/// The lookup tables of [`Dtype::from_name`], packed small (a table of
/// string slices would take twice the bytes).
struct NameTables {
    /// The names back to back, in [`Dtype::ALL`] order.
    bytes: [u8; NAMES_LEN],
    /// Where each name starts in `bytes`, then where the last one ends.
    starts: [u8; 23],
    /// The [`Dtype::ALL`] index of the name with each hash; `u8::MAX` for none.
    by_hash: [u8; 32],
}

/// Built from [`Dtype::name`] at compile time; the build fails if two names
/// share a hash (or a table index is out of range).
#[allow(clippy::indexing_slicing, clippy::cast_possible_truncation)] // evaluated at compile time
const NAMES: NameTables = {
    let mut t = NameTables {
        bytes: [0; NAMES_LEN],
        starts: [0; 23],
        by_hash: [u8::MAX; 32],
    };
    let mut at = 0;
    let mut i = 0;
    while i < Dtype::ALL.len() {
        let name = Dtype::ALL[i].name().as_bytes();
        let mut j = 0;
        while j < name.len() {
            t.bytes[at + j] = name[j];
            j += 1;
        }
        t.starts[i] = at as u8;
        at += name.len();
        let fifth = if name.len() > 4 {
            name[4]
        } else {
            name[name.len() - 1]
        };
        let slot = name_hash(name[0], fifth, name.len());
        assert!(t.by_hash[slot] == u8::MAX, "two dtype names share a hash");
        t.by_hash[slot] = i as u8;
        i += 1;
    }
    t.starts[i] = at as u8;
    t
};

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_order_matches_reference() {
        for (i, d) in Dtype::ALL.iter().enumerate() {
            assert_eq!(*d as usize, i);
            assert_eq!(Dtype::from_name(d.name().as_bytes()), Some(*d));
            assert_eq!(Dtype::from_index(i as u32), Some(*d));
        }
        assert_eq!(Dtype::from_index(22), None);
        assert!(Dtype::ALL.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn align_is_the_element_size_up_to_8_and_complex_aligns_as_its_parts() {
        for d in Dtype::ALL {
            let want = match d.kind() {
                DtypeKind::Complex => usize::from(d.bits() / 16),
                _ => usize::from(d.bits().max(8) / 8),
            };
            assert_eq!(d.align(), want, "{d}");
            assert_eq!(d.is_float(), d.float_format().is_some(), "{d}");
            if let Some(f) = d.float_format() {
                let width = u8::from(f.signed) + f.exponent_bits + f.mantissa_bits;
                assert_eq!(width, d.bits(), "{d}");
            }
        }
    }

    /// The value of `code` in `f`, read off the table's description alone
    /// (in `f64`, where every value of these formats is exact).
    fn by_format(f: FloatFormat, code: u64) -> f64 {
        let man_mask = (1u64 << f.mantissa_bits) - 1;
        let exp_mask = (1u64 << f.exponent_bits) - 1;
        let width = f.exponent_bits + f.mantissa_bits;
        let (m, e) = (code & man_mask, (code >> f.mantissa_bits) & exp_mask);
        let negative = f.signed && (code >> width) & 1 == 1;
        let sign = if negative { -1.0 } else { 1.0 };
        match f.specials {
            FloatSpecials::Ieee if e == exp_mask => {
                return if m == 0 {
                    sign * f64::INFINITY
                } else {
                    f64::NAN
                };
            }
            FloatSpecials::AllOnesNan if e == exp_mask && m == man_mask => return f64::NAN,
            FloatSpecials::NegativeZeroNan if negative && e == 0 && m == 0 => return f64::NAN,
            _ => {}
        }
        let fraction = m as f64 / (1u64 << f.mantissa_bits) as f64;
        let bias = i32::from(f.bias);
        let value = if e == 0 && f.subnormals {
            fraction * 2f64.powi(1 - bias)
        } else {
            (1.0 + fraction) * 2f64.powi(e as i32 - bias)
        };
        sign * value
    }

    fn same(decoded: f32, want: f64) -> bool {
        if want.is_nan() {
            decoded.is_nan()
        } else {
            (decoded as f64).to_bits() == want.to_bits()
        }
    }

    /// Every code decodes to the value the table's format gives by the rule
    /// [`FloatFormat`]'s doc states, read here independently (in `f64`):
    /// every code of the small formats (whose decoders are built from the
    /// same formats, by `decode::layout`'s `f32` arithmetic) and of the
    /// 16-bit ones, and samples of the wide ones (decoded by `half` and
    /// native casts, so this is where their rows are checked).
    #[test]
    #[cfg_attr(miri, ignore = "an exhaustive sweep of safe code: slow under Miri")]
    fn float_formats_agree_with_the_decoders() {
        use crate::decode::*;
        type Decoder = fn(u8) -> f32;
        let small: [(Dtype, Decoder); 8] = [
            (Dtype::F4, f4_to_f32),
            (Dtype::F6_E2M3, f6_e2m3_to_f32),
            (Dtype::F6_E3M2, f6_e3m2_to_f32),
            (Dtype::F8_E5M2, f8_e5m2_to_f32),
            (Dtype::F8_E4M3, f8_e4m3_to_f32),
            (Dtype::F8_E8M0, f8_e8m0_to_f32),
            (Dtype::F8_E4M3FNUZ, f8_e4m3fnuz_to_f32),
            (Dtype::F8_E5M2FNUZ, f8_e5m2fnuz_to_f32),
        ];
        for (d, decode) in small {
            let f = d.float_format().unwrap();
            for code in 0..1u16 << d.bits() {
                let got = decode(code as u8);
                assert!(same(got, by_format(f, code.into())), "{d} {code:#x}: {got}");
            }
        }
        let mut codes: std::vec::Vec<u64> = (0..1 << 16).collect();
        for shift in [0, 20, 23, 31, 40, 52, 60] {
            for low in [0u64, 1, 0x7F, 0x3FF, 0x7FF] {
                codes.push(u64::MAX >> shift ^ low);
                codes.push(low << shift);
                codes.push(0x0123_4567_89AB_CDEF >> shift);
            }
        }
        for d in [Dtype::F16, Dtype::BF16, Dtype::F32, Dtype::F64] {
            let f = d.float_format().unwrap();
            let bytes = usize::from(d.bits() / 8);
            for &code in &codes {
                let code = code & (u64::MAX >> (64 - d.bits()));
                let mut out = [0f32];
                decode_f32_into(d, &code.to_le_bytes()[..bytes], &mut out).unwrap();
                let want = by_format(f, code);
                // F64 to f32 rounds: compare with the rounded value.
                let want = if d == Dtype::F64 {
                    want as f32 as f64
                } else {
                    want
                };
                assert!(same(out[0], want), "{d} {code:#x}: {}", out[0]);
            }
        }
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "an exhaustive sweep of safe code: slow under Miri, and natively tested"
    )]
    fn from_name_takes_exactly_the_names() {
        let by_scan = |s: &[u8]| Dtype::ALL.into_iter().find(|d| d.name().as_bytes() == s);
        let mut candidates: std::vec::Vec<std::vec::Vec<u8>> = std::vec![std::vec![]];
        // Every piece of the packed table, across name boundaries too.
        for start in 0..NAMES.bytes.len() {
            for end in start..=NAMES.bytes.len() {
                candidates.push(NAMES.bytes[start..end].to_vec());
            }
        }
        // Every name with one byte changed, dropped or added.
        for d in Dtype::ALL {
            let name = d.name().as_bytes();
            for i in 0..=name.len() {
                for b in b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcz\0\xff"
                    .iter()
                    .copied()
                {
                    let mut changed = name.to_vec();
                    if i < name.len() {
                        changed[i] = b;
                        candidates.push(changed.clone());
                        changed.remove(i);
                        candidates.push(changed.clone());
                        changed = name.to_vec();
                    }
                    changed.insert(i, b);
                    candidates.push(changed);
                }
            }
        }
        for c in &candidates {
            assert_eq!(
                Dtype::from_name(c),
                by_scan(c),
                "{:?}",
                std::string::String::from_utf8_lossy(c)
            );
        }
        assert!(candidates.iter().filter(|c| by_scan(c).is_some()).count() >= 22);
    }
}
