// Entry for Node (the "node" export condition): reads the .wasm files beside this file.
import * as buffer from 'node:buffer';
import { readFileSync } from 'node:fs';
import { initSync } from './safetensors_nano_wasm.js';
import { setAsciiDecoder } from './text.js';
import { setWriterLoader } from './writer.js';

const local = (name) => readFileSync(new URL(name, import.meta.url));
initSync({ module: local('./safetensors_nano_wasm_bg.wasm') });
// The writer's module: loaded by the first `serialize`.
setWriterLoader(async () => {
  const writer = await import('./safetensors_nano_writer.js');
  writer.initSync({ module: local('./safetensors_nano_writer_bg.wasm') });
  return writer;
});

// ASCII header text through Buffer: an 11 KB header in ~0.8 µs, where
// Node's TextDecoder takes ~1.2 µs. (Deno loads this entry too, and its
// node:buffer has isAscii only from 1.44: without it, TextDecoder.)
const { Buffer, isAscii } = buffer;
if (typeof isAscii === 'function') {
  setAsciiDecoder((bytes) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1'), isAscii);
}

export * from './api.js';
