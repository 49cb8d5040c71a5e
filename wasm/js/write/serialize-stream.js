// Writing a safetensors file as a stream: the header from the core's plan,
// then each tensor's data read from its source (memory, a Blob, a tensor of
// an opened file) only as the consumer pulls, a bounded chunk at a time,
// converted between float dtypes through the writer's wasm module when the
// dtype asked for differs from the data's.

import { BITS, DTYPE_INDEX } from '../format/dtypes.js';
import { KIND, SafeTensorsError, fail, wasmError } from '../errors/safetensors-error.js';
import { DTYPE_KINDS } from '../generated/dtypes.js';
import { BlobSource } from '../read/byte-sources.js';
import { Tensor, readStep } from '../read/tensor.js';
import { u8 } from '../runtime/wire-numbers.js';
import { checkEntry, planFile, tensorEntries, writerOrFail } from './serialize.js';
import { loadedWriter } from '../runtime/writer-module.js';

/** The dtypes the core's `convert_into` writes. */
export const CONVERT_TARGETS = Object.freeze(['F64', 'F32', 'F16', 'BF16']);

// Pieces smaller than this (small tensors, the header) are joined into one
// chunk: a model of thousands of small tensors is not thousands of writes.
const JOIN_BELOW = 1024 * 1024;

const isFloat = (dtype) => DTYPE_KINDS[DTYPE_INDEX.get(dtype)] === 'float';

/** Whether a tensor of `from` is written as `to` by converting its values. */
function converts(from, to) {
  if (from === to) return false;
  if (!isFloat(from) || !CONVERT_TARGETS.includes(to)) {
    fail(
      KIND.DtypeMismatch,
      `cannot convert ${from} to ${to}: conversion takes a float dtype to ${CONVERT_TARGETS.join(', ')}`,
    );
  }
  return true;
}

/**
 * One tensor of the input as the stream reads it: `{ name, dtype, shape,
 * byteLength, read }`, where `byteLength` is what the file holds and
 * `read(signal, step)` is an async iterator of its bytes in pieces the
 * stream may keep (never a view of the caller's memory).
 */
export function tensorSource(name, t) {
  checkSource(name, t);
  const data = t.data;
  if (data instanceof Tensor) {
    const dtype = t.dtype ?? data.dtype;
    const shape = t.shape ?? data.shape;
    checkEntry(name, { dtype, shape });
    const convert = named(name, () => converts(data.dtype, dtype));
    const byteLength = convert ? (data.elementCount * BITS[DTYPE_INDEX.get(dtype)]) / 8 : data.byteLength;
    // (Converted pieces are new arrays: the read needs no copy of its own.)
    const range = (start, end, signal) => data._readRange(start, end, signal).then(convert ? (b) => b : owned);
    return {
      name,
      dtype,
      shape,
      byteLength,
      read: pieces(name, data.byteLength, range, convert ? [data.dtype, dtype] : null),
    };
  }
  checkEntry(name, t);
  if (typeof Blob !== 'undefined' && data instanceof Blob) {
    // Read as fromBlob reads: a short read or a File edited on disk
    // (NotReadableError) is SourceChanged.
    const blob = new BlobSource(data);
    const range = (start, end, signal) =>
      blob.read(start, end, signal).catch((e) => Promise.reject(nameTensor(e, name)));
    return { name, dtype: t.dtype, shape: t.shape, byteLength: data.size, read: pieces(name, data.size, range, null) };
  }
  let bytes;
  try {
    bytes = u8(data);
  } catch {
    fail(KIND.InvalidArgument, 'data must be an ArrayBuffer, an ArrayBufferView, a Blob or a Tensor', { tensor: name });
  }
  // Float values in a Float32Array or Float64Array, asked for as another
  // float dtype the core writes: converted. Anything else is taken as bytes.
  const from = data instanceof Float32Array ? 'F32' : data instanceof Float64Array ? 'F64' : null;
  const convert = from !== null && isFloat(t.dtype) && CONVERT_TARGETS.includes(t.dtype) && from !== t.dtype;
  const byteLength = convert ? (data.length * BITS[DTYPE_INDEX.get(t.dtype)]) / 8 : bytes.byteLength;
  const range = async (start, end) => (convert ? bytes.subarray(start, end) : bytes.slice(start, end));
  return {
    name,
    dtype: t.dtype,
    shape: t.shape,
    byteLength,
    read: pieces(name, bytes.byteLength, range, convert ? [from, t.dtype] : null),
  };
}

function checkSource(name, t) {
  if (typeof name !== 'string') fail(KIND.InvalidArgument, 'tensor names must be strings');
  if (t === null || typeof t !== 'object')
    fail(KIND.InvalidArgument, 'expected { dtype, shape, data }', { tensor: name });
}

// Runs `fn`, naming the tensor in a SafeTensorsError it throws.
function named(name, fn) {
  try {
    return fn();
  } catch (e) {
    throw nameTensor(e, name);
  }
}

function nameTensor(e, name) {
  if (e instanceof SafeTensorsError && e.tensor === null) {
    e.tensor = name;
    e.message += ` (tensor ${JSON.stringify(name)})`;
  }
  return e;
}

// A piece the stream may keep: a read that is a view into a larger buffer
// (a file held in memory) is copied; a read of its own buffer is kept.
function owned(bytes) {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice();
}

/**
 * The async iterator factory of one tensor's pieces: `total` source bytes
 * read `step` at a time through `range(start, end, signal)`, each piece
 * converted (`[from, to]`) through the writer's module when asked.
 */
function pieces(name, total, range, conversion) {
  return async function* read(signal, step) {
    const writer = loadedWriter();
    const [from, to] = conversion === null ? [] : conversion.map((d) => DTYPE_INDEX.get(d));
    for (let done = 0; done < total; ) {
      const end = Math.min(total, done + step);
      signal?.throwIfAborted();
      const src = await range(done, end, signal);
      done = end;
      if (conversion === null) {
        yield src;
        continue;
      }
      const out = new Uint8Array((((src.byteLength * 8) / BITS[from]) * BITS[to]) / 8);
      const nums = writer.convert(from, src, to, out);
      if (nums.length > 0) throw nameTensor(wasmError(nums), name);
      yield out;
    }
  };
}

function joinPieces(parts, n) {
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

/**
 * Plans the file of `tensors` and `metadata` (the core's checks) once the
 * writer's module is loaded: `{ sources, plan }`.
 */
export async function planStream(tensors, metadata) {
  const writer = loadedWriter() ?? (await writerOrFail());
  const sources = tensorEntries(tensors).map(([name, t]) => tensorSource(name, t));
  return { sources, plan: planFile(writer, sources, metadata) };
}

/**
 * The size of the file serializeStream writes for `tensors` and `metadata`,
 * from the core's plan (nothing is read; the plan's errors reject).
 */
export async function serializedSize(tensors, metadata) {
  return (await planStream(tensors, metadata)).plan.fileLength;
}

// The file's bytes in order: the header, then each tensor's data from its source, read in
// pieces of `step` bytes until `signal` aborts. A source whose length is not what was planned
// (a Blob or a file changed since) is SourceChanged.
async function* fileBytes(plan, sources, signal, step) {
  yield plan.header;
  for (const { index } of plan.placed) {
    const source = sources[index];
    let n = 0;
    for await (const piece of source.read(signal, step)) {
      n += piece.byteLength;
      yield piece;
    }
    if (n !== source.byteLength) {
      fail(
        KIND.SourceChanged,
        `read ${n} bytes where ${source.byteLength} were planned: the source changed since the stream was made`,
        { tensor: source.name },
      );
    }
  }
}

// The next pieces of `it` up to JOIN_BELOW bytes together (empty ones dropped), and whether
// the file has ended.
async function nextPieces(it) {
  const parts = [];
  let n = 0;
  while (n < JOIN_BELOW) {
    const { value, done } = await it.next();
    if (done) return { parts, n, finished: true };
    if (value.byteLength > 0) {
      parts.push(value);
      n += value.byteLength;
    }
  }
  return { parts, n, finished: false };
}

/**
 * The file of `tensors` and `metadata` as a ReadableStream of bytes (see
 * index.d.ts). Pull-based: the next chunk is made when the consumer asks,
 * with at most one waiting in the stream's queue.
 *
 * Reads take a signal of the stream's own, aborted by `signal` and by
 * cancel(): a cancel stops a read in flight rather than waiting for it,
 * and an abort errors the stream at once, even between the consumer's reads.
 */
export function serializeStream(tensors, metadata, { signal, onProgress, chunkBytes } = {}) {
  let it = null;
  let total = 0;
  let written = 0;
  const reads = new AbortController();
  let onAbort = null;
  const unlisten = () => {
    if (onAbort !== null) signal.removeEventListener('abort', onAbort);
    onAbort = null;
  };
  const stop = (reason) => {
    unlisten();
    reads.abort(reason);
  };
  return new ReadableStream(
    {
      async start(controller) {
        const step = readStep(chunkBytes);
        signal?.throwIfAborted();
        if (signal) {
          onAbort = () => {
            stop(signal.reason);
            controller.error(signal.reason);
          };
          signal.addEventListener('abort', onAbort, { once: true });
        }
        try {
          const { sources, plan } = await planStream(tensors, metadata);
          total = plan.fileLength;
          it = fileBytes(plan, sources, reads.signal, step);
          onProgress?.(0, total);
        } catch (e) {
          stop(e);
          throw e;
        }
      },
      async pull(controller) {
        try {
          reads.signal.throwIfAborted();
          const { parts, n, finished } = await nextPieces(it);
          if (n > 0) {
            controller.enqueue(joinPieces(parts, n));
            written += n;
            onProgress?.(written, total);
          }
          if (finished) {
            unlisten();
            controller.close();
          }
        } catch (e) {
          stop(e);
          throw e;
        }
      },
      cancel(reason) {
        // The read in flight rejects with the abort; return() runs after it.
        stop(reason);
        it?.return().catch(() => {});
      },
    },
    { highWaterMark: 1 },
  );
}
