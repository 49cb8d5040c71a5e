// The WGSL decoder of the float dtypes, and its per-dtype constants, which
// come from the dtype table (FLOAT_FORMATS in generated/dtypes.js, written
// by `cargo xtask gen` from core/src/dtype.rs): one shader, specialised per
// dtype through pipeline-overridable constants.
//
// Every step is integer arithmetic on the bit patterns (the output buffer
// holds f32 or f16 bits), so the result does not depend on how a GPU
// rounds or flushes floats: it is the core's `decode_f32_into` bit for bit.
// The element decode follows the core's `f32_bits` (core/src/decode/layout.rs)
// for the formats of up to 16 bits; F64 is rounded to nearest, ties to even,
// as `f64 as f32`.

import { BITS, DTYPE_INDEX, FLOAT_FORMATS } from '../generated/dtypes.js';

/** Elements decoded per invocation group. */
export const WORKGROUP = 256;

const SPECIALS = { finite: 0, ieee: 1, 'all-ones-nan': 2, 'negative-zero-nan': 3 };

// The formats the core decodes through the `half` crate keep a NaN's
// payload (quieted); its table decoders give the one quiet NaN.
const KEEPS_PAYLOAD = new Set(['F16', 'BF16']);

export const SHADER = /* wgsl */ `
override BITS: u32;           // element width: 4, 6, 8, 16, 32 or 64
override EXP_BITS: u32;
override MAN_BITS: u32;
override BIAS: i32;
override SIGNED: bool;
override SUBNORMALS: bool;
override SPECIALS: u32;       // 0 finite, 1 IEEE, 2 all-ones NaN, 3 negative-zero NaN
override KEEP_PAYLOAD: bool;  // NaN payload kept (quieted) instead of the one quiet NaN
override HALF_OUT: bool;      // f16 bits, two per word, instead of f32 bits

struct Params { count: u32, row: u32 }

@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

const QUIET_NAN = 0x7FC00000u;
const INFINITY = 0x7F800000u;

// Element i of a little-endian bit stream of BITS-bit codes (docs/format.md:
// F4's first element in the low nibble, F6's four elements in 24 bits).
fn code_at(i: u32) -> u32 {
  let bits = BITS;  // (a runtime value: the shifts below never form override expressions)
  let at = i * bits;
  let w = at >> 5u;
  let s = at & 31u;
  var v = src[w] >> s;
  if (s + bits > 32u) {
    v = v | (src[w + 1u] << (32u - s));
  }
  return v & ((1u << bits) - 1u);
}

// The f32 bits of a code of up to 16 bits, as the core's f32_bits.
fn small_bits(code: u32) -> u32 {
  let man_bits = MAN_BITS;
  let exp_bits = EXP_BITS;
  let width = exp_bits + man_bits;
  let man_mask = (1u << man_bits) - 1u;
  let exp_mask = (1u << exp_bits) - 1u;
  let m = code & man_mask;
  let e = (code >> man_bits) & exp_mask;
  var sign = 0u;
  if (SIGNED) {
    sign = ((code >> width) & 1u) << 31u;
  }
  if (SPECIALS == 1u && e == exp_mask) {
    if (m == 0u) {
      return sign | INFINITY;
    }
    if (KEEP_PAYLOAD) {
      return sign | QUIET_NAN | (m << (23u - man_bits));
    }
    return sign | QUIET_NAN;
  }
  if (SPECIALS == 2u && e == exp_mask && m == man_mask) {
    return sign | QUIET_NAN;
  }
  if (SPECIALS == 3u && SIGNED && code == (1u << width)) {
    return sign | QUIET_NAN;
  }
  // The value is sig x 2^exp2 with an integer significand.
  var sig = m | (1u << man_bits);
  var exp2 = i32(e) - BIAS - i32(man_bits);
  if (e == 0u && SUBNORMALS) {
    sig = m;
    exp2 = 1 - BIAS - i32(man_bits);
  }
  if (sig == 0u) {
    return sign;
  }
  let top = 31u - countLeadingZeros(sig);
  let biased = i32(top) + exp2 + 127;
  if (biased > 0) {
    return sign | (u32(biased) << 23u) | ((sig << (23u - top)) & 0x7FFFFFu);
  }
  return sign | (sig << u32(exp2 + 149));  // an f32 subnormal
}

// Bit k (< 53) of the 53-bit significand hi:lo.
fn bit_at(hi: u32, lo: u32, k: u32) -> u32 {
  if (k < 32u) {
    return (lo >> k) & 1u;
  }
  return (hi >> (k - 32u)) & 1u;
}

// Whether any bit below k (1 <= k < 53) of hi:lo is set.
fn sticky(hi: u32, lo: u32, k: u32) -> bool {
  if (k < 32u) {
    return (lo & ((1u << k) - 1u)) != 0u;
  }
  if (k == 32u) {
    return lo != 0u;
  }
  return lo != 0u || (hi & ((1u << (k - 32u)) - 1u)) != 0u;
}

// hi:lo >> s (29 <= s <= 53), rounded to nearest, ties to even.
fn shift_round(hi: u32, lo: u32, s: u32) -> u32 {
  var kept: u32;
  if (s < 32u) {
    kept = (lo >> s) | (hi << (32u - s));
  } else {
    kept = hi >> (s - 32u);
  }
  if (bit_at(hi, lo, s - 1u) == 1u && (sticky(hi, lo, s - 1u) || (kept & 1u) == 1u)) {
    kept = kept + 1u;
  }
  return kept;
}

// F64 (words lo, hi) to the nearest f32's bits: ties to even, overflow to
// infinity; a NaN stays a quiet NaN with its sign and the top of its
// payload (what x86's and Arm's conversions, and so wasm's f32.demote_f64, give).
fn f64_bits(lo: u32, hi: u32) -> u32 {
  let sign = hi & 0x80000000u;
  let e = (hi >> 20u) & 0x7FFu;
  let mhi = hi & 0xFFFFFu;
  if (e == 0x7FFu) {
    if (mhi == 0u && lo == 0u) {
      return sign | INFINITY;
    }
    return sign | QUIET_NAN | (((mhi << 3u) | (lo >> 29u)) & 0x7FFFFFu);
  }
  if (e == 0u) {
    return sign;  // an f64 subnormal is below half the least f32
  }
  let biased = i32(e) - 1023 + 127;
  if (biased >= 255) {
    return sign | INFINITY;
  }
  let sig_hi = mhi | 0x100000u;
  if (biased >= 1) {
    // (a carry out of the mantissa raises the exponent, up to infinity)
    return sign | ((u32(biased - 1) << 23u) + shift_round(sig_hi, lo, 29u));
  }
  let s = u32(29 + 1 - biased);  // an f32 subnormal: sig x 2^(e - 1075 + 149)
  if (s > 53u) {
    return sign;
  }
  return sign | shift_round(sig_hi, lo, s);
}

fn element(i: u32) -> u32 {
  if (BITS == 64u) {
    return f64_bits(src[2u * i], src[2u * i + 1u]);
  }
  if (BITS == 32u) {
    return src[i];
  }
  return small_bits(code_at(i));
}

// f32 bits to the nearest f16's, ties to even (NaN: quiet, top payload bits).
fn half_bits(b: u32) -> u32 {
  let sign = (b >> 16u) & 0x8000u;
  let e = (b >> 23u) & 0xFFu;
  let m = b & 0x7FFFFFu;
  if (e == 255u) {
    if (m == 0u) {
      return sign | 0x7C00u;
    }
    return sign | 0x7E00u | (m >> 13u);
  }
  let he = i32(e) - 112;
  if (he >= 31) {
    return sign | 0x7C00u;
  }
  if (he <= 0) {
    if (he < -10) {
      return sign;
    }
    let sig = m | 0x800000u;
    let s = u32(14 - he);
    var r = sig >> s;
    let rem = sig & ((1u << s) - 1u);
    let half = 1u << (s - 1u);
    if (rem > half || (rem == half && (r & 1u) == 1u)) {
      r = r + 1u;
    }
    return sign | r;
  }
  var r = (u32(he) << 10u) | (m >> 13u);
  let rem = m & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u) == 1u)) {
    r = r + 1u;
  }
  return sign | r;
}

@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.y * params.row + gid.x;
  if (HALF_OUT) {
    let first = 2u * i;
    if (first >= params.count) {
      return;
    }
    var pair = half_bits(element(first));
    if (first + 1u < params.count) {
      pair = pair | (half_bits(element(first + 1u)) << 16u);
    }
    dst[i] = pair;
  } else {
    if (i >= params.count) {
      return;
    }
    dst[i] = element(i);
  }
}
`;

/**
 * The shader's constants for a float dtype, from its row of the dtype
 * table; null for a dtype that is not a float. `half`: f16 output.
 */
export function constants(dtype, half) {
  const d = DTYPE_INDEX.get(dtype);
  const f = d === undefined ? null : FLOAT_FORMATS[d];
  if (f === null) return null;
  const wide = BITS[d] > 16;
  if (wide && f.exponentBits !== (BITS[d] === 64 ? 11 : 8)) {
    // The shader's 32- and 64-bit paths are IEEE binary32 and binary64 only.
    throw new Error(`no WGSL decoder for ${dtype}'s layout`);
  }
  return {
    BITS: BITS[d],
    // (The 32- and 64-bit paths do not use the small-format constants.)
    EXP_BITS: wide ? 0 : f.exponentBits,
    MAN_BITS: wide ? 0 : f.mantissaBits,
    BIAS: f.bias,
    SIGNED: f.signed ? 1 : 0,
    SUBNORMALS: f.subnormals ? 1 : 0,
    SPECIALS: SPECIALS[f.specials],
    KEEP_PAYLOAD: KEEPS_PAYLOAD.has(dtype) ? 1 : 0,
    HALF_OUT: half ? 1 : 0,
  };
}
