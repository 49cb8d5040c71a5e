//! What the lane tricks compute on: a 128-bit vector of four 32-bit lanes
//! ([`Lanes`](crate::mode::Lanes): wasm SIMD128's `v128` in the npm
//! package's reader, four `u32`s elsewhere, which the optimiser turns into
//! the target's vector instructions). The tricks are written once, against
//! this trait.

/// `f32` infinity's bits.
pub(super) const INFINITY: u32 = 0x7F80_0000;
/// The quiet bit of an `f32` NaN.
pub(super) const QUIET: u32 = 0x0040_0000;
/// The quiet NaN the small formats decode to (with the code's sign).
pub(super) const QUIET_NAN: u32 = 0x7FC0_0000;

/// The operations the tricks need, lane by lane (comparisons give all-ones
/// or zero lanes; they compare as `i32`, which is exact for the values the
/// tricks compare, all below 2^31).
pub(crate) trait Lane: Copy {
    /// Every lane `x`.
    fn splat(x: u32) -> Self;
    /// Bitwise and.
    fn and(self, other: Self) -> Self;
    /// Bitwise or.
    fn or(self, other: Self) -> Self;
    /// Logical shift right by `n` (< 32).
    fn shr(self, n: u32) -> Self;
    /// All ones where `self > other` (as `i32`).
    fn gt(self, other: Self) -> Self;
    /// All ones where `self == other`.
    fn eq(self, other: Self) -> Self;
    /// `a` where `mask` is all ones, `b` where it is zero.
    fn select(mask: Self, a: Self, b: Self) -> Self;
    /// Wrapping addition.
    fn add(self, other: Self) -> Self;
    /// The lanes as `i32`s converted to `f32` (exact below 2^24), times
    /// `scale`, as bits.
    fn int_times(self, scale: f32) -> Self;
    /// Each byte of `block` at the top of a lane (`byte << 24`), in order.
    fn spread_bytes(block: [u8; 16]) -> [Self; 4];
    /// Each little-endian `u16` of `block` at the top of a lane (`h << 16`).
    fn spread_halves(block: [u8; 16]) -> [Self; 2];
    /// The lanes as four `f32`s.
    fn to_f32s(self) -> [f32; 4];
}

/// Four plain `u32`s: what the optimiser vectorises on targets whose vector
/// instructions the build does not name (x86-64's SSE2, Arm's NEON).
impl Lane for [u32; 4] {
    #[inline(always)]
    fn splat(x: u32) -> Self {
        [x; 4]
    }
    #[inline(always)]
    fn and(self, other: Self) -> Self {
        zip(self, other, |a, b| a & b)
    }
    #[inline(always)]
    fn or(self, other: Self) -> Self {
        zip(self, other, |a, b| a | b)
    }
    #[inline(always)]
    fn shr(self, n: u32) -> Self {
        self.map(|a| a.wrapping_shr(n))
    }
    #[inline(always)]
    #[allow(clippy::cast_possible_wrap)] // compared as i32 on purpose
    fn gt(self, other: Self) -> Self {
        zip(self, other, |a, b| mask((a as i32) > (b as i32)))
    }
    #[inline(always)]
    fn eq(self, other: Self) -> Self {
        zip(self, other, |a, b| mask(a == b))
    }
    #[inline(always)]
    fn select(mask: Self, a: Self, b: Self) -> Self {
        let [m0, m1, m2, m3] = mask;
        let [a0, a1, a2, a3] = a;
        let [b0, b1, b2, b3] = b;
        let pick = |m: u32, a: u32, b: u32| (a & m) | (b & !m);
        [
            pick(m0, a0, b0),
            pick(m1, a1, b1),
            pick(m2, a2, b2),
            pick(m3, a3, b3),
        ]
    }
    #[inline(always)]
    fn add(self, other: Self) -> Self {
        zip(self, other, u32::wrapping_add)
    }
    #[inline(always)]
    #[allow(clippy::cast_possible_wrap, clippy::cast_precision_loss)] // below 2^24
    fn int_times(self, scale: f32) -> Self {
        self.map(|a| ((a as i32 as f32) * scale).to_bits())
    }
    #[inline(always)]
    fn spread_bytes(block: [u8; 16]) -> [Self; 4] {
        let top = |b: u8| u32::from(b) << 24;
        let [b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12, b13, b14, b15] = block;
        [
            [top(b0), top(b1), top(b2), top(b3)],
            [top(b4), top(b5), top(b6), top(b7)],
            [top(b8), top(b9), top(b10), top(b11)],
            [top(b12), top(b13), top(b14), top(b15)],
        ]
    }
    #[inline(always)]
    fn spread_halves(block: [u8; 16]) -> [Self; 2] {
        let top = |lo: u8, hi: u8| u32::from(u16::from_le_bytes([lo, hi])) << 16;
        let [b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12, b13, b14, b15] = block;
        [
            [top(b0, b1), top(b2, b3), top(b4, b5), top(b6, b7)],
            [top(b8, b9), top(b10, b11), top(b12, b13), top(b14, b15)],
        ]
    }
    #[inline(always)]
    fn to_f32s(self) -> [f32; 4] {
        self.map(f32::from_bits)
    }
}

#[inline(always)]
fn zip(a: [u32; 4], b: [u32; 4], f: impl Fn(u32, u32) -> u32) -> [u32; 4] {
    let [a0, a1, a2, a3] = a;
    let [b0, b1, b2, b3] = b;
    [f(a0, b0), f(a1, b1), f(a2, b2), f(a3, b3)]
}

#[inline(always)]
const fn mask(yes: bool) -> u32 {
    if yes {
        u32::MAX
    } else {
        0
    }
}
