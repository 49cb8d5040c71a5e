// The dtype tables, generated from the core's dtype table
// (generated/dtypes.js: `cargo xtask gen`). Every table is indexed by the
// core's `Dtype as u8`.

import { ALIGN, BITS, DTYPE_INDEX, DTYPE_KINDS, DTYPES, VIEW } from '../generated/dtypes.js';

export { BITS, DTYPE_INDEX, DTYPES, VIEW };

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
        Object.freeze({
          name,
          index,
          bits: BITS[index],
          align: ALIGN[index],
          kind: DTYPE_KINDS[index],
          view: VIEW[index].name,
        }),
      ]),
    ),
  ),
);
