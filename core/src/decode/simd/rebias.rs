//! Any float format up to 16 bits whose values are all `f32`s, decoded by
//! arithmetic instead of a table: with the code at the top of a lane, its
//! exponent and mantissa shifted into an `f32`'s places are that `f32`
//! with the format's bias instead of 127, so one integer addition of
//! (127 − bias) to the exponent rebiases a normal number. A subnormal
//! (exponent 0) is its mantissa times a power of two: an integer converted
//! to `f32` and one exact multiplication (no `f32` subnormal is ever an
//! operand, which costs x86 a slow microcode assist). Comparisons then put
//! in the format's infinities and NaNs, and one code the arithmetic does
//! not give (`F8_E8M0`'s 2^−127, or the NaN of the FNUZ formats). The
//! formats are docs/format.md's "The small floats" and `F16`.
//!
//! Why: a table lookup is a load per element, which SIMD cannot do 4 or 16
//! at a time (wasm has no gather); this is a dozen lane operations per four
//! elements. The tables ([`crate::decode::layout`]) stay the spec: tests
//! compare every code.

use super::lanes::{Lane, INFINITY, QUIET_NAN};
use crate::decode::layout::{f32_bits, format_of};
use crate::dtype::{Dtype, FloatFormat, FloatSpecials};

// `F16`, decoded this way (keeping NaN payloads); the formats of up to 8
// bits are `ByteFormat`s (`super`), built from `Rebias::for_bytes` where
// they are `Rebias`es.
pub(crate) static F16: Rebias = Rebias::new(format_of(Dtype::F16), true);

/// A format's constants for [`Rebias::apply`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rebias {
    /// The sign bit at the top of a lane (0 for unsigned formats).
    pub(super) sign: u32,
    /// How far the magnitude moves right from the top of the lane to the
    /// places of an `f32`'s exponent and mantissa.
    pub(super) shift: u32,
    /// (127 − bias) in an `f32`'s exponent field.
    pub(super) rebias: u32,
    /// The value of a moved subnormal's unit: 2^(−149) × 2^(127 − bias).
    subnormal_unit: f32,
    /// A moved magnitude above this is NaN (compared as `f32`s: see
    /// [`Lane::above`]; `NEVER` is a NaN pattern, above nothing).
    pub(super) nan_above: u32,
    /// A moved magnitude equal to this is ±infinity.
    pub(super) infinity: u32,
    /// The bits of a NaN's moved magnitude it keeps (`F16` keeps its
    /// payload, as `half` does; the small formats decode to the one quiet
    /// NaN, as `ml_dtypes` does).
    payload: u32,
    /// A lane (code at the top) whose bits are `odd_bits` instead.
    pub(super) odd_lane: u32,
    /// The `f32` bits of `odd_lane`.
    pub(super) odd_bits: u32,
}

/// An `f32`'s exponent field.
const EXPONENT: u32 = 0x7F80_0000;
/// A lane value no code gives (codes sit at the top, this at the bottom).
const NO_LANE: u32 = 1;
/// A moved magnitude no code reaches.
const NEVER: u32 = i32::MAX as u32;

// Evaluated at compile time (in `static`s), on formats whose fields are
// small: a sign, up to 8 exponent bits, up to 10 mantissa bits.
#[allow(
    clippy::arithmetic_side_effects,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss
)]
impl Rebias {
    /// The constants of `format`; `keep_payload` for the 16-bit formats.
    /// (Which formats this decodes exactly is checked by tests, code by
    /// code, against the tables.)
    pub(crate) const fn new(format: FloatFormat, keep_payload: bool) -> Self {
        let e = format.exponent_bits as u32;
        let m = format.mantissa_bits as u32;
        let s = format.signed as u32;
        let shift = 9 - s - e;
        let max_moved = ((1u32 << (e + m)) - 1) << (23 - m);
        let all_ones_exponent = ((1u32 << e) - 1) << 23;
        let (nan_above, infinity, odd_lane, odd_bits) = match format.specials {
            FloatSpecials::Finite => (NEVER, u32::MAX, NO_LANE, 0),
            FloatSpecials::Ieee => (all_ones_exponent, all_ones_exponent, NO_LANE, 0),
            FloatSpecials::AllOnesNan => (max_moved - 1, u32::MAX, NO_LANE, 0),
            FloatSpecials::NegativeZeroNan => (NEVER, u32::MAX, 1 << 31, 1 << 31 | QUIET_NAN),
        };
        // Without subnormals, exponent field 0 is 2^(−bias) (F8_E8M0: an
        // f32 subnormal, which the multiplication does not reach).
        let (odd_lane, odd_bits) = if format.subnormals || format.signed {
            (odd_lane, odd_bits)
        } else {
            match f32_bits(format, 0) {
                Some(bits) => (0, bits),
                None => (NO_LANE, 0),
            }
        };
        Rebias {
            sign: s << 31,
            shift,
            rebias: ((127 - format.bias) as u32) << 23,
            subnormal_unit: if format.subnormals {
                f32::from_bits(((105 - format.bias) as u32) << 23)
            } else {
                0.0
            },
            nan_above,
            infinity,
            payload: if keep_payload { 0x007F_FFFF } else { 0 },
            odd_lane,
            odd_bits,
        }
    }

    /// The constants of a format of up to 8 bits (NaNs without payload).
    #[cfg_attr(
        all(target_arch = "wasm32", target_feature = "simd128"),
        allow(dead_code)
    )]
    pub(crate) const fn for_bytes(format: FloatFormat) -> Self {
        Self::new(format, false)
    }

    /// The `f32` bits of the codes at the top of each lane of `x`.
    #[inline(always)]
    pub(crate) fn apply<L: Lane>(&self, x: L) -> L {
        let sign = x.and(L::splat(self.sign));
        let moved = x.and(L::splat(!self.sign)).shr(self.shift);
        let normal = moved.add(L::splat(self.rebias));
        let subnormal = moved.int_times(self.subnormal_unit);
        let exponent_zero = moved.and(L::splat(EXPONENT)).eq(L::splat(0));
        let finite = L::select(exponent_zero, subnormal, normal);
        let nan = moved.above(L::splat(self.nan_above));
        let infinite = moved.eq(L::splat(self.infinity));
        let quiet = moved.and(L::splat(self.payload)).or(L::splat(QUIET_NAN));
        let special = L::select(nan, quiet, L::splat(INFINITY));
        let value = L::select(nan.or(infinite), special, finite).or(sign);
        // (A constant for a known format, as `F16`'s: the step compiles away.)
        if self.odd_lane == NO_LANE {
            return value;
        }
        L::select(
            x.eq(L::splat(self.odd_lane)),
            L::splat(self.odd_bits),
            value,
        )
    }
}
