//! [`Lane`] on wasm SIMD128, for builds that enable it (the npm package's
//! reader: `scripts/build-package.sh`). Every operation is one instruction,
//! or one shuffle for the spreads.

use core::arch::wasm32::{
    f32x4_convert_i32x4, f32x4_mul, f32x4_splat, i32x4_add, i32x4_eq, i32x4_gt, i8x16_shuffle,
    u32x4_shr, u32x4_splat, v128, v128_and, v128_bitselect, v128_or,
};

use super::lanes::Lane;

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
    #[inline(always)]
    fn spread_bytes(block: [u8; 16]) -> [Self; 4] {
        let v: v128 = bytemuck::cast(block);
        let z = u32x4_splat(0);
        // Lane i of quarter q: zeros (from `z`, indices 16..) below byte 4q + i.
        [
            i8x16_shuffle::<16, 16, 16, 0, 16, 16, 16, 1, 16, 16, 16, 2, 16, 16, 16, 3>(v, z),
            i8x16_shuffle::<16, 16, 16, 4, 16, 16, 16, 5, 16, 16, 16, 6, 16, 16, 16, 7>(v, z),
            i8x16_shuffle::<16, 16, 16, 8, 16, 16, 16, 9, 16, 16, 16, 10, 16, 16, 16, 11>(v, z),
            i8x16_shuffle::<16, 16, 16, 12, 16, 16, 16, 13, 16, 16, 16, 14, 16, 16, 16, 15>(v, z),
        ]
    }
    #[inline(always)]
    fn spread_halves(block: [u8; 16]) -> [Self; 2] {
        let v: v128 = bytemuck::cast(block);
        let z = u32x4_splat(0);
        [
            i8x16_shuffle::<16, 16, 0, 1, 16, 16, 2, 3, 16, 16, 4, 5, 16, 16, 6, 7>(v, z),
            i8x16_shuffle::<16, 16, 8, 9, 16, 16, 10, 11, 16, 16, 12, 13, 16, 16, 14, 15>(v, z),
        ]
    }
    #[inline(always)]
    fn to_f32s(self) -> [f32; 4] {
        bytemuck::cast(self)
    }
}
