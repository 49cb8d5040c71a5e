// One tensor of an opened file, and decoding float dtypes to f32 through
// wasm in bounded chunks (only a chunk at a time enters wasm memory).

import { reader as wasm } from '../runtime/reader-exports.js';
import { BITS, DTYPE_INDEX, VIEW } from '../format/dtypes.js';
import { KIND, fail, wasmError } from '../errors/safetensors-error.js';
import { allocate, onRenew } from '../runtime/wasm-guard.js';
import { requireReader } from '../runtime/load-wasm.js';
import { planReads, planSlice } from './tensor-slice.js';
import { BlobSource, UrlSource } from './byte-sources.js';
import { u8, wasmMemory, wasmNumbers } from '../runtime/wire-numbers.js';

// Source bytes read per step by default (readFloat32, serializeStream); a
// multiple of 24, so every step is whole elements of every dtype (3 bytes
// for four F6, 8 for one F64).
const DEFAULT_READ_CHUNK = 8 * 1024 * 1024;

/** `chunkBytes` as a read step: whole elements of every dtype (a multiple of 24). */
export function readStep(chunkBytes = DEFAULT_READ_CHUNK) {
  if (!(Number.isSafeInteger(chunkBytes) && chunkBytes > 0))
    throw new TypeError('chunkBytes: expected a positive integer (bytes)');
  return Math.max(24, chunkBytes - (chunkBytes % 24));
}
const F32 = DTYPE_INDEX.get('F32');

/** The index of a dtype name in DTYPES; UnknownDtype for any other value. */
export function dtypeIndex(dtype) {
  const d = DTYPE_INDEX.get(dtype);
  if (d === undefined) fail(KIND.UnknownDtype, `unknown dtype ${JSON.stringify(dtype)}`);
  return d;
}

// Decoding goes through a fixed room in wasm memory: JS copies a chunk's
// bytes into its input, wasm decodes them into its output, and JS copies
// the values out into the caller's array. The copies take most of the
// time, and a long copy costs less per byte than many short ones: chunks
// are large (1 MiB of output), yet the room (1.5 MiB) stays in the CPU's
// outer caches between the steps.
const CHUNK_ELEMENTS = 262144;
const INPUT_BYTES = 524288;
// Bytes of one chunk per dtype: CHUNK_ELEMENTS elements, fewer for F64
// (whole elements: a multiple of 4 elements, 3 bytes for F6).
const CHUNK_BYTES = BITS.map((bits) => (Math.min(CHUNK_ELEMENTS, (INPUT_BYTES * 8) / bits) * bits) / 8);
let roomAt = -1;
// Views of the room; empty after the memory grew (its old buffer detached).
let input = new Uint8Array(0);
let output = new Float32Array(0);
onRenew(() => {
  roomAt = -1;
  input = new Uint8Array(0);
  output = new Float32Array(0);
});

function takeRoom() {
  if (roomAt < 0) roomAt = wasm.decode_room(INPUT_BYTES, CHUNK_ELEMENTS);
  const memory = wasmMemory().buffer;
  input = new Uint8Array(memory, roomAt, INPUT_BYTES);
  output = new Float32Array(memory, roomAt + INPUT_BYTES, CHUNK_ELEMENTS);
}

// Decodes `src` (whole elements of dtype index d) into out[at…] through wasm,
// a chunk at a time; returns the next free index of `out`. Calls wasm at
// least once, so a dtype that does not decode is an error even for empty
// data. F32 is a byte copy (as the core's decode is).
function decodeInto(d, src, out, at) {
  if (d === F32) {
    new Uint8Array(out.buffer, out.byteOffset + at * 4, src.byteLength).set(src);
    return at + src.byteLength / 4;
  }
  const chunk = CHUNK_BYTES[d];
  let pos = 0;
  do {
    const part = src.subarray(pos, pos + chunk);
    if (input.length === 0) takeRoom();
    input.set(part);
    const n = wasm.decode(d, part.byteLength);
    // (An error: its numbers, read in place as open's.)
    if (n < 0) throw wasmError(wasmNumbers().subarray(-n / 8));
    out.set(n === CHUNK_ELEMENTS ? output : output.subarray(0, n), at);
    at += n;
    pos += chunk;
  } while (pos < src.byteLength);
  return at;
}

/**
 * Decodes whole elements of a float dtype to f32, exactly as the core does,
 * through wasm in bounded chunks. `out` (optional) must have one slot per element.
 */
export function decodeFloat32(dtype, bytes, out) {
  const d = dtypeIndex(dtype);
  requireReader();
  const src = u8(bytes);
  const elements = (src.byteLength * 8) / BITS[d];
  if (!Number.isInteger(elements)) {
    decodeInto(d, src.subarray(0, 0), new Float32Array(0), 0); // a non-float dtype fails first
    fail(KIND.DataLengthMismatch, `${src.byteLength} bytes are not a whole number of ${dtype} elements`);
  }
  if (out === undefined) out = allocate(Float32Array, elements, `${elements} ${dtype} values as f32`);
  decodeInto(d, src, writableOutput(out, elements, {}), 0);
  return out;
}

// One tensor of an opened file (the Tensor interface of index.d.ts).
export class Tensor {
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

  /** @internal The file's Source: the webgpu entry streams ranges of the tensor through it. */
  get _source() {
    return this.#file._source;
  }

  /**
   * [begin, end] relative to the data buffer, as in the header.
   * @returns {[number, number]}
   */
  get dataOffsets() {
    const begin = this.byteOffset - this.#file.dataOffset;
    return [begin, begin + this.byteLength];
  }

  #inMemory() {
    const bytes = this.#file._source.bytes;
    if (bytes === null) {
      fail(KIND.NotInMemory, 'this file is read lazily: use read() or readFloat32()', { tensor: this.name });
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

  /** @internal Bytes [start, end) of the tensor's data (write/serialize-stream.js reads tensors in chunks). */
  _readRange(start, end, signal) {
    return this.#file._source.read(this.byteOffset + start, this.byteOffset + end, signal);
  }

  /**
   * Reads and decodes a float tensor in chunks, from any source, into a new
   * Float32Array or the caller's `out`. Chunks are pipelined: the next one
   * is read while the previous one decodes. A Blob is read through its
   * stream, which runs on into the next tensor when tensors are read in
   * offset order.
   */
  async readFloat32({ signal, onProgress, chunkBytes, out } = {}) {
    const d = dtypeIndex(this.dtype);
    const step = readStep(chunkBytes);
    // A dtype that does not decode fails here, before anything is read.
    decodeInto(d, new Uint8Array(0), new Float32Array(0), 0);
    const result =
      out === undefined ? allocate(Float32Array, this.elementCount, 'the tensor as f32', { tensor: this.name }) : out;
    const values = out === undefined ? result : writableOutput(out, this.elementCount, { tensor: this.name });
    signal?.throwIfAborted();
    const total = this.byteLength;
    onProgress?.(0, total);
    const source = this.#file._source;
    const [start, end] = [this.byteOffset, this.byteOffset + total];
    if (source instanceof BlobSource && source.streams) {
      await this.#readPieces(d, values, step, signal, onProgress, (use) =>
        this.#file._readInOrder(start, end, signal, use),
      );
    } else if (source instanceof UrlSource && !source.ranges) {
      // A server that ignores Range: one pass through its body, not one per step.
      await this.#readPieces(d, values, step, signal, onProgress, (use) => source.readInOrder(start, end, signal, use));
    } else await this.#readRanges(d, values, step, signal, onProgress);
    return result;
  }

  /**
   * Reads a slice: `spec` has one entry per leading dimension (null, an
   * index, or [start, end, step?]; numpy's rules). Only the selected bytes
   * are read, runs close together in one read (read/tensor-slice.js: planReads).
   * Resolves to `{ shape, bytes }`; a bad spec fails before anything is read.
   */
  async readSlice(spec, { signal, onProgress } = {}) {
    const plan = planSlice(this.shape, BITS[dtypeIndex(this.dtype)], spec, { tensor: this.name });
    signal?.throwIfAborted();
    let bytes;
    try {
      bytes = new Uint8Array(plan.byteLength);
    } catch (e) {
      fail(
        KIND.TooLargeForTarget,
        `a slice of ${plan.byteLength} bytes does not fit in one Uint8Array here: select less`,
        { tensor: this.name, cause: e },
      );
    }
    const source = this.#file._source;
    const start = this.byteOffset;
    if (source.bytes !== null && source.bytes !== undefined) {
      // In memory: the runs are copied straight out.
      let at = 0;
      for (const run of plan.runStarts()) {
        bytes.set(source.bytes.subarray(start + run, start + run + plan.runBytes), at);
        at += plan.runBytes;
      }
      onProgress?.(plan.byteLength, plan.byteLength);
      return { shape: plan.shape, bytes };
    }
    if (source instanceof UrlSource && !source.ranges) {
      // A server that ignores Range: one pass through its body for all the runs, not one per read.
      await this.#sliceInOnePass(plan, bytes, source, signal, onProgress);
      return { shape: plan.shape, bytes };
    }
    const reads = planReads(plan);
    onProgress?.(0, reads.bytes);
    const ahead = reads.reads();
    const pieces = reads.pieces();
    const next = () => {
      const r = ahead.next();
      if (r.done) return null;
      const [b, e] = r.value;
      const got = source.read(start + b, start + e, signal);
      // A read left pending when a copy or onProgress throws must not be an
      // unhandled rejection (it still rejects where it is awaited).
      got.catch(() => {});
      return { b, e, got };
    };
    let at = 0;
    let done = 0;
    let pending = next();
    while (pending !== null) {
      const { b, e, got } = pending;
      const chunk = await got;
      pending = next();
      // The pieces inside this read, in order.
      for (let pe = b; pe !== e; ) {
        const [pb, end] = pieces.next().value;
        pe = end;
        bytes.set(chunk.subarray(pb - b, pe - b), at);
        at += pe - pb;
      }
      done += e - b;
      onProgress?.(done, reads.bytes);
    }
    return { shape: plan.shape, bytes };
  }

  // readSlice's runs copied out of one pass through the source's bytes,
  // from the first run's start to the last one's end (the runs are in file
  // order: a step is never negative). Progress counts the bytes passed.
  async #sliceInOnePass(plan, bytes, source, signal, onProgress) {
    const size = plan.runBytes;
    let first = -1;
    let last = -1;
    for (const run of plan.runStarts()) {
      if (first < 0) first = run;
      last = run;
    }
    const total = first < 0 ? 0 : last + size - first;
    onProgress?.(0, total);
    if (total === 0) return;
    const start = this.byteOffset;
    const runs = plan.runStarts();
    let run = runs.next().value; // the run being copied (from the tensor's start)
    let at = 0; // where it goes in `bytes`
    await source.readInOrder(start + first, start + first + total, signal, (piece, pos) => {
      const from = pos - start;
      const to = from + piece.byteLength;
      while (run !== undefined && run < to) {
        const b = Math.max(run, from);
        const e = Math.min(run + size, to);
        if (e > b) bytes.set(piece.subarray(b - from, e - from), at + (b - run));
        if (run + size > to) break;
        at += size;
        run = runs.next().value;
      }
      onProgress?.(to - first, total);
    });
  }

  /** readSlice, decoded to f32 as readFloat32 decodes (float dtypes). Resolves to `{ shape, values }`. */
  async readSliceFloat32(spec, opts = {}) {
    // A dtype that does not decode fails here, before anything is read.
    decodeFloat32(this.dtype, new Uint8Array(0));
    const { shape, bytes } = await this.readSlice(spec, opts);
    return { shape, values: decodeFloat32(this.dtype, bytes) };
  }

  // Pieces in order (a Blob's stream, a body of a server that ignores
  // Range), handed by `walk(use)` and decoded as they come (an element
  // split between two pieces is put together first); onProgress after each
  // `step` bytes, as for ranges.
  async #readPieces(d, values, step, signal, onProgress, walk) {
    const total = this.byteLength;
    if (total === 0) return;
    const unit = wholeElementBytes(d);
    const part = new Uint8Array(unit);
    let held = 0;
    let at = 0;
    let done = 0;
    let mark = Math.min(total, step);
    const use = (piece) => {
      while (piece.byteLength > 0) {
        const n = Math.min(piece.byteLength, mark - done);
        let bytes = piece.subarray(0, n);
        piece = piece.subarray(n);
        if (held > 0) {
          const k = Math.min(unit - held, bytes.byteLength);
          part.set(bytes.subarray(0, k), held);
          held += k;
          bytes = bytes.subarray(k);
          if (held === unit) {
            at = decodeInto(d, part, values, at);
            held = 0;
          }
        }
        const whole = bytes.byteLength - (bytes.byteLength % unit);
        if (whole > 0) at = decodeInto(d, bytes.subarray(0, whole), values, at);
        if (whole < bytes.byteLength) {
          part.set(bytes.subarray(whole));
          held = bytes.byteLength - whole;
        }
        done += n;
        if (done === mark) {
          onProgress?.(done, total);
          if (done < total) signal?.throwIfAborted();
          mark = Math.min(total, mark + step);
        }
      }
    };
    await walk(use);
  }

  // Any other source: ranges of `step` bytes, the next one asked for before
  // the previous one decodes.
  async #readRanges(d, values, step, signal, onProgress) {
    const source = this.#file._source;
    const total = this.byteLength;
    const start = this.byteOffset;
    const read = (from) => {
      const bytes = source.read(start + from, start + Math.min(total, from + step), signal);
      // A read left pending when decoding or onProgress throws must not be
      // an unhandled rejection (it still rejects where it is awaited).
      bytes.catch(() => {});
      return bytes;
    };
    let at = 0;
    let done = 0;
    let pending = read(0);
    do {
      const bytes = await pending;
      const end = Math.min(total, done + step);
      pending = end < total ? read(end) : null;
      at = decodeInto(d, bytes, values, at);
      done = end;
      if (end > 0) onProgress?.(done, total);
    } while (done < total);
  }
}

/** Bytes of the fewest whole elements of dtype index d (3 for F6: four elements). */
function wholeElementBytes(d) {
  let bytes = 1;
  while ((bytes * 8) % BITS[d] !== 0) bytes++;
  return bytes;
}

/**
 * An output array (decodeFloat32's and readFloat32's `out`) as a plain view
 * of its memory: wasm writes through it, so a subclass's own `set` never
 * runs and a detached buffer never throws inside wasm. A Float32Array of
 * another realm (an iframe, a vm context) is one too. Not a Float32Array,
 * or detached: InvalidArgument; another length: LengthMismatch.
 */
function writableOutput(out, elements, where) {
  if (Object.prototype.toString.call(out) !== '[object Float32Array]') {
    const what =
      out === null || typeof out !== 'object' ? String(out) : Object.prototype.toString.call(out).slice(8, -1);
    fail(KIND.InvalidArgument, `out: ${what} where a Float32Array of ${elements} floats is needed`, where);
  }
  let view;
  try {
    view = new Float32Array(out.buffer, out.byteOffset, out.length);
  } catch (e) {
    fail(
      KIND.InvalidArgument,
      'out cannot be written (its buffer was detached): pass a Float32Array whose memory is still yours',
      { ...where, cause: e },
    );
  }
  if (view.length !== elements) {
    fail(KIND.LengthMismatch, `out: a Float32Array of ${view.length} floats where ${elements} are needed`, where);
  }
  return view;
}
