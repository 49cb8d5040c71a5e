// Facts about dtypes, all derived from the package's own (DTYPES, DTYPE_INFO), and small
// formatting helpers. No DOM and no wasm: usable in the page, the worker and Node tests alike.

import { DTYPES, DTYPE_INFO } from './vendor/safetensors-nano/facts.js';

/** Dtype names in the format's enum order (used to order dtype lists and colours). */
export { DTYPES };

/** Bits per element, by dtype name. */
export const DTYPE_BITS = Object.freeze(Object.fromEntries(DTYPES.map((d) => [d, DTYPE_INFO[d].bits])));

/** Floats that `decodeFloat32` yields per element: two for complex, one otherwise. */
export function floatsPerElement(dtype) {
  return DTYPE_INFO[dtype]?.kind === 'complex' ? 2 : 1;
}

/** Whether a dtype holds integers (BOOL counts): its histogram can bin per integer. */
export function isIntegerDtype(dtype) {
  const kind = DTYPE_INFO[dtype]?.kind;
  return kind === 'bool' || kind === 'uint' || kind === 'int';
}

/** Bytes a typed-array view of this dtype must be aligned to (0: no typed view exists). */
export function viewAlignment(dtype) {
  const info = DTYPE_INFO[dtype];
  // (A packed sub-byte dtype's view is of bytes, not of its elements.)
  if (info === undefined || info.bits < 8) return 0;
  return info.align;
}

// numpy's descr of a dtype it has natively, else null: a byte order ('|' for single bytes), its
// type letter and byte size. numpy's floats are IEEE 754 binary16/32/64, the dtypes named after
// their bits; BF16, the F8s, F6 and F4 it lacks.
function npyDescr({ name, kind, bits }) {
  const bytes = bits / 8;
  const order = bytes === 1 ? '|' : '<';
  if (kind === 'bool') return `|b${bytes}`;
  if (kind === 'uint') return `${order}u${bytes}`;
  if (kind === 'int') return `${order}i${bytes}`;
  if (kind === 'complex') return `<c${bytes}`;
  if (kind === 'float' && bits >= 16 && name === `F${bits}`) return `<f${bytes}`;
  return null;
}

/** numpy `descr` for a dtype numpy has natively (others are exported as float32 instead). */
export const NPY_DESCR = Object.freeze(
  Object.fromEntries(DTYPES.map((d) => [d, npyDescr(DTYPE_INFO[d])]).filter(([, descr]) => descr !== null)),
);

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
  const units = [
    [1e12, 'T'],
    [1e9, 'B'],
    [1e6, 'M'],
    [1e3, 'K'],
  ];
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

/** A fraction as a percentage with the digits its size needs. */
export function formatPct(x) {
  if (x >= 0.1) return `${(x * 100).toFixed(0)}%`;
  if (x >= 0.001) return `${(x * 100).toFixed(2)}%`;
  return `${(x * 100).toPrecision(2)}%`;
}
