// Writing a safetensors file through the writer's wasm module (loaded by
// the first call): only the plan crosses into wasm, the data is copied
// from the caller's buffers straight into the output.

import { DTYPE_INDEX } from './dtypes.js';
import { KIND, fail, wasmError } from './errors.js';
import { u8 } from './wire.js';
import {
  PLACED_BEGIN, PLACED_INDEX, PLACED_NUMBERS, PLANNED_FILE_LEN, PLANNED_HEAD_NUMBERS, PLAN_HAS_METADATA,
  PLAN_HEAD_NUMBERS, PLAN_PAIRS, PLAN_TENSORS, STATUS,
} from './generated/wire.js';
import { loadWriter, loadedWriter } from './writer.js';

const utf8Encoder = new TextEncoder();

function concatAll(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

function invalid(message, tensor = null) {
  return fail(KIND.InvalidArgument, message, { tensor });
}

// The UTF-8 of a name, key or value. A lone surrogate has no UTF-8 (the
// encoder would write U+FFFD, another string): refused instead.
function utf8(s, what, tensor) {
  if (!isWellFormed(s)) invalid(`${what} holds a lone surrogate (not valid Unicode)`, tensor);
  return utf8Encoder.encode(s);
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const isWellFormed = typeof String.prototype.isWellFormed === 'function'
  ? (s) => s.isWellFormed()
  : (s) => !LONE_SURROGATE.test(s);

/**
 * Writes a safetensors file through the core writer. Only the plan crosses
 * into wasm (names, dtypes, shapes, byte lengths); the core returns the
 * header bytes and each tensor's place, and the data is copied from the
 * caller's buffers straight into the output.
 */
export async function serialize(tensors, metadata) {
  // The writer first: once it is loaded the rest runs at the call, so the
  // inputs are read when `serialize` is called (the first call reads them
  // once the writer has loaded).
  const writer = loadedWriter() ?? (await writerOrFail());
  const entries = tensors instanceof Map ? [...tensors] : Object.entries(tensors ?? invalid('tensors: expected an object or a Map'));
  // The plan's numbers (wasm/src/write.rs; the indices in generated/wire.js):
  // the head, a row per tensor (dtype, name length, byte length, rank,
  // dims), key and value lengths per metadata pair.
  const nums = new Array(PLAN_HEAD_NUMBERS).fill(0);
  nums[PLAN_TENSORS] = entries.length;
  const text = []; // UTF-8 of the names, keys and values
  const datas = new Array(entries.length);
  for (let i = 0; i < entries.length; i++) {
    const [name, t] = entries[i];
    if (typeof name !== 'string') invalid('tensor names must be strings');
    if (t === null || typeof t !== 'object') invalid('expected { dtype, shape, data }', name);
    const d = DTYPE_INDEX.get(t.dtype);
    if (d === undefined) fail(KIND.UnknownDtype, `unknown dtype ${JSON.stringify(t.dtype)}`, { tensor: name });
    if (!Array.isArray(t.shape) || !t.shape.every((x) => Number.isSafeInteger(x) && x >= 0)) {
      invalid('shape must be an array of non-negative integers', name);
    }
    let data;
    try {
      data = u8(t.data);
    } catch {
      invalid('data must be an ArrayBuffer or an ArrayBufferView', name);
    }
    datas[i] = data;
    const nameBytes = utf8(name, 'the tensor name', name);
    text.push(nameBytes);
    nums.push(d, nameBytes.byteLength, data.byteLength, t.shape.length, ...t.shape);
  }
  if (metadata !== undefined && metadata !== null) {
    if (typeof metadata !== 'object') invalid('metadata must be an object of strings');
    const pairs = Object.entries(metadata);
    nums[PLAN_HAS_METADATA] = 1;
    nums[PLAN_PAIRS] = pairs.length;
    for (const [k, v] of pairs) {
      if (typeof v !== 'string') invalid(`metadata value of ${JSON.stringify(k)} is not a string`);
      const kv = [utf8(k, `metadata key ${JSON.stringify(k)}`), utf8(v, `metadata value of ${JSON.stringify(k)}`)];
      text.push(...kv);
      nums.push(kv[0].byteLength, kv[1].byteLength);
    }
  }
  const plan = writer.plan(new Float64Array(nums), concatAll(text));
  // Writer errors name the tensor by its position in the caller's list.
  if (plan[STATUS] < 0) throw wasmError(plan, undefined, (i) => entries[i][0]);
  const header = writer.take_bytes();
  const out = new Uint8Array(plan[PLANNED_FILE_LEN]);
  out.set(header, 0);
  const start = header.byteLength;
  for (let p = PLANNED_HEAD_NUMBERS; p < plan.length; p += PLACED_NUMBERS) {
    out.set(datas[plan[p + PLACED_INDEX]], start + plan[p + PLACED_BEGIN]);
  }
  return out;
}

// The writer's module, or a WriterUnavailable error saying why it did not load.
async function writerOrFail() {
  try {
    return await loadWriter();
  } catch (e) {
    fail(KIND.WriterUnavailable, `the writer's wasm module could not be loaded: ${e?.message ?? e}`, { cause: e });
  }
}
