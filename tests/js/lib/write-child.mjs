// A process that writes a file with the package's Node writeFile, for the
// tests that fill the disk or kill the writer (writefile.test.js):
//
//   node write-child.mjs PATH        writes newTensors() to PATH
//
// It prints one line of JSON: { ok: true, size } or { ok: false, kind, code, message }.

import { writeFile } from 'safetensors-nano';

/** The new file's tensors: 32 MiB of F32 values, written as BF16 (16 MiB), and some bytes. */
export function newTensors() {
  const values = new Float32Array(8 * 2 ** 20);
  for (let i = 0; i < values.length; i++) values[i] = (i % 1000) / 7;
  const bytes = new Uint8Array(2 ** 20).map((_, i) => (i * 13) & 0xff);
  return {
    'new.weight': { dtype: 'BF16', shape: [values.length], data: values },
    'new.bytes': { dtype: 'U8', shape: [bytes.length], data: bytes },
  };
}

if (process.argv[1] === new URL(import.meta.url).pathname && process.argv[2]) {
  try {
    const size = await writeFile(process.argv[2], newTensors(), { format: 'pt' }, { chunkBytes: 2 ** 20 });
    console.log(JSON.stringify({ ok: true, size }));
  } catch (e) {
    console.log(JSON.stringify({ ok: false, kind: e.kind, code: e.cause?.code, message: e.message }));
  }
}
