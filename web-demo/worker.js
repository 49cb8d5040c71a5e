// The heavy work, off the page's thread (headers are parsed in open-worker.js): the statistics,
// histograms, heatmaps, value differences, .npy conversion and "Save as" of tensors. Reads only
// the tensor's own bytes, one chunk (≤ 64 MiB) at a time, and decodes each chunk with the
// package's decodeFloat32 (integer, BOOL and complex dtypes, which the package does not turn
// into floats, are converted in decode.js).
//
// Messages in:  {type: 'stats'|'diff'|'npy'|'save'|'savePlan', id, ...}, {type: 'cancel', id}
// Messages out: {type: 'progress', id, done, total, phase}, {type: 'result', id, result},
//               {type: 'error', id, error: {name, message, kind, offset, tensor}}

import { decodeChunk } from './decode.js';
import { DTYPE_BITS, NPY_DESCR, elementCount, floatsPerElement } from './format.js';
import {
  CHUNK_BYTES,
  DiffAccumulator,
  Histogram,
  StatsAccumulator,
  chunkPlan,
  elementsPerChunk,
  npyHeader,
  rowRange,
} from './stats.js';
import { save, savePlan } from './save-job.js';

// The package initialises its wasm with a top-level await. Imported statically, it would delay
// the assignment of onmessage below, and the browser drops messages that arrive before a handler
// exists; so it is imported dynamically and every job waits for it.
// (WebKitGTK 2.50 settles that import before the package's top-level await has finished: the
// job then waits on init, which joins the load in flight.)
const pkg = import('./vendor/safetensors-nano.js').then(async (m) => {
  await m.init(new URL('./vendor/safetensors-nano/safetensors_nano_wasm_bg.wasm', import.meta.url));
  return m;
});
let decodeFloat32 = null;

const cancelled = new Set();

class Cancelled extends Error {
  constructor() {
    super('cancelled');
    this.name = 'Cancelled';
  }
}

/**
 * Bytes [start, end) of a source: a Blob/File slice, or an HTTP Range request.
 * A server that ignores Range is refused rather than downloading a whole file.
 */
async function readRange(src, start, end, signal) {
  if (end <= start) return new Uint8Array(0);
  if (src.kind === 'blob') return new Uint8Array(await src.blob.slice(start, end).arrayBuffer());
  const res = await fetch(src.url, { headers: { Range: `bytes=${start}-${end - 1}` }, signal });
  if (res.status !== 206)
    throw new Error(`${src.url}: the server answered ${res.status} to a Range request (206 expected)`);
  const buf = new Uint8Array(await res.arrayBuffer());
  if (buf.length !== end - start)
    throw new Error(`${src.url}: got ${buf.length} bytes for a ${end - start}-byte range`);
  return buf;
}

/** A job's context: progress in bytes read, cancellation between chunks. */
function context(id, total) {
  let done = 0;
  let last = 0;
  return {
    check() {
      if (cancelled.has(id)) throw new Cancelled();
    },
    // (`of`: a total the job learns later, as "Save as…" does.)
    progress(bytes, phase, of = total) {
      done += bytes;
      const now = performance.now();
      if (now - last > 50 || done >= of) {
        last = now;
        postMessage({ type: 'progress', id, done, total: of, phase });
      }
    },
    get bytesRead() {
      return done;
    },
  };
}

/**
 * Calls `fn(floats, e0)` for each decoded chunk of tensor `t`. A tensor that fits in one chunk is
 * decoded once and kept (`cache`), so a second pass costs no read.
 */
async function forEachChunk(t, ctx, phase, fn, cache) {
  if (cache?.values) {
    fn(cache.values, 0);
    return;
  }
  const count = elementCount(t.shape);
  const fpe = floatsPerElement(t.dtype);
  const plan = [...chunkPlan(t.dtype, count, t.chunkBytes)];
  const out = new Float32Array(Math.min(count, elementsPerChunk(t.dtype, t.chunkBytes)) * fpe);
  for (const { e0, e1, b0, b1 } of plan) {
    ctx.check();
    const raw = await readRange(t.src, t.byteOffset + b0, t.byteOffset + b1);
    ctx.check();
    const floats = decodeChunk(decodeFloat32, t.dtype, raw, out.subarray(0, (e1 - e0) * fpe));
    ctx.progress(raw.length, phase);
    fn(floats, e0);
    if (cache && plan.length === 1) cache.values = floats;
  }
}

// `m.rows`: [start, end] of the first dimension (stats.js rowRange), or absent for all of it.
async function stats(m, ctx) {
  const t = m.rows ? rowRange(m.tensor, m.rows[0], m.rows[1]) : m.tensor;
  const count = elementCount(t.shape);
  const acc = new StatsAccumulator({ dtype: t.dtype, shape: t.shape, count });
  const cache = {};
  await forEachChunk(t, ctx, 'statistics', (v, e0) => acc.add(v, e0), cache);
  const result = acc.result();
  const range = acc.range();
  if (range) {
    const hist = new Histogram(range[0], range[1], { bins: m.bins ?? 64, dtype: t.dtype });
    await forEachChunk(t, ctx, 'histogram', (v) => hist.add(v), cache);
    result.histogram = hist.result();
  }
  result.bytesRead = ctx.bytesRead;
  if (m.rows) result.rows = [t.firstRow, t.firstRow + t.shape[0]];
  return result;
}

async function diff(m, ctx) {
  const { a, b } = m;
  const count = elementCount(a.shape);
  if (count !== elementCount(b.shape)) throw new Error('the two tensors have different element counts');
  if (floatsPerElement(a.dtype) !== floatsPerElement(b.dtype))
    throw new Error('a complex tensor can only be compared with a complex one');
  const fpe = floatsPerElement(a.dtype);
  const step = Math.min(elementsPerChunk(a.dtype, a.chunkBytes), elementsPerChunk(b.dtype, b.chunkBytes));
  const bufA = new Float32Array(Math.min(count, step) * fpe);
  const bufB = new Float32Array(Math.min(count, step) * fpe);
  const bufD = new Float32Array(Math.min(count, step) * fpe);
  const single = count <= step;
  let kept = null;
  const bitsA = DTYPE_BITS[a.dtype];
  const bitsB = DTYPE_BITS[b.dtype];
  const pass = async (phase, fn) => {
    if (kept) return fn(kept[0], kept[1], 0);
    for (let e0 = 0; e0 < count; e0 += step) {
      const e1 = Math.min(count, e0 + step);
      ctx.check();
      const [ra, rb] = await Promise.all([
        readRange(a.src, a.byteOffset + (e0 * bitsA) / 8, a.byteOffset + Math.ceil((e1 * bitsA) / 8)),
        readRange(b.src, b.byteOffset + (e0 * bitsB) / 8, b.byteOffset + Math.ceil((e1 * bitsB) / 8)),
      ]);
      ctx.check();
      const fa = decodeChunk(decodeFloat32, a.dtype, ra, bufA.subarray(0, (e1 - e0) * fpe));
      const fb = decodeChunk(decodeFloat32, b.dtype, rb, bufB.subarray(0, (e1 - e0) * fpe));
      ctx.progress(ra.length + rb.length, phase);
      fn(fa, fb, e0 * fpe);
      if (single) kept = [fa, fb];
    }
  };
  const acc = new DiffAccumulator();
  await pass('difference', (fa, fb, f0) => acc.add(fa, fb, f0));
  const result = acc.result();
  const range = acc.range();
  if (range) {
    const hist = new Histogram(range[0], range[1], { bins: m.bins ?? 64 });
    await pass('histogram of differences', (fa, fb) => hist.add(DiffAccumulator.deltas(fa, fb, bufD)));
    result.histogram = hist.result();
  }
  result.complex = fpe === 2;
  result.bytesRead = ctx.bytesRead;
  return result;
}

/** A .npy Blob: numpy's own dtype when it has one (raw bytes), else float32. */
async function npy(m, ctx) {
  const t = m.tensor;
  const native = NPY_DESCR[t.dtype];
  const parts = [npyHeader(native ?? '<f4', t.shape)];
  if (native && t.src.kind === 'blob') {
    parts.push(t.src.blob.slice(t.byteOffset, t.byteOffset + t.byteLength));
  } else if (native) {
    for (let b0 = 0; b0 < t.byteLength; b0 += CHUNK_BYTES) {
      ctx.check();
      const raw = await readRange(t.src, t.byteOffset + b0, t.byteOffset + Math.min(t.byteLength, b0 + CHUNK_BYTES));
      ctx.progress(raw.length, 'reading');
      parts.push(raw);
    }
  } else {
    await forEachChunk(t, ctx, 'converting to float32', (v) => parts.push(v.slice()));
  }
  return {
    blob: new Blob(parts, { type: 'application/octet-stream' }),
    descr: native ?? '<f4',
    converted: !native,
    bytesRead: ctx.bytesRead,
  };
}

const jobs = { stats, diff, npy, save, savePlan };

function total(m) {
  if (m.type === 'save' || m.type === 'savePlan') return 0;
  if (m.type === 'diff') return 2 * (m.a.byteLength + m.b.byteLength);
  if (m.type === 'npy') return m.tensor.byteLength;
  if (m.rows) return 2 * rowRange(m.tensor, m.rows[0], m.rows[1]).byteLength;
  return 2 * m.tensor.byteLength;
}

self.onmessage = async (e) => {
  const m = e.data;
  if (m.type === 'cancel') {
    cancelled.add(m.id);
    return;
  }
  const job = jobs[m.type];
  if (!job) return;
  try {
    decodeFloat32 ??= (await pkg).decodeFloat32;
    const result = await job(m, context(m.id, total(m)));
    postMessage({ type: 'result', id: m.id, result });
  } catch (err) {
    postMessage({
      type: 'error',
      id: m.id,
      error: {
        name: err?.name ?? 'Error',
        message: String(err?.message ?? err),
        kind: err?.kind ?? null,
        offset: err?.offset ?? null,
        tensor: err?.tensor ?? null,
      },
    });
  } finally {
    cancelled.delete(m.id);
  }
};

postMessage({ type: 'ready' });
