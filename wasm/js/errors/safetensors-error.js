// The package's one error class, and the errors wasm reports as numbers: a
// kind number and its fields (wasm/src/error.rs), worded by errors/messages.js.

import {
  ERROR_FIELDS,
  ERROR_KIND,
  ERROR_OFFSET,
  ERROR_TENSOR_INDEX,
  ERROR_TENSOR_LEN,
  ERROR_TENSOR_START,
} from '../generated/wire.js';
import { JS_KINDS, KINDS, message } from './messages.js';
import { decodeText } from '../read/header-text.js';

/**
 * Every error kind by name (`KIND.Http === 'Http'`): the modules of this
 * package name kinds through it, so each is spelt once, in errors/messages.js.
 */
export const KIND = Object.freeze(Object.fromEntries([...KINDS, ...JS_KINDS].map((k) => [k, k])));

/**
 * Every error of the package. `kind` is the core's error kind name (e.g.
 * "InvalidOffset") or one of this layer's ("OffsetTooLarge", "Http", …);
 * `offset` is the header byte where it was found; `tensor` the tensor's name.
 */
export class SafeTensorsError extends Error {
  constructor(kind, message, { offset = null, tensor = null, cause } = {}) {
    let text = message;
    if (offset !== null) text += ` at header byte ${offset}`;
    if (tensor !== null) text += ` (tensor ${JSON.stringify(tensor)})`;
    super(text, cause === undefined ? undefined : { cause });
    this.name = 'SafeTensorsError';
    this.kind = kind;
    this.offset = offset;
    this.tensor = tensor;
  }
}

/** Throws a SafeTensorsError. */
export function fail(kind, message, opts) {
  throw new SafeTensorsError(kind, message, opts);
}

/**
 * The error of a wasm call from its numbers (their layout: ERROR_* in
 * generated/wire.js). `json` holds the header the spans point into;
 * `names` resolves a tensor index (writer errors) to the caller's name.
 */
export function wasmError(nums, json, names) {
  const code = nums[ERROR_KIND];
  const kind = KINDS[code];
  const fields = [];
  for (let i = ERROR_FIELDS; i < ERROR_KIND; i += 2) {
    const [hi, lo] = [nums[i], nums[i + 1]];
    fields.push(hi < 2 ** 21 ? hi * 2 ** 32 + lo : (BigInt(hi) << 32n) | BigInt(lo));
  }
  let tensor = null;
  const start = nums[ERROR_TENSOR_START];
  if (start >= 0 && json !== undefined) {
    const raw = decodeText(json.subarray(start, start + nums[ERROR_TENSOR_LEN]));
    try {
      tensor = raw.includes('\\') ? JSON.parse(`"${raw}"`) : raw;
    } catch {
      tensor = raw;
    }
  } else if (nums[ERROR_TENSOR_INDEX] >= 0 && names !== undefined) {
    tensor = names(nums[ERROR_TENSOR_INDEX]);
  }
  // (A number past the table would be a module of another build.)
  const text = message(code, fields) ?? `error ${code}`;
  const offset = nums[ERROR_OFFSET];
  return new SafeTensorsError(kind ?? `${code}`, text, { offset: offset < 0 ? null : offset, tensor });
}
