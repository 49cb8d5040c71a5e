//! Compile-time construction of lookup tables from a small float's bit layout.
//!
//! Every sub-16-bit format here is described by a [`Layout`]: sign bit or not,
//! exponent and mantissa widths, bias, whether exponent 0 encodes subnormals,
//! and which codes are special. [`table`] evaluates [`f32_bits`] for every code
//! at compile time, so the tables are derived from the layout, never typed in.
//! Every value of every format here is exactly representable as an `f32`, so
//! the construction is exact (no rounding happens anywhere).

/// Which codes of a format are not ordinary finite numbers.
#[derive(Clone, Copy)]
pub(super) enum Special {
    /// None: every code is a finite number (OCP MX FP6 and FP4).
    Finite,
    /// IEEE 754 style: the all-ones exponent is ±infinity (mantissa 0) or NaN.
    Ieee,
    /// All exponent and mantissa bits set is NaN (either sign); no infinities
    /// (the "FN" formats, and E8M0 whose only such code is 0xFF).
    AllOnesNan,
    /// The negative-zero code (sign bit alone) is the one NaN; no infinities,
    /// no −0 (the "FNUZ" formats).
    NegativeZeroNan,
}

/// The bit layout of a small float format: `[sign] exponent mantissa`, from
/// the most significant bit down.
#[derive(Clone, Copy)]
pub(super) struct Layout {
    /// Whether the top bit is a sign bit.
    pub(super) signed: bool,
    /// Width of the exponent field.
    pub(super) exp_bits: u32,
    /// Width of the mantissa field.
    pub(super) man_bits: u32,
    /// Exponent bias.
    pub(super) bias: i32,
    /// Whether exponent field 0 encodes subnormals (`0.m × 2^(1−bias)`)
    /// rather than normal numbers (`1.m × 2^(0−bias)`).
    pub(super) subnormals: bool,
    /// The special codes.
    pub(super) special: Special,
}

/// The NaN every format decodes to, with the code's sign (what `ml_dtypes`
/// produces too).
const QUIET_NAN: u32 = 0x7FC0_0000;
const INFINITY: u32 = 0x7F80_0000;
const F32_MANTISSA: u32 = 0x007F_FFFF;

// This function runs only inside `static` initialisers (compile time): an
// overflow or a failed assertion there is a compile error, never a runtime
// panic. The asserts reject a layout whose values would not fit an f32.
#[allow(
    clippy::arithmetic_side_effects,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss
)]
/// The `f32` bit pattern of `code` in `layout`.
pub(super) const fn f32_bits(layout: Layout, code: u32) -> u32 {
    let width = layout.exp_bits + layout.man_bits;
    let man_mask = (1u32 << layout.man_bits) - 1;
    let exp_mask = (1u32 << layout.exp_bits) - 1;
    let m = code & man_mask;
    let e = (code >> layout.man_bits) & exp_mask;
    let sign = if layout.signed {
        ((code >> width) & 1) << 31
    } else {
        0
    };
    match layout.special {
        Special::Ieee if e == exp_mask => {
            return sign | if m == 0 { INFINITY } else { QUIET_NAN };
        }
        Special::AllOnesNan if e == exp_mask && m == man_mask => return sign | QUIET_NAN,
        Special::NegativeZeroNan if layout.signed && code == 1 << width => {
            return sign | QUIET_NAN;
        }
        _ => {}
    }
    // The value is sig × 2^exp2 with an integer significand.
    let man_bits = layout.man_bits as i32;
    let (sig, exp2) = if e == 0 && layout.subnormals {
        (m, 1 - layout.bias - man_bits)
    } else {
        (
            m | (1 << layout.man_bits),
            e as i32 - layout.bias - man_bits,
        )
    };
    if sig == 0 {
        return sign;
    }
    let top = 31 - sig.leading_zeros(); // sig < 2^(man_bits + 1) ≤ 2^24
    assert!(top <= 23, "mantissa wider than an f32's");
    let biased = top as i32 + exp2 + 127;
    assert!(biased < 255, "value too large for an f32");
    if biased > 0 {
        sign | (biased as u32) << 23 | ((sig << (23 - top)) & F32_MANTISSA)
    } else {
        // An f32 subnormal: the value is mantissa × 2^−149.
        let shift = exp2 + 149;
        assert!(shift >= 0, "value too small for an f32");
        sign | sig << shift
    }
}

// Compile time only, see `f32_bits`; `i < N` bounds the indexing.
#[allow(
    clippy::arithmetic_side_effects,
    clippy::cast_possible_truncation,
    clippy::indexing_slicing
)]
/// The decoded value of every code `0..N` of `layout`.
pub(super) const fn table<const N: usize>(layout: Layout) -> [f32; N] {
    let codes = 1usize << (layout.exp_bits + layout.man_bits + layout.signed as u32);
    assert!(N == codes, "table length does not match the layout's width");
    let mut out = [0.0f32; N];
    let mut i = 0;
    while i < N {
        out[i] = f32::from_bits(f32_bits(layout, i as u32));
        i += 1;
    }
    out
}

/// `table[code]` for a code known to be in range (the `None` arm is dead code
/// the optimiser removes: callers pass a `u8` into 256 entries or a masked
/// index).
#[inline(always)]
pub(super) fn lookup<const N: usize>(table: &[f32; N], code: usize) -> f32 {
    match table.get(code) {
        Some(&v) => v,
        None => f32::NAN,
    }
}
