// Runs under `node --wasm-max-mem-pages=N` (the engine gives each wasm
// memory at most N 64 KiB pages, as a phone's browser gives little): opens
// a header whose parse needs more wasm memory than that, so the reader's
// allocation fails and its module traps for real, then shows the next calls
// work. Prints one line of JSON.
//
//   node --wasm-max-mem-pages=N trap-child.mjs PAIRS

import { SafeTensors, SafeTensorsError, decodeFloat32 } from 'safetensors-nano';
import { metadataFile, smallFile } from './trap-files.js';

const pairs = Number(process.argv[2]);
const describe = (e) => ({
  typed: e instanceof SafeTensorsError,
  kind: e?.kind,
  message: e?.message,
  cause:
    e?.cause === undefined
      ? null
      : { name: e.cause.name, message: e.cause.message, runtimeError: e.cause instanceof WebAssembly.RuntimeError },
});
const use = async () => {
  const st = SafeTensors.fromBytes(smallFile());
  return {
    names: st.names(),
    values: Array.from(await st.tensor('h').readFloat32()),
    decoded: Array.from(decodeFloat32('BF16', Uint8Array.of(0x80, 0x3f))),
  };
};

const out = { before: await use(), traps: [], after: [] };
const big = metadataFile(pairs);
for (let i = 0; i < 2; i++) {
  try {
    SafeTensors.fromBytes(big);
    out.traps.push(null);
  } catch (e) {
    out.traps.push(describe(e));
  }
  try {
    out.after.push(await use());
  } catch (e) {
    out.after.push(describe(e));
  }
}
console.log(JSON.stringify(out));
