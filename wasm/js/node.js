// Entry for Node (the "node" export condition): reads the .wasm beside this file.
import { readFileSync } from 'node:fs';
import { initSync } from './safetensors_nano_wasm.js';

initSync({ module: readFileSync(new URL('./safetensors_nano_wasm_bg.wasm', import.meta.url)) });

export * from './api.js';
