//! `BF16` is the top half of an `f32`: in place at the top of a lane it
//! already is the value; only a NaN gets the quiet bit, as `half` (the
//! scalar spec) decodes it (docs/format.md, "Decoding to f32").

use super::lanes::{Lane, QUIET};

/// The `f32` bits of the `BF16` at the top of each lane (`h << 16`).
#[inline(always)]
pub(super) fn bf16<L: Lane>(x: L) -> L {
    x.or(x.nan().and(L::splat(QUIET)))
}
