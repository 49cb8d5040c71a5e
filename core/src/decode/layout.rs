//! Lookup tables of a small float's codes, derived from its bit layout.
//!
//! Every sub-16-bit format here is described by its row of the dtype table
//! (`dtypes!` in `dtype.rs`): a [`FloatFormat`], which [`format_of`] takes
//! from [`Dtype::float_format`] at compile time. [`table`] evaluates
//! [`f32_bits`] for every code at compile time, so the tables are derived
//! from that format, never typed in ([`TableCodes`]; on wasm32
//! [`LayoutCodes`] builds them at run time instead, as
//! [`mode::Codes`](crate::mode::Codes) picks).
//! Every value of every format here is exactly representable as an `f32`, so
//! the construction is exact (no rounding happens anywhere).

use crate::dtype::{Dtype, FloatFormat, FloatSpecials};

/// The float format of `dtype`, as the dtype table states it. Meant for
/// `static` initialisers, where the assert runs at compile time: a dtype
/// without a float format fails the build.
pub(super) const fn format_of(dtype: Dtype) -> FloatFormat {
    let format = dtype.float_format();
    assert!(format.is_some(), "a decoder's dtype has no float format");
    match format {
        Some(format) => format,
        // Not reached (asserted above): a one-code format, which no `table`
        // of 16 or more codes accepts either.
        None => FloatFormat {
            signed: false,
            exponent_bits: 0,
            mantissa_bits: 0,
            bias: 0,
            subnormals: false,
            specials: FloatSpecials::Finite,
        },
    }
}

/// The NaN every format decodes to, with the code's sign (what `ml_dtypes`
/// produces too).
const QUIET_NAN: u32 = 0x7FC0_0000;
const INFINITY: u32 = 0x7F80_0000;
const F32_MANTISSA: u32 = 0x007F_FFFF;

// The asserts of `TableCodes::new` (run at compile time, in the `static`
// initialisers) guarantee that every code of the formats here decodes
// without overflow, so that at run time (wasm32) nothing here can fail.
#[allow(
    clippy::arithmetic_side_effects,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss
)]
/// The `f32` bit pattern of `code` in `format`, or `None` when the value
/// would not be an `f32` (a format too wide for one).
pub(super) const fn f32_bits(format: FloatFormat, code: u32) -> Option<u32> {
    // Widened losslessly (`From` is not `const`): u8 to u32, i16 to i32.
    let exp_bits = format.exponent_bits as u32;
    let man_bits = format.mantissa_bits as u32;
    let bias = format.bias as i32;
    let width = exp_bits + man_bits;
    let man_mask = (1u32 << man_bits) - 1;
    let exp_mask = (1u32 << exp_bits) - 1;
    let m = code & man_mask;
    let e = (code >> man_bits) & exp_mask;
    let sign = if format.signed {
        ((code >> width) & 1) << 31
    } else {
        0
    };
    match format.specials {
        FloatSpecials::Ieee if e == exp_mask => {
            return Some(sign | if m == 0 { INFINITY } else { QUIET_NAN });
        }
        FloatSpecials::AllOnesNan if e == exp_mask && m == man_mask => {
            return Some(sign | QUIET_NAN);
        }
        FloatSpecials::NegativeZeroNan if format.signed && code == 1 << width => {
            return Some(sign | QUIET_NAN);
        }
        _ => {}
    }
    // The value is sig × 2^exp2 with an integer significand.
    let (sig, exp2) = if e == 0 && format.subnormals {
        (m, 1 - bias - man_bits as i32)
    } else {
        (m | (1 << man_bits), e as i32 - bias - man_bits as i32)
    };
    if sig == 0 {
        return Some(sign);
    }
    let top = 31 - sig.leading_zeros();
    if top > 23 {
        return None; // mantissa wider than an f32's
    }
    let biased = top as i32 + exp2 + 127;
    if biased >= 255 {
        None // too large for an f32
    } else if biased > 0 {
        Some(sign | (biased as u32) << 23 | ((sig << (23 - top)) & F32_MANTISSA))
    } else {
        // An f32 subnormal: the value is sig × 2^−149 (`shift` ≤ 22 − top).
        let shift = exp2 + 149;
        if shift < 0 {
            None // too small for an f32
        } else {
            Some(sign | sig << shift)
        }
    }
}

/// How many codes `format` has: `2^(sign + exponent + mantissa bits)`.
// Compile time only (see `TableCodes::new`).
#[allow(clippy::arithmetic_side_effects)]
const fn codes(format: FloatFormat) -> usize {
    1usize << (format.exponent_bits as u32 + format.mantissa_bits as u32 + format.signed as u32)
}

// Compile time only (see `TableCodes::new`); `i < N` bounds the indexing.
#[allow(
    clippy::arithmetic_side_effects,
    clippy::cast_possible_truncation,
    clippy::indexing_slicing
)]
/// The decoded value of every code `0..N` of `format`; asserts (at compile
/// time: it runs in `static` initialisers) that `N` is the format's number
/// of codes and that every code decodes.
pub(super) const fn table<const N: usize>(format: FloatFormat) -> [f32; N] {
    assert!(N == codes(format), "table length does not match the format");
    let mut out = [0.0f32; N];
    let mut i = 0;
    while i < N {
        let bits = f32_bits(format, i as u32);
        assert!(bits.is_some(), "a code of the format is not an f32");
        if let Some(bits) = bits {
            out[i] = f32::from_bits(bits);
        }
        i += 1;
    }
    out
}

/// The decoded codes of `format`, a table of `N` values computed at compile
/// time (in a `static`). What [`mode::Codes`](crate::mode::Codes) is on
/// most targets.
#[allow(dead_code)] // on wasm32, `mode::Codes` is `LayoutCodes`
pub(crate) struct TableCodes<const N: usize> {
    table: [f32; N],
}

#[allow(dead_code)] // on wasm32, `mode::Codes` is `LayoutCodes`
impl<const N: usize> TableCodes<N> {
    /// The codes of `format`, which must have `N` codes that all decode to
    /// an `f32` (asserted; use it in a `static`, so at compile time).
    pub(crate) const fn new(format: FloatFormat) -> Self {
        TableCodes {
            table: table::<N>(format),
        }
    }

    /// Calls `f` with the table of all `N` values.
    #[inline(always)]
    pub(crate) fn with<R>(&self, f: impl FnOnce(&[f32; N]) -> R) -> R {
        f(&self.table)
    }

    /// The value of `code`, which must be below `N` (`NaN` otherwise).
    #[inline(always)]
    pub(crate) fn get(&self, code: u8) -> f32 {
        lookup(&self.table, usize::from(code))
    }
}

/// The decoded codes of `format`, computed at run time from the format
/// alone: each [`with`](LayoutCodes::with) builds the table on its stack
/// ([`fill`]), each [`get`](LayoutCodes::get) computes one value
/// ([`value`]). What [`mode::Codes`](crate::mode::Codes) is on wasm32.
#[allow(dead_code)] // elsewhere, `mode::Codes` is `TableCodes`
pub(crate) struct LayoutCodes<const N: usize> {
    format: FloatFormat,
}

#[allow(dead_code)] // elsewhere, `mode::Codes` is `TableCodes`
impl<const N: usize> LayoutCodes<N> {
    /// The codes of `format`, which must have `N` codes that all decode to
    /// an `f32` (asserted at compile time, as for [`TableCodes::new`]: the
    /// table is built and dropped).
    pub(crate) const fn new(format: FloatFormat) -> Self {
        let _ = table::<N>(format);
        LayoutCodes { format }
    }

    /// Calls `f` with the table of all `N` values, built on the stack.
    #[inline(always)]
    pub(crate) fn with<R>(&self, f: impl FnOnce(&[f32; N]) -> R) -> R {
        let mut table = [0.0f32; N];
        fill(self.format, &mut table);
        f(&table)
    }

    /// The value of `code`, which must be below `N` (`NaN` otherwise).
    #[inline(always)]
    pub(crate) fn get(&self, code: u8) -> f32 {
        if usize::from(code) < N {
            value(self.format, u32::from(code))
        } else {
            f32::NAN
        }
    }
}

/// `format`'s decoded codes, filled in at run time (one instance for all
/// formats).
#[allow(dead_code)] // used by `LayoutCodes` only
#[inline(never)]
fn fill(format: FloatFormat, out: &mut [f32]) {
    for (slot, code) in out.iter_mut().zip(0u32..) {
        *slot = value(format, code);
    }
}

/// The value of one code of `format`, computed at run time. (`new` has
/// checked at compile time that every code of the format decodes, so the
/// `None` arm is dead.)
#[allow(dead_code)] // used by `LayoutCodes` only
#[inline]
fn value(format: FloatFormat, code: u32) -> f32 {
    f32::from_bits(f32_bits(format, code).unwrap_or(QUIET_NAN))
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
