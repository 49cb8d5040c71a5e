// The reference's golden float file (lib/reference.py writes floats.safetensors): for each float
// dtype D it can write, a tensor "D" of codes and "D.expected", the f32 values ml_dtypes decodes
// them to; and the bit-for-bit comparison the decode tests make with them.

import assert from 'node:assert/strict';

/** The dtypes that floats.safetensors holds as tensors of their own (F6 is packed into U8 "D.bytes"). */
export const GOLDEN_FLOAT_DTYPES = [
  'F8_E5M2',
  'F8_E4M3',
  'F8_E8M0',
  'F8_E4M3FNUZ',
  'F8_E5M2FNUZ',
  'F16',
  'BF16',
  'F32',
  'F64',
  'F4',
];

/** The f32 values the reference gives for dtype `d` in the golden file `st` (a copy of "D.expected"). */
export function expectedFloats(st, d) {
  return new Float32Array(st.tensor(`${d}.expected`).bytes().slice().buffer);
}

/** The bits of each f32 of `f` (a view, no copy). */
export const bits = (f) => new Uint32Array(f.buffer, f.byteOffset, f.length);

/**
 * Asserts bit-exact f32s, except that a NaN may come back quieted (the core decodes F16 and BF16
 * signalling NaNs as the half crate does: payload kept, quiet bit set).
 */
export function sameBits(got, want, what) {
  assert.equal(got.length, want.length, `${what}: length`);
  const g = bits(got);
  const w = bits(want);
  for (let i = 0; i < g.length; i++) {
    if (g[i] !== w[i] && !(Number.isNaN(want[i]) && g[i] === (w[i] | 0x00400000) >>> 0))
      assert.fail(`${what}[${i}]: got 0x${g[i].toString(16)} (${got[i]}), want 0x${w[i].toString(16)} (${want[i]})`);
  }
}
