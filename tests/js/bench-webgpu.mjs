// make bench-wasm, the WebGPU part: safetensors-nano/webgpu in headless
// Chromium (--enable-unsafe-webgpu), upload + decode on the GPU against the
// plain upload of the same raw bytes, and against the three-step approach a
// page takes without the entry (decode on the CPU with decodeFloat32, then
// writeBuffer the f32s).
//
// For BF16 → f32 and F8_E4M3 → f32, each of N rounds times, interleaved:
//   - ours: toGPUBuffer(device, tensor, { as: 'f32' }) from a fromBytes file
//     (resolves once the queue has done the work);
//   - raw: createBuffer + queue.writeBuffer of the tensor's bytes + onSubmittedWorkDone;
//   - CPU: decodeFloat32 + createBuffer + writeBuffer of the f32s + onSubmittedWorkDone.
// Wall-clock time (the GPU works asynchronously); throughput in MB of the
// tensor's stored bytes per second; fastest of the rounds, and the medians' ratio.
//
// On this machine the adapter is SwiftShader, WebGPU on the CPU: the numbers
// measure the CPU. The same script on a machine with a GPU measures the GPU
// (CHROMIUM=... and flags that select it).

import { chromium } from 'playwright-core';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from './lib/server.js';

const here = dirname(fileURLToPath(import.meta.url));
const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 3 : 15;
const BYTES = 32 * 2 ** 20;

const server = await startServer({ root: here, range: true });
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--enable-unsafe-webgpu', '--no-first-run', '--disable-background-networking'],
});
try {
  const page = await browser.newPage();
  await page.goto(`${server.url}/browser/webgpu.html`);
  await page.waitForFunction(() => document.title === 'ready', null, { timeout: 20000 });
  const res = await page.evaluate(
    async ({ ROUNDS, BYTES }) => {
      const { decodeFloat32, serialize, SafeTensors } = window.stn;
      const { toGPUBuffer } = window.gpu;
      const d = window.bigDevice;
      const bytes = new Uint8Array(BYTES);
      for (let i = 0; i < BYTES; i += 65536) crypto.getRandomValues(bytes.subarray(i, i + 65536));
      // Finite values only (a BF16 or F8 NaN decodes as fast, but keeps the data realistic).
      for (let i = 1; i < BYTES; i += 2) bytes[i] &= 0xbf;
      const file = SafeTensors.fromBytes(
        await serialize({
          bf16: { dtype: 'BF16', shape: [BYTES / 2], data: bytes },
          e4m3: { dtype: 'F8_E4M3', shape: [BYTES], data: bytes.map((b) => b & 0xf7) },
        }),
      );
      const STORAGE = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST;
      const time = async (fn) => {
        const t0 = performance.now();
        const b = await fn();
        const ms = performance.now() - t0;
        b.destroy();
        return ms;
      };
      const raw = (t) => async () => {
        const b = d.createBuffer({ size: t.byteLength, usage: STORAGE });
        d.queue.writeBuffer(b, 0, t.bytes());
        await d.queue.onSubmittedWorkDone();
        return b;
      };
      const ours = (t) => () => toGPUBuffer(d, t, { as: 'f32', usage: STORAGE });
      const cpu = (t) => async () => {
        const f = decodeFloat32(t.dtype, t.bytes());
        const b = d.createBuffer({ size: f.byteLength, usage: STORAGE });
        d.queue.writeBuffer(b, 0, f);
        await d.queue.onSubmittedWorkDone();
        return b;
      };
      const out = {};
      for (const name of ['bf16', 'e4m3']) {
        const t = file.tensor(name);
        const fns = { ours: ours(t), raw: raw(t), cpu: cpu(t) };
        const samples = { ours: [], raw: [], cpu: [] };
        for (const fn of Object.values(fns)) await time(fn); // warm-up
        for (let r = 0; r < ROUNDS; r++) for (const [k, fn] of Object.entries(fns)) samples[k].push(await time(fn));
        out[name] = { dtype: t.dtype, bytes: t.byteLength, samples };
      }
      return { out, adapter: window.adapterInfo.architecture, cores: navigator.hardwareConcurrency };
    },
    { ROUNDS, BYTES },
  );
  const stat = (s) => {
    const sorted = [...s].sort((a, b) => a - b);
    return { best: sorted[0], median: sorted[sorted.length >> 1] };
  };
  const mbps = (bytes, ms) => (bytes / 1e6 / (ms / 1000)).toFixed(0);
  console.log(`\n## Upload + decode to f32 on WebGPU (safetensors-nano/webgpu)\n`);
  console.log(
    `Adapter: ${res.adapter}${res.adapter === 'swiftshader' ? ' — WebGPU on the CPU (SwiftShader), so this measures the CPU, not a GPU' : ''}; ${res.cores} logical cores.`,
  );
  console.log(
    `${BYTES / 2 ** 20} MiB of stored bytes per tensor; wall-clock, fastest of ${ROUNDS} interleaved rounds; MB/s of stored bytes; the last columns, the medians' ratios.\n`,
  );
  console.log(
    '| dtype → f32 | ours: upload + GPU decode | raw writeBuffer of the bytes | CPU decode + writeBuffer of f32 | ours ÷ raw time | CPU ÷ ours time | ours ÷ raw (medians) | CPU ÷ ours (medians) |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const { dtype, bytes, samples } of Object.values(res.out)) {
    const [o, r, c] = [stat(samples.ours), stat(samples.raw), stat(samples.cpu)];
    console.log(
      `| ${dtype} | ${o.best.toFixed(1)} ms (${mbps(bytes, o.best)} MB/s) | ${r.best.toFixed(1)} ms (${mbps(bytes, r.best)} MB/s) | ${c.best.toFixed(1)} ms (${mbps(bytes, c.best)} MB/s) | ${(o.best / r.best).toFixed(2)} | ${(c.best / o.best).toFixed(2)} | ${(o.median / r.median).toFixed(2)} | ${(c.median / o.median).toFixed(2)} |`,
    );
  }
} finally {
  await browser.close();
  await server.close();
}
