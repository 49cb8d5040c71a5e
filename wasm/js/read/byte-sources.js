// Where a file's bytes come from: memory, a Blob or File, an HTTP URL, or
// nothing (a header alone). A SafeTensors reads every byte through its
// source: the header when it opens (openLazy), tensor data on demand.

import { checkHeaderLength, openPrefix } from './description.js';
import { KIND, SafeTensorsError, fail } from '../errors/safetensors-error.js';
import { allocate } from '../runtime/wasm-guard.js';
import {
  concat,
  httpError,
  httpOptions,
  readBody,
  refuseEncoded,
  request,
  transientShortBody,
  walkBody,
} from '../http/request.js';

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
 *   it). Failures are SafeTensorsErrors: SourceChanged when the file changed
 *   since it was opened (size, ETag/Last-Modified, a File edited on disk),
 *   never other bytes; for HTTP also Timeout, Network, TooManyRedirects,
 *   ShortBody, RangeMismatch, ContentEncoded and Http (http/request.js); NoSource
 *   when there is no data at all.
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
    // Whether it is read in order through its stream (InOrderReader); a
    // Blob-like object with slice() and arrayBuffer() alone is read by range.
    this.streams = typeof blob.stream === 'function';
  }
  async read(start, end, signal) {
    signal?.throwIfAborted();
    let buf;
    try {
      buf = await this.blob.slice(start, end).arrayBuffer();
    } catch (e) {
      throw blobError(e);
    }
    signal?.throwIfAborted();
    if (buf.byteLength !== end - start) {
      fail(
        KIND.SourceChanged,
        `read ${buf.byteLength} bytes of ${end - start} at file byte ${start}: the file changed since it was opened`,
      );
    }
    this.bytesRead += buf.byteLength;
    return new Uint8Array(buf);
  }
}

// Browsers (and Node's fs.openAsBlob) refuse to read a File whose file on
// disk changed after it was picked: NotReadableError (WebKit: NotFoundError),
// a SourceChanged here. (Firefox reads the file as it is now.)
function blobError(e) {
  if (e?.name !== 'NotReadableError' && e?.name !== 'NotFoundError') return e;
  return new SafeTensorsError(
    KIND.SourceChanged,
    `the file changed on disk since it was opened (${e.message}): open it again`,
    { cause: e },
  );
}

// The bytes of one piece of an InOrderReader's stream, at most.
const IN_ORDER_PIECE = 4 * 1024 * 1024;

// Chromium collects a Blob's stream that nothing in JavaScript refers to,
// even with a read in flight, and that read then never settles: a caller
// awaiting it (through an async function, which only the read's promise
// refers to) would wait for ever. Each reader with a read in flight is
// kept here until the read settles.
const reading = new Set();

// (This also handles the read's failure, which surfaces where the read is
// awaited.)
function holdWhile(reader, read) {
  reading.add(reader);
  const release = () => reading.delete(reader);
  read.then(release, release);
}

/**
 * Reads a BlobSource in order, from `start` up to `end`, through the stream
 * of that slice of the Blob, the next piece read while one is used. A
 * browser reads a Blob this way at the speed of blob.arrayBuffer() without a
 * new buffer for each range: pieces go into two buffers taken in turn (a
 * byte stream's own reader), or are the stream's chunks where Blob streams
 * are not byte streams. The buffers are no bigger than the slice, so a
 * reader of one small tensor is small. `pos` is the first byte not handed
 * out yet; a piece that runs on past what a call asked for is kept for the
 * next call. A read of the stream that fails is made again by range
 * (BlobSource.read), whose error says what happened (a browser's stream
 * reports any failure as a bare "network error").
 */
export class InOrderReader {
  #source;
  #reader;
  #byob = false;
  #spares = []; // buffers neither read into nor handed out (byte streams)
  #rest = null;
  #next = null;
  #file = false;
  #arrived; // the end of the bytes the stream has brought so far
  #confirmed; // bytes before it were read before any change to the File
  #checking = null; // the range read confirming them, while in flight
  #changed = null; // the SourceChanged error, once a check failed

  constructor(source, start, end) {
    this.#source = source;
    this.pos = start;
    this.end = end;
    this.broken = false; // a read failed: the stream is not to be used again
    this.#arrived = start;
    this.#confirmed = start;
    this.#file = typeof File === 'function' && source.blob instanceof File;
    const stream = source.blob.slice(start, end).stream();
    try {
      this.#reader = stream.getReader({ mode: 'byob' });
      this.#byob = true;
    } catch {
      this.#reader = stream.getReader();
    }
    if (this.#byob) {
      const size = Math.min(IN_ORDER_PIECE, end - start);
      this.#spares.push(new ArrayBuffer(size), new ArrayBuffer(size));
    }
  }

  // Asks for the piece at file byte `from`, into a spare buffer (the stream
  // holds it until the piece is in): one is always free, as at most one
  // other is in use. A reader whose `end` lies past a call's reads the
  // next tensor's first piece while the last one of this call is used.
  #ask(from) {
    const to = this.end;
    if (from >= to) return null;
    let r;
    if (!this.#byob) r = this.#reader.read();
    else {
      const buf = this.#spares.pop();
      const view = new Uint8Array(buf, 0, Math.min(buf.byteLength, to - from));
      r = this.#reader.read(view, { min: view.byteLength });
    }
    holdWhile(this, r);
    return r;
  }

  // A File's stream, once open, may go on reading its file after the file
  // was edited on disk (Chromium's does), and give the new bytes. A range
  // read is refused once the file changed (NotReadableError): one byte
  // read by range after bytes came in says they came before any change.
  // A call checks once, after its last piece came in, beside the use of
  // that piece, and waits for it before it returns (#confirm); bytes that
  // came in before a check that passed need none of their own.
  #startCheck() {
    const covers = this.#arrived;
    this.#checking = this.#source.blob
      .slice(covers - 1, covers)
      .arrayBuffer()
      .then(
        () => {
          if (covers > this.#confirmed) this.#confirmed = covers;
        },
        (e) => {
          this.#changed ??= blobError(e);
        },
      )
      .finally(() => {
        this.#checking = null;
      });
  }

  // Resolves once the bytes before `upTo` are known to be the File's as it
  // was opened; throws SourceChanged if the file changed on disk.
  async #confirm(upTo) {
    while (this.#file && this.#changed === null && this.#confirmed < upTo) {
      if (this.#checking === null) this.#startCheck();
      await this.#checking;
    }
    if (this.#changed !== null) throw this.#changed;
  }

  /**
   * Hands bytes [pos, upTo) to `use` piece by piece (views valid only
   * during the call: their memory takes a later piece); pos ends at upTo.
   * Resolves once those bytes are known to be the file's as opened: `use`
   * may have seen bytes of an edited File when this rejects.
   */
  async take(upTo, signal, use) {
    while (this.pos < upTo) {
      let piece = this.#rest;
      this.#rest = null;
      if (piece === null) {
        signal?.throwIfAborted();
        let r;
        try {
          r = await (this.#next ?? this.#ask(this.pos));
        } catch {
          this.#next = null;
          this.broken = true;
          // The same bytes by range: their error is typed (SourceChanged
          // for a file changed on disk), or they are the file's.
          const bytes = await this.#source.read(this.pos, upTo, signal);
          this.pos = upTo;
          use(bytes);
          this.#confirmed = this.#arrived = upTo; // (the range read was the check)
          return;
        }
        this.#next = null;
        // (A byte stream's last read may bring bytes with done set.)
        if (r.value === undefined || r.value.byteLength === 0) {
          fail(
            KIND.SourceChanged,
            `the file ended at byte ${this.pos}, before byte ${this.end}: it changed since it was opened`,
          );
        }
        piece = r.value;
        this.#arrived = this.pos + piece.byteLength;
        this.#source.bytesRead += piece.byteLength;
        if (!r.done) this.#next = this.#ask(this.#arrived);
        // The piece that completes this call: its check runs while it is used.
        if (this.#file && this.#checking === null && this.#arrived >= upTo) this.#startCheck();
        signal?.throwIfAborted();
      }
      const n = Math.min(piece.byteLength, upTo - this.pos);
      if (n < piece.byteLength) this.#rest = piece.subarray(n);
      this.pos += n;
      use(piece.subarray(0, n));
      // Its buffer is free once the piece is used up: the next one goes in.
      if (this.#rest === null && this.#byob) this.#spares.push(piece.buffer);
    }
    await this.#confirm(upTo);
  }

  /** Lets the stream and its buffers go. */
  close() {
    this.#rest = null;
    this.#next = null;
    this.#spares = [];
    this.#reader.cancel().catch(() => {});
  }
}

/**
 * Whether a request to `url` with a header that is not CORS-safelisted
 * (If-Range) makes a browser ask the server first (a preflight, which a
 * server may refuse): cross-origin in a page or Worker. Without If-Range
 * the answers are still checked, so a change is still SourceChanged.
 */
function needsPreflight(url) {
  const here = globalThis.location;
  if (typeof here?.origin !== 'string' || here.origin === 'null') return false;
  try {
    return new URL(url, here.href).origin !== here.origin;
  } catch {
    return true;
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
 * The largest file kept whole in memory when its server ignores Range and
 * answers 200 with the whole file (64 MiB): of a larger one only the length
 * prefix and header are kept (the body is cancelled there), and each later
 * read streams through a new whole body or is refused (`noRange`).
 */
export const KEEP_WHOLE_LIMIT = 64 * 1024 * 1024;

/** Checks fromUrl's `noRange` option ('stream' by default, or 'reject'). */
export function noRangeOption(value = 'stream') {
  if (value !== 'stream' && value !== 'reject') throw new TypeError("noRange: expected 'stream' or 'reject'");
  return value;
}

// A body's length in bytes of the file: its Content-Length, unless the
// body is encoded (then that counts the encoded bytes) or there is none.
function fileLength(res) {
  const coding = res.headers.get('Content-Encoding');
  if (coding !== null && coding.trim() !== '' && coding.trim().toLowerCase() !== 'identity') return null;
  const length = res.headers.get('Content-Length');
  return length !== null && /^\s*\d+\s*$/.test(length) ? Number(length) : null;
}

/**
 * Bytes [at, end) of a file handed on in order as pieces of answers come
 * past (`use(bytes, position)`, a view valid during the call); `at` only
 * grows, so an answer that is tried again resumes where the last one
 * stopped, and nothing is handed on twice.
 */
class Pass {
  constructor(start, end, use) {
    this.at = start;
    this.end = end;
    this.use = use;
  }

  /** Hands on what of `piece` (file bytes from `pos`) is due; true once all is. */
  give(piece, pos) {
    const from = Math.max(this.at, pos);
    const to = Math.min(this.end, pos + piece.byteLength);
    if (to > from) {
      this.use(piece.subarray(from - pos, to - pos), from);
      this.at = to;
    }
    return this.at >= this.end;
  }
}

/**
 * An HTTP(S) URL (fromUrl): each read is a Range request, pinned to the
 * version first opened (If-Range with its strong ETag or Last-Modified, and
 * every answer's validators and Content-Range total compared with the
 * first's: a change is SourceChanged, never other bytes). A server that
 * answers 200 instead has the whole file read into `bytes` when it is at
 * most KEEP_WHOLE_LIMIT bytes (and checked to be the same file); a larger
 * one is walked through a new body for each read, held a piece at a time
 * (`noRange: 'stream'`), or refused with RangeUnsupported ('reject').
 * Requests go through http/request.js: `timeout`, `retries`.
 */
export class UrlSource {
  constructor(url, headers, fetchFn, headerLimit, { timeout, retries, ifRange, noRange } = {}) {
    this.url = url;
    this.headerLimit = headerLimit;
    this.headers = headers;
    this.http = { url, fetch: fetchFn, ...httpOptions({ timeout, retries }) };
    this.ifRange = ifRange ?? !needsPreflight(url);
    this.noRange = noRangeOption(noRange);
    this.ranges = true; // false once the server answered a Range request with the whole file
    this.size = 0;
    this.bytesRead = 0;
    this.bytes = null; // set when the server sent the whole file
    this.etag = null; // the first answer's validators
    this.lastModified = null;
    this.total = null;
    this.head = null; // the header's bytes, kept when there is no validator
  }

  // The Range header, and If-Range once there is a validator to pin (only a
  // strong ETag or a date may be one: RFC 9110 13.1.5).
  #init(start, end) {
    const headers = withRange(this.headers, start, end);
    const pin = this.etag !== null && !this.etag.startsWith('W/') ? this.etag : this.lastModified;
    if (this.ifRange && pin !== null) headers.set('If-Range', pin);
    return { headers };
  }

  #pinTo(res) {
    this.etag = res.headers.get('ETag');
    this.lastModified = res.headers.get('Last-Modified');
  }

  // How an answer's validators differ from the first answer's, or null.
  #changed(res) {
    const etag = res.headers.get('ETag');
    if (this.etag !== null && etag !== null && etag !== this.etag) return `ETag ${this.etag}, now ${etag}`;
    const lm = res.headers.get('Last-Modified');
    if (this.lastModified !== null && lm !== null && lm !== this.lastModified)
      return `Last-Modified ${this.lastModified}, now ${lm}`;
    return null;
  }

  #fail(kind, what) {
    fail(kind, `${this.url}: ${what}`);
  }

  /** Called by openLazy with the header's bytes once it is parsed. */
  pin(head) {
    if (this.etag === null && this.lastModified === null && this.bytes === null) this.head = head.slice();
  }

  // First request: a speculative prefix; learns the size, or the whole body
  // (refused once its first 8 bytes give a header over the limit).
  first(want, signal) {
    return request(this.http, { headers: withRange(this.headers, 0, want) }, signal, async (res, watch) => {
      if (res.status === 206) {
        refuseEncoded(res, this.url);
        const range = parseContentRange(res.headers.get('Content-Range'));
        if (
          range === null ||
          range.total === null ||
          range.start !== 0 ||
          range.end > want ||
          BigInt(range.end) > range.total
        ) {
          this.#fail(
            KIND.RangeMismatch,
            `asked for bytes 0-${want - 1}, the answer's Content-Range is ` +
              `${JSON.stringify(res.headers.get('Content-Range'))}`,
          );
        }
        const bytes = await readBody(res, watch, this.url, { max: want, min: range.end });
        this.#pinTo(res);
        this.total = range.total;
        this.size = Number(range.total);
        this.bytesRead += bytes.byteLength;
        return { prefix: bytes, total: range.total };
      }
      if (res.status === 200) return this.#firstWhole(res, watch);
      if (res.status === 416) {
        const range = parseContentRange(res.headers.get('Content-Range'));
        if (range !== null && range.total !== null) {
          await res.body?.cancel();
          this.#pinTo(res);
          this.total = range.total;
          return { prefix: new Uint8Array(0), total: range.total };
        }
      }
      throw httpError(res, this.url);
    });
  }

  // A 200 to the first Range request: the whole file. One of up to
  // KEEP_WHOLE_LIMIT bytes is kept (as it streams, when its length is not
  // said); of a larger one the body is cancelled once the length prefix and
  // header are in (refused from its first 8 bytes when over the limit).
  async #firstWhole(res, watch) {
    const length = fileLength(res);
    const keep = length === null ? KEEP_WHOLE_LIMIT : length <= KEEP_WHOLE_LIMIT ? length : 0;
    const chunks = [];
    let held = 0;
    let need = Infinity; // 8 + N, once the first 8 bytes are in
    let stopped = false;
    const n = await walkBody(res, watch, this.url, length ?? Infinity, (piece) => {
      chunks.push(piece);
      held += piece.byteLength;
      if (need === Infinity && held >= 8) need = checkHeaderLength(concat(chunks, 8), this.headerLimit);
      stopped = held > keep && held >= need;
      return stopped;
    });
    this.bytesRead += n;
    if (length !== null && n < length && !stopped) throw transientShortBody(this.url, n, length);
    if (!stopped) {
      const bytes = concat(chunks, held);
      this.bytes = bytes;
      this.size = held;
      return { prefix: bytes, total: BigInt(held) };
    }
    if (length === null) {
      this.#fail(
        KIND.RangeUnsupported,
        `ignores Range requests (it answered 200 with the whole file) without saying the file's length (no ` +
          `Content-Length, or an encoded body), and the file is over the ${KEEP_WHOLE_LIMIT} bytes kept in memory: ` +
          'serve it from a server that answers Range requests with 206',
      );
    }
    this.ranges = false;
    this.#pinTo(res);
    this.total = BigInt(length);
    this.size = length;
    return { prefix: concat(chunks, need), total: this.total };
  }

  async read(start, end, signal) {
    if (this.bytes !== null) return this.bytes.subarray(start, end);
    if (end <= start) return new Uint8Array(0);
    if (!this.ranges) {
      this.#refuseUnlessStreaming(start, end);
      const out = allocate(Uint8Array, end - start, `bytes ${start}-${end - 1} of ${this.url}`);
      await this.readInOrder(start, end, signal, (bytes, at) => out.set(bytes, at - start));
      return out;
    }
    return request(this.http, this.#init(start, end), signal, (res, watch) =>
      this.#answer(res, watch, start, end, null),
    );
  }

  /**
   * Hands bytes [start, end) to `use(bytes, position)` piece by piece, in
   * order, from one answer (views valid during the call), holding a piece
   * at a time: for a server that ignores Range, the pass through its whole
   * body (cancelled at `end`) that `noRange: 'stream'` allows.
   */
  async readInOrder(start, end, signal, use) {
    if (end <= start) return;
    if (this.bytes !== null) {
      use(this.bytes.subarray(start, end), start);
      return;
    }
    if (!this.ranges) this.#refuseUnlessStreaming(start, end);
    const pass = new Pass(start, end, use);
    await request(this.http, this.#init(start, end), signal, (res, watch) =>
      this.#answer(res, watch, start, end, pass),
    );
  }

  #refuseUnlessStreaming(start, end) {
    if (this.noRange === 'stream') return;
    this.#fail(
      KIND.RangeUnsupported,
      `ignores Range requests (it answered 200 with the whole file of ${this.size} bytes, over the ` +
        `${KEEP_WHOLE_LIMIT} kept in memory), so bytes ${start}-${end - 1} can only be had by downloading ` +
        'the file up to them: serve it from a server that answers Range requests with 206, or open it with ' +
        "{ noRange: 'stream' } to stream through the file for each read",
    );
  }

  // One answer to a Range request for [start, end): its bytes, or with a
  // Pass, handed to it (and nothing returned).
  async #answer(res, watch, start, end, pass) {
    const contentRange = res.headers.get('Content-Range');
    const range = parseContentRange(contentRange);
    // (Only answers about the file carry its validators: an error page's
    // ETag is the page's.)
    if (res.status === 200 || res.status === 206 || res.status === 416) {
      const changed = this.#changed(res);
      if (changed !== null) this.#fail(KIND.SourceChanged, `changed since it was opened (${changed})`);
      if (range !== null && range.total !== null && range.total !== this.total) {
        this.#fail(KIND.SourceChanged, `changed since it was opened: now ${range.total} bytes, was ${this.total}`);
      }
    }
    if (res.status === 206) {
      refuseEncoded(res, this.url);
      if (range === null || range.total === null || range.start !== start || range.end !== end) {
        this.#fail(
          KIND.RangeMismatch,
          `asked for bytes ${start}-${end - 1}, the answer's Content-Range is ${JSON.stringify(contentRange)}`,
        );
      }
      if (pass !== null) {
        const n = await walkBody(res, watch, this.url, end - start, (piece, at) => pass.give(piece, start + at));
        this.bytesRead += n;
        if (n < end - start) throw transientShortBody(this.url, n, end - start);
        return undefined;
      }
      const bytes = await readBody(res, watch, this.url, { max: end - start, min: end - start });
      this.bytesRead += bytes.byteLength;
      return bytes;
    }
    if (res.status === 200) return this.#whole(res, watch, start, end, pass);
    if (res.status === 412) this.#fail(KIND.SourceChanged, 'changed since it was opened (412 Precondition Failed)');
    if (res.status === 416) {
      this.#fail(
        KIND.RangeMismatch,
        `answered 416 (range not satisfiable) for bytes ${start}-${end - 1} of its ${this.total} bytes`,
      );
    }
    throw httpError(res, this.url);
  }

  // A 200 to a Range request: with If-Range sent, the file changed (its
  // validators differ: refused above); else the server ignores ranges. The
  // body is used only when it is the same file: the same validators, or
  // (without any) the same size and header bytes. It is read whole when the
  // file is at most KEEP_WHOLE_LIMIT bytes, else walked up to `end`.
  async #whole(res, watch, start, end, pass) {
    const length = res.headers.get('Content-Length');
    if (length !== null && res.headers.get('Content-Encoding') === null && Number(length) !== this.size) {
      this.#fail(KIND.SourceChanged, `changed since it was opened: now ${length} bytes, was ${this.size}`);
    }
    const sameValidator =
      (this.etag !== null && res.headers.get('ETag') === this.etag) ||
      (this.lastModified !== null && res.headers.get('Last-Modified') === this.lastModified);
    if (!sameValidator && this.head === null) {
      this.#fail(
        KIND.SourceChanged,
        'answered a Range request with a whole body without its ETag or Last-Modified: it may be another version',
      );
    }
    if (pass !== null || this.size > KEEP_WHOLE_LIMIT)
      return this.#walkWhole(res, watch, start, end, pass, sameValidator);
    const bytes = await readBody(res, watch, this.url, { max: this.size, min: length === null ? 0 : this.size });
    this.bytesRead += bytes.byteLength;
    if (bytes.byteLength !== this.size) {
      this.#fail(KIND.SourceChanged, `changed since it was opened: now ${bytes.byteLength} bytes, was ${this.size}`);
    }
    if (!sameValidator && !sameBytes(bytes.subarray(0, this.head.byteLength), this.head)) {
      this.#fail(KIND.SourceChanged, 'changed since it was opened: its header bytes differ');
    }
    this.bytes = bytes;
    return bytes.subarray(start, end);
  }

  // Walks a whole body up to `end`, checking the header bytes on the way
  // (without a validator), and hands [start, end) to `pass` (or returns
  // them, without one).
  async #walkWhole(res, watch, start, end, pass, sameValidator) {
    this.ranges = false;
    this.#refuseUnlessStreaming(start, end);
    let out = null;
    if (pass === null) {
      out = allocate(Uint8Array, end - start, `bytes ${start}-${end - 1} of ${this.url}`);
      pass = new Pass(start, end, (bytes, at) => out.set(bytes, at - start));
    }
    const head = sameValidator ? null : this.head;
    const n = await walkBody(res, watch, this.url, end, (piece, at) => {
      if (head !== null && at < head.byteLength) {
        const k = Math.min(piece.byteLength, head.byteLength - at);
        if (!sameBytes(piece.subarray(0, k), head.subarray(at, at + k))) {
          this.#fail(KIND.SourceChanged, 'changed since it was opened: its header bytes differ');
        }
      }
      return pass.give(piece, at);
    });
    this.bytesRead += n;
    if (n < end)
      this.#fail(
        KIND.SourceChanged,
        `changed since it was opened: its whole body ended at byte ${n}, before byte ${end}`,
      );
    return out ?? undefined;
  }
}

function sameBytes(a, b) {
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
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
    if (typeof r !== 'number') {
      source.pin?.(prefix.subarray(0, r.headerSize + 8));
      return r;
    }
    // r ≤ 8 + limit here: openPrefix checked the limit and the file size.
    const more = await source.read(prefix.byteLength, r, signal);
    prefix = concat([prefix, more], prefix.byteLength + more.byteLength);
  }
}
