// The writer's wasm module, loaded on first use: `serialize` needs it, and
// opening files does not, so a page that only reads never downloads it.
// The entry (index.js for browsers, node.js for Node) says how to load it.

let load = null;
let loaded = null;

/** Called once by the entry: `loader` resolves to the initialised module. */
export function setWriterLoader(loader) {
  load = loader;
}

/** The writer's module (wasm-bindgen's exports), loaded at the first call. */
export function writerModule() {
  if (loaded === null) {
    if (load === null) throw new Error('safetensors-nano: import the package through its entry (index.js or node.js)');
    loaded = load().catch((e) => {
      loaded = null; // a failed fetch may be retried
      throw e;
    });
  }
  return loaded;
}
