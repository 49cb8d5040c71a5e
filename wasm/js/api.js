// The API of the npm package safetensors-nano, over the wasm core.
//
// The wasm side parses and validates headers (only header bytes enter wasm
// memory) and answers in numbers alone: a Float64Array describing the
// header, names as spans of the header bytes this module already holds,
// errors as a kind and its numbers. This module decodes the names, writes
// the error messages, does the I/O (Blob slices, HTTP ranges, shards) and
// builds the JS objects. Tensor data is never copied into wasm memory
// except in bounded decode chunks.

import * as wasm from './safetensors_nano_wasm.js';
import { decodeAscii, decodeText } from './text.js';
import { loadWriter, loadedWriter } from './writer.js';

/** The 22 dtype names, in the core's order (its `Dtype as u8`). */
export const DTYPES = Object.freeze([
  'BOOL', 'F4', 'F6_E2M3', 'F6_E3M2', 'U8', 'I8', 'F8_E5M2', 'F8_E4M3', 'F8_E8M0',
  'F8_E4M3FNUZ', 'F8_E5M2FNUZ', 'I16', 'U16', 'F16', 'BF16', 'I32', 'U32', 'F32',
  'C64', 'F64', 'I64', 'U64',
]);
const BITS = [8, 4, 6, 6, 8, 8, 8, 8, 8, 8, 8, 16, 16, 16, 16, 32, 32, 32, 64, 64, 64, 64];
const DTYPE_INDEX = new Map(DTYPES.map((d, i) => [d, i]));

const F16Array = typeof globalThis.Float16Array === 'function' ? globalThis.Float16Array : Uint16Array;
// Typed array a dtype is viewed as (sub-byte and 8-bit floats: their bytes).
const VIEW = [
  Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array, Int8Array,
  Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array,
  Int16Array, Uint16Array, F16Array, Uint16Array, Int32Array, Uint32Array, Float32Array,
  Float32Array, Float64Array, BigInt64Array, BigUint64Array,
];

// Decode chunk: a multiple of 3 bytes (F6) and of 8 (every element size).
const DECODE_CHUNK = 3 * 65536;
const DEFAULT_READ_CHUNK = 8 * 1024 * 1024;

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

function fail(kind, message, opts) {
  throw new SafeTensorsError(kind, message, opts);
}

// ---- errors from wasm: a kind and its numbers (wasm/src/error.rs) ----

// The core's `Expected` and `Field`, in declaration order.
const EXPECTED = [
  'a JSON value', 'an object', 'an array', 'a string', "':'", "',' or '}'", "',' or ']'",
  'a digit', 'a non-negative integer', 'the end of the header',
];
const FIELD = ['dtype', 'shape', 'data_offsets'];

// Error kinds by the number wasm sends: `kinds!` in wasm/src/error.rs, the
// same names in the same order (a test there reads this list).
const KINDS = Object.freeze([
  // The core's (its `ErrorKind`, in declaration order):
  'HeaderTooSmall', 'HeaderTooLarge', 'InvalidHeaderLength', 'InvalidUtf8',
  'UnexpectedEnd', 'UnexpectedByte', 'InvalidEscape', 'LoneSurrogate',
  'ControlCharacterInString', 'InvalidNumber', 'NestingTooDeep',
  'MetadataNotObject', 'MetadataValueNotString', 'DuplicateMetadata',
  'DuplicateMetadataKey', 'TensorNotObject', 'DtypeNotString', 'UnknownDtype',
  'MissingField', 'DuplicateField', 'DataOffsetsNotPair', 'IntegerTooLarge',
  'DuplicateTensorName', 'CapacityExceeded',
  'InvalidOffset', 'ValidationOverflow', 'MisalignedSlice', 'TensorInvalidInfo',
  'MetadataIncompleteBuffer',
  'DtypeMismatch', 'Misaligned', 'LengthMismatch', 'TooLargeForTarget', 'ReadOutOfRange',
  'Storage',
  'SliceTooManyIndices', 'SliceOutOfRange', 'SliceInvalidRange', 'SliceSubByte',
  'BufferTooSmall', 'ReservedName', 'DataLengthMismatch', 'DataOutOfOrder', 'Sink',
  // This layer's (wasm/src):
  'OffsetTooLarge', 'DimensionTooLarge', 'InvalidArgument',
  // A core kind missing from the list (its tests keep this from shipping):
  'Unlisted',
]);

// The message of each kind, from its numbers (the core's `Display` wording).
const MESSAGES = {
  HeaderTooSmall: ([len]) => `file of ${len} bytes is shorter than the 8-byte length prefix`,
  HeaderTooLarge: ([n, limit]) => `header length ${n} is over the limit of ${limit} bytes`,
  InvalidHeaderLength: ([n, len]) => `header length ${n} does not fit in a file of ${len} bytes`,
  InvalidUtf8: () => 'header is not valid UTF-8',
  UnexpectedEnd: ([e]) => `header ends where ${EXPECTED[e]} was expected`,
  UnexpectedByte: ([b, e]) => `unexpected byte 0x${b.toString(16).padStart(2, '0')} where ${EXPECTED[e]} was expected`,
  InvalidEscape: () => 'invalid escape in string',
  LoneSurrogate: () => '\\u escape of a lone surrogate',
  ControlCharacterInString: () => 'raw control character in string',
  InvalidNumber: () => 'invalid or out-of-range number',
  NestingTooDeep: () => 'arrays and objects nested too deep (limit 128)',
  MetadataNotObject: () => '__metadata__ is not an object or null',
  MetadataValueNotString: () => '__metadata__ value is not a string',
  DuplicateMetadata: () => '__metadata__ appears twice',
  DuplicateMetadataKey: () => 'metadata key appears twice',
  TensorNotObject: () => 'tensor entry is not an object',
  DtypeNotString: () => 'dtype is not a string',
  UnknownDtype: () => 'unknown dtype',
  MissingField: ([f]) => `missing field "${FIELD[f]}"`,
  DuplicateField: ([f]) => `field "${FIELD[f]}" appears twice`,
  DataOffsetsNotPair: ([n]) => `data_offsets holds ${n}${n >= 3 ? ' or more' : ''} integers, not 2`,
  IntegerTooLarge: () => 'integer larger than 2^64-1',
  DuplicateTensorName: () => 'tensor name appears twice',
  CapacityExceeded: ([cap, need]) => `table of ${cap} slots is too small: this header needs ${need}`,
  InvalidOffset: ([at, begin, end]) => `data_offsets [${begin}, ${end}] do not continue at ${at}`,
  ValidationOverflow: () => 'element or bit count overflows 64 bits',
  MisalignedSlice: ([n]) => `${n} sub-byte elements are not a whole number of bytes`,
  TensorInvalidInfo: ([want, found]) => `data_offsets span ${found} bytes but shape and dtype need ${want}`,
  MetadataIncompleteBuffer: ([want, found]) => `byte buffer is ${found} bytes but the header describes ${want}`,
  DtypeMismatch: ([d]) => `tensor has dtype ${DTYPES[d]}, not the one asked for`,
  LengthMismatch: ([want, found]) => `buffer of ${found} elements where ${want} are needed`,
  BufferTooSmall: ([need, have]) => `output buffer of ${have} bytes is too small: ${need} needed`,
  ReservedName: () => 'a tensor may not be named __metadata__',
  DataLengthMismatch: ([want, found]) => `tensor data is ${found} bytes but shape and dtype need ${want}`,
  // This layer's (wasm/src):
  OffsetTooLarge: ([end]) => `tensor ends at file byte ${end}, above 2^53 where JS numbers stop being exact`,
  DimensionTooLarge: ([d]) => `dimension ${d} is above 2^53, where JS numbers stop being exact`,
  InvalidArgument: () => 'malformed write plan',
};

const utf8 = new TextDecoder();

// Reads the error numbers of a wasm call: [-1, offset, tensor_start,
// tensor_len, tensor_index, (hi, lo) × 3, kind number]. `json` holds
// the header the spans point into; `names` resolves a tensor index (writer
// errors) to the caller's name.
function wasmError(nums, json, names) {
  const kind = KINDS[nums[11]] ?? 'Unlisted';
  const fields = [];
  for (let i = 5; i < 11; i += 2) {
    const [hi, lo] = [nums[i], nums[i + 1]];
    fields.push(hi < 2 ** 21 ? hi * 2 ** 32 + lo : (BigInt(hi) << 32n) | BigInt(lo));
  }
  let tensor = null;
  if (nums[2] >= 0 && json !== undefined) {
    const raw = utf8.decode(json.subarray(nums[2], nums[2] + nums[3]));
    try {
      tensor = raw.includes('\\') ? JSON.parse(`"${raw}"`) : raw;
    } catch {
      tensor = raw;
    }
  } else if (nums[4] >= 0 && names !== undefined) {
    tensor = names(nums[4]);
  }
  const message = MESSAGES[kind]?.(fields) ?? kind;
  return new SafeTensorsError(kind, message, { offset: nums[1] < 0 ? null : nums[1], tensor });
}

// The numbers of wasm's last `open` are read where they are, in wasm
// memory: only the part a description keeps is copied out, into a shared
// slab (a typed array costs about half a microsecond to make, outside the
// JS heap, plus about 2 ns a number). A description keeps its slab alive
// (32 KiB at most), so only small ones (up to 8 KiB, ~500 tensors) share.
const SLAB_NUMBERS = 4096;
let slab = new Float64Array(0);
let slabUsed = 0;

// wasm memory as numbers; a new view after the memory grew (which
// detaches the old one's buffer, leaving it empty).
let memoryNumbers = new Float64Array(0);

function wasmNumbers() {
  if (memoryNumbers.length === 0) memoryNumbers = new Float64Array(wasmMemory().buffer);
  return memoryNumbers;
}

// The reader module's memory. (Once the entry has instantiated the module,
// initSync only returns its exports.)
function wasmMemory() {
  return wasm.initSync().memory;
}

// A copy of `nums[at..at + n)` that lasts: its array (shared or, when
// large, its own) and where the copy starts in it.
function keep(nums, at, n) {
  const part = nums.subarray(at, at + n);
  if (n > SLAB_NUMBERS / 4) return { array: part.slice(), from: 0 };
  if (slabUsed + n > slab.length) {
    slab = new Float64Array(SLAB_NUMBERS);
    slabUsed = 0;
  }
  slab.set(part, slabUsed);
  slabUsed += n;
  return { array: slab, from: slabUsed - n };
}

// One wasm `open` call: a parsed header, or the bytes still needed.
function openPrefix(prefix, fileSize) {
  // Shared memory can change under us between the parse and the name
  // decoding: read a private copy of the header (it is small).
  if (typeof SharedArrayBuffer === 'function' && prefix.buffer instanceof SharedArrayBuffer) prefix = prefix.slice();
  // The size as two 32-bit halves (a number or, from HTTP, a BigInt).
  const [hi, lo] = typeof fileSize === 'bigint'
    ? [Number(fileSize >> 32n), Number(fileSize & 0xffffffffn)]
    : [Math.floor(fileSize / 2 ** 32), fileSize % 2 ** 32];
  // (Read before any other wasm call: the next one replaces them.)
  const at = wasm.open(prefix, hi, lo) / 8;
  const nums = wasmNumbers();
  const status = nums[at];
  if (status > 0) return status;
  if (status < 0) throw wasmError(nums.subarray(at), prefix.subarray(8));
  return new Description(nums, at, prefix.subarray(8, 8 + nums[at + 1]));
}

function u8(buf) {
  if (buf instanceof Uint8Array) return buf;
  if (buf instanceof ArrayBuffer || (typeof SharedArrayBuffer === 'function' && buf instanceof SharedArrayBuffer)) {
    return new Uint8Array(buf);
  }
  if (ArrayBuffer.isView(buf)) return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  throw new TypeError('expected an ArrayBuffer or a typed array');
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
      if (c === 93 || c !== c) return out;
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

// The description's layout (wasm/src/describe.rs: HEAD).
const HEAD_NUMBERS = 5;

// The parsed header, from the numbers of wasm's `open` — `[0, N, count,
// pairs, plain, (end, dtype + 32 × shape_start)… and (name_start,
// name_len)… in data-offset order, (key span, value span)… in header
// order]` (wasm/src/describe.rs), read from `nums[at]` on — and the header
// bytes the spans point into. The names are decoded at once, and the head
// and each tensor's first two numbers kept; the rest of the header text is
// kept (as JS strings) for the shapes: the header bytes may be the
// caller's.
class Description {
  constructor(nums, at, json) {
    this.headerSize = nums[at + 1];
    const count = nums[at + 2];
    const pairs = nums[at + 3];
    const spans = at + HEAD_NUMBERS + 2 * count;
    const { array, from } = keep(nums, at, spans - at);
    this.nums = array;
    this.from = from;
    const decoder = new NameDecoder(json, nums[at + 4] === 1);
    const names = new Array(count);
    // One plain ASCII block (most headers under 32 KiB): slices of it.
    const block = json.length <= NAME_BLOCK ? decoder.block(0) : null;
    if (block !== null && !decoder.escapes[0]) {
      for (let i = 0, p = spans; i < count; i++, p += 2) {
        const start = nums[p];
        names[i] = block.slice(start, start + nums[p + 1]);
      }
    } else {
      for (let i = 0, p = spans; i < count; i++, p += 2) names[i] = decoder.name(nums[p], nums[p + 1]);
    }
    this.names = names;
    this.index = null;
    if (pairs < 0) {
      this.metadata = null;
    } else {
      const entries = new Array(pairs);
      for (let i = 0, p = spans + 2 * count; i < pairs; i++, p += 4) {
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
    return this.nums[this.from + HEAD_NUMBERS + 2 * i];
  }

  // Its dtype's index in DTYPES.
  dtype(i) {
    return this.nums[this.from + HEAD_NUMBERS + 2 * i + 1] % 32;
  }

  // The header offset of its shape's `[`.
  shapeStart(i) {
    return Math.floor(this.nums[this.from + HEAD_NUMBERS + 2 * i + 1] / 32);
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

// Where the bytes come from.
class BytesSource {
  constructor(bytes) {
    this.bytes = bytes;
    this.size = bytes.byteLength;
    this.bytesRead = bytes.byteLength;
  }
  async read(start, end) {
    return this.bytes.subarray(start, end);
  }
}

class BlobSource {
  constructor(blob) {
    this.blob = blob;
    this.size = blob.size;
    this.bytesRead = 0;
    this.bytes = null;
  }
  async read(start, end, signal) {
    signal?.throwIfAborted();
    const buf = await this.blob.slice(start, end).arrayBuffer();
    signal?.throwIfAborted();
    if (buf.byteLength !== end - start) {
      fail('ReadFailed', `read ${buf.byteLength} bytes of ${end - start} at file byte ${start}: the file changed`);
    }
    this.bytesRead += buf.byteLength;
    return new Uint8Array(buf);
  }
}

function withRange(headers, start, end) {
  const h = new Headers(headers);
  h.set('Range', `bytes=${start}-${end - 1}`);
  return h;
}

function parseContentRange(value) {
  const m = /^\s*bytes\s+(?:(\d+)-(\d+)|\*)\/(\d+|\*)\s*$/i.exec(value ?? '');
  if (!m) return null;
  return {
    start: m[1] === undefined ? null : Number(m[1]),
    end: m[2] === undefined ? null : Number(m[2]) + 1,
    total: m[3] === '*' ? null : BigInt(m[3]),
  };
}

async function body(res, signal) {
  const buf = new Uint8Array(await res.arrayBuffer());
  signal?.throwIfAborted();
  return buf;
}

function httpError(res, url) {
  return new SafeTensorsError('Http', `HTTP ${res.status} ${res.statusText} for ${url}`);
}

class UrlSource {
  constructor(url, headers, fetchFn) {
    this.url = url;
    this.headers = headers;
    this.fetch = fetchFn;
    this.size = 0;
    this.bytesRead = 0;
    this.bytes = null; // set when the server sent the whole file
    this.validator = null;
    this.total = null;
  }

  // Only a Range header is added: it is CORS-safelisted, so cross-origin
  // reads need no preflight. A changed file is detected from the answers.
  async get(start, end, signal) {
    const fetchFn = this.fetch; // called without a receiver: window.fetch insists
    return fetchFn(this.url, { headers: withRange(this.headers, start, end), signal });
  }

  // First request: a speculative prefix; learns the size, or the whole body.
  async first(want, signal) {
    const res = await this.get(0, want, signal);
    if (res.status === 206) {
      const range = parseContentRange(res.headers.get('Content-Range'));
      if (range === null || range.total === null || range.start !== 0) {
        fail('Http', `unusable Content-Range ${JSON.stringify(res.headers.get('Content-Range'))} from ${this.url}`);
      }
      this.validator = res.headers.get('ETag') ?? res.headers.get('Last-Modified');
      this.total = range.total;
      const bytes = await body(res, signal);
      this.bytesRead += bytes.byteLength;
      return { prefix: bytes, total: range.total };
    }
    if (res.status === 200) {
      const bytes = await body(res, signal);
      this.bytesRead += bytes.byteLength;
      this.bytes = bytes;
      this.size = bytes.byteLength;
      return { prefix: bytes, total: BigInt(bytes.byteLength) };
    }
    if (res.status === 416) {
      const range = parseContentRange(res.headers.get('Content-Range'));
      if (range !== null && range.total !== null) {
        await res.body?.cancel();
        return { prefix: new Uint8Array(0), total: range.total };
      }
    }
    await res.body?.cancel();
    throw httpError(res, this.url);
  }

  async read(start, end, signal) {
    if (this.bytes !== null) return this.bytes.subarray(start, end);
    if (end <= start) return new Uint8Array(0);
    const res = await this.get(start, end, signal);
    if (res.status === 206) {
      const range = parseContentRange(res.headers.get('Content-Range'));
      const bytes = await body(res, signal);
      this.bytesRead += bytes.byteLength;
      const etag = res.headers.get('ETag') ?? res.headers.get('Last-Modified');
      const resized = range !== null && range.total !== null && range.total !== this.total;
      if (resized || (etag !== null && this.validator !== null && etag !== this.validator)) {
        fail('ReadFailed', `${this.url} changed since it was opened`);
      }
      if (range === null || range.start !== start || bytes.byteLength !== end - start) {
        fail('Http', `server sent bytes ${res.headers.get('Content-Range')} for ${start}-${end - 1} of ${this.url}`);
      }
      return bytes;
    }
    if (res.status === 200) {
      // The server stopped honouring ranges (or the file changed: If-Range).
      const bytes = await body(res, signal);
      this.bytesRead += bytes.byteLength;
      if (bytes.byteLength !== this.size) {
        fail('ReadFailed', `${this.url} changed: now ${bytes.byteLength} bytes, was ${this.size}`);
      }
      this.bytes = bytes;
      return bytes.subarray(start, end);
    }
    await res.body?.cancel();
    throw httpError(res, this.url);
  }
}

function concat(a, b) {
  const out = new Uint8Array(a.byteLength + b.byteLength);
  out.set(a, 0);
  out.set(b, a.byteLength);
  return out;
}

// Opens a header from a source that reads ranges: 8 bytes, then the rest.
async function openLazy(source, prefix, total, signal) {
  for (;;) {
    const r = openPrefix(prefix, total);
    if (typeof r !== 'number') return r;
    // r ≤ 8 + HEADER_LIMIT here: wasm checked the limit and the file size.
    prefix = concat(prefix, await source.read(prefix.byteLength, r, signal));
  }
}

function dtypeIndex(dtype) {
  const d = DTYPE_INDEX.get(dtype);
  if (d === undefined) fail('UnknownDtype', `unknown dtype ${JSON.stringify(dtype)}`);
  return d;
}

// Decodes `src` (whole elements of dtype index d) into out[at…] through wasm,
// DECODE_CHUNK bytes at a time; returns the next free index of `out`. Calls
// wasm at least once, so a dtype that does not decode is an error even for
// empty data.
function decodeInto(d, src, out, at) {
  let pos = 0;
  do {
    const n = wasm.decode(d, src.subarray(pos, pos + DECODE_CHUNK), out, at);
    // (An error: its numbers, read in place as open's.)
    if (n < 0) throw wasmError(wasmNumbers().subarray(-n / 8));
    at += n;
    pos += DECODE_CHUNK;
  } while (pos < src.byteLength);
  return at;
}

/**
 * Decodes whole elements of a float dtype to f32, exactly as the core does,
 * through wasm in bounded chunks. `out` (optional) must have one slot per element.
 */
export function decodeFloat32(dtype, bytes, out) {
  const d = dtypeIndex(dtype);
  const src = u8(bytes);
  const elements = (src.byteLength * 8) / BITS[d];
  if (!Number.isInteger(elements)) {
    decodeInto(d, src.subarray(0, 0), new Float32Array(0), 0); // a non-float dtype fails first
    fail('DataLengthMismatch', `${src.byteLength} bytes are not a whole number of ${dtype} elements`);
  }
  if (out === undefined) out = new Float32Array(elements);
  else if (!(out instanceof Float32Array) || out.length !== elements) {
    fail('LengthMismatch', `output of ${out?.length} floats where ${elements} are needed`);
  }
  // wasm writes through a plain view of the caller's memory: a subclass's
  // own `set`, or a detached buffer, never runs or throws inside wasm.
  let view;
  try {
    view = new Float32Array(out.buffer, out.byteOffset, out.length);
  } catch (e) {
    fail('InvalidArgument', 'the output array cannot be written (its buffer was detached)', { cause: e });
  }
  decodeInto(d, src, view, 0);
  return out;
}

// One tensor of an opened file (the Tensor interface of index.d.ts).
class Tensor {
  #file;
  constructor(file, name, dtype, shape, begin, end, elements) {
    this.#file = file;
    this.name = name;
    this.dtype = dtype;
    this.shape = shape;
    this.byteOffset = file.dataOffset + begin;
    this.byteLength = end - begin;
    this.elementCount = elements;
  }

  /** [begin, end] relative to the data buffer, as in the header. */
  get dataOffsets() {
    const begin = this.byteOffset - this.#file.dataOffset;
    return [begin, begin + this.byteLength];
  }

  #inMemory() {
    const bytes = this.#file._source.bytes;
    if (bytes === null) {
      fail('NotInMemory', 'this file is read lazily: use read() or readFloat32()', { tensor: this.name });
    }
    return bytes;
  }

  /** The tensor's bytes: a zero-copy view into the file's buffer. */
  bytes() {
    const bytes = this.#inMemory();
    return new Uint8Array(bytes.buffer, bytes.byteOffset + this.byteOffset, this.byteLength);
  }

  /** A zero-copy typed view, or null when the data is not aligned for it. */
  view() {
    const bytes = this.#inMemory();
    const Ctor = VIEW[DTYPE_INDEX.get(this.dtype)];
    const start = bytes.byteOffset + this.byteOffset;
    if (start % Ctor.BYTES_PER_ELEMENT !== 0) return null;
    return new Ctor(bytes.buffer, start, this.byteLength / Ctor.BYTES_PER_ELEMENT);
  }

  /** Decodes a float tensor to a new Float32Array (in-memory files). */
  toFloat32() {
    return decodeFloat32(this.dtype, this.bytes());
  }

  /** Reads the tensor's bytes from any source. */
  async read({ signal } = {}) {
    const src = this.#file._source;
    return src.read(this.byteOffset, this.byteOffset + this.byteLength, signal);
  }

  /** Reads and decodes a float tensor in chunks, from any source. */
  async readFloat32({ signal, onProgress, chunkBytes = DEFAULT_READ_CHUNK } = {}) {
    const d = dtypeIndex(this.dtype);
    const src = this.#file._source;
    const out = new Float32Array(this.elementCount);
    // Whole elements per chunk: a multiple of 24 bytes (3 for F6, 8 for F64).
    const step = Math.max(24, chunkBytes - (chunkBytes % 24));
    const total = this.byteLength;
    let at = 0;
    let done = 0;
    onProgress?.(0, total);
    do {
      const end = Math.min(total, done + step);
      const bytes = end > done ? await src.read(this.byteOffset + done, this.byteOffset + end, signal) : new Uint8Array(0);
      at = decodeInto(d, bytes, out, at);
      done = end;
      if (end > 0) onProgress?.(done, total);
    } while (done < total);
    return out;
  }
}

function emptyCount() {
  return { total: 0, byDtype: {} };
}

function addCount(count, dtype, n) {
  count.total += n;
  count.byDtype[dtype] = (count.byDtype[dtype] ?? 0) + n;
}

/** An opened safetensors file (see index.d.ts). */
export class SafeTensors {
  #desc;
  #tensors = null;
  #metadata = undefined;

  /** @internal Use the static constructors. */
  constructor(desc, source, fileSize) {
    this.#desc = desc;
    this._source = source;
    this.headerSize = desc.headerSize;
    this.dataOffset = desc.headerSize + 8;
    // ≤ 2^53: wasm rejected any tensor ending above (and R13 ties the size to the last end).
    this.fileSize = Number(fileSize);
  }

  /** Bytes read from the source so far (the whole input for fromBytes). */
  get bytesRead() {
    return this._source.bytesRead;
  }

  /** Opens a whole file in memory; validates the header and the length. */
  static fromBytes(buf) {
    const bytes = u8(buf);
    const size = bytes.byteLength;
    let r = openPrefix(bytes.subarray(0, 8), size);
    if (typeof r === 'number') r = openPrefix(bytes.subarray(0, r), size);
    return new SafeTensors(r, new BytesSource(bytes), size);
  }

  /**
   * Opens from the header bytes alone (at least the first 8 + N bytes of a
   * file of `fileSize` bytes). Tensors have no data source.
   */
  static fromHeader(prefix, fileSize) {
    if (typeof fileSize === 'bigint' ? fileSize < 0n || fileSize >= 2n ** 64n : !(Number.isSafeInteger(fileSize) && fileSize >= 0)) {
      throw new TypeError('fileSize: expected a non-negative integer (a number up to 2^53, or a bigint)');
    }
    const r = openPrefix(u8(prefix), fileSize);
    if (typeof r === 'number') {
      fail('HeaderIncomplete', `the first ${r} bytes of the file are needed, ${u8(prefix).byteLength} were given`);
    }
    return new SafeTensors(r, new NoSource(), fileSize);
  }

  /** Opens a Blob or File lazily: reads 8 bytes, then the header. */
  static async fromBlob(blob, { signal } = {}) {
    const source = new BlobSource(blob);
    const first = blob.size >= 8 ? await source.read(0, 8, signal) : new Uint8Array(0);
    const desc = await openLazy(source, first, blob.size, signal);
    return new SafeTensors(desc, source, blob.size);
  }

  /**
   * Opens a URL with HTTP Range requests (a server that ignores them and
   * answers 200 gets the whole body read). `prefetch` is the size of the
   * first request (default 64 KiB).
   */
  static async fromUrl(url, { headers, signal, prefetch = 65536, fetch: fetchFn = globalThis.fetch } = {}) {
    const source = new UrlSource(String(url), headers, fetchFn);
    const { prefix, total } = await source.first(Math.max(8, prefetch), signal);
    const desc = await openLazy(source, prefix, total, signal);
    // total ≤ 2^53 here: wasm rejected any tensor ending above.
    source.size = Number(total);
    return new SafeTensors(desc, source, Number(total));
  }

  /** Tensor names in data-offset order. */
  names() {
    return this.#desc.names.slice();
  }

  /** The `__metadata__` map, or null when the header has none. */
  metadata() {
    if (this.#metadata === undefined) {
      const m = this.#desc.metadata;
      this.#metadata = m === null ? null : Object.fromEntries(m);
    }
    return this.#metadata === null ? null : { ...this.#metadata };
  }

  #make(i) {
    const d = this.#desc;
    return new Tensor(this, d.names[i], DTYPES[d.dtype(i)], d.shape(i), d.begin(i), d.end(i), d.elements(i));
  }

  /** The tensor with this name, or undefined. */
  tensor(name) {
    const i = this.#desc.find(name);
    if (i === undefined) return undefined;
    if (this.#tensors !== null) return this.#tensors[i];
    return this.#make(i);
  }

  /** Every tensor, in data-offset order. */
  tensors() {
    if (this.#tensors === null) {
      const n = this.#desc.names.length;
      const all = new Array(n);
      for (let i = 0; i < n; i++) all[i] = this.#make(i);
      this.#tensors = all;
    }
    return this.#tensors.slice();
  }

  /** Element counts: the total and per dtype. */
  parameterCount() {
    const count = emptyCount();
    const d = this.#desc;
    for (let i = 0; i < d.names.length; i++) addCount(count, DTYPES[d.dtype(i)], d.elements(i));
    return count;
  }

  get length() {
    return this.#desc.names.length;
  }
}

class NoSource {
  constructor() {
    this.bytes = null;
    this.bytesRead = 0;
  }
  async read() {
    fail('NoSource', 'opened from header bytes only: there is no data to read');
  }
}

// ---- writing ----

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
  return fail('InvalidArgument', message, { tensor });
}

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
  const nums = [entries.length, 0, 0];
  const text = []; // UTF-8 of the names, keys and values
  const datas = new Array(entries.length);
  for (let i = 0; i < entries.length; i++) {
    const [name, t] = entries[i];
    if (typeof name !== 'string') invalid('tensor names must be strings');
    if (t === null || typeof t !== 'object') invalid('expected { dtype, shape, data }', name);
    const d = DTYPE_INDEX.get(t.dtype);
    if (d === undefined) fail('UnknownDtype', `unknown dtype ${JSON.stringify(t.dtype)}`, { tensor: name });
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
    const nameBytes = utf8Encoder.encode(name);
    text.push(nameBytes);
    nums.push(d, nameBytes.byteLength, data.byteLength, t.shape.length, ...t.shape);
  }
  if (metadata !== undefined && metadata !== null) {
    if (typeof metadata !== 'object') invalid('metadata must be an object of strings');
    const pairs = Object.entries(metadata);
    nums[1] = 1;
    nums[2] = pairs.length;
    for (const [k, v] of pairs) {
      if (typeof v !== 'string') invalid(`metadata value of ${JSON.stringify(k)} is not a string`);
      const kv = [utf8Encoder.encode(k), utf8Encoder.encode(v)];
      text.push(...kv);
      nums.push(kv[0].byteLength, kv[1].byteLength);
    }
  }
  const plan = writer.plan(new Float64Array(nums), concatAll(text));
  // Writer errors name the tensor by its position in the caller's list.
  if (plan[0] < 0) throw wasmError(plan, undefined, (i) => entries[i][0]);
  const header = writer.take_bytes();
  const out = new Uint8Array(plan[1]);
  out.set(header, 0);
  const start = header.byteLength;
  for (let p = 2; p < plan.length; p += 2) out.set(datas[plan[p]], start + plan[p + 1]);
  return out;
}

// The writer's module, or a WriterUnavailable error saying why it did not load.
async function writerOrFail() {
  try {
    return await loadWriter();
  } catch (e) {
    fail('WriterUnavailable', `the writer's wasm module could not be loaded: ${e?.message ?? e}`, { cause: e });
  }
}

/** Bytes of the reader module's wasm memory grown so far (a diagnostic: tensor data never enters it). */
export function wasmMemoryBytes() {
  return wasmMemory().buffer.byteLength;
}

// ---- sharded models ----

async function readIndex(index, signal, fetchFn, headers) {
  if (typeof Blob !== 'undefined' && index instanceof Blob) {
    return { json: parseIndexText(await index.text()), base: null };
  }
  if (typeof index === 'string' || index instanceof URL) {
    const s = String(index);
    if (s.trimStart().startsWith('{')) return { json: parseIndexText(s), base: null };
    const res = await fetchFn(s, { headers, signal });
    if (!res.ok) throw httpError(res, s);
    return { json: parseIndexText(await res.text()), base: s };
  }
  if (index !== null && typeof index === 'object') return { json: index, base: null };
  throw new TypeError('index: expected a Blob, a URL, JSON text or an object');
}

function parseIndexText(text) {
  try {
    return JSON.parse(text);
  } catch (e) {
    return fail('IndexInvalid', `index is not JSON: ${e.message}`, { cause: e });
  }
}

function baseName(s) {
  const path = s.split(/[?#]/)[0];
  return decodeURIComponent(path.slice(path.lastIndexOf('/') + 1));
}

/** A model split into shards, one namespace over all (see index.d.ts). */
export class ShardedModel {
  #where;
  constructor(index, shards, where) {
    this.index = index;
    this.shards = shards;
    this.#where = where;
  }

  names() {
    return [...this.#where.keys()];
  }

  tensor(name) {
    const file = this.#where.get(name);
    return file === undefined ? undefined : file.tensor(name);
  }

  tensors() {
    return this.shards.flatMap((s) => s.file.tensors());
  }

  metadata() {
    const m = this.index.metadata;
    return m === undefined || m === null ? null : { ...m };
  }

  parameterCount() {
    const count = emptyCount();
    for (const s of this.shards) {
      const c = s.file.parameterCount();
      for (const [d, n] of Object.entries(c.byDtype)) addCount(count, d, n);
    }
    return count;
  }

  get bytesRead() {
    return this.shards.reduce((n, s) => n + s.file.bytesRead, 0);
  }
}

/**
 * Opens a sharded model: `index` is model.safetensors.index.json (a Blob, a
 * URL, its text or the parsed object); `shards` are the shard files (Files,
 * Blobs or URLs), matched to the index by name. With a URL index and no
 * shards, the shards are fetched from beside it. The index must agree with
 * the shard headers exactly.
 */
export async function openSharded(index, shards = [], { headers, signal, fetch: fetchFn = globalThis.fetch } = {}) {
  const { json, base } = await readIndex(index, signal, fetchFn, headers);
  const map = json?.weight_map;
  if (map === null || typeof map !== 'object' || Array.isArray(map)) {
    fail('IndexInvalid', 'index has no "weight_map" object');
  }
  const wanted = new Map(); // shard file name → tensor names the index puts there
  for (const [name, file] of Object.entries(map)) {
    if (typeof file !== 'string') fail('IndexInvalid', 'weight_map value is not a string', { tensor: name });
    if (!wanted.has(file)) wanted.set(file, []);
    wanted.get(file).push(name);
  }
  const given = new Map();
  for (const s of shards) {
    const name = typeof s === 'string' || s instanceof URL ? baseName(String(s)) : s.name;
    if (typeof name !== 'string' || name === '') {
      fail('IndexInvalid', 'a shard given as a Blob needs a name (use a File)');
    }
    if (given.has(name)) fail('IndexMismatch', `shard ${name} is given twice`);
    given.set(name, s);
  }
  const files = [...wanted.keys()].sort();
  for (const f of files) {
    if (given.has(f)) continue;
    if (base !== null) given.set(f, new URL(f, base).href);
    else fail('ShardMissing', `shard ${f} named by the index was not given`);
  }
  for (const name of given.keys()) {
    if (!wanted.has(name)) fail('IndexMismatch', `shard ${name} is not named by the index`);
  }
  const opened = await Promise.all(
    files.map(async (f) => {
      const s = given.get(f);
      try {
        const file =
          typeof s === 'string' || s instanceof URL
            ? await SafeTensors.fromUrl(s, { headers, signal, fetch: fetchFn })
            : await SafeTensors.fromBlob(s, { signal });
        return { name: f, file };
      } catch (e) {
        if (e instanceof SafeTensorsError) e.message = `${f}: ${e.message}`;
        throw e;
      }
    }),
  );
  const where = new Map();
  let total = 0;
  for (const { name: f, file } of opened) {
    for (const t of file.tensors()) {
      if (where.has(t.name)) fail('DuplicateTensorName', `tensor in two shards`, { tensor: t.name });
      if (map[t.name] !== f) {
        fail(
          'IndexMismatch',
          Object.hasOwn(map, t.name) ? `the index puts it in ${map[t.name]}, it is in ${f}` : `in ${f} but not in the index`,
          { tensor: t.name },
        );
      }
      where.set(t.name, file);
      total += t.byteLength;
    }
  }
  for (const name of Object.keys(map)) {
    if (!where.has(name)) fail('IndexMismatch', `the index puts it in ${map[name]}, which has no such tensor`, { tensor: name });
  }
  const declared = json.metadata?.total_size;
  if (declared !== undefined && declared !== null && Number(declared) !== total) {
    fail('IndexMismatch', `index metadata total_size is ${declared}, the shards hold ${total} bytes of tensors`);
  }
  return new ShardedModel(json, opened, where);
}
