// Entry for browsers and bundlers (Node and Deno take node.js): fetches the .wasm files beside this file.
import init from './safetensors_nano_wasm.js';
import { setWriterLoader } from './writer.js';

await init({ module_or_path: new URL('./safetensors_nano_wasm_bg.wasm', import.meta.url) });
// The writer's module: fetched by the first `serialize`, so pages that only
// read never download it.
setWriterLoader(async () => {
  const writer = await import('./safetensors_nano_writer.js');
  await writer.default({ module_or_path: new URL('./safetensors_nano_writer_bg.wasm', import.meta.url) });
  return writer;
});

export * from './api.js';
