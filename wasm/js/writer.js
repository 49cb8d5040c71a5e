// The writer's wasm module, loaded on first use: `serialize` needs it, and
// opening files does not, so a page that only reads never downloads it.
// The entry (index.js for browsers, node.js for Node) says how to load it.

let load = null;
let loading = null;
let ready = null;

/** Called once by the entry: `loader` resolves to the initialised module. */
export function setWriterLoader(loader) {
  load = loader;
}

/** The writer's module once it has loaded, else null (no waiting). */
export function loadedWriter() {
  return ready;
}

/** Loads the writer's module (once; concurrent callers share the load). */
export function loadWriter() {
  if (loading === null) {
    if (load === null) return Promise.reject(new Error('import the package through its entry (index.js or node.js)'));
    loading = load().then(
      (module) => {
        ready = module;
        return module;
      },
      (e) => {
        // Let a later call try again (a browser may keep failing an import
        // until the page reloads; a failed .wasm fetch or read can recover).
        loading = null;
        throw e;
      },
    );
  }
  return loading;
}
