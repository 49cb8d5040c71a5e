// The writer's wasm module, loaded on first use: `serialize` needs it, and
// opening files does not, so a page that only reads never downloads it.
// The entry (index.js for browsers, node.js for Node) says how to load it.

import { guardExports } from './wasm-guard.js';

let load = null;
let source;
let loading = null;
let ready = null;

/**
 * Called once by the entry: `loader(source)` resolves to the initialised
 * module, from `source` (see setWriterSource) or, when undefined, from the
 * entry's default place.
 */
export function setWriterLoader(loader) {
  load = loader;
}

/** Where the next load takes the writer's `.wasm` from (init's `writer`). */
export function setWriterSource(src) {
  source = src;
}

/** The writer's exports (guarded: runtime/wasm-guard.js) once it has loaded, else null (no waiting). */
export function loadedWriter() {
  return ready;
}

/** Loads the writer's module (once; concurrent callers share the load). */
export function loadWriter() {
  if (loading === null) {
    if (load === null) return Promise.reject(new Error('import the package through its entry (index.js or node.js)'));
    loading = load(source).then(
      (module) => {
        ready = guardExports(module, ['plan', 'take_bytes', 'convert']);
        return ready;
      },
      (e) => {
        // Let a later call try again (a browser may keep failing an import
        // until the page reloads; a failed .wasm fetch or read can recover,
        // or init may give another source).
        loading = null;
        throw e;
      },
    );
  }
  return loading;
}
