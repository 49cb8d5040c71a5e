// Writing a safetensors file through the writer's wasm module (loaded by
// the first call): only the plan crosses into wasm, the data is copied
// from the caller's buffers straight into the output.

import { DTYPE_INDEX } from '../format/dtypes.js';
import { KIND, fail, wasmError } from '../errors/safetensors-error.js';
import { u8 } from '../runtime/wire-numbers.js';
import {
  PLACED_BEGIN,
  PLACED_INDEX,
  PLACED_NUMBERS,
  PLANNED_FILE_LEN,
  PLANNED_HEAD_NUMBERS,
  PLAN_HAS_METADATA,
  PLAN_HEAD_NUMBERS,
  PLAN_PAIRS,
  PLAN_TENSORS,
  STATUS,
} from '../generated/wire.js';
import { loadWriter, loadedWriter } from '../runtime/writer-module.js';

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
const isWellFormed =
  typeof String.prototype.isWellFormed === 'function' ? (s) => s.isWellFormed() : (s) => !LONE_SURROGATE.test(s);

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
  const entries = tensorEntries(tensors);
  const datas = new Array(entries.length);
  const specs = entries.map(([name, t], i) => {
    checkEntry(name, t);
    try {
      datas[i] = u8(t.data);
    } catch {
      invalid('data must be an ArrayBuffer or an ArrayBufferView', name);
    }
    return { name, dtype: t.dtype, shape: t.shape, byteLength: datas[i].byteLength };
  });
  const plan = planFile(writer, specs, metadata);
  const out = new Uint8Array(plan.fileLength);
  out.set(plan.header, 0);
  const start = plan.header.byteLength;
  for (const { index, begin } of plan.placed) out.set(datas[index], start + begin);
  return out;
}

/** The `[name, input]` pairs of what `serialize` takes (an object or a Map). */
export function tensorEntries(tensors) {
  if (tensors instanceof Map) return [...tensors];
  if (tensors === null || typeof tensors !== 'object') invalid('tensors: expected an object or a Map');
  return Object.entries(tensors);
}

/** Checks one `[name, { dtype, shape }]` pair's name, dtype and shape. */
export function checkEntry(name, t) {
  if (typeof name !== 'string') invalid('tensor names must be strings');
  if (t === null || typeof t !== 'object') invalid('expected { dtype, shape, data }', name);
  if (!DTYPE_INDEX.has(t.dtype)) fail(KIND.UnknownDtype, `unknown dtype ${JSON.stringify(t.dtype)}`, { tensor: name });
  if (!Array.isArray(t.shape) || !t.shape.every((x) => Number.isSafeInteger(x) && x >= 0)) {
    invalid('shape must be an array of non-negative integers', name);
  }
}

/**
 * Plans a file through the core writer: `specs` are `{ name, dtype, shape,
 * byteLength }` in the caller's order. Returns the header bytes (8 + N),
 * the file length and where each tensor goes, in written order:
 * `placed[k] = { index, begin }` (index into `specs`, begin relative to the
 * end of the header). The core's checks (repeated or reserved names, a
 * byte length that is not shape × dtype, sizes) throw here, naming the tensor.
 */
export function planFile(writer, specs, metadata) {
  // The plan's numbers (wasm/src/write.rs; the indices in generated/wire.js):
  // the head, a row per tensor (dtype, name length, byte length, rank,
  // dims), key and value lengths per metadata pair.
  const nums = new Array(PLAN_HEAD_NUMBERS).fill(0);
  nums[PLAN_TENSORS] = specs.length;
  const text = []; // UTF-8 of the names, keys and values
  for (const { name, dtype, shape, byteLength } of specs) {
    const nameBytes = utf8(name, 'the tensor name', name);
    text.push(nameBytes);
    nums.push(DTYPE_INDEX.get(dtype), nameBytes.byteLength, byteLength, shape.length, ...shape);
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
  if (plan[STATUS] < 0) throw wasmError(plan, undefined, (i) => specs[i].name);
  const placed = [];
  for (let p = PLANNED_HEAD_NUMBERS; p < plan.length; p += PLACED_NUMBERS) {
    placed.push({ index: plan[p + PLACED_INDEX], begin: plan[p + PLACED_BEGIN] });
  }
  return { header: writer.take_bytes(), fileLength: plan[PLANNED_FILE_LEN], placed };
}

// The writer's module, or a WriterUnavailable error saying why it did not load.
export async function writerOrFail() {
  try {
    return await loadWriter();
  } catch (e) {
    fail(KIND.WriterUnavailable, `the writer's wasm module could not be loaded: ${e?.message ?? e}`, { cause: e });
  }
}
