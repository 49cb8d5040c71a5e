// A sharded model's index read from wherever it is (a Blob, a URL, its
// text, the parsed object) and parsed as its bytes arrive (IndexParser),
// within limits on its bytes and entries: a server that sends an endless
// index is cut off once it is over the limit, not buffered.

import { KIND, SafeTensorsError, fail } from '../errors/safetensors-error.js';
import { httpError, httpOptions, request } from '../http/request.js';
import { INDEX_ENTRY_LIMIT, IndexParser } from './index-parse.js';
import { indexShards } from './header-sizes.js';

export { INDEX_ENTRY_LIMIT };
/** Default `indexLimit`: bytes of an index (a 1,000,000-tensor one has ~100 MB). */
export const INDEX_LIMIT = 256 * 2 ** 20;

/** `indexLimit` and `indexEntryLimit` checked, with their defaults (TypeError for a bad value). */
export function indexLimits({ indexLimit = INDEX_LIMIT, indexEntryLimit = INDEX_ENTRY_LIMIT } = {}) {
  const valid = (n) => n === Infinity || (Number.isSafeInteger(n) && n >= 0);
  if (!valid(indexLimit)) throw new TypeError('indexLimit: expected a non-negative integer (bytes) or Infinity');
  if (!valid(indexEntryLimit))
    throw new TypeError('indexEntryLimit: expected a non-negative integer (weight_map entries) or Infinity');
  return { bytes: indexLimit, entries: indexEntryLimit };
}

function tooLarge(limit, where) {
  fail(
    KIND.IndexTooLarge,
    `the index${where} is larger than indexLimit (${limit} bytes): pass a larger { indexLimit } to open it`,
  );
}

const BOM = [0xef, 0xbb, 0xbf];

/**
 * Feeds an IndexParser with the index's bytes, piece by piece: counts them
 * against the byte limit, skips a leading BOM (as Blob.text() does), and
 * decodes whole UTF-8 sequences only (one cut between pieces waits for
 * the rest). Bytes that are not UTF-8 are IndexInvalid.
 */
class IndexBytes {
  #parser;
  #limit;
  #where;
  #seen = 0;
  #carry = null;
  #decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

  constructor(limits, where) {
    this.#parser = new IndexParser({ entryLimit: limits.entries });
    this.#limit = limits.bytes;
    this.#where = where;
  }

  /** Takes the next bytes of the index. */
  push(bytes) {
    const at = this.#seen;
    this.#seen += bytes.byteLength;
    if (this.#seen > this.#limit) tooLarge(this.#limit, this.#where);
    let piece = bytes;
    if (this.#carry !== null) {
      piece = new Uint8Array(this.#carry.length + bytes.length);
      piece.set(this.#carry);
      piece.set(bytes, this.#carry.length);
    }
    let start = at - (this.#carry?.length ?? 0);
    this.#carry = null;
    if (start < 3) {
      // The BOM, whole or still coming.
      let k = 0;
      while (k < piece.length && start + k < 3 && piece[k] === BOM[start + k]) k++;
      if (start + k < 3 && k === piece.length) {
        this.#carry = piece;
        return;
      }
      if (start === 0 && k === 3) {
        piece = piece.subarray(3);
        start = 3;
        this.#parser.skip(3);
      }
    }
    const cut = wholeSequences(piece);
    if (cut < piece.length) this.#carry = piece.slice(cut);
    this.#decode(piece.subarray(0, cut), start);
  }

  /** The parsed index once all bytes came: `{ json, shards, filesOf }` (IndexParser.end). */
  end() {
    if (this.#carry !== null) this.#decode(this.#carry, this.#seen - this.#carry.length, true);
    return this.#parser.end();
  }

  #decode(bytes, at) {
    if (bytes.length === 0) return;
    let text;
    try {
      text = this.#decoder.decode(bytes);
    } catch (e) {
      const bad = at + firstBadByte(bytes);
      throw new SafeTensorsError(
        KIND.IndexInvalid,
        `index is not UTF-8 text: an invalid byte sequence at index byte ${bad}`,
        { cause: e },
      );
    }
    this.#parser.push(text, text.length === bytes.length);
  }
}

// How many bytes at the start of `b` are whole UTF-8 sequences: all but a
// sequence that the last (up to 3) bytes begin and do not finish.
function wholeSequences(b) {
  const n = b.length;
  for (let back = 1; back <= 3 && back <= n; back++) {
    const c = b[n - back];
    if (c < 0x80) return n;
    if (c >= 0xc0) {
      const len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
      return len > back ? n - back : n;
    }
  }
  return n;
}

// Where in `b` (not UTF-8) the first invalid sequence begins.
function firstBadByte(b) {
  const lenient = new TextDecoder('utf-8', { ignoreBOM: true }).decode(b);
  const enc = new TextEncoder();
  let from = 0;
  for (;;) {
    const i = lenient.indexOf('\ufffd', from);
    if (i < 0) return 0;
    const at = enc.encode(lenient.slice(0, i)).length;
    // (A U+FFFD written in the index is EF BF BD; a replacement is not.)
    if (!(b[at] === 0xef && b[at + 1] === 0xbf && b[at + 2] === 0xbd)) return at;
    from = i + 1;
  }
}

/** Reads a stream's chunks into `into` (an IndexBytes); cancels the stream on an error. */
async function readStream(stream, into, onChunk, signal) {
  const reader = stream.getReader();
  try {
    for (;;) {
      signal?.throwIfAborted();
      const { done, value } = await reader.read();
      if (done) break;
      onChunk?.(value.byteLength);
      into.push(value);
    }
  } catch (e) {
    reader.cancel(e).catch(() => {});
    throw e;
  }
}

/** UTF-8 bytes of `s`, counted only as far as needed to compare with `limit`. */
function overLimit(s, limit) {
  if (s.length > limit) return true;
  if (s.length * 3 <= limit) return false;
  return new TextEncoder().encode(s).length > limit;
}

/**
 * The index `{ json, base, shards, filesOf }`: the parsed object, the URL
 * it came from (null otherwise), indexShards' records of it and, for an
 * index parsed here, IndexParser.end's `filesOf`. `index` is a Blob,
 * a URL, JSON text or the parsed object (an object is taken as it is: the
 * limits are for bytes still to be read).
 */
export async function readIndex(index, limits, { signal, fetch, headers, timeout, retries }) {
  if (typeof Blob !== 'undefined' && index instanceof Blob) {
    if (index.size > limits.bytes) tooLarge(limits.bytes, ` (a Blob of ${index.size} bytes)`);
    const into = new IndexBytes(limits, '');
    if (typeof index.stream === 'function') await readStream(index.stream(), into, undefined, signal);
    else into.push(new Uint8Array(await index.arrayBuffer()));
    return { ...into.end(), base: null };
  }
  if (typeof index === 'string' || index instanceof URL) {
    const s = String(index);
    if (s.trimStart().startsWith('{')) {
      if (overLimit(s, limits.bytes)) tooLarge(limits.bytes, '');
      const parser = new IndexParser({ entryLimit: limits.entries });
      // (Text given as a string may start with a BOM, which JSON.parse refuses.)
      const text = s.charCodeAt(0) === 0xfeff ? s.slice(1) : s;
      parser.push(text, !/[^\0-\x7f]/.test(text));
      return { ...parser.end(), base: null };
    }
    return {
      ...(await fetchIndex({ url: s, fetch, ...httpOptions({ timeout, retries }) }, limits, headers, signal)),
      base: s,
    };
  }
  if (index !== null && typeof index === 'object') return { json: index, shards: indexShards(index), base: null };
  throw new TypeError('index: expected a Blob, a URL, JSON text or an object');
}

// The index at a URL, parsed as its body arrives, with the deadline,
// retries and typed errors of every request (http/request.js).
function fetchIndex(http, limits, headers, signal) {
  const where = ` at ${http.url}`;
  return request(http, { headers }, signal, async (res, watch) => {
    if (!res.ok) throw httpError(res, http.url);
    const length = Number(res.headers.get('Content-Length') ?? Infinity);
    if (Number.isFinite(length) && length > limits.bytes) tooLarge(limits.bytes, `${where} (Content-Length ${length})`);
    watch.headers(Number.isFinite(length) ? length : Infinity);
    const into = new IndexBytes(limits, where);
    if (res.body === null || res.body === undefined) {
      // (A fetch without streams.)
      const bytes = new Uint8Array(await res.arrayBuffer());
      watch.bytes(bytes.byteLength);
      into.push(bytes);
    } else {
      let n = 0;
      try {
        await readStream(res.body, into, (k) => {
          n += k;
          watch.bytes(k);
        });
      } catch (e) {
        if (e instanceof SafeTensorsError || watch.timedOut || signal?.aborted) throw e;
        fail(
          KIND.ShortBody,
          `${http.url}: the connection broke after ${n} bytes of the index: ${e?.cause?.message ?? e?.message ?? e}`,
          { cause: e },
        );
      }
    }
    return into.end();
  });
}
