// Entry for Node (the "node" export condition): reads the .wasm files beside
// this file, synchronously, so the entry has no top-level await and
// `require('safetensors-nano')` works where Node allows require(esm).
import * as buffer from 'node:buffer';
import { readFileSync } from 'node:fs';
import { init, readerFailed, readerLoaded } from './runtime/load-wasm.js';
import { initSync } from './safetensors_nano_wasm.js';
import { setAsciiDecoder } from './read/header-text.js';
import { setWriterLoader } from './runtime/writer-module.js';

const local = (name) => readFileSync(new URL(name, import.meta.url));
// A bundle for Node may leave the .wasm behind: `init(bytes)` then loads it.
try {
  initSync({ module: local('./safetensors_nano_wasm_bg.wasm') });
  readerLoaded();
} catch (e) {
  readerFailed(e, new URL('./safetensors_nano_wasm_bg.wasm', import.meta.url));
}
// The writer's module: loaded by the first `serialize`.
setWriterLoader(async (source) => {
  const writer = await import('./safetensors_nano_writer.js');
  if (source === undefined) writer.initSync({ module: local('./safetensors_nano_writer_bg.wasm') });
  else await writer.default({ module_or_path: source });
  return writer;
});

// ASCII header text through Buffer: an 11 KB header in ~0.8 µs, where
// Node's TextDecoder takes ~1.2 µs. (Deno loads this entry too, and its
// node:buffer has isAscii only from 1.44: without it, TextDecoder.)
const { Buffer, isAscii } = buffer;
if (typeof isAscii === 'function') {
  setAsciiDecoder((bytes) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1'), isAscii);
}

export { init };
export * from './api/package-exports.js';
export { writeFile, writeShards } from './write/node-files.js';
