//! Lookup tables of a small float's codes, derived from its bit layout.
//!
//! Every sub-16-bit format here is described by a [`Layout`]: sign bit or not,
//! exponent and mantissa widths, bias, whether exponent 0 encodes subnormals,
//! and which codes are special. [`table`] evaluates [`f32_bits`] for every code
//! at compile time, so the tables are derived from the layout, never typed in
//! ([`TableCodes`]; on wasm32 [`LayoutCodes`] builds them at run time instead,
//! as [`mode::Codes`](crate::mode::Codes) picks).
//! Every value of every format here is exactly representable as an `f32`, so
//! the construction is exact (no rounding happens anywhere).

/// Which codes of a format are not ordinary finite numbers.
#[derive(Clone, Copy)]
pub(crate) enum Special {
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
pub(crate) struct Layout {
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

// The asserts of `TableCodes::new` (run at compile time, in the `static`
// initialisers) guarantee that every code of the formats here decodes
// without overflow, so that at run time (wasm32) nothing here can fail.
#[allow(
    clippy::arithmetic_side_effects,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss
)]
/// The `f32` bit pattern of `code` in `layout`, or `None` when the value
/// would not be an `f32` (a layout too wide for one).
pub(super) const fn f32_bits(layout: Layout, code: u32) -> Option<u32> {
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
            return Some(sign | if m == 0 { INFINITY } else { QUIET_NAN });
        }
        Special::AllOnesNan if e == exp_mask && m == man_mask => return Some(sign | QUIET_NAN),
        Special::NegativeZeroNan if layout.signed && code == 1 << width => {
            return Some(sign | QUIET_NAN);
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

impl Layout {
    /// How many codes the format has: `2^(sign + exponent + mantissa bits)`.
    // Compile time only (see `TableCodes::new`).
    #[allow(clippy::arithmetic_side_effects)]
    const fn codes(self) -> usize {
        1usize << (self.exp_bits + self.man_bits + self.signed as u32)
    }
}

// Compile time only (see `TableCodes::new`); `i < N` bounds the indexing.
#[allow(
    clippy::arithmetic_side_effects,
    clippy::cast_possible_truncation,
    clippy::indexing_slicing
)]
/// The decoded value of every code `0..N` of `layout`; asserts (at compile
/// time: it runs in `static` initialisers) that `N` is the layout's number
/// of codes and that every code decodes.
pub(super) const fn table<const N: usize>(layout: Layout) -> [f32; N] {
    assert!(
        N == layout.codes(),
        "table length does not match the layout"
    );
    let mut out = [0.0f32; N];
    let mut i = 0;
    while i < N {
        let bits = f32_bits(layout, i as u32);
        assert!(bits.is_some(), "a code of the layout is not an f32");
        if let Some(bits) = bits {
            out[i] = f32::from_bits(bits);
        }
        i += 1;
    }
    out
}

/// The decoded codes of `layout`, a table of `N` values computed at compile
/// time (in a `static`). What [`mode::Codes`](crate::mode::Codes) is on
/// most targets.
#[allow(dead_code)] // on wasm32, `mode::Codes` is `LayoutCodes`
pub(crate) struct TableCodes<const N: usize> {
    table: [f32; N],
}

#[allow(dead_code)] // on wasm32, `mode::Codes` is `LayoutCodes`
impl<const N: usize> TableCodes<N> {
    /// The codes of `layout`, which must have `N` codes that all decode to
    /// an `f32` (asserted; use it in a `static`, so at compile time).
    pub(crate) const fn new(layout: Layout) -> Self {
        TableCodes {
            table: table::<N>(layout),
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

/// The decoded codes of `layout`, computed at run time from the layout
/// alone: each [`with`](LayoutCodes::with) builds the table on its stack
/// ([`fill`]), each [`get`](LayoutCodes::get) computes one value
/// ([`value`]). What [`mode::Codes`](crate::mode::Codes) is on wasm32.
#[allow(dead_code)] // elsewhere, `mode::Codes` is `TableCodes`
pub(crate) struct LayoutCodes<const N: usize> {
    layout: Layout,
}

#[allow(dead_code)] // elsewhere, `mode::Codes` is `TableCodes`
impl<const N: usize> LayoutCodes<N> {
    /// The codes of `layout`, which must have `N` codes that all decode to
    /// an `f32` (asserted at compile time, as for [`TableCodes::new`]: the
    /// table is built and dropped).
    pub(crate) const fn new(layout: Layout) -> Self {
        let _ = table::<N>(layout);
        LayoutCodes { layout }
    }

    /// Calls `f` with the table of all `N` values, built on the stack.
    #[inline(always)]
    pub(crate) fn with<R>(&self, f: impl FnOnce(&[f32; N]) -> R) -> R {
        let mut table = [0.0f32; N];
        fill(self.layout, &mut table);
        f(&table)
    }

    /// The value of `code`, which must be below `N` (`NaN` otherwise).
    #[inline(always)]
    pub(crate) fn get(&self, code: u8) -> f32 {
        if usize::from(code) < N {
            value(self.layout, u32::from(code))
        } else {
            f32::NAN
        }
    }
}

/// `layout`'s decoded codes, filled in at run time (one instance for all
/// formats).
#[allow(dead_code)] // used by `LayoutCodes` only
#[inline(never)]
fn fill(layout: Layout, out: &mut [f32]) {
    for (slot, code) in out.iter_mut().zip(0u32..) {
        *slot = value(layout, code);
    }
}

/// The value of one code of `layout`, computed at run time. (`new` has
/// checked at compile time that every code of the layout decodes, so the
/// `None` arm is dead.)
#[allow(dead_code)] // used by `LayoutCodes` only
#[inline]
fn value(layout: Layout, code: u32) -> f32 {
    f32::from_bits(f32_bits(layout, code).unwrap_or(QUIET_NAN))
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
