//! The bulk decoders on wasm SIMD128, for builds that enable it (the npm
//! package's reader: `scripts/build-package.sh`): the spreads that put
//! loaded words at the tops of lanes (one shuffle per vector), the steps of
//! each format on `v128`s, and the block loops. Written for the reader's
//! size-first build (no loop vectoriser, no unrolling): one loop per
//! decoder, its body straight-line (`BF16`'s over 32 bytes: its steps are
//! so few that the loop's own would be a fair share of 16).
//!
//! `F16`'s subnormal words reach `f32x4_mul` as subnormal operands: exact,
//! as wasm's IEEE semantics require subnormals honoured, but each costs the
//! CPU an assist, so the decoding time depends on their share of the words
//! ([`f16_steps`] says why that is the trade made).
//!
//! Comparisons of magnitudes take a mask the optimiser cannot see through
//! (`opaque_magnitude`): knowing both sides non-negative, it would turn a
//! signed 16-bit comparison (one x86 instruction) into an unsigned one,
//! which SSE lacks (four).
//!
//! `F4` and `F6` codes are unpacked (`unpack`) by one loop for both
//! widths, sixteen codes a step, what differs between them loaded from a
//! table ([`Unpacking`]): one loop where two would cost the reader's
//! `.wasm` bytes it does not have. Loaded, the per-lane multipliers also
//! stay multiplications: as constants the optimiser would turn them into
//! a shift of each lane on its own.

use core::arch::wasm32::{
    f32x4_mul, f32x4_splat, i16x8_add, i16x8_eq, i16x8_gt, i16x8_mul, i16x8_shr, i16x8_shuffle,
    i32x4_shl, i32x4_shr, i8x16_add, i8x16_shuffle, i8x16_swizzle, u16x8_splat, u32x4_splat,
    u8x16_shr, u8x16_splat, v128, v128_and, v128_or, v128_xor,
};

use super::corrected::Corrected;
use super::f16_steps;

/// The lanes as four `f32`s.
#[inline(always)]
fn to_f32s(v: v128) -> [f32; 4] {
    bytemuck::cast(v)
}

/// `0x7FFF` in every 16-bit lane, as a value the optimiser does not know.
#[inline(always)]
fn opaque_magnitude() -> v128 {
    core::hint::black_box(u16x8_splat(f16_steps::MAGNITUDE))
}

/// Each of the eight words of `v` at the top of a lane, `low`'s beside it.
#[inline(always)]
fn spread(low: v128, v: v128) -> [v128; 2] {
    [
        i16x8_shuffle::<0, 8, 1, 9, 2, 10, 3, 11>(low, v),
        i16x8_shuffle::<4, 12, 5, 13, 6, 14, 7, 15>(low, v),
    ]
}

/// `BF16`: two bytes per element, sixteen at a time. The top half of an
/// `f32`: a NaN gets its quiet bit (as `half`, the scalar spec, decodes
/// it) while still 16 bits wide, then each word goes to the top of a lane.
#[inline(never)]
pub(crate) fn decode_bf16(bytes: &[u8], out: &mut [f32]) {
    let magnitude = opaque_magnitude();
    let quiet = |v: v128| {
        let nan = i16x8_gt(v128_and(v, magnitude), u16x8_splat(0x7F80));
        v128_or(v, v128_and(nan, u16x8_splat(f16_steps::QUIET)))
    };
    let step = |block: &[u8; 32], out: &mut [f32; 16]| {
        let [a, b, c, d] = bytemuck::cast_mut::<_, [[f32; 4]; 4]>(out);
        let [v, w]: [v128; 2] = bytemuck::cast(*block);
        let zero = u32x4_splat(0);
        let ([x0, x1], [x2, x3]) = (spread(zero, quiet(v)), spread(zero, quiet(w)));
        (*a, *b, *c, *d) = (to_f32s(x0), to_f32s(x1), to_f32s(x2), to_f32s(x3));
    };
    blocks(bytes, out, step, &decode_bf16);
}

/// `F16`: two bytes per element, eight at a time ([`f16_steps`]'s steps).
#[inline(never)]
pub(crate) fn decode_f16(bytes: &[u8], out: &mut [f32]) {
    let magnitude = opaque_magnitude();
    let step = |block: &[u8; 16], out: &mut [f32; 8]| {
        let [a, b] = bytemuck::cast_mut::<_, [[f32; 4]; 2]>(out);
        let v: v128 = bytemuck::cast(*block);
        // The 16-bit step: infinity's and NaN's bits.
        let abs = v128_and(v, magnitude);
        let special = i16x8_gt(abs, u16x8_splat(f16_steps::INFINITY - 1));
        let nan = i16x8_gt(abs, u16x8_splat(f16_steps::INFINITY));
        let bits = v128_or(
            v128_and(special, u16x8_splat(f16_steps::SPECIAL)),
            v128_and(nan, u16x8_splat(f16_steps::QUIET)),
        );
        let [x0, x1] = spread(bits, v);
        (*a, *b) = (to_f32s(f16_value(x0)), to_f32s(f16_value(x1)));
    };
    blocks(bytes, out, step, &decode_f16);
}

/// The 32-bit step of [`f16_steps`] on four lanes (each word at the top of
/// its lane, its [`f16_steps::SPECIAL`] bits below): the word moved into an
/// `f32`'s places, times [`f16_steps::SCALE`], the special bits ORed in.
#[inline(always)]
fn f16_value(x: v128) -> v128 {
    let moved = v128_and(
        i32x4_shr(x, f16_steps::SHIFT),
        u32x4_splat(f16_steps::MOVED),
    );
    v128_or(
        f32x4_mul(moved, f32x4_splat(f16_steps::SCALE)),
        i32x4_shl(x, 16),
    )
}

/// An 8-bit format: one byte per element (the code at the byte's top),
/// sixteen at a time: [`Corrected`]'s steps on each code at the top of a
/// 16-bit lane, the corrections looked up for all sixteen at once; each
/// top half then at the top of a 32-bit lane (the interleaves are one
/// instruction each on x86 and Arm).
#[inline(never)]
pub(crate) fn decode_bytes(format: &Corrected, bytes: &[u8], out: &mut [f32]) {
    let f = *format;
    let steps = Steps {
        shift: f.shift,
        keep: u16x8_splat(f.keep),
        rebias: u16x8_splat(f.rebias),
        odd_lane: u16x8_splat(f.odd_lane),
        odd_bits: u16x8_splat(f.odd_bits),
    };
    let (offset, index_mask) = (u8x16_splat(f.offset), u8x16_splat(f.index_mask));
    let low: v128 = bytemuck::cast(f.low);
    let high: v128 = bytemuck::cast(f.high);
    let step = |block: &[u8; 16], out: &mut [f32; 16]| {
        let [a, b, c, d] = bytemuck::cast_mut::<_, [[f32; 4]; 4]>(out);
        let v: v128 = bytemuck::cast(*block);
        let index = v128_and(i8x16_add(v, offset), index_mask);
        let (fix_low, fix_high) = (i8x16_swizzle(low, index), i8x16_swizzle(high, index));
        let zero = u32x4_splat(0);
        let [codes_0, codes_1] = spread_bytes(zero, v);
        let [fixes_0, fixes_1] = spread_bytes(fix_low, fix_high);
        let [x0, x1] = spread(zero, steps.apply(codes_0, fixes_0));
        let [x2, x3] = spread(zero, steps.apply(codes_1, fixes_1));
        (*a, *b, *c, *d) = (to_f32s(x0), to_f32s(x1), to_f32s(x2), to_f32s(x3));
    };
    blocks(bytes, out, step, &|bytes, out| {
        decode_bytes(format, bytes, out)
    });
}

/// Each of the sixteen bytes of `v` at the top of a 16-bit lane, `low`'s
/// beside it.
#[inline(always)]
fn spread_bytes(low: v128, v: v128) -> [v128; 2] {
    [
        i8x16_shuffle::<0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23>(low, v),
        i8x16_shuffle::<8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31>(low, v),
    ]
}

/// [`Corrected`]'s lane constants, splatted once per call.
#[derive(Clone, Copy)]
struct Steps {
    shift: u32,
    keep: v128,
    rebias: v128,
    odd_lane: v128,
    odd_bits: v128,
}

impl Steps {
    /// The top halves of the `f32`s of the codes at the tops of the 16-bit
    /// lanes of `x`, whose corrections are `fix`.
    #[inline(always)]
    fn apply(&self, x: v128, fix: v128) -> v128 {
        let shifted = v128_and(i16x8_shr(x, self.shift), self.keep);
        let value = i16x8_add(i16x8_add(shifted, self.rebias), fix);
        v128_or(value, v128_and(i16x8_eq(x, self.odd_lane), self.odd_bits))
    }
}

/// Runs `block` on every `IN` bytes of `bytes` and their `OUT` elements
/// of `out` (at most 32 and 16); a last, partial block (a whole number of
/// elements) goes to `decode` (the decoder itself) zero-padded on the
/// stack.
#[inline(always)]
fn blocks<const IN: usize, const OUT: usize>(
    bytes: &[u8],
    out: &mut [f32],
    block: impl Fn(&[u8; IN], &mut [f32; OUT]),
    decode: &dyn Fn(&[u8], &mut [f32]),
) {
    let (rest, tail) = whole_blocks(bytes, out, &block);
    if !rest.is_empty() {
        padded(rest, [IN, OUT], tail, decode);
    }
}

/// `decode` on `rest`, zero-padded to one block (`block`: its bytes and
/// elements), into `tail`. (One copy in the `.wasm`, not one per decoder.)
#[inline(never)]
fn padded(rest: &[u8], block: [usize; 2], tail: &mut [f32], decode: &dyn Fn(&[u8], &mut [f32])) {
    let mut input = [0u8; 32];
    let mut decoded = [0.0f32; 16];
    for (i, &b) in input.iter_mut().zip(rest) {
        *i = b;
    }
    let [bytes, elements] = block;
    if let (Some(input), Some(decoded)) = (input.get(..bytes), decoded.get_mut(..elements)) {
        decode(input, decoded);
    }
    for (t, &d) in tail.iter_mut().zip(&decoded) {
        *t = d;
    }
}

/// Runs `block` on every whole block; returns what is left of `bytes` and
/// `out`.
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

/// The codes of `packed` (`bits` wide: 4 or 6; as many as `out` holds, at
/// most) as `F8_E4M3` codes, into `out` from its start (a partial last
/// step's other codes: what zero bytes give), sixteen codes (`2·bits`
/// bytes) a step, the steps the same for both widths ([`Unpacking`] says
/// where the bytes go): each code's two bytes gathered into a 16-bit lane,
/// that multiplied by the power of two that puts the code at the lane's top
/// (wasm SIMD has no shift by lane), the lanes' high bytes taken. The code
/// (for `F6`, its bits below the sign) then indexes `codes` (two lookups of
/// sixteen) and its sign bit is ORed in, as `each::unpack` does (which
/// says why that is right).
pub(crate) fn unpack<const N: usize>(codes: &[u8], bits: usize, packed: &[u8], out: &mut [u8; N]) {
    // `packed` zero-padded, in as many bytes as `out` has codes (each at
    // most a byte): room for the last step's sixteen.
    let mut input = [0u8; N];
    for (i, &b) in input.iter_mut().zip(packed) {
        *i = b;
    }
    // (Loaded, not known: see the module's docs.)
    let how = core::hint::black_box(if bits == 4 {
        &F4_UNPACKING
    } else {
        &F6_UNPACKING
    });
    let [lanes_0, lanes_1]: [v128; 2] = bytemuck::cast(how.lanes);
    let to_top: v128 = bytemuck::cast(how.to_top);
    let table = |at: usize| -> v128 {
        let t = codes.get(at..).and_then(|t| t.first_chunk::<16>());
        bytemuck::cast(t.copied().unwrap_or_default())
    };
    let (low, high) = (table(0), table(16));
    let step = bits.saturating_mul(2);
    let mut at = 0;
    for out in out.chunks_exact_mut(16) {
        let block = input.get(at..).and_then(|b| b.first_chunk::<16>());
        let (Some(block), Some(out), true) =
            (block, out.first_chunk_mut::<16>(), at < packed.len())
        else {
            break;
        };
        let v: v128 = bytemuck::cast(*block);
        let tops = i8x16_shuffle::<1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31>(
            i16x8_mul(i8x16_swizzle(v, lanes_0), to_top),
            i16x8_mul(i8x16_swizzle(v, lanes_1), to_top),
        );
        let index = v128_and(u8x16_shr(tops, how.shift), u8x16_splat(0x1F));
        let found = v128_or(
            i8x16_swizzle(low, index),
            i8x16_swizzle(high, v128_xor(index, u8x16_splat(0x10))),
        );
        *out = bytemuck::cast(v128_or(found, v128_and(tops, u8x16_splat(0x80))));
        at = at.saturating_add(step);
    }
}

/// Where [`unpack`] finds sixteen codes of one width in the sixteen bytes
/// from a step's first.
struct Unpacking {
    /// The bytes that go low and high in each 16-bit lane (codes 0..8,
    /// then 8..16): an `F6` code's two, an `F4` code's one twice.
    lanes: [[u8; 16]; 2],
    /// What each lane is multiplied by: the code at its top.
    to_top: [u16; 8],
    /// The right shift that brings a lane's high byte down to the code
    /// (whose low five bits then index: an `F6` code's bits below its
    /// sign, an `F4` code whole).
    shift: u32,
}

/// `F4`: code `i` is in byte `i / 2`, the high nibble for odd `i` (already
/// at the top).
static F4_UNPACKING: Unpacking = Unpacking {
    lanes: [
        [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3],
        [4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7],
    ],
    to_top: [1 << 4, 1, 1 << 4, 1, 1 << 4, 1, 1 << 4, 1],
    shift: 4,
};

/// `F6`: code `j` of three bytes is bits `6j..6j+5` of them, in bytes
/// `6j / 8` and the next from bit `6j % 8`.
static F6_UNPACKING: Unpacking = Unpacking {
    lanes: [
        [0, 1, 0, 1, 1, 2, 2, 3, 3, 4, 3, 4, 4, 5, 5, 6],
        [6, 7, 6, 7, 7, 8, 8, 9, 9, 10, 9, 10, 10, 11, 11, 12],
    ],
    to_top: [
        1 << 10,
        1 << 4,
        1 << 6,
        1 << 8,
        1 << 10,
        1 << 4,
        1 << 6,
        1 << 8,
    ],
    shift: 2,
};
