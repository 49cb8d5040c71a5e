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
//! Why: a handful of lane operations per four words, with no select.
//!
//! Exact: the product is exact (an integer below 2^24 times a power of two
//! in the normal range: no rounding), and wasm's `f32` operations, SIMD128's
//! `f32x4.mul` included, follow IEEE 754 with subnormals honoured (the spec
//! allows no flushing to zero; an engine on hardware that flushes must
//! emulate), so a subnormal `F16` word, a subnormal operand here, scales
//! like any other. Natively (`each`) Rust's `f32` has the same semantics.
//!
//! The trade-off: a subnormal operand costs many CPUs (x86 among them) a
//! microcode assist, so the time per word grows with the share of subnormal
//! words in the data. Weights have few; steering them around the
//! multiplication would cost every word a compare and a select.

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
