// The parsed header: wasm's `open` answers in numbers (wasm/src/describe.rs)
// and names as spans of the header bytes; this module turns them into the
// description a SafeTensors holds (names decoded, shapes read on demand).

import { reader as wasm } from '../runtime/reader-exports.js';
import { BITS } from '../format/dtypes.js';
import { KIND, wasmError } from '../errors/safetensors-error.js';
import { decodeAscii, decodeText } from './header-text.js';
import { requireReader } from '../runtime/load-wasm.js';
import { keep, wasmNumbers } from '../runtime/wire-numbers.js';
import { FIELDS, KINDS } from '../generated/errors.js';
import {
  ERROR_FIELDS,
  ERROR_KIND,
  ERROR_NUMBERS,
  ERROR_OFFSET,
  ERROR_TENSOR_INDEX,
  ERROR_TENSOR_START,
  HEADER_LIMIT,
  HEAD_HEADER_LEN,
  HEAD_NUMBERS,
  HEAD_PAIRS,
  HEAD_PLAIN,
  HEAD_TENSORS,
  PAIR_NUMBERS,
  SHAPE_FACTOR,
  SPAN_NUMBERS,
  STATUS,
  TENSOR_DTYPE_SHAPE,
  TENSOR_END,
  TENSOR_NUMBERS,
} from '../generated/wire.js';

/**
 * The `headerLimit` option of an opener: `fallback` when not given, else a
 * non-negative integer, above HEADER_LIMIT taken as HEADER_LIMIT (as the
 * core's Parser::header_limit does).
 */
export function headerLimitOption(limit, fallback = HEADER_LIMIT) {
  if (limit === undefined) return fallback;
  if (!Number.isInteger(limit) || limit < 0)
    throw new TypeError('headerLimit: expected a non-negative integer (bytes)');
  return Math.min(limit, HEADER_LIMIT);
}

// The core's HeaderTooLarge for a header of `hi` × 2^32 + `lo` bytes over
// `limit`: its numbers as wasm would send them (generated/wire.js), worded
// by the same path as every wasm error.
function headerTooLarge(hi, lo, limit) {
  const nums = new Float64Array(ERROR_NUMBERS);
  nums[STATUS] = -1;
  nums[ERROR_OFFSET] = -1;
  nums[ERROR_TENSOR_START] = -1;
  nums[ERROR_TENSOR_INDEX] = -1;
  const kind = KINDS.indexOf(KIND.HeaderTooLarge);
  const field = (name) => ERROR_FIELDS + 2 * FIELDS[kind].findIndex(([n]) => n === name);
  nums[field('header_len')] = hi;
  nums[field('header_len') + 1] = lo;
  nums[field('limit') + 1] = limit;
  nums[ERROR_KIND] = kind;
  return wasmError(nums);
}

/**
 * One wasm `open` call over the first bytes of a file of `fileSize` bytes:
 * a Description, or (a number) how many bytes of the file it needs. A
 * header longer than `limit` bytes is HeaderTooLarge as soon as the first
 * 8 bytes are in `prefix`, before any more are asked for.
 */
export function openPrefix(prefix, fileSize, limit = HEADER_LIMIT) {
  requireReader();
  // Shared memory can change under us between the parse and the name
  // decoding: read a private copy of the header (it is small).
  if (typeof SharedArrayBuffer === 'function' && prefix.buffer instanceof SharedArrayBuffer) prefix = prefix.slice();
  // A limit below the core's, checked here in the core's order (after a
  // file under 8 bytes, before the header length against the file's):
  // Parser::header_limit's rule, without a number more crossing to wasm.
  if (limit < HEADER_LIMIT && prefix.byteLength >= 8 && fileSize >= 8) {
    const len = new DataView(prefix.buffer, prefix.byteOffset, 8);
    const [hi, lo] = [len.getUint32(4, true), len.getUint32(0, true)];
    if (hi > 0 || lo > limit) throw headerTooLarge(hi, lo, limit);
  }
  // The size as two 32-bit halves (a number or, from HTTP, a BigInt).
  const [hi, lo] =
    typeof fileSize === 'bigint'
      ? [Number(fileSize >> 32n), Number(fileSize & 0xffffffffn)]
      : [Math.floor(fileSize / 2 ** 32), fileSize % 2 ** 32];
  // (Read before any other wasm call: the next one replaces them.)
  const at = wasm.open(prefix, hi, lo) / 8;
  const nums = wasmNumbers();
  const status = nums[at + STATUS];
  if (status > 0) return status;
  if (status < 0) throw wasmError(nums.subarray(at), prefix.subarray(8));
  return new Description(nums, at, prefix.subarray(8, 8 + nums[at + HEAD_HEADER_LEN]));
}

/**
 * Throws HeaderTooLarge when the file's first 8 bytes give a header longer
 * than `limit` (for a stream whose size is not known yet); else returns the
 * bytes from the file start that the length prefix and header take (8 + N).
 */
export function checkHeaderLength(first8, limit) {
  return openPrefix(first8.subarray(0, 8), 2 ** 53, limit);
}

// Names are decoded from the header bytes a block at a time: one
// TextDecoder call per NAME_BLOCK bytes, each name a slice of its block's
// string (blocks stay small: large strings are slow to make and collect).
const NAME_BLOCK = 32768;

class NameDecoder {
  // `plain`: the core found the header ASCII without escapes.
  constructor(json, plain) {
    this.json = json;
    this.plain = plain;
    this.blocks = [];
    // Per block: whether it holds a backslash (so maybe an escaped name).
    this.escapes = [];
  }

  // The name whose raw span is [start, start + len), unescaped.
  name(start, len) {
    const k = (start / NAME_BLOCK) | 0;
    const offset = k * NAME_BLOCK;
    const block = this.block(k);
    let s;
    if (block !== null && start + len <= offset + NAME_BLOCK) {
      s = block.slice(start - offset, start + len - offset);
      if (!this.escapes[k]) return s;
    } else {
      s = decodeText(this.json.subarray(start, start + len));
    }
    // (A backslash in the raw text: an escape, the core validated it.)
    return s.includes('\\') ? JSON.parse(`"${s}"`) : s;
  }

  // Decodes every block (until one is not ASCII); whether all are ASCII,
  // so that every header offset maps to a string index.
  allAscii() {
    for (let k = 0; k * NAME_BLOCK < this.json.length; k++) {
      if (this.block(k) === null) return false;
    }
    return true;
  }

  // The dims of the validated shape whose `[` is at header byte `at`, read
  // from the decoded text (after allAscii() said yes): JS strings do not
  // change, the caller's header bytes might.
  shape(at) {
    let k = (at / NAME_BLOCK) | 0;
    let block = this.blocks[k];
    const from = at - k * NAME_BLOCK + 1;
    if (block.indexOf(']', from) >= 0) return dims(block, from);
    // Across blocks (whitespace can make a shape any length).
    let text = block.slice(from);
    for (;;) {
      block = this.blocks[++k];
      if (block === undefined) return dims(text, 0);
      const close = block.indexOf(']');
      if (close >= 0) return dims(text + block.slice(0, close + 1), 0);
      text += block;
    }
  }

  // Block k's text, decoded on first use; null when it is not ASCII.
  block(k) {
    const block = this.blocks[k];
    return block === undefined ? this.decodeBlock(k) : block;
  }

  decodeBlock(k) {
    const bytes = this.json.subarray(k * NAME_BLOCK, (k + 1) * NAME_BLOCK);
    if (this.plain) {
      this.escapes[k] = false;
      this.blocks[k] = decodeAscii(bytes);
      return this.blocks[k];
    }
    let block = decodeText(bytes);
    this.escapes[k] = block.includes('\\');
    // Only an ASCII block has string indices equal to byte offsets.
    if (block.length !== bytes.length) block = null;
    this.blocks[k] = block;
    return block;
  }
}

// The dims of a validated shape in `text` from index `from` (after its
// `[`) to its `]`: each is at most 2^53 (wasm refused larger ones), so the
// sums are exact. (The end of the text stops it too: charCodeAt gives NaN.)
function dims(text, from) {
  const out = [];
  let v = -1;
  for (let i = from; ; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      v = v < 0 ? c - 48 : v * 10 + (c - 48);
    } else {
      if (v >= 0) out.push(v);
      v = -1;
      if (c === 93 || Number.isNaN(c)) return out;
    }
  }
}

// The same from the header bytes (for headers that are not all ASCII).
function dimsFromBytes(json, at) {
  const out = [];
  let v = -1;
  for (let i = at + 1; i < json.length; i++) {
    const c = json[i];
    if (c >= 48 && c <= 57) {
      v = v < 0 ? c - 48 : v * 10 + (c - 48);
    } else {
      if (v >= 0) out.push(v);
      v = -1;
      if (c === 93) break;
    }
  }
  return out;
}

// The parsed header, from the numbers of wasm's `open` — the head, (end,
// dtype + SHAPE_FACTOR × shape_start)… and (name_start, name_len)… in
// data-offset order, (key span, value span)… in header order
// (wasm/src/describe.rs; the indices in generated/wire.js), read from
// `nums[at]` on — and the header
// bytes the spans point into. The names are decoded at once, and the head
// and each tensor's first two numbers kept; the rest of the header text is
// kept (as JS strings) for the shapes: the header bytes may be the
// caller's.
class Description {
  constructor(nums, at, json) {
    this.headerSize = nums[at + HEAD_HEADER_LEN];
    const count = nums[at + HEAD_TENSORS];
    const pairs = nums[at + HEAD_PAIRS];
    const spans = at + HEAD_NUMBERS + TENSOR_NUMBERS * count;
    const { array, from } = keep(nums, at, spans - at);
    this.nums = array;
    this.from = from;
    const decoder = new NameDecoder(json, nums[at + HEAD_PLAIN] === 1);
    const names = new Array(count);
    // One plain ASCII block (most headers under 32 KiB): slices of it.
    const block = json.length <= NAME_BLOCK ? decoder.block(0) : null;
    if (block !== null && !decoder.escapes[0]) {
      for (let i = 0, p = spans; i < count; i++, p += SPAN_NUMBERS) {
        const start = nums[p];
        names[i] = block.slice(start, start + nums[p + 1]);
      }
    } else {
      for (let i = 0, p = spans; i < count; i++, p += SPAN_NUMBERS) names[i] = decoder.name(nums[p], nums[p + 1]);
    }
    this.names = names;
    this.index = null;
    if (pairs < 0) {
      this.metadata = null;
    } else {
      const entries = new Array(pairs);
      for (let i = 0, p = spans + SPAN_NUMBERS * count; i < pairs; i++, p += PAIR_NUMBERS) {
        entries[i] = [decoder.name(nums[p], nums[p + 1]), decoder.name(nums[p + 2], nums[p + 3])];
      }
      this.metadata = entries;
    }
    // The shapes are read later from the decoded header text (which the
    // names are slices of anyway) or, when the header is not all ASCII, now
    // from the bytes. Either way the header bytes are let go.
    this.decoder = null;
    this.shapes = null;
    if (decoder.allAscii()) {
      decoder.json = null;
      this.decoder = decoder;
    } else {
      this.shapes = new Array(count);
      for (let i = 0; i < count; i++) this.shapes[i] = dimsFromBytes(json, this.shapeStart(i));
    }
  }

  // Tensor i's (offset order) data offsets: it begins where the one
  // before it ends (the core checked that they tile the byte buffer).
  begin(i) {
    return i === 0 ? 0 : this.end(i - 1);
  }

  end(i) {
    return this.nums[this.from + HEAD_NUMBERS + TENSOR_NUMBERS * i + TENSOR_END];
  }

  // Its dtype's index in DTYPES.
  dtype(i) {
    return this.nums[this.from + HEAD_NUMBERS + TENSOR_NUMBERS * i + TENSOR_DTYPE_SHAPE] % SHAPE_FACTOR;
  }

  // The header offset of its shape's `[`.
  shapeStart(i) {
    return Math.floor(this.nums[this.from + HEAD_NUMBERS + TENSOR_NUMBERS * i + TENSOR_DTYPE_SHAPE] / SHAPE_FACTOR);
  }

  // Its element count: the core checked (end − begin) × 8 = elements × bits.
  elements(i) {
    return ((this.end(i) - this.begin(i)) * 8) / BITS[this.dtype(i)];
  }

  // The shape of tensor i (offset order), a new array.
  shape(i) {
    return this.shapes === null ? this.decoder.shape(this.shapeStart(i)) : this.shapes[i].slice();
  }

  find(name) {
    if (this.index === null) {
      const index = new Map();
      const names = this.names;
      for (let i = 0; i < names.length; i++) index.set(names[i], i);
      this.index = index;
    }
    return this.index.get(name);
  }
}
