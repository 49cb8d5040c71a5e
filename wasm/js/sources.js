// Where a file's bytes come from: memory, a Blob or File, an HTTP URL, or
// nothing (a header alone). A SafeTensors reads every byte through its
// source: the header when it opens (openLazy), tensor data on demand.

import { checkHeaderLength, openPrefix } from './description.js';
import { KIND, SafeTensorsError, fail } from './errors.js';

/**
 * The interface every source implements (BytesSource, BlobSource,
 * UrlSource, NoSource). SafeTensors and Tensor use exactly these three
 * members; anything else (a `size`, a URL) is the source's own business:
 * the file size is given to SafeTensors by the opener.
 *
 * @typedef {object} Source
 * @property {(start: number, end: number, signal?: AbortSignal) => Promise<Uint8Array>} read
 *   Bytes [start, end) of the file. Callers keep 0 ≤ start ≤ end ≤ the file
 *   size (the header was validated against that size, docs/format.md
 *   R13 exact-length), so a range past the end is never asked for;
 *   start === end asks for no bytes. The answer holds exactly end − start
 *   bytes; it may be a view of memory the source keeps (callers only read
 *   it). Failures are SafeTensorsErrors: ReadFailed when the file changed
 *   since it was opened (size, ETag/Last-Modified) or came back short, Http
 *   for an unusable HTTP answer, NoSource when there is no data at all.
 *   Cancellation: once `signal` is aborted the promise rejects with its
 *   reason (`signal.throwIfAborted()` before and after the I/O, or the
 *   signal handed to fetch); a source whose reads are already in memory may
 *   ignore it.
 * @property {Uint8Array | null} bytes
 *   The whole file when it is in memory, else null. Tensor.bytes(), view()
 *   and toFloat32() work only when it is set (NotInMemory otherwise). It may
 *   become set after opening (UrlSource, when a server answers 200 with
 *   the whole file).
 * @property {number} bytesRead
 *   Bytes of the file read so far, header included (SafeTensors.bytesRead).
 *
 * A new way to open a file is one such class plus one static method on
 * SafeTensors, which reads the header through openLazy and hands the
 * source over, as fromBlob does:
 *
 *   static async fromThing(thing, { signal, headerLimit } = {}) {
 *     const source = new ThingSource(thing);        // implements Source
 *     const size = thing.size;                      // the file size, ≤ 2^53
 *     const limit = headerLimitOption(headerLimit);
 *     const desc = await openLazy(source, new Uint8Array(0), size, signal, limit);
 *     return new SafeTensors(desc, source, size);
 *   }
 */

/** An in-memory file (fromBytes): reads are views of it. */
export class BytesSource {
  constructor(bytes) {
    this.bytes = bytes;
    this.size = bytes.byteLength;
    this.bytesRead = bytes.byteLength;
  }
  async read(start, end) {
    return this.bytes.subarray(start, end);
  }
}

/** A Blob or File (fromBlob): each read is a slice of it. */
export class BlobSource {
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
      fail(KIND.ReadFailed, `read ${buf.byteLength} bytes of ${end - start} at file byte ${start}: the file changed`);
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

/**
 * The body of an answer, read as it arrives: more than `max` bytes is an
 * Http error as soon as they arrive (a server cannot make us download what
 * we did not ask for), and `first8` is called with its first 8 bytes once
 * they are in (to refuse a header over the limit before the rest comes).
 */
async function body(res, signal, url, { max = Infinity, first8 } = {}) {
  if (res.body === null || res.body === undefined) {
    // (A fetch without streams.)
    const buf = new Uint8Array(await res.arrayBuffer());
    signal?.throwIfAborted();
    if (buf.byteLength > max) tooLong(url, max);
    if (first8 !== undefined && buf.byteLength >= 8) first8(buf);
    return buf;
  }
  const reader = res.body.getReader();
  const chunks = [];
  let n = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const before = n;
      n += value.byteLength;
      if (n > max) tooLong(url, max);
      chunks.push(value);
      if (first8 !== undefined && before < 8 && n >= 8) first8(concat(chunks, 8));
    }
  } catch (e) {
    reader.cancel().catch(() => {});
    throw e;
  }
  signal?.throwIfAborted();
  // A chunk may be a view into a larger (pooled) buffer: the answer gets a
  // buffer of its own, at offset 0, as arrayBuffer() gave (typed views of
  // the file's data are aligned as the file lays it out).
  const only = chunks.length === 1 ? chunks[0] : null;
  if (only !== null && only.byteOffset === 0 && only.byteLength === only.buffer.byteLength) return only;
  return concat(chunks, n);
}

function tooLong(url, max) {
  fail(KIND.Http, `${url} sent more than the ${max} bytes asked for`);
}

export function httpError(res, url) {
  return new SafeTensorsError(KIND.Http, `HTTP ${res.status} ${res.statusText} for ${url}`);
}

/**
 * An HTTP(S) URL (fromUrl): each read is a Range request; a server that
 * answers 200 instead has the whole file read into `bytes`.
 */
export class UrlSource {
  constructor(url, headers, fetchFn, headerLimit) {
    this.url = url;
    this.headerLimit = headerLimit;
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

  // First request: a speculative prefix; learns the size, or the whole body
  // (refused once its first 8 bytes give a header over the limit).
  async first(want, signal) {
    const res = await this.get(0, want, signal);
    if (res.status === 206) {
      const range = parseContentRange(res.headers.get('Content-Range'));
      if (range === null || range.total === null || range.start !== 0) {
        await res.body?.cancel();
        fail(KIND.Http, `unusable Content-Range ${JSON.stringify(res.headers.get('Content-Range'))} from ${this.url}`);
      }
      this.validator = res.headers.get('ETag') ?? res.headers.get('Last-Modified');
      this.total = range.total;
      const bytes = await body(res, signal, this.url, { max: want });
      this.bytesRead += bytes.byteLength;
      return { prefix: bytes, total: range.total };
    }
    if (res.status === 200) {
      const limit = this.headerLimit;
      const bytes = await body(res, signal, this.url, { first8: (b) => checkHeaderLength(b, limit) });
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
      const bytes = await body(res, signal, this.url, { max: end - start });
      this.bytesRead += bytes.byteLength;
      const etag = res.headers.get('ETag') ?? res.headers.get('Last-Modified');
      const resized = range !== null && range.total !== null && range.total !== this.total;
      if (resized || (etag !== null && this.validator !== null && etag !== this.validator)) {
        fail(KIND.ReadFailed, `${this.url} changed since it was opened`);
      }
      if (range === null || range.start !== start || bytes.byteLength !== end - start) {
        fail(KIND.Http, `server sent bytes ${res.headers.get('Content-Range')} for ${start}-${end - 1} of ${this.url}`);
      }
      return bytes;
    }
    if (res.status === 200) {
      // The server stopped honouring ranges (or the file changed: If-Range).
      const bytes = await body(res, signal, this.url);
      this.bytesRead += bytes.byteLength;
      if (bytes.byteLength !== this.size) {
        fail(KIND.ReadFailed, `${this.url} changed: now ${bytes.byteLength} bytes, was ${this.size}`);
      }
      this.bytes = bytes;
      return bytes.subarray(start, end);
    }
    await res.body?.cancel();
    throw httpError(res, this.url);
  }
}

/** No data (fromHeader): every read fails with NoSource. */
export class NoSource {
  constructor() {
    this.bytes = null;
    this.bytesRead = 0;
  }
  async read() {
    fail(KIND.NoSource, 'opened from header bytes only: there is no data to read');
  }
}

// The first `n` bytes of `parts`, one after another, as one array.
function concat(parts, n) {
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    if (at >= n) break;
    const take = Math.min(p.byteLength, n - at);
    out.set(take === p.byteLength ? p : p.subarray(0, take), at);
    at += take;
  }
  return out;
}

/**
 * Opens a header from a source that reads ranges: `prefix` holds the first
 * bytes already read (any number, none included); wasm says how many more
 * it needs (the 8-byte length, then the header) and they are read. `total`
 * is the file size (a number, or a bigint from HTTP); a header longer than
 * `limit` is refused from its 8-byte length, before it is read. Resolves to
 * the description SafeTensors takes.
 */
export async function openLazy(source, prefix, total, signal, limit) {
  for (;;) {
    const r = openPrefix(prefix, total, limit);
    if (typeof r !== 'number') return r;
    // r ≤ 8 + limit here: openPrefix checked the limit and the file size.
    const more = await source.read(prefix.byteLength, r, signal);
    prefix = concat([prefix, more], prefix.byteLength + more.byteLength);
  }
}
