// Node, bundled (esbuild --platform=node) away from the package's .wasm
// files: the import succeeds, and init takes the files' bytes.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { SafeTensors, init, serialize } from 'safetensors-nano';

let before = null;
try {
  SafeTensors.fromBytes(new Uint8Array(16));
} catch (e) {
  before = e.kind;
}
const wasm = (name) => readFileSync(createRequire(import.meta.url).resolve(`safetensors-nano/${name}`));
await init({ reader: wasm('safetensors_nano_wasm_bg.wasm'), writer: wasm('safetensors_nano_writer_bg.wasm') });
const bytes = await serialize({ w: { dtype: 'F32', shape: [2], data: new Float32Array([1, 2]) } });
console.log(JSON.stringify({ before, w: [...SafeTensors.fromBytes(bytes).tensor('w').view()] }));
