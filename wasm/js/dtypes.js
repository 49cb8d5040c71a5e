// The dtype tables: the one hand-written place where this package names
// dtypes. Every table is indexed by the core's `Dtype as u8`.

/** The 22 dtype names, in the core's order (its `Dtype as u8`). */
export const DTYPES = Object.freeze([
  'BOOL', 'F4', 'F6_E2M3', 'F6_E3M2', 'U8', 'I8', 'F8_E5M2', 'F8_E4M3', 'F8_E8M0',
  'F8_E4M3FNUZ', 'F8_E5M2FNUZ', 'I16', 'U16', 'F16', 'BF16', 'I32', 'U32', 'F32',
  'C64', 'F64', 'I64', 'U64',
]);
/** Bits per element. */
export const BITS = [8, 4, 6, 6, 8, 8, 8, 8, 8, 8, 8, 16, 16, 16, 16, 32, 32, 32, 64, 64, 64, 64];
// What kind of number each holds (DTYPE_INFO.kind).
const KIND = [
  'bool', 'float', 'float', 'float', 'uint', 'int', 'float', 'float', 'float',
  'float', 'float', 'int', 'uint', 'float', 'float', 'int', 'uint', 'float',
  'complex', 'float', 'int', 'uint',
];

const F16Array = typeof globalThis.Float16Array === 'function' ? globalThis.Float16Array : Uint16Array;
/** Typed array a dtype is viewed as (sub-byte and 8-bit floats: their bytes). */
export const VIEW = [
  Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array, Int8Array,
  Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array,
  Int16Array, Uint16Array, F16Array, Uint16Array, Int32Array, Uint32Array, Float32Array,
  Float32Array, Float64Array, BigInt64Array, BigUint64Array,
];

/** Name → index in DTYPES. */
export const DTYPE_INDEX = new Map(DTYPES.map((d, i) => [d, i]));

/**
 * Facts about each dtype, by name: `{ name, index, bits, align, kind, view }`.
 * `index` is its place in DTYPES; `kind` one of 'bool', 'uint', 'int',
 * 'float', 'complex'; `view` the name of the typed array `view()` returns
 * (Float16Array for F16 only where the runtime has it) and `align` its
 * element size, the byte alignment that view needs. Null prototype, frozen.
 */
export const DTYPE_INFO = Object.freeze(
  Object.assign(
    Object.create(null),
    Object.fromEntries(
      DTYPES.map((name, index) => [
        name,
        Object.freeze({ name, index, bits: BITS[index], align: VIEW[index].BYTES_PER_ELEMENT, kind: KIND[index], view: VIEW[index].name }),
      ]),
    ),
  ),
);
