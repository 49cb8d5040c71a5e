// Loading the wasm modules: the reader's, which every parse and decode
// needs, and where the writer's comes from (runtime/writer-module.js loads it on the first
// `serialize`). Each entry tries the default place, beside the entry file;
// where that fails (a bundler that does not copy the .wasm files) the error
// waits for the first call, so the page can still call `init` with the
// files' URLs.

import initReader from '../safetensors_nano_wasm.js';
import { KIND, SafeTensorsError } from '../errors/safetensors-error.js';
import { setWriterSource } from './writer-module.js';

let loaded = false;
let loading = null;
// Why the last load failed and from where, for the error of a later call.
let failure = null;
let failedFrom = '';

/**
 * Loads the wasm modules. `input` is the reader's `.wasm`: its URL, a
 * Response (or a promise of one), its bytes or a WebAssembly.Module; or
 * `{ reader, writer }`, each of those kinds, the writer's used by the first
 * `serialize`. Once the reader has loaded, it stays as it is. Resolves when
 * the reader is loaded; rejects with kind "ReaderUnavailable" when it fails
 * to load, or none is given and the entry's own load failed.
 */
export async function init(input) {
  let reader = input;
  let writer;
  if (isOptions(input)) ({ reader, writer } = input);
  if (writer !== undefined) setWriterSource(writer);
  if (loaded) return;
  if (reader === undefined) throw unavailable();
  // Concurrent calls share one load (the glue instantiates once).
  loading ??= initReader({ module_or_path: reader }).finally(() => {
    loading = null;
  });
  try {
    await loading;
    loaded = true;
    failure = null;
  } catch (e) {
    readerFailed(e, reader);
    throw unavailable();
  }
}

// `{ reader, writer }`, as opposed to a URL, Response, bytes or Module.
function isOptions(x) {
  if (x === null || typeof x !== 'object') return false;
  const proto = Object.getPrototypeOf(x);
  return proto === Object.prototype || proto === null;
}

/** Called by an entry that instantiated the reader itself (synchronously). */
export function readerLoaded() {
  loaded = true;
  failure = null;
}

/** Called by an entry whose synchronous load of the reader from `input` failed. */
export function readerFailed(e, input) {
  failure = e;
  const url = input instanceof URL || typeof input === 'string' ? String(input) : input?.url;
  failedFrom = url ? ` from ${url}` : '';
}

/** Throws ReaderUnavailable unless the reader's module is loaded. */
export function requireReader() {
  if (!loaded) throw unavailable();
}

function unavailable() {
  const why =
    loading !== null
      ? 'is still loading: await init() before calling'
      : failure !== null
        ? `did not load${failedFrom} (${failure?.message ?? failure})`
        : 'is not loaded';
  return new SafeTensorsError(
    KIND.ReaderUnavailable,
    `the reader's wasm module ${why}; call \`await init(url)\` with the URL of safetensors_nano_wasm_bg.wasm ` +
      '(README: Bundlers)',
    failure === null ? undefined : { cause: failure },
  );
}
