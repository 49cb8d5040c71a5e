//! The bulk decoders on wasm SIMD128, for builds that enable it (the npm
//! package's reader: `scripts/build-package.sh`): [`Lane`] on `v128` (each
//! operation one instruction), the spreads that put 16 loaded bytes at the
//! tops of lanes (one shuffle per vector), and the block loops. Written for
//! the reader's size-first build (no loop vectoriser, no unrolling): one
//! loop per decoder, its body straight-line.

use core::arch::wasm32::{
    f32x4_convert_i32x4, f32x4_gt, f32x4_mul, f32x4_splat, i32x4_add, i32x4_eq, i32x4_gt,
    i32x4_shl, u16x8_extend_high_u8x16, u16x8_extend_low_u8x16, u32x4_extend_high_u16x8,
    u32x4_extend_low_u16x8, u32x4_shr, u32x4_splat, v128, v128_and, v128_bitselect, v128_or,
};

use super::bf16::bf16;
use super::lanes::Lane;
use super::rebias::{Rebias, F16};

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
    fn gt(self, other: Self) -> Self {
        i32x4_gt(self, other)
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

/// Each byte of `block` at the top of a lane (`byte << 24`), in order:
/// widened twice, then shifted (each one instruction on x86 and Arm, where
/// a two-input shuffle is several).
#[inline(always)]
fn spread_bytes(block: [u8; 16]) -> [v128; 4] {
    let v: v128 = bytemuck::cast(block);
    let (lo, hi) = (u16x8_extend_low_u8x16(v), u16x8_extend_high_u8x16(v));
    [
        i32x4_shl(u32x4_extend_low_u16x8(lo), 24),
        i32x4_shl(u32x4_extend_high_u16x8(lo), 24),
        i32x4_shl(u32x4_extend_low_u16x8(hi), 24),
        i32x4_shl(u32x4_extend_high_u16x8(hi), 24),
    ]
}

/// Each little-endian `u16` of `block` at the top of a lane (`h << 16`).
#[inline(always)]
fn spread_halves(block: [u8; 16]) -> [v128; 2] {
    let v: v128 = bytemuck::cast(block);
    [
        i32x4_shl(u32x4_extend_low_u16x8(v), 16),
        i32x4_shl(u32x4_extend_high_u16x8(v), 16),
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

/// An 8-bit format: one byte per element (the code at the byte's top).
#[inline(never)]
pub(crate) fn decode_bytes(format: &Rebias, bytes: &[u8], out: &mut [f32]) {
    blocks(bytes, out, |block: &[u8; 16], out: &mut [f32; 16]| {
        let quarters = bytemuck::cast_mut::<_, [[f32; 4]; 4]>(out);
        for (q, x) in quarters.iter_mut().zip(spread_bytes(*block)) {
            *q = to_f32s(format.apply(x));
        }
    });
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
