// One HTTP request as a careful download manager makes it: a deadline on
// progress (no answer, a stalled or trickling body), a few retries for what
// is transient (5xx, a dropped connection, a stall), never a retry for an
// answer that is wrong, and every failure a typed SafeTensorsError.

import { KIND, SafeTensorsError, fail } from '../errors/safetensors-error.js';

/** Default `timeout`: ms a request may go without enough progress. */
export const DEFAULT_TIMEOUT = 30_000;
/** Default `retries`: further tries after a transient failure. */
export const DEFAULT_RETRIES = 2;
/**
 * The least a body must deliver in each `timeout` window (or all it has
 * left, when less): a trickle below it is a Timeout rather than a download
 * that never ends. Any working link moves this much in seconds.
 */
export const MIN_PROGRESS = 16384;
// Wait before retry i (0-based): RETRY_DELAY · 2^i ms.
const RETRY_DELAY = 200;
// Statuses that say "try again" (RFC 9110: a timeout, overload, a gateway).
const RETRY_STATUS = new Set([408, 429, 500, 502, 503, 504]);

// The longest delay setTimeout keeps (2^31 − 1 ms, about 24.8 days): a
// longer one fires at once.
const MAX_TIMER = 2 ** 31 - 1;

/**
 * Checks the `timeout` and `retries` options; returns them with defaults.
 * TypeError for a value that is not one. A timeout longer than timers can
 * wait (2^31 − 1 ms) is Infinity: no deadline.
 */
export function httpOptions({ timeout = DEFAULT_TIMEOUT, retries = DEFAULT_RETRIES } = {}) {
  if (!(typeof timeout === 'number' && timeout > 0))
    throw new TypeError('timeout: expected a positive number of milliseconds (or Infinity)');
  if (!(Number.isInteger(retries) && retries >= 0)) throw new TypeError('retries: expected a non-negative integer');
  return { timeout: timeout > MAX_TIMER ? Infinity : timeout, retries };
}

// The errors a later try may not repeat (kept off the error objects).
const TRANSIENT = new WeakSet();

/** A SafeTensorsError that a later try may not repeat. */
function transient(kind, message, opts) {
  const e = new SafeTensorsError(kind, message, opts);
  TRANSIENT.add(e);
  return e;
}

/** The Http error of an answer with an error status (transient for RETRY_STATUS). */
export function httpError(res, url) {
  const e = new SafeTensorsError(KIND.Http, `HTTP ${res.status} ${res.statusText} for ${url}`);
  if (RETRY_STATUS.has(res.status)) TRANSIENT.add(e);
  return e;
}

/**
 * Watches one try's progress: in every `timeout` ms window the bytes that
 * came in must reach `min(MIN_PROGRESS, bytes still expected when the window
 * began)` (the answer's headers arriving count as progress), else the try
 * is aborted as a Timeout.
 */
class Watchdog {
  constructor(timeout, controller) {
    this.timeout = timeout;
    this.controller = controller;
    this.expected = Infinity; // bytes still to come, when known
    this.need = MIN_PROGRESS;
    this.window = 0;
    this.headersCame = false;
    this.timedOut = false;
    this.timer = null;
    this.arm();
  }
  arm() {
    if (this.timeout === Infinity) return;
    this.window = 0;
    this.headersCame = false;
    this.need = Math.min(MIN_PROGRESS, this.expected);
    this.timer = setTimeout(() => this.check(), this.timeout);
  }
  check() {
    if (this.headersCame || this.window >= this.need) {
      this.arm();
      return;
    }
    this.timedOut = true;
    this.controller.abort(new SafeTensorsError(KIND.Timeout, 'timed out'));
  }
  headers(expected) {
    this.headersCame = true;
    this.expected = expected;
  }
  bytes(n) {
    this.window += n;
    this.expected -= n;
  }
  stop() {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}

function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

// What a fetch that rejected before an answer means: a redirect loop
// (Node's fetch says so in its cause; browsers say only "Failed to
// fetch"), else a network failure (refused, reset, DNS, CORS).
function networkError(e, url) {
  const cause = e?.cause?.message ?? '';
  if (/redirect/i.test(cause)) return new SafeTensorsError(KIND.TooManyRedirects, `${url}: ${cause}`, { cause: e });
  const why = cause === '' ? (e?.message ?? String(e)) : `${e.message}: ${cause}`;
  return transient(KIND.Network, `request for ${url} failed: ${why}`, { cause: e });
}

/**
 * Makes a request to `url` with `init` (headers) and hands the answer to
 * `consume(res, watch)`, which reads its body through `readBody(…, watch)`
 * and returns the value request resolves to. An answer with a retry status,
 * a network failure, a stall, or a transient error (ShortBody) that
 * `consume` throws is tried again, up to `retries` times, after 200, 400, …
 * ms. `signal` aborts everything with its reason.
 *
 * @param {{ url: string, fetch: typeof fetch, timeout: number, retries: number }} http
 */
export async function request(http, init, signal, consume) {
  const { url, timeout, retries } = http;
  for (let attempt = 0; ; attempt++) {
    signal?.throwIfAborted();
    const controller = new AbortController();
    const onAbort = () => controller.abort(signal.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    const watch = new Watchdog(timeout, controller);
    let res = null;
    try {
      const fetchFn = http.fetch; // called without a receiver: window.fetch insists
      try {
        res = await fetchFn(url, { ...init, signal: controller.signal });
      } catch (e) {
        throw watch.timedOut || signal?.aborted ? e : networkError(e, url);
      }
      watch.headers(Infinity);
      if (RETRY_STATUS.has(res.status)) {
        await cancel(res);
        throw httpError(res, url);
      }
      return await consume(res, watch);
    } catch (e) {
      if (res !== null) await cancel(res);
      if (signal?.aborted) throw signal.reason;
      const error = watch.timedOut
        ? transient(
            KIND.Timeout,
            `${url} made no progress for ${timeout} ms (under ${MIN_PROGRESS} bytes in that time, or no answer)`,
          )
        : e;
      if (!TRANSIENT.has(error) || attempt >= retries) {
        if (attempt > 0 && error instanceof SafeTensorsError) error.message += ` (after ${attempt + 1} tries)`;
        throw error;
      }
      await sleep(RETRY_DELAY * 2 ** attempt, signal);
    } finally {
      watch.stop();
      signal?.removeEventListener('abort', onAbort);
    }
  }
}

async function cancel(res) {
  try {
    await res.body?.cancel();
  } catch {
    // (A body already errored or read has nothing to cancel.)
  }
}

/**
 * The body of an answer, read as it arrives and counted by `watch`: more
 * than `max` bytes is an Http error as soon as they arrive (a server cannot
 * make us download what we did not ask for), and fewer than `min` bytes (the answer said it would
 * send that many) is a ShortBody error, as is a connection that breaks
 * mid-body.
 */
export async function readBody(res, watch, url, { max = Infinity, min = 0 } = {}) {
  const length = Number(res.headers.get('Content-Length') ?? Infinity);
  watch.headers(Math.min(max, Number.isFinite(length) ? length : Infinity));
  const chunks = [];
  let n = 0;
  if (res.body === null || res.body === undefined) {
    // (A fetch without streams.)
    const buf = new Uint8Array(await res.arrayBuffer());
    chunks.push(buf);
    n = buf.byteLength;
    if (n > max) tooLong(url, max);
  } else {
    const reader = res.body.getReader();
    try {
      for (;;) {
        const { done, value } = await nextPiece(reader, watch, url, n, min);
        if (done) break;
        n += value.byteLength;
        watch.bytes(value.byteLength);
        if (n > max) tooLong(url, max);
        chunks.push(value);
      }
    } catch (e) {
      reader.cancel().catch(() => {});
      throw e;
    }
  }
  if (n < min) throw transientShortBody(url, n, min);
  // A chunk may be a view into a larger (pooled) buffer: the answer gets a
  // buffer of its own, at offset 0, as arrayBuffer() gave (typed views of
  // the file's data are aligned as the file lays it out).
  const only = chunks.length === 1 ? chunks[0] : null;
  if (only !== null && only.byteOffset === 0 && only.byteLength === only.buffer.byteLength) return only;
  return concat(chunks, n);
}

/**
 * The next piece of a body being read (`n` bytes so far, of `min` when
 * known): a connection that breaks is a ShortBody error; a timeout, or an
 * error of ours, passes as it is.
 */
async function nextPiece(reader, watch, url, n, min = 0) {
  try {
    return await reader.read();
  } catch (e) {
    if (watch.timedOut || e instanceof SafeTensorsError) throw e;
    throw transient(
      KIND.ShortBody,
      `${url}: the connection broke after ${n} bytes of the answer${min > 0 ? ` (of ${min})` : ''}: ` +
        `${e?.cause?.message ?? e?.message ?? e}`,
      { cause: e },
    );
  }
}

/**
 * Walks an answer's body from its start, counted by `watch`: `visit(piece,
 * at)` gets each piece with its position in the body, until `upTo` bytes
 * have come or `visit` returns true; the rest is then cancelled, unread.
 * Resolves to the bytes that came (fewer than `upTo` when the body ended
 * first). Only the piece being visited is held. A connection that breaks
 * is a ShortBody error, as in readBody.
 */
export async function walkBody(res, watch, url, upTo, visit) {
  watch.headers(upTo);
  let n = 0;
  if (res.body === null || res.body === undefined) {
    // (A fetch without streams: the whole body at once.)
    const buf = new Uint8Array(await res.arrayBuffer());
    watch.bytes(buf.byteLength);
    visit(buf, 0);
    return buf.byteLength;
  }
  const reader = res.body.getReader();
  try {
    while (n < upTo) {
      const step = await nextPiece(reader, watch, url, n);
      if (step.done) return n;
      const at = n;
      n += step.value.byteLength;
      watch.bytes(step.value.byteLength);
      if (visit(step.value, at) === true) break;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
  return n;
}

/** The ShortBody error (tried again) of an answer that ended after `n` of the `promised` bytes. */
export function transientShortBody(url, n, promised) {
  return transient(
    KIND.ShortBody,
    `${url}: the answer ended after ${n} of its ${promised} bytes (Content-Length or Content-Range promised more)`,
  );
}

function tooLong(url, max) {
  fail(KIND.Http, `${url} sent more than the ${max} bytes asked for`);
}

/**
 * A body's encoding, when it is not the bytes themselves: a Range answer
 * must not be compressed (its Content-Range counts the encoded bytes, or a
 * proxy compressed the slice), so any coding but identity is refused.
 */
export function refuseEncoded(res, url) {
  const coding = res.headers.get('Content-Encoding');
  if (coding !== null && coding.trim() !== '' && coding.trim().toLowerCase() !== 'identity') {
    fail(
      KIND.ContentEncoded,
      `${url} answered a range with Content-Encoding ${coding}: those are not the file's bytes`,
    );
  }
}

/**
 * A text document (a sharded model's index) fetched with the same
 * deadline, retries and typed errors as the file reads.
 */
export function fetchText(http, headers, signal) {
  return request(http, { headers }, signal, async (res, watch) => {
    if (!res.ok) throw httpError(res, http.url);
    const bytes = await readBody(res, watch, http.url);
    return new TextDecoder().decode(bytes);
  });
}

/** The first `n` bytes of `parts`, one after another, as one array. */
export function concat(parts, n) {
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
