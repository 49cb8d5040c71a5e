//! An 8-bit float code to the top half of its `f32` (every value of such a
//! format is a `BF16`) in two integer steps, on 16-bit lanes:
//! - the code at the top of the lane, shifted right (arithmetic) and
//!   masked, puts its sign, exponent and mantissa in a `BF16`'s places;
//!   adding (127 − bias) to the exponent makes that every normal number;
//! - the few codes this gets wrong (zero, the subnormals, NaN, infinity)
//!   get a correction, added, from a table of 16 indexed by the code plus
//!   an offset, masked: the offset puts all of them at the table's front,
//!   every other code lands past it, where a byte shuffle (`swizzle`) reads
//!   0. Both bytes of the corrections are looked up sixteen codes at a time.
//!
//! Why: it is a handful of lane operations per eight codes, with no compare
//! and no select (a lookup of the whole value is a load per code, which
//! wasm SIMD cannot do), and no floating-point operation, so no subnormal
//! operand (which costs x86 a slow assist). The constants come from the
//! scalar spec ([`f32_bits`]) at compile time, which checks that the
//! corrections fit in 16 entries; the tests run these steps on every code.

use crate::decode::layout::f32_bits;
use crate::dtype::{FloatFormat, FloatSpecials};

/// A format of up to 8 bits, as the corrected steps take it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Corrected {
    /// Arithmetic right shift of the code at the top of a 16-bit lane.
    pub(crate) shift: u32,
    /// The bits kept after the shift: sign (for signed formats), exponent
    /// and mantissa.
    pub(crate) keep: u16,
    /// (127 − bias) in a `BF16`'s exponent field.
    pub(crate) rebias: u16,
    /// Added to a code (wrapping) and masked with `index_mask`: its index in
    /// the corrections (16 and above: none).
    pub(crate) offset: u8,
    /// `0x7F` for signed formats (both signs share a correction), else
    /// `0xFF`.
    pub(crate) index_mask: u8,
    /// The corrections' low bytes, by index.
    pub(crate) low: [u8; 16],
    /// The corrections' high bytes, by index.
    pub(crate) high: [u8; 16],
    /// A lane (code at the top) that is NaN though the same code without
    /// its sign is zero (the FNUZ formats' `0x80`): ORed with `odd_bits`.
    /// (Other formats: a lane no code gives.)
    pub(crate) odd_lane: u16,
    /// What `odd_lane`'s value is ORed with.
    pub(crate) odd_bits: u16,
}

/// A lane no code gives (codes sit in the top byte).
const NO_LANE: u16 = 1;

// Evaluated at compile time only (in `static`s), on formats of up to 8 bits.
#[allow(
    clippy::arithmetic_side_effects,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    clippy::indexing_slicing
)]
impl Corrected {
    /// The constants of `format` (up to 8 bits wide). Fails to compile if
    /// its corrections do not fit in one table of 16.
    pub(crate) const fn for_bytes(format: FloatFormat) -> Self {
        let e = format.exponent_bits as u32;
        let m = format.mantissa_bits as u32;
        let s = format.signed as u32;
        let mut f = Corrected {
            shift: 9 - s - e,
            keep: ((s << 15) | (((1 << (e + m)) - 1) << (7 - m))) as u16,
            rebias: ((127 - format.bias) as u16) << 7,
            offset: 0,
            index_mask: if s == 1 { 0x7F } else { 0xFF },
            low: [0; 16],
            high: [0; 16],
            odd_lane: NO_LANE,
            odd_bits: 0,
        };
        let odd = s == 1 && matches!(format.specials, FloatSpecials::NegativeZeroNan);
        let odd_code = 1u32 << (e + m);
        if odd {
            f.odd_lane = (odd_code << 8) as u16;
            f.odd_bits = 0x7FC0;
        }
        let codes = 1u32 << (s + e + m);
        let mut offset = 0;
        let mut found = false;
        while offset < 256 && !found {
            f.offset = offset as u8;
            let mut table = [0u16; 16];
            let mut set = [false; 16];
            let mut fits = true;
            let mut code = 0;
            while code < codes && fits {
                let lane = (code << (8 - s - e - m)) as u8;
                let index = lane.wrapping_add(f.offset) & f.index_mask;
                let bits = f32_bits(format, code);
                assert!(bits.is_some(), "a code of the format is not an f32");
                let want = match bits {
                    Some(bits) => (bits >> 16) as u16,
                    None => 0,
                };
                let fix = want.wrapping_sub(f.shifted(lane));
                if odd && code == odd_code {
                    // (Its entry is its positive twin's; `odd_bits` make
                    // that zero a NaN.)
                } else if (index as usize) < 16 {
                    let i = index as usize;
                    if set[i] && table[i] != fix {
                        fits = false;
                    }
                    table[i] = fix;
                    set[i] = true;
                } else if fix != 0 {
                    fits = false;
                }
                code += 1;
            }
            if fits {
                let mut i = 0;
                while i < 16 {
                    f.low[i] = table[i] as u8;
                    f.high[i] = (table[i] >> 8) as u8;
                    i += 1;
                }
                found = true;
            }
            offset += 1;
        }
        assert!(
            found,
            "the corrections of this format do not fit in 16 entries"
        );
        f
    }
}

// Run on input bytes too (`each`'s loop), so held to the crate's lints.
impl Corrected {
    /// The first step on one code (`lane`: the code in the top bits of a
    /// byte): at the top of a 16-bit lane, shifted right (arithmetic),
    /// masked, rebiased. (`shift` is below 16, so the wrapping shift is the
    /// plain one, as wasm's `i16x8_shr` also takes it.)
    pub(crate) const fn shifted(&self, lane: u8) -> u16 {
        let moved = i16::from_be_bytes([lane, 0]).wrapping_shr(self.shift);
        (u16::from_ne_bytes(moved.to_ne_bytes()) & self.keep).wrapping_add(self.rebias)
    }
}
