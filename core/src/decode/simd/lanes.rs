//! What the lane tricks compute on: wasm SIMD128's `v128` (four lanes) in
//! the npm package's reader (`wasm.rs`), one `u32` elsewhere (here), in
//! loops the optimiser vectorises. The tricks are written once, against
//! this trait.

/// `f32` infinity's bits.
pub(super) const INFINITY: u32 = 0x7F80_0000;
/// The quiet bit of an `f32` NaN.
pub(super) const QUIET: u32 = 0x0040_0000;
/// The quiet NaN the small formats decode to (with the code's sign).
pub(super) const QUIET_NAN: u32 = 0x7FC0_0000;

/// The operations the tricks need, lane by lane (comparisons give all-ones
/// or zero lanes).
pub(crate) trait Lane: Copy {
    /// Every lane `x`.
    fn splat(x: u32) -> Self;
    /// Bitwise and.
    fn and(self, other: Self) -> Self;
    /// Bitwise or.
    fn or(self, other: Self) -> Self;
    /// Logical shift right by `n` (< 32).
    fn shr(self, n: u32) -> Self;
    /// All ones where the lane, as an `f32`, is a NaN.
    fn nan(self) -> Self;
    /// All ones where `self > other`, both read as `f32`s. For the bit
    /// patterns the tricks compare (sign bit clear) that is the integers'
    /// order, and a NaN pattern on either side is never above: one
    /// instruction, where an unsigned integer comparison takes three on
    /// x86's SSE.
    fn above(self, other: Self) -> Self;
    /// All ones where `self == other`.
    fn eq(self, other: Self) -> Self;
    /// `a` where `mask` is all ones, `b` where it is zero.
    fn select(mask: Self, a: Self, b: Self) -> Self;
    /// Wrapping addition.
    fn add(self, other: Self) -> Self;
    /// The lanes as `i32`s converted to `f32` (exact below 2^24), times
    /// `scale`, as bits.
    fn int_times(self, scale: f32) -> Self;
}

/// One `u32`: the tricks one element at a time, in loops the optimiser
/// vectorises (SSE2 on every x86-64, NEON on aarch64).
impl Lane for u32 {
    #[inline(always)]
    fn splat(x: u32) -> Self {
        x
    }
    #[inline(always)]
    fn and(self, other: Self) -> Self {
        self & other
    }
    #[inline(always)]
    fn or(self, other: Self) -> Self {
        self | other
    }
    #[inline(always)]
    fn shr(self, n: u32) -> Self {
        self.wrapping_shr(n)
    }
    #[inline(always)]
    fn nan(self) -> Self {
        mask(f32::from_bits(self).is_nan())
    }
    #[inline(always)]
    fn above(self, other: Self) -> Self {
        mask(f32::from_bits(self) > f32::from_bits(other))
    }
    #[inline(always)]
    fn eq(self, other: Self) -> Self {
        mask(self == other)
    }
    #[inline(always)]
    fn select(mask: Self, a: Self, b: Self) -> Self {
        (a & mask) | (b & !mask)
    }
    #[inline(always)]
    fn add(self, other: Self) -> Self {
        self.wrapping_add(other)
    }
    #[inline(always)]
    #[allow(clippy::cast_possible_wrap, clippy::cast_precision_loss)] // below 2^24
    fn int_times(self, scale: f32) -> Self {
        ((self as i32 as f32) * scale).to_bits()
    }
}

#[inline(always)]
const fn mask(yes: bool) -> u32 {
    if yes {
        u32::MAX
    } else {
        0
    }
}
