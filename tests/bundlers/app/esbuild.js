// The sample for esbuild, which copies no .wasm file for
// `new URL(…, import.meta.url)`: its file loader copies them, and init
// loads them from there.
import * as stn from 'safetensors-nano';
import reader from 'safetensors-nano/safetensors_nano_wasm_bg.wasm';
import writer from 'safetensors-nano/safetensors_nano_writer_bg.wasm';
import { report } from './app.js';

// Before init the import has succeeded, and a call says what is missing.
let before = null;
try {
  stn.SafeTensors.fromBytes(new Uint8Array(16));
} catch (e) {
  before = e.kind;
}

// A failed init says so too (as does one with no reader, here), and a
// later one can still succeed.
const failed = await stn.init('./missing.wasm').then(
  () => null,
  (e) => e.kind,
);
const none = await stn.init().then(
  () => null,
  (e) => e.kind,
);

await stn.init({ reader, writer });
report(stn, { before, failed, none });
