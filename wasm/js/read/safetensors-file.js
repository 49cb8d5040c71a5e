// An opened safetensors file: its description (the parsed header) and its
// source (where the bytes come from).

import { DTYPES } from '../format/dtypes.js';
import { headerLimitOption, openPrefix } from './description.js';
import { KIND, fail } from '../errors/safetensors-error.js';
import { BlobSource, BytesSource, InOrderReader, NoSource, UrlSource, openLazy } from './byte-sources.js';
import { Tensor } from './tensor.js';
import { u8 } from '../runtime/wire-numbers.js';

/**
 * fromUrl's default headerLimit, where the others take the core's 100 MB:
 * any URL can claim a header of 100 MB, and fromUrl would fetch it all
 * before finding it useless. 25 MB is huggingface_hub's limit for the
 * headers it reads over HTTP (SAFETENSORS_MAX_HEADER_LENGTH), far above
 * real headers (about 100 bytes a tensor); pass headerLimit for more.
 */
export const URL_HEADER_LIMIT = 25_000_000;

/** A parameter count with nothing counted yet. */
export function emptyCount() {
  return { total: 0, byDtype: {} };
}

/** Adds `n` elements of `dtype` to a parameter count. */
export function addCount(count, dtype, n) {
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
    // ≤ 2^53: wasm rejected any tensor ending above (and docs/format.md R13
    // exact-length ties the size to the last end).
    this.fileSize = Number(fileSize);
  }

  // Reads of a Blob in order (Tensor.readFloat32). A call reads the stream
  // of its own bytes alone; a call that starts where the previous one ended
  // opens a stream to the file's end instead (an in-order pass), kept while
  // no other call uses it, so that tensors read one after another in
  // offset order are one stream of the file. A pass that reaches the data
  // end keeps none. `#lastEnd` is where the last call ended.
  #inOrder = null;
  #lastEnd = -1;

  /**
   * @internal Bytes [start, end) of a Blob's file, handed to `use` piece by
   * piece in order (views valid during the call).
   */
  async _readInOrder(start, end, signal, use) {
    let reader = this.#inOrder;
    this.#inOrder = null; // (a call reading meanwhile starts its own)
    if (reader !== null && reader.pos !== start) {
      reader.close();
      reader = null;
    }
    const pass = reader !== null || start === this.#lastEnd;
    this.#lastEnd = -1;
    reader ??= new InOrderReader(this._source, start, pass ? this.fileSize : end);
    try {
      await reader.take(end, signal, use);
    } catch (e) {
      reader.close();
      throw e;
    }
    this.#lastEnd = end;
    if (!pass || reader.broken || reader.pos === this.fileSize) {
      reader.close();
    } else {
      this.#inOrder?.close();
      this.#inOrder = reader;
    }
  }

  /** Bytes read from the source so far (the whole input for fromBytes). */
  get bytesRead() {
    return this._source.bytesRead;
  }

  /**
   * Opens a whole file in memory; validates the header and the length.
   * A header over `headerLimit` bytes (default 100 MB) is HeaderTooLarge.
   */
  static fromBytes(buf, { headerLimit } = {}) {
    const bytes = u8(buf);
    const size = bytes.byteLength;
    const limit = headerLimitOption(headerLimit);
    let r = openPrefix(bytes.subarray(0, 8), size, limit);
    if (typeof r === 'number') r = openPrefix(bytes.subarray(0, r), size, limit);
    return new SafeTensors(r, new BytesSource(bytes), size);
  }

  /**
   * Opens from the header bytes alone (at least the first 8 + N bytes of a
   * file of `fileSize` bytes). Tensors have no data source.
   */
  static fromHeader(prefix, fileSize, { headerLimit } = {}) {
    if (
      typeof fileSize === 'bigint'
        ? fileSize < 0n || fileSize >= 2n ** 64n
        : !(Number.isSafeInteger(fileSize) && fileSize >= 0)
    ) {
      throw new TypeError('fileSize: expected a non-negative integer (a number up to 2^53, or a bigint)');
    }
    const r = openPrefix(u8(prefix), fileSize, headerLimitOption(headerLimit));
    if (typeof r === 'number') {
      fail(KIND.HeaderIncomplete, `the first ${r} bytes of the file are needed, ${u8(prefix).byteLength} were given`);
    }
    return new SafeTensors(r, new NoSource(), fileSize);
  }

  /**
   * Opens a Blob or File lazily: reads 8 bytes, then the header (unless it
   * is over `headerLimit` bytes, default 100 MB).
   */
  static async fromBlob(blob, { signal, headerLimit } = {}) {
    const limit = headerLimitOption(headerLimit);
    const source = new BlobSource(blob);
    const first = blob.size >= 8 ? await source.read(0, 8, signal) : new Uint8Array(0);
    const desc = await openLazy(source, first, blob.size, signal, limit);
    return new SafeTensors(desc, source, blob.size);
  }

  /**
   * Opens a URL with HTTP Range requests. A server that ignores them and
   * answers 200 has its body read whole up to KEEP_WHOLE_LIMIT bytes, else
   * only up to the header's end (then cancelled; `noRange` says what later
   * reads do). `prefetch` is the size of the first request (default 64 KiB,
   * at most 8 + headerLimit); a header over `headerLimit` bytes (default
   * URL_HEADER_LIMIT) is refused from its 8-byte length, before it is
   * fetched.
   */
  static async fromUrl(
    url,
    {
      headers,
      signal,
      prefetch = 65536,
      headerLimit,
      fetch: fetchFn = globalThis.fetch,
      timeout,
      retries,
      ifRange,
      noRange,
    } = {},
  ) {
    const limit = headerLimitOption(headerLimit, URL_HEADER_LIMIT);
    if (!Number.isInteger(prefetch) || prefetch < 0)
      throw new TypeError('prefetch: expected a non-negative integer (bytes)');
    // (timeout, retries, ifRange, noRange: the source's, read/byte-sources.js and http/request.js.)
    const source = new UrlSource(String(url), headers, fetchFn, limit, { timeout, retries, ifRange, noRange });
    const { prefix, total } = await source.first(Math.min(Math.max(8, prefetch), 8 + limit), signal);
    const desc = await openLazy(source, prefix, total, signal, limit);
    // total ≤ 2^53 here: wasm rejected any tensor ending above.
    source.size = Number(total);
    return new SafeTensors(desc, source, Number(total));
  }

  /**
   * Tensor names in data-offset order.
   * @returns {string[]}
   */
  names() {
    return this.#desc.names.slice();
  }

  /**
   * The `__metadata__` map, or null when the header has none.
   * @returns {Record<string, string> | null}
   */
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
