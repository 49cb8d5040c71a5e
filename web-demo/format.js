// Facts about dtypes and small formatting helpers. No DOM, no package: usable in the page,
// the worker and Node tests alike.

/** Bits per element, in the format's enum order. */
export const DTYPE_BITS = Object.freeze({
  BOOL: 8, F4: 4, F6_E2M3: 6, F6_E3M2: 6, U8: 8, I8: 8, F8_E5M2: 8, F8_E4M3: 8, F8_E8M0: 8,
  F8_E4M3FNUZ: 8, F8_E5M2FNUZ: 8, I16: 16, U16: 16, F16: 16, BF16: 16, I32: 32, U32: 32,
  F32: 32, C64: 64, F64: 64, I64: 64, U64: 64,
});

/** Dtype names in the format's enum order (used to order dtype lists and colours). */
export const DTYPES = Object.freeze(Object.keys(DTYPE_BITS));

/** Floats that `decodeFloat32` yields per element: two for complex, one otherwise. */
export function floatsPerElement(dtype) {
  return dtype === 'C64' ? 2 : 1;
}

/** Bytes a typed-array view of this dtype must be aligned to (0: no typed view exists). */
export function viewAlignment(dtype) {
  const bits = DTYPE_BITS[dtype];
  if (bits === undefined || bits < 8) return 0;
  if (dtype === 'C64') return 4; // viewed as interleaved Float32Array
  return bits / 8;
}

/** numpy `descr` for a dtype numpy has natively, else null (exported as float32 instead). */
export const NPY_DESCR = Object.freeze({
  BOOL: '|b1', U8: '|u1', I8: '|i1', I16: '<i2', U16: '<u2', F16: '<f2', I32: '<i4', U32: '<u4',
  F32: '<f4', C64: '<c8', F64: '<f8', I64: '<i8', U64: '<u8',
});

/** Product of the dims, as a Number (exact below 2^53, which every real file is). */
export function elementCount(shape) {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

const intFmt = new Intl.NumberFormat('en-US');

/** 1234567 → "1,234,567". */
export function fmtInt(n) {
  return intFmt.format(n);
}

/** 1234567 → "1.23 M" (parameter counts). */
export function fmtCount(n) {
  const units = [[1e12, 'T'], [1e9, 'B'], [1e6, 'M'], [1e3, 'K']];
  for (const [v, u] of units) if (Math.abs(n) >= v) return `${(n / v).toFixed(n / v >= 100 ? 1 : 2)} ${u}`;
  return String(n);
}

/** Byte counts with binary units: 1536 → "1.50 KiB". */
export function fmtBytes(n) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let i = 0;
  let v = n;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i += 1;
  }
  return i === 0 ? `${n} B` : `${v.toFixed(v >= 100 ? 1 : 2)} ${units[i]}`;
}

/** [2, 3] → "[2, 3]"; [] → "[] (scalar)". */
export function fmtShape(shape) {
  return shape.length === 0 ? '[] scalar' : `[${shape.join(', ')}]`;
}

/** A float for a stats table: short, but exact enough to compare by eye. */
export function fmtNum(x) {
  if (x === null || x === undefined) return '—';
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return '+Inf';
  if (x === -Infinity) return '−Inf';
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  const a = Math.abs(x);
  if (Number.isInteger(x) && a < 1e15) return String(x);
  if (a >= 1e6 || a < 1e-3) return x.toExponential(3);
  return String(Number(x.toPrecision(5)));
}

/** Milliseconds for humans. */
export function fmtMs(ms) {
  return ms < 10 ? `${ms.toFixed(1)} ms` : ms < 10000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** Numeric-aware compare: "layers.2" < "layers.10". */
export const naturalCompare = new Intl.Collator('en', { numeric: true, sensitivity: 'variant' }).compare;
