// Bytes of whole elements → float32 values, for every dtype. Float dtypes go through the
// package's `decodeFloat32` (the core's decoders, in wasm); the package does not decode integers,
// booleans or complex values to floats, so those are converted here, little-endian. What a dtype
// is comes from the package's DTYPE_INFO.

import { DTYPE_INFO } from './vendor/safetensors-nano-lite.js';

/** A typed view of `bytes` when it is aligned, else of an aligned copy. */
function view(Ctor, bytes) {
  const n = bytes.byteLength / Ctor.BYTES_PER_ELEMENT;
  if (bytes.byteOffset % Ctor.BYTES_PER_ELEMENT === 0) return new Ctor(bytes.buffer, bytes.byteOffset, n);
  return new Ctor(bytes.slice().buffer, 0, n);
}

/** True when the package decodes this dtype itself. */
export function decodedByPackage(dtype) {
  return DTYPE_INFO[dtype]?.kind === 'float';
}

/**
 * Decodes `bytes` (whole elements of `dtype`) into `out`, which has one float per element
 * (two, real and imaginary, for complex). Returns `out`.
 */
export function decodeChunk(decodeFloat32, dtype, bytes, out) {
  const info = DTYPE_INFO[dtype];
  const kind = info?.kind;
  if (kind === 'float') return decodeFloat32(dtype, bytes, out);
  if (kind === 'bool') {
    for (let i = 0; i < bytes.length; i++) out[i] = bytes[i] === 0 ? 0 : 1;
    return out;
  }
  if ((kind === 'int' || kind === 'uint') && info.bits === 64) {
    // Two 32-bit halves: exact to 2^53, then rounded like any float conversion.
    const w = view(Uint32Array, bytes);
    const signed = kind === 'int';
    for (let i = 0; i < out.length; i++) {
      const lo = w[2 * i];
      const hi = w[2 * i + 1];
      out[i] = signed ? (hi | 0) * 4294967296 + lo : hi * 4294967296 + lo;
    }
    return out;
  }
  // Complex (re, im interleaved) and the other integers: the typed array view() gives.
  if (kind === 'complex' || kind === 'int' || kind === 'uint') {
    out.set(view(globalThis[info.view], bytes));
    return out;
  }
  throw new Error(`cannot decode dtype ${dtype}`);
}
