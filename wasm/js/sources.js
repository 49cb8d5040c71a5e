// Where a file's bytes come from: memory, a Blob or File, an HTTP URL, or
// nothing (a header alone). A SafeTensors reads through its source.

import { openPrefix } from './description.js';
import { SafeTensorsError, fail } from './errors.js';

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

export function httpError(res, url) {
  return new SafeTensorsError('Http', `HTTP ${res.status} ${res.statusText} for ${url}`);
}

export class UrlSource {
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

export class NoSource {
  constructor() {
    this.bytes = null;
    this.bytesRead = 0;
  }
  async read() {
    fail('NoSource', 'opened from header bytes only: there is no data to read');
  }
}

function concat(a, b) {
  const out = new Uint8Array(a.byteLength + b.byteLength);
  out.set(a, 0);
  out.set(b, a.byteLength);
  return out;
}

// Opens a header from a source that reads ranges: 8 bytes, then the rest.
export async function openLazy(source, prefix, total, signal) {
  for (;;) {
    const r = openPrefix(prefix, total);
    if (typeof r !== 'number') return r;
    // r ≤ 8 + HEADER_LIMIT here: wasm checked the limit and the file size.
    prefix = concat(prefix, await source.read(prefix.byteLength, r, signal));
  }
}
