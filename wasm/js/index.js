// Entry for browsers, bundlers and Deno: fetches the .wasm beside this file.
import init from './safetensors_nano_wasm.js';

await init({ module_or_path: new URL('./safetensors_nano_wasm_bg.wasm', import.meta.url) });

export * from './api.js';
