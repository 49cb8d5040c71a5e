// make bench-wasm, part 3: whole-model reads. Every tensor of a 1 GB BF16
// file (a Llama-like layout) read as Float32, one after another as a user
// loops over tensors(), five sides interleaved in each run:
// - blob.arrayBuffer() of the same file (reading its bytes at all: the
//   baseline);
// - readFloat32 into a new array a tensor ("readFloat32 over all tensors");
// - readFloat32 into one reused array (its `out`: no new array a tensor);
// - read() of each tensor whole, then decodeFloat32 (no overlap of reading
//   and decoding);
// - reading nothing, a new Float32Array of each tensor's size with one
//   value written in each page: what the new arrays' memory alone costs,
//   which bounds the second side from below whatever the reader does.
// The goal (in Chromium: ≥ 0.7× arrayBuffer()'s throughput) is judged for
// both forms of readFloat32. The file is on disk, opened with
// fs.openAsBlob (a File-like Blob, read on demand); fastest and median of
// the runs, wall clock. Then the same in headless Chromium (Debian's
// /usr/bin/chromium through playwright-core), the file given to the page
// through a file input, as a user picks it.

import { existsSync, openAsBlob, openSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SafeTensors, decodeFloat32 } from 'safetensors-nano';
import { scratch } from './lib/env.js';
import { startServer } from './lib/server.js';

const quick = process.argv.includes('--quick');
const runs = quick ? 2 : 5;
const MB = 1024 * 1024;

// 32 layers of 7 weights (1–7 MiB) and 2 norms, an embedding and a head:
// about 1 GB of BF16.
const layout = [['embed.weight', 32 * MB]];
for (let l = 0; l < 32; l++) {
  for (const [n, size] of [
    ['q', 4],
    ['k', 1],
    ['v', 1],
    ['o', 4],
    ['gate', 7],
    ['up', 7],
    ['down', 7],
  ]) {
    layout.push([`layers.${l}.${n}.weight`, size * MB]);
  }
  layout.push([`layers.${l}.norm1.weight`, 8192], [`layers.${l}.norm2.weight`, 8192]);
}
layout.push(['head.weight', 32 * MB]);

function writeModel(path) {
  const header = {};
  let offset = 0;
  for (const [name, bytes] of layout) {
    header[name] = { dtype: 'BF16', shape: [bytes / 2], data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  let text = JSON.stringify(header);
  text += ' '.repeat((8 - (text.length % 8)) % 8);
  const head = new Uint8Array(8 + text.length);
  new DataView(head.buffer).setBigUint64(0, BigInt(text.length), true);
  head.set(new TextEncoder().encode(text), 8);
  // Weight-like BF16 values (small normals around 0), a 16 MiB pattern repeated.
  const pattern = new Uint16Array(8 * MB);
  let seed = 1;
  for (let i = 0; i < pattern.length; i++) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    const f = new Float32Array([((seed >>> 8) / 2 ** 24 - 0.5) * 0.1]);
    pattern[i] = new Uint32Array(f.buffer)[0] >>> 16;
  }
  const fd = openSync(path, 'w');
  writeSync(fd, head);
  const chunk = new Uint8Array(pattern.buffer);
  for (let left = offset; left > 0; left -= chunk.length) writeSync(fd, chunk, 0, Math.min(left, chunk.length));
  closeSync(fd);
  return head.length + offset;
}

const path = join(scratch('stn-bench-reads-'), 'model.safetensors');
const size = writeModel(path);
const blob = await openAsBlob(path);

async function bytesOnly() {
  const buf = await blob.arrayBuffer();
  if (buf.byteLength !== size) throw new Error('short read');
}

async function allFloat32() {
  const st = await SafeTensors.fromBlob(blob);
  let n = 0;
  for (const t of st.tensors()) n += (await t.readFloat32()).length;
  if (n !== (size - st.dataOffset) / 2) throw new Error('elements missing');
}

// The same values into one reused array.
async function allFloat32Reused() {
  const st = await SafeTensors.fromBlob(blob);
  const buf = new Float32Array(Math.max(...st.tensors().map((t) => t.elementCount)));
  let n = 0;
  for (const t of st.tensors()) n += (await t.readFloat32({ out: buf.subarray(0, t.elementCount) })).length;
  if (n !== (size - st.dataOffset) / 2) throw new Error('elements missing');
}

// The same result without overlap: each tensor read whole, then decoded.
async function readThenDecode() {
  const st = await SafeTensors.fromBlob(blob);
  let n = 0;
  for (const t of st.tensors()) n += decodeFloat32(t.dtype, await t.read()).length;
  if (n !== (size - st.dataOffset) / 2) throw new Error('elements missing');
}

// No read: a new Float32Array of each tensor's size, one value written in
// each 4 KiB page (the memory a new array per tensor costs the system).
async function newArraysAlone() {
  const st = await SafeTensors.fromBlob(blob);
  let n = 0;
  for (const t of st.tensors()) n += touched(new Float32Array(t.elementCount)).length;
  if (n !== (size - st.dataOffset) / 2) throw new Error('elements missing');
}

function touched(a) {
  for (let i = 0; i < a.length; i += 1024) a[i] = 1;
  return a;
}

const sides = [
  ['blob.arrayBuffer()', bytesOnly],
  ['readFloat32 over all tensors', allFloat32],
  ['readFloat32 over all tensors into one reused `out`', allFloat32Reused],
  ['read() then decodeFloat32, tensor by tensor', readThenDecode],
  ['no read: a new Float32Array per tensor, each page written once', newArraysAlone],
];
const times = sides.map(() => []);
for (const [, f] of sides) await f(); // warm-up (the page cache, the JIT)
for (let r = 0; r < runs; r++) {
  for (const [i, [, f]] of sides.entries()) {
    globalThis.gc?.();
    const t0 = performance.now();
    await f();
    times[i].push(performance.now() - t0);
  }
}
const stat = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return { best: s[0], median: s[s.length >> 1] };
};

function table(where, times) {
  console.log(
    `\n## Whole-model reads in ${where}: ${layout.length} BF16 tensors, ${(size / 1e9).toFixed(2)} GB on disk\n`,
  );
  console.log(`Fastest of ${runs} interleaved runs, the median beside it; throughput in file bytes a second.\n`);
  console.log('| read | time (fastest) | time (median) | throughput | ÷ arrayBuffer() (fastest) | (medians) |');
  console.log('|---|---:|---:|---:|---:|---:|');
  const base = stat(times[0]);
  for (const [i, [name]] of sides.entries()) {
    const t = stat(times[i]);
    console.log(
      `| ${name} | ${t.best.toFixed(0)} ms | ${t.median.toFixed(0)} ms | ${(size / t.best / 1e3).toFixed(0)} MB/s | ${(base.best / t.best).toFixed(2)}× | ${(base.median / t.median).toFixed(2)}× |`,
    );
  }
}
table('Node (fs.openAsBlob)', times);

// The goal (in Chromium): every tensor as Float32 at ≥ 0.7× the throughput
// of arrayBuffer(). Met by the reused `out` or not; the new-array form
// beside it, with the share of the goal's time its memory alone takes.
function verdict(times) {
  const [base, fresh, reused, , alone] = times.map((xs) => stat(xs).best);
  const ratio = (t) => `${(base / t).toFixed(2)}×`;
  const met = (t) => (base / t >= 0.7 ? 'met' : 'not met');
  console.log(`\nGoal: every tensor → Float32 at ≥ 0.7× the throughput of arrayBuffer() (Chromium, fastest runs).`);
  console.log(`  readFloat32 into a reused \`out\`: ${ratio(reused)}, ${met(reused)}`);
  console.log(
    `  readFloat32 into a new array per tensor: ${ratio(fresh)}, ${met(fresh)}; ` +
      `the new arrays' memory alone, reading nothing, takes ${alone.toFixed(0)} ms of the ${(base / 0.7).toFixed(0)} ms the goal allows`,
  );
}

// Chromium: the page of the browser tests, the file through its file input.
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
if (!existsSync(CHROMIUM)) {
  console.log(`\n(no Chromium at ${CHROMIUM}: the browser half is skipped)`);
} else {
  const { chromium } = await import('playwright-core');
  const server = await startServer({ root: fileURLToPath(new URL('.', import.meta.url)) });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu'],
  });
  try {
    const page = await browser.newPage();
    await page.goto(`${server.url}/browser/page.html`);
    await page.waitForFunction(() => document.title === 'ready', null, { timeout: 20000 });
    await page.setInputFiles('#file', path);
    // A renderer that dies mid-run (out of memory, say) would leave evaluate
    // waiting for ever: it ends the bench with an error instead.
    const crashed = new Promise((_, reject) =>
      page.once('crash', () => reject(new Error('the Chromium page crashed during the whole-model reads'))),
    );
    const inPage = await Promise.race([
      crashed,
      page.evaluate(async (runs) => {
        const { SafeTensors, decodeFloat32 } = window.stn;
        const file = document.getElementById('file').files[0];
        const sides = [
          async () => (await file.arrayBuffer()).byteLength,
          async () => {
            const st = await SafeTensors.fromBlob(file);
            let n = 0;
            for (const t of st.tensors()) n += (await t.readFloat32()).length;
            return n;
          },
          async () => {
            const st = await SafeTensors.fromBlob(file);
            const buf = new Float32Array(Math.max(...st.tensors().map((t) => t.elementCount)));
            let n = 0;
            for (const t of st.tensors()) n += (await t.readFloat32({ out: buf.subarray(0, t.elementCount) })).length;
            return n;
          },
          async () => {
            const st = await SafeTensors.fromBlob(file);
            let n = 0;
            for (const t of st.tensors()) n += decodeFloat32(t.dtype, await t.read()).length;
            return n;
          },
          async () => {
            const st = await SafeTensors.fromBlob(file);
            let n = 0;
            for (const t of st.tensors()) {
              const a = new Float32Array(t.elementCount);
              for (let i = 0; i < a.length; i += 1024) a[i] = 1;
              n += a.length;
            }
            return n;
          },
        ];
        for (const f of sides) await f();
        const times = sides.map(() => []);
        for (let r = 0; r < runs; r++) {
          for (const [i, f] of sides.entries()) {
            const t0 = performance.now();
            await f();
            times[i].push(performance.now() - t0);
          }
        }
        return times;
      }, runs),
    ]);
    table('Chromium (a File from a file input)', inPage);
    verdict(inPage);
  } finally {
    await browser.close();
    await server.close();
  }
}
