//! `F16` to `f32` in two steps, the first on the 16-bit words (eight per
//! `v128`), the second on 32-bit lanes:
//! - the word's magnitude says whether it is infinity or NaN: those get
//!   [`SPECIAL`] bits (and NaN [`QUIET`]), kept in the low half of the
//!   lane beside the word;
//! - the word's exponent and mantissa, shifted into an `f32`'s places with
//!   its sign, are that `f32` with bias 15 instead of 127: one exact
//!   multiplication by 2^112 gives the value, subnormals included (their
//!   shifted bits are an `f32` subnormal, scaled into the normal range);
//!   infinity and NaN come out as 2^16 × (1 + mantissa), whose exponent
//!   the special bits, ORed in, turn into all ones (and NaN's quiet bit on,
//!   payload kept, as `half`, the scalar spec, decodes it).
//!
//! Why: a handful of lane operations per four words, with no select. An
//! `f32` subnormal operand costs x86 a slow assist when such operands are
//! sparse among normal ones; avoiding them costs more on every word than
//! the assists cost on weights (few `F16` subnormals), though data with a
//! sprinkling of subnormals decodes slower.

/// A word's magnitude bits.
pub(super) const MAGNITUDE: u16 = 0x7FFF;
/// The magnitude of infinity (above it: NaN).
pub(super) const INFINITY: u16 = 0x7C00;
/// Exponent bits that turn 2^16's (143) into all ones (255).
pub(super) const SPECIAL: u16 = 0x3800;
/// The quiet bit, in the top half.
pub(super) const QUIET: u16 = 0x0040;
/// How far the lane (word at the top) shifts right, arithmetically: the
/// exponent into an `f32`'s places, the sign copied down to them.
pub(super) const SHIFT: u32 = 3;
/// The bits of the shifted lane kept: its sign, exponent and mantissa.
pub(super) const MOVED: u32 = 0x8FFF_E000;
/// 2^(127 − 15).
pub(super) const SCALE: f32 = f32::from_bits((127 + 112) << 23);
