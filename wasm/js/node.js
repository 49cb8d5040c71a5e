// Entry for Node (the "node" export condition): reads the .wasm files beside this file.
import { readFileSync } from 'node:fs';
import { initSync } from './safetensors_nano_wasm.js';
import { setWriterLoader } from './writer.js';

const local = (name) => readFileSync(new URL(name, import.meta.url));
initSync({ module: local('./safetensors_nano_wasm_bg.wasm') });
// The writer's module: loaded by the first `serialize`.
setWriterLoader(async () => {
  const writer = await import('./safetensors_nano_writer.js');
  writer.initSync({ module: local('./safetensors_nano_writer_bg.wasm') });
  return writer;
});

export * from './api.js';
