// Entry for browsers and bundlers (Node and Deno take node.js): loads the
// .wasm files from beside this file. Vite and webpack copy them there for
// the `new URL(…, import.meta.url)` below, and so does a static server.
// Where they are not (esbuild, Rollup without an assets plugin), importing
// still succeeds: the page calls `await init(url)` (runtime/load-wasm.js) first.
import { init } from './runtime/load-wasm.js';
import { setWriterLoader } from './runtime/writer-module.js';

try {
  await init(new URL('./safetensors_nano_wasm_bg.wasm', import.meta.url));
} catch {
  // Kept by runtime/load-wasm.js: the first call that needs the module says why.
}
// The writer's module: fetched by the first `serialize`, so pages that only
// read never download it.
setWriterLoader(async (source = new URL('./safetensors_nano_writer_bg.wasm', import.meta.url)) => {
  const writer = await import('./safetensors_nano_writer.js');
  await writer.default({ module_or_path: source });
  return writer;
});

export { init };
export * from './api/package-exports.js';
