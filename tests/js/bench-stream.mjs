// make bench-wasm, part 2: the streaming writer's throughput. A 1 GiB F32
// tensor in a safetensors file held by a Blob, converted to BF16 by
// serializeStream(editTensors(file, { convert: 'BF16' })) into a sink that
// discards, against reading the same Blob with arrayBuffer() (the least a
// conversion from that Blob must do). Twice: an in-memory Blob, and a file
// on disk opened with fs.openAsBlob.
//
// Timing: wall-clock (the reads are I/O), the two interleaved, ROUNDS
// rounds; the fastest of each and the medians' ratio are printed.
// Goal: conversion ≥ 0.5× the arrayBuffer() read speed.

import { openAsBlob, rmSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SafeTensors, editTensors, serializeStream } from 'safetensors-nano';

const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 3 : 5;
const ELEMENTS = (quick ? 64 : 256) * 2 ** 20; // 1 GiB of F32 (256 MiB quick)

// The file: a header, then F32 values of every magnitude (no zeros: each
// element is rounded for real).
function fileParts() {
  const json = JSON.stringify({ w: { dtype: 'F32', shape: [ELEMENTS], data_offsets: [0, ELEMENTS * 4] } });
  const text = json.padEnd(json.length + ((8 - (json.length % 8)) % 8), ' ');
  const head = new Uint8Array(8 + text.length);
  new DataView(head.buffer).setBigUint64(0, BigInt(text.length), true);
  head.set(new TextEncoder().encode(text), 8);
  const values = new Uint32Array(ELEMENTS);
  let x = 12345;
  for (let i = 0; i < ELEMENTS; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    values[i] = (x & 0x807fffff) | ((96 + (i % 64)) << 23);
  }
  return [head, values];
}

async function readAll(blob) {
  const t0 = performance.now();
  const buf = await blob.arrayBuffer();
  if (buf.byteLength !== blob.size) throw new Error('short read');
  return performance.now() - t0;
}

async function convert(blob) {
  const t0 = performance.now();
  const file = await SafeTensors.fromBlob(blob);
  let n = 0;
  await serializeStream(editTensors(file, { convert: 'BF16' })).pipeTo(
    new WritableStream({
      write(chunk) {
        n += chunk.byteLength;
      },
    }),
  );
  if (n !== file.dataOffset + ELEMENTS * 2) throw new Error(`converted ${n} bytes`);
  return performance.now() - t0;
}

async function race(blob) {
  const read = [];
  const conv = [];
  await convert(blob); // warm-up (and the writer's module loaded)
  for (let r = 0; r < ROUNDS; r++) {
    read.push(await readAll(blob));
    globalThis.gc?.();
    conv.push(await convert(blob));
    globalThis.gc?.();
  }
  const best = (a) => Math.min(...a);
  const median = (a) => [...a].sort((p, q) => p - q)[a.length >> 1];
  return {
    read: best(read),
    conv: best(conv),
    ratio: best(read) / best(conv),
    medianRatio: median(read) / median(conv),
  };
}

const gib = (ELEMENTS * 4) / 2 ** 30;
const rate = (ms) => `${((ELEMENTS * 4) / 1e6 / (ms / 1000)).toFixed(0)} MB/s`;
console.log(`\n## Streaming conversion: ${gib} GiB F32 → BF16 from a Blob to a discarding sink\n`);
console.log(`Wall-clock, ${ROUNDS} interleaved rounds; fastest of each, and the medians' ratio.\n`);
console.log('| Blob | arrayBuffer() | serializeStream, F32 → BF16 | conversion ÷ read speed | (medians) |');
console.log('|---|---:|---:|---:|---:|');
const rows = [];
let parts = fileParts();
const memory = new Blob(parts);
const dir = mkdtempSync(join(tmpdir(), 'stn-bench-'));
const path = join(dir, 'f32.safetensors');
try {
  writeFileSync(path, Buffer.concat(parts.map((p) => new Uint8Array(p.buffer))));
  parts = null;
  for (const [what, blob] of [
    ['in memory', memory],
    ['file (fs.openAsBlob)', await openAsBlob(path)],
  ]) {
    const r = await race(blob);
    rows.push(r);
    console.log(
      `| ${what} | ${r.read.toFixed(0)} ms (${rate(r.read)}) | ${r.conv.toFixed(0)} ms (${rate(r.conv)}) | ${r.ratio.toFixed(2)}× | ${r.medianRatio.toFixed(2)}× |`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const worst = Math.min(...rows.map((r) => r.ratio));
console.log(`\nstreaming conversion ÷ arrayBuffer() read ≥ ${worst.toFixed(2)}× (goal ≥ 0.5×)`);
