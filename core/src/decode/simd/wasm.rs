//! The bulk decoders on wasm SIMD128, for builds that enable it (the npm
//! package's reader: `scripts/build-package.sh`): [`Lane`] on `v128` (each
//! operation one instruction), the spreads that put 16 loaded bytes at the
//! tops of lanes (one shuffle per vector), and the block loops. Written for
//! the reader's size-first build (no loop vectoriser, no unrolling): one
//! loop per decoder, its body straight-line.

use core::arch::wasm32::{
    f32x4_convert_i32x4, f32x4_gt, f32x4_mul, f32x4_ne, f32x4_splat, i16x8_add, i16x8_eq, i16x8_gt,
    i16x8_mul, i16x8_shuffle, i32x4_add, i32x4_eq, i8x16_shuffle, i8x16_swizzle, u16x8_shr,
    u16x8_splat, u32x4_shr, u32x4_splat, v128, v128_and, v128_bitselect, v128_or,
};

use super::bf16::bf16;
use super::lanes::Lane;
use super::rebias::{Rebias, F16};
use crate::decode::layout::f32_bits;
use crate::dtype::FloatFormat;

impl Lane for v128 {
    #[inline(always)]
    fn splat(x: u32) -> Self {
        u32x4_splat(x)
    }
    #[inline(always)]
    fn and(self, other: Self) -> Self {
        v128_and(self, other)
    }
    #[inline(always)]
    fn or(self, other: Self) -> Self {
        v128_or(self, other)
    }
    #[inline(always)]
    fn shr(self, n: u32) -> Self {
        u32x4_shr(self, n)
    }
    #[inline(always)]
    fn nan(self) -> Self {
        f32x4_ne(self, self)
    }
    #[inline(always)]
    fn above(self, other: Self) -> Self {
        f32x4_gt(self, other)
    }
    #[inline(always)]
    fn eq(self, other: Self) -> Self {
        i32x4_eq(self, other)
    }
    #[inline(always)]
    fn select(mask: Self, a: Self, b: Self) -> Self {
        v128_bitselect(a, b, mask)
    }
    #[inline(always)]
    fn add(self, other: Self) -> Self {
        i32x4_add(self, other)
    }
    #[inline(always)]
    fn int_times(self, scale: f32) -> Self {
        f32x4_mul(f32x4_convert_i32x4(self), f32x4_splat(scale))
    }
}

/// Each little-endian `u16` of `block` at the top of a lane (`h << 16`):
/// interleaved with zeros (one instruction each on x86 and Arm).
#[inline(always)]
fn spread_halves(block: [u8; 16]) -> [v128; 2] {
    let v: v128 = bytemuck::cast(block);
    let zero = u32x4_splat(0);
    [
        i16x8_shuffle::<0, 8, 1, 9, 2, 10, 3, 11>(zero, v),
        i16x8_shuffle::<4, 12, 5, 13, 6, 14, 7, 15>(zero, v),
    ]
}

/// The lanes as four `f32`s.
#[inline(always)]
fn to_f32s(v: v128) -> [f32; 4] {
    bytemuck::cast(v)
}

/// `BF16`: two bytes per element.
#[inline(never)]
pub(crate) fn decode_bf16(bytes: &[u8], out: &mut [f32]) {
    blocks(bytes, out, |block: &[u8; 16], out: &mut [f32; 8]| {
        let [lo, hi] = bytemuck::cast_mut::<_, [[f32; 4]; 2]>(out);
        let [a, b] = spread_halves(*block);
        *lo = to_f32s(bf16(a));
        *hi = to_f32s(bf16(b));
    });
}

/// `F16`: two bytes per element (both halves written out: the size-first
/// build would keep a two-step loop, which costs F16 a third of its
/// speed).
#[inline(never)]
pub(crate) fn decode_f16(bytes: &[u8], out: &mut [f32]) {
    blocks(bytes, out, |block: &[u8; 16], out: &mut [f32; 8]| {
        let [lo, hi] = bytemuck::cast_mut::<_, [[f32; 4]; 2]>(out);
        let [a, b] = spread_halves(*block);
        *lo = to_f32s(F16.apply(a));
        *hi = to_f32s(F16.apply(b));
    });
}

/// An 8-bit format: one byte per element (the code at the byte's top),
/// sixteen at a time: each code at the top of a 16-bit lane, decoded to
/// the top half of its `f32` there ([`Narrow::apply`]), each half then at
/// the top of a 32-bit lane (the interleaves are one instruction each on
/// x86 and Arm).
#[inline(never)]
pub(crate) fn decode_bytes(narrow: &Narrow, bytes: &[u8], out: &mut [f32]) {
    blocks(bytes, out, |block: &[u8; 16], out: &mut [f32; 16]| {
        let quarters = bytemuck::cast_mut::<_, [[f32; 4]; 4]>(out);
        let v: v128 = bytemuck::cast(*block);
        let zero = u32x4_splat(0);
        let codes = [
            i8x16_shuffle::<0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23>(zero, v),
            i8x16_shuffle::<8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31>(zero, v),
        ];
        for (pair, x) in quarters.chunks_exact_mut(2).zip(codes) {
            let halves = narrow.apply(x);
            if let [lo, hi] = pair {
                *lo = to_f32s(i16x8_shuffle::<0, 8, 1, 9, 2, 10, 3, 11>(zero, halves));
                *hi = to_f32s(i16x8_shuffle::<4, 12, 5, 13, 6, 14, 7, 15>(zero, halves));
            }
        }
    });
}

/// A format of up to 8 bits, as [`decode_bytes`] takes it.
pub(crate) type ByteFormat = Narrow;

/// A format of up to 8 bits on the top halves of lanes: every value of
/// such a format is a `BF16` (the top half of its `f32`), so eight codes
/// decode at a time, through the top halves of [`Rebias`]'s constants.
/// Codes with exponent field 0 (zero, the subnormals, `F8_E8M0`'s
/// 2^−127) are looked up in a table of eight (one swizzle) instead of
/// converted.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Narrow {
    sign: u16,
    shift: u16,
    rebias: u16,
    /// The top halves of the `f32`s of exponent field 0 and mantissa 0..8.
    low: [u16; 8],
    /// How far a moved magnitude shifts right to its mantissa alone.
    low_shift: u16,
    nan_above: u16,
    infinity: u16,
    odd_lane: u16,
    odd_bits: u16,
}

/// The top half of the `f32` of the code with exponent field 0 and
/// mantissa `i` (0 past the format's mantissas).
#[allow(clippy::cast_possible_truncation)]
const fn low_half(format: FloatFormat, i: u32) -> u16 {
    if i >= 1 << format.mantissa_bits {
        return 0;
    }
    match f32_bits(format, i) {
        Some(bits) => (bits >> 16) as u16,
        None => 0,
    }
}

// Evaluated at compile time (in `static`s), on formats of up to 8 bits.
#[allow(clippy::cast_possible_truncation, clippy::arithmetic_side_effects)]
impl Narrow {
    /// The constants of `format`, up to 8 bits wide.
    pub(crate) const fn for_bytes(format: FloatFormat) -> Self {
        let r = Rebias::new(format, false);
        let f = format;
        Narrow {
            sign: (r.sign >> 16) as u16,
            shift: r.shift as u16,
            rebias: (r.rebias >> 16) as u16,
            low: [
                low_half(f, 0),
                low_half(f, 1),
                low_half(f, 2),
                low_half(f, 3),
                low_half(f, 4),
                low_half(f, 5),
                low_half(f, 6),
                low_half(f, 7),
            ],
            low_shift: 7 - format.mantissa_bits as u16,
            nan_above: (r.nan_above >> 16) as u16,
            infinity: (r.infinity >> 16) as u16,
            // (No lane: a value whose low bits no code at the top has.)
            odd_lane: ((r.odd_lane >> 16) | (r.odd_lane & 1)) as u16,
            odd_bits: (r.odd_bits >> 16) as u16,
        }
    }

    /// The top halves of the `f32`s of the codes at the tops of the 16-bit
    /// lanes of `x` ([`Rebias::apply`]'s steps; signed comparisons: a
    /// moved magnitude is below 2^15).
    #[inline(always)]
    fn apply(&self, x: v128) -> v128 {
        let sign = v128_and(x, u16x8_splat(self.sign));
        let moved = u16x8_shr(v128_and(x, u16x8_splat(!self.sign)), u32::from(self.shift));
        let normal = i16x8_add(moved, u16x8_splat(self.rebias));
        // Bytes 2i and 2i + 1 of the table for mantissa i.
        let mantissa = u16x8_shr(moved, u32::from(self.low_shift));
        let index = i16x8_add(
            i16x8_mul(mantissa, u16x8_splat(0x0202)),
            u16x8_splat(0x0100),
        );
        let low = i8x16_swizzle(bytemuck::cast(self.low), index);
        let exponent_zero = i16x8_eq(v128_and(moved, u16x8_splat(0x7F80)), u16x8_splat(0));
        let finite = v128_bitselect(low, normal, exponent_zero);
        let nan = i16x8_gt(moved, u16x8_splat(self.nan_above));
        let infinite = i16x8_eq(moved, u16x8_splat(self.infinity));
        let special = v128_bitselect(u16x8_splat(0x7FC0), u16x8_splat(0x7F80), nan);
        let value = v128_or(
            v128_bitselect(special, finite, v128_or(nan, infinite)),
            sign,
        );
        v128_bitselect(
            u16x8_splat(self.odd_bits),
            value,
            i16x8_eq(x, u16x8_splat(self.odd_lane)),
        )
    }
}

/// Runs `block` on every `IN` bytes of `bytes` and their `OUT` elements
/// of `out`, including a last, partial block (a whole number of elements),
/// which runs zero-padded on the stack.
#[inline(always)]
fn blocks<const IN: usize, const OUT: usize>(
    bytes: &[u8],
    out: &mut [f32],
    block: impl Fn(&[u8; IN], &mut [f32; OUT]),
) {
    let (rest, tail) = whole_blocks(bytes, out, &block);
    if !rest.is_empty() {
        let mut input = [0u8; IN];
        let mut decoded = [0.0f32; OUT];
        for (i, &b) in input.iter_mut().zip(rest) {
            *i = b;
        }
        whole_blocks(&input, &mut decoded, &block);
        for (t, &d) in tail.iter_mut().zip(&decoded) {
            *t = d;
        }
    }
}

/// Runs `block` on every whole block; returns what is left of `bytes` and
/// `out`. (Not inlined: `blocks` calls it twice, and the `.wasm` holds it
/// once.)
#[inline(never)]
fn whole_blocks<'a, 'b, const IN: usize, const OUT: usize>(
    mut bytes: &'a [u8],
    mut out: &'b mut [f32],
    block: &impl Fn(&[u8; IN], &mut [f32; OUT]),
) -> (&'a [u8], &'b mut [f32]) {
    while let (Some((s, rest)), true) = (bytes.split_first_chunk::<IN>(), out.len() >= OUT) {
        let Some((d, more)) = core::mem::take(&mut out).split_first_chunk_mut::<OUT>() else {
            break;
        };
        block(s, d);
        (bytes, out) = (rest, more);
    }
    (bytes, out)
}
