// Bytes of whole elements → float32 values, for every dtype. Float dtypes (F4 … F64) go through
// the package's `decodeFloat32` (the core's decoders, in wasm); the package does not decode
// integers, BOOL or complex values to floats, so those are converted here, little-endian.

const FLOAT = new Set(['F4', 'F6_E2M3', 'F6_E3M2', 'F8_E5M2', 'F8_E4M3', 'F8_E8M0', 'F8_E4M3FNUZ', 'F8_E5M2FNUZ', 'F16', 'BF16', 'F32', 'F64']);

const INT_VIEW = { U8: Uint8Array, I8: Int8Array, U16: Uint16Array, I16: Int16Array, U32: Uint32Array, I32: Int32Array };

/** A typed view of `bytes` when it is aligned, else of an aligned copy. */
function view(Ctor, bytes) {
  const n = bytes.byteLength / Ctor.BYTES_PER_ELEMENT;
  if (bytes.byteOffset % Ctor.BYTES_PER_ELEMENT === 0) return new Ctor(bytes.buffer, bytes.byteOffset, n);
  return new Ctor(bytes.slice().buffer, 0, n);
}

/** True when the package decodes this dtype itself. */
export function decodedByPackage(dtype) {
  return FLOAT.has(dtype);
}

/**
 * Decodes `bytes` (whole elements of `dtype`) into `out`, which has one float per element
 * (two, real and imaginary, for C64). Returns `out`.
 */
export function decodeChunk(decodeFloat32, dtype, bytes, out) {
  if (FLOAT.has(dtype)) return decodeFloat32(dtype, bytes, out);
  if (dtype === 'C64') {
    out.set(view(Float32Array, bytes));
    return out;
  }
  if (dtype === 'BOOL') {
    for (let i = 0; i < bytes.length; i++) out[i] = bytes[i] === 0 ? 0 : 1;
    return out;
  }
  if (dtype === 'I64' || dtype === 'U64') {
    // Two 32-bit halves: exact to 2^53, then rounded like any float conversion.
    const w = view(Uint32Array, bytes);
    const signed = dtype === 'I64';
    for (let i = 0; i < out.length; i++) {
      const lo = w[2 * i];
      const hi = w[2 * i + 1];
      out[i] = signed ? (hi | 0) * 4294967296 + lo : hi * 4294967296 + lo;
    }
    return out;
  }
  const Ctor = INT_VIEW[dtype];
  if (!Ctor) throw new Error(`cannot decode dtype ${dtype}`);
  out.set(view(Ctor, bytes));
  return out;
}
