// The entry safetensors-nano/webgpu in headless Chromium with WebGPU
// (--enable-unsafe-webgpu: a SwiftShader adapter): every float dtype's GPU
// decode against the package's CPU decode (decodeFloat32) in the same page,
// bit for bit; raw uploads equal to the bytes; a tensor over 256 MB
// streamed from a File with the page's memory bounded; cancel; the limit
// and feature errors; toGPUBuffers' filter, modes and progress.
// Firefox ESR and WebKitGTK have no WebGPU: there the entry still loads, and
// the CPU path a page falls back to (readFloat32) gives Node's values.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync, openSync, writeSync, ftruncateSync, closeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rawFile, tensorFile } from '../lib/format.js';
import { startServer } from '../lib/server.js';
import { engines, openPage } from '../lib/engines.js';
import { scratch } from '../lib/env.js';
import { rng } from '../lib/rng.mjs';
import { SafeTensors, decodeFloat32 } from 'safetensors-nano';
import { createHash } from 'node:crypto';

const project = join(dirname(fileURLToPath(import.meta.url)), '..');
const fixtures = join(project, 'tmp', 'fixtures-webgpu');
mkdirSync(fixtures, { recursive: true });
const big = scratch('stn-webgpu-');

// ---- The decode fixture: every code of the small types, every 16-bit word,
// F64 edge cases and random values, F32 words.
const r = rng(17);
const u32 = () => Math.floor(r.next() * 2 ** 32) >>> 0;

const f4 = Uint8Array.from({ length: 16 }, (_, c) => c | ((15 - c) << 4)); // each code in both nibbles
// F6: all 64 codes, four per 3 bytes, in four rotations (each code in each slot).
function f6All() {
  const out = new Uint8Array(4 * 48);
  for (let rot = 0; rot < 4; rot++) {
    for (let g = 0; g < 16; g++) {
      let v = 0;
      for (let k = 0; k < 4; k++) v += ((4 * g + k + rot) % 64) * 2 ** (6 * k);
      const at = rot * 48 + 3 * g;
      out[at] = v & 0xff;
      out[at + 1] = (v >>> 8) & 0xff;
      out[at + 2] = (v >>> 16) & 0xff;
    }
  }
  return out;
}
const all8 = Uint8Array.from({ length: 256 }, (_, i) => i);
const all16 = Uint16Array.from({ length: 65536 }, (_, i) => i);

function f64Cases() {
  const vals = [];
  const bits = (hi, lo) => {
    const dv = new DataView(new ArrayBuffer(8));
    dv.setUint32(0, lo, true);
    dv.setUint32(4, hi, true);
    return dv.getFloat64(0, true);
  };
  const f32max = 3.4028234663852886e38;
  const p = (e) => 2 ** e;
  vals.push(
    0,
    -0,
    1,
    -1,
    0.1,
    Infinity,
    -Infinity,
    Number.MIN_VALUE,
    -Number.MIN_VALUE,
    Number.MAX_VALUE,
    -Number.MAX_VALUE,
  );
  vals.push(f32max, f32max * (1 + p(-25)), f32max + p(103), f32max + p(103) * (1 - p(-30)), -f32max - p(103));
  vals.push(
    p(-149),
    p(-150),
    p(-150) * (1 + p(-40)),
    p(-150) * (1 - p(-40)),
    1.5 * p(-149),
    2.5 * p(-149),
    3.5 * p(-149),
    p(-151),
    p(-200),
  );
  vals.push(p(-126), p(-126) * (1 - p(-24)), p(-126) * (1 - p(-25)), p(-127), p(-126) - p(-150), p(-126) - p(-149) / 2);
  vals.push(
    1 + p(-24),
    1 + 3 * p(-24),
    1 + p(-24) + p(-50),
    1 - p(-25),
    1 - p(-26),
    p(127),
    p(128),
    p(-1022),
    p(-1074),
  );
  // NaNs: quiet and signalling, payload bits high and low, either sign.
  for (const [hi, lo] of [
    [0x7ff80000, 0],
    [0xfff80000, 0],
    [0x7ff00000, 1],
    [0x7ff7ffff, 0xffffffff],
    [0xfff12345, 0x6789abcd],
    [0x7ff00001, 0],
  ]) {
    vals.push(bits(hi, lo));
  }
  const out = new Float64Array(vals.length + 30000);
  out.set(vals);
  const dv = new DataView(out.buffer);
  for (let i = vals.length; i < out.length; i++) {
    const kind = i % 3;
    const lo = kind === 2 ? (u32() & ~0x1fffffff) | 0x10000000 : u32(); // kind 2: a tie to round
    let hi = u32();
    if (kind !== 0) {
      // An exponent around the f32 range (normals, subnormals, overflow).
      const e = 1023 - 160 + Math.floor(r.next() * 300);
      hi = (hi & 0x800fffff) | (e << 20);
    }
    dv.setUint32(8 * i, lo, true);
    dv.setUint32(8 * i + 4, hi >>> 0, true);
  }
  return out;
}
const f32Words = Uint32Array.from({ length: 4096 }, (_, i) =>
  i < 16
    ? [
        0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001, 0xffffffff, 1, 0x807fffff, 0x00800000,
        0x7f7fffff, 0x3f800000, 0x477fefff, 0x477ff000, 0x33000000, 0x33000001,
      ][i]
    : u32(),
);
// Larger tensors, uploaded in several small chunks.
const bf16Long = Uint16Array.from({ length: 300000 }, () => u32() & 0xffff);
const f6Long = Uint8Array.from({ length: 3 * 70000 }, () => u32() & 0xff);
const f4Odd = Uint8Array.from({ length: 100001 }, () => u32() & 0xff);
const f64Long = Float64Array.from({ length: 70000 }, () => r.gauss() * 1000);
const u8Odd = Uint8Array.from({ length: 1001 }, () => u32() & 0xff);

const DECODE = [
  ['F4', [32], f4],
  ['F6_E2M3', [256], f6All()],
  ['F6_E3M2', [256], f6All()],
  ...['F8_E5M2', 'F8_E4M3', 'F8_E8M0', 'F8_E4M3FNUZ', 'F8_E5M2FNUZ'].map((d) => [d, [256], all8]),
  ['F16', [65536], all16],
  ['BF16', [65536], all16],
  ['F32', [4096], f32Words],
  ['F64', [f64Cases().length], f64Cases()],
];
const entries = [
  ...DECODE.map(([d, shape, bytes]) => [d, d, shape, bytes]),
  ['long.BF16', 'BF16', [bf16Long.length], bf16Long],
  ['long.F6_E3M2', 'F6_E3M2', [4 * 70000], f6Long],
  ['long.F4', 'F4', [2 * 100001], f4Odd],
  ['long.F64', 'F64', [f64Long.length], f64Long],
  ['odd.U8', 'U8', [1001], u8Odd],
  ['ints.I8', 'I8', [3], Int8Array.of(1, -2, 3)],
];
writeFileSync(join(fixtures, 'decode.safetensors'), tensorFile(entries, { align: 8 }));

// ---- Over 256 MB, sparse on disk: a U8 tensor with marks at known places.
const BIG = 300 * 2 ** 20 + 5;
const MARKS = [
  [0, 11],
  [6 * 2 ** 20 - 1, 22],
  [6 * 2 ** 20, 33],
  [150 * 2 ** 20 + 7, 44],
  [BIG - 1, 55],
];
function makeBig() {
  const head = rawFile({ big: { dtype: 'U8', shape: [BIG], data_offsets: [0, BIG] } });
  const path = join(big, 'big.safetensors');
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, head, 0, head.length, 0);
    ftruncateSync(fd, head.length + BIG);
    for (const [at, v] of MARKS) writeSync(fd, Uint8Array.of(v), 0, 1, head.length + at);
  } finally {
    closeSync(fd);
  }
  return path;
}

let server;

before(async () => {
  server = await startServer({ root: project, range: true });
});

after(() => server?.close());

for (const engine of engines().filter((e) => e !== 'chromium')) {
  describe(engine, () => {
    test("no WebGPU: the entry still loads, and the CPU path (readFloat32 of a Blob) gives Node's values of every float dtype", async () => {
      const { browser, page } = await openPage(engine, `${server.url}/browser/page.html`);
      try {
        const names = entries.filter(([, dtype]) => dtype.startsWith('F') || dtype === 'BF16').map(([name]) => name);
        const got = await page.evaluate(async (names) => {
          const gpu = await import('/node_modules/safetensors-nano/webgpu/index.js');
          const { SafeTensors } = window.stn;
          const buf = await (await fetch('/tmp/fixtures-webgpu/decode.safetensors')).arrayBuffer();
          const st = await SafeTensors.fromBlob(new Blob([buf]));
          const hex = async (floats) =>
            [...new Uint8Array(await crypto.subtle.digest('SHA-256', floats))]
              .map((b) => b.toString(16).padStart(2, '0'))
              .join('');
          const sums = {};
          for (const name of names) sums[name] = await hex(await st.tensor(name).readFloat32());
          return {
            webgpu: 'gpu' in navigator,
            entry: [typeof gpu.toGPUBuffer, typeof gpu.toGPUBuffers, gpu.DEFAULT_USAGE],
            sums,
          };
        }, names);
        // (When this engine gains WebGPU, run the GPU tests below in it too.)
        assert.equal(got.webgpu, false, `${engine} has WebGPU now`);
        assert.deepEqual(got.entry, ['function', 'function', 0x80 | 0x4 | 0x8]);
        const mem = SafeTensors.fromBytes(readFileSync(join(fixtures, 'decode.safetensors')));
        for (const name of names) {
          const t = mem.tensor(name);
          assert.equal(
            got.sums[name],
            createHash('sha256').update(decodeFloat32(t.dtype, t.bytes())).digest('hex'),
            name,
          );
        }
        assert.deepEqual(await page.pageErrors(), []);
      } finally {
        await browser.close();
      }
    });
  });
}

// WebGPU: Chromium's (SwiftShader).
if (engines().includes('chromium'))
  describe('chromium', () => {
    let browser;
    let page;

    before(async () => {
      ({ browser, page } = await openPage('chromium', `${server.url}/browser/webgpu.html`, {
        webgpu: true,
        args: ['--js-flags=--expose-gc'],
      }));
      const info = await page.evaluate(() => window.adapterInfo);
      console.log(
        `# WebGPU adapter: ${info.architecture} (features: ${info.features.length}, shader-f16: ${info.features.includes('shader-f16')})`,
      );
    });

    after(async () => {
      const errors = await page?.pageErrors();
      await browser?.close();
      assert.deepEqual(errors, []);
    });

    // In the page: the GPU decode of each named tensor against decodeFloat32's
    // f32 bits (all elements), and the f16 one against Float16Array's rounding
    // of those values (NaN as NaN: JS keeps no NaN payload).
    async function compare(names, { chunkBytes, lazy = false } = {}) {
      return page.evaluate(
        async ({ names, chunkBytes, lazy }) => {
          const { SafeTensors, decodeFloat32 } = window.stn;
          const { toGPUBuffer } = window.gpu;
          const buf = await (await fetch('/tmp/fixtures-webgpu/decode.safetensors')).arrayBuffer();
          const mem = SafeTensors.fromBytes(buf);
          const st = lazy ? await SafeTensors.fromBlob(new Blob([buf])) : mem;
          // A device that reports shader-f16: the decoder writes f16 bits with
          // integer arithmetic only, so SwiftShader, which lacks the feature, can run it.
          const d = window.device;
          const f16Device = {
            features: new Set([...d.features, 'shader-f16']),
            limits: d.limits,
            queue: d.queue,
            createBuffer: (x) => d.createBuffer(x),
            createShaderModule: (x) => d.createShaderModule(x),
            createComputePipeline: (x) => d.createComputePipeline(x),
            createBindGroup: (x) => d.createBindGroup(x),
            createCommandEncoder: (x) => d.createCommandEncoder(x),
            pushErrorScope: (x) => d.pushErrorScope(x),
            popErrorScope: () => d.popErrorScope(),
          };
          const out = {};
          for (const name of names) {
            const t = st.tensor(name);
            const cpu = new Uint32Array(decodeFloat32(t.dtype, mem.tensor(name).bytes()).buffer);
            const gpuBuf = await toGPUBuffer(d, t, { as: 'f32', chunkBytes });
            const gpu = new Uint32Array((await window.readBack(d, gpuBuf)).buffer);
            gpuBuf.destroy();
            let bad = 0;
            const firstBad = [];
            for (let i = 0; i < cpu.length; i++) {
              if (gpu[i] !== cpu[i]) {
                bad++;
                if (firstBad.length < 5) firstBad.push([i, cpu[i].toString(16), gpu[i].toString(16)]);
              }
            }
            const halfBuf = await toGPUBuffer(f16Device, t, { as: 'f16', chunkBytes });
            const half = new Uint16Array((await window.readBack(d, halfBuf)).buffer, 0, cpu.length);
            halfBuf.destroy();
            const want = new Uint16Array(Float16Array.from(new Float32Array(cpu.buffer)).buffer);
            let badHalf = 0;
            const isNan = (h) => (h & 0x7c00) === 0x7c00 && (h & 0x3ff) !== 0;
            for (let i = 0; i < cpu.length; i++) {
              if (half[i] !== want[i] && !(isNan(half[i]) && isNan(want[i]))) badHalf++;
            }
            out[name] = {
              elements: cpu.length,
              bad,
              firstBad,
              gpuBytes: gpuBuf.size,
              badHalf,
              nans: [...cpu].filter((b) => (b & 0x7fffffff) > 0x7f800000).length,
            };
          }
          return out;
        },
        { names, chunkBytes, lazy },
      );
    }

    test('every float dtype decodes on the GPU bit for bit as decodeFloat32 (all codes up to 16 bits; F64 edges and random); f16 as Float16Array rounds', async () => {
      const names = DECODE.map(([d]) => d);
      const res = await compare(names);
      for (const [name, shape] of DECODE.map(([d, s]) => [d, s])) {
        const got = res[name];
        console.log(
          `# ${name}: ${got.elements} elements, ${got.bad} differ from the CPU's f32 bits (${got.nans} NaNs), ${got.badHalf} f16 differ`,
        );
        assert.equal(got.elements, shape[0], name);
        assert.equal(got.bad, 0, `${name}: ${JSON.stringify(got.firstBad)}`);
        assert.equal(got.badHalf, 0, name);
      }
    });

    test('chunked uploads from a Blob (small chunks: packed F6 and F4 across chunk ends, odd element counts) decode the same', async () => {
      const names = ['long.BF16', 'long.F6_E3M2', 'long.F4', 'long.F64'];
      const res = await compare(names, { chunkBytes: 196608, lazy: true });
      for (const name of names) {
        assert.equal(res[name].bad, 0, `${name}: ${JSON.stringify(res[name].firstBad)}`);
        assert.equal(res[name].badHalf, 0, name);
      }
      assert.equal(res['long.F4'].elements, 200002);
    });

    test('raw uploads are the bytes (zero-padded to 4), from memory and from a Blob; labels and usage', async () => {
      const res = await page.evaluate(async () => {
        const { SafeTensors } = window.stn;
        const { toGPUBuffer, DEFAULT_USAGE } = window.gpu;
        const buf = await (await fetch('/tmp/fixtures-webgpu/decode.safetensors')).arrayBuffer();
        const out = [];
        for (const st of [SafeTensors.fromBytes(buf), await SafeTensors.fromBlob(new Blob([buf]))]) {
          const t = st.tensor('odd.U8');
          const want = new Uint8Array(buf, t.byteOffset, t.byteLength);
          const b = await toGPUBuffer(window.device, t, { chunkBytes: 1 });
          const got = await window.readBack(window.device, b);
          const b2 = await toGPUBuffer(window.device, st.tensor('long.BF16'), {
            usage: GPUBufferUsage.COPY_SRC,
            label: 'w',
          });
          const t2 = st.tensor('long.BF16');
          const got2 = await window.readBack(window.device, b2);
          out.push({
            size: b.size,
            same: got.subarray(0, t.byteLength).every((v, i) => v === want[i]),
            pad: [...got.subarray(t.byteLength)],
            label: b.label,
            usage: b.usage === DEFAULT_USAGE,
            same2: got2.every((v, i) => v === new Uint8Array(buf, t2.byteOffset, t2.byteLength)[i]),
            label2: b2.label,
            usage2: b2.usage === (GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST),
          });
          b.destroy();
          b2.destroy();
        }
        return out;
      });
      for (const r of res) {
        assert.deepEqual(r, {
          size: 1004,
          same: true,
          pad: [0, 0, 0],
          label: 'odd.U8',
          usage: true,
          same2: true,
          label2: 'w',
          usage2: true,
        });
      }
    });

    test('errors: too large for maxBufferSize / maxStorageBufferBindingSize (before any read), f16 without shader-f16, a non-float decode, bad options', async () => {
      const res = await page.evaluate(async () => {
        const { SafeTensors } = window.stn;
        const { toGPUBuffer, toGPUBuffers } = window.gpu;
        const catchErr = async (p) => {
          try {
            await p;
            return null;
          } catch (e) {
            return { name: e.name, kind: e.kind, tensor: e.tensor, message: e.message };
          }
        };
        // Headers alone (fromHeader: no data at all, so nothing can be read).
        const header = (obj, size) => {
          const json = new TextEncoder().encode(JSON.stringify(obj));
          const prefix = new Uint8Array(8 + json.length);
          new DataView(prefix.buffer).setBigUint64(0, BigInt(json.length), true);
          prefix.set(json, 8);
          return SafeTensors.fromHeader(prefix, prefix.length + size);
        };
        const d = window.device;
        const n = d.limits.maxStorageBufferBindingSize / 4 + 2; // f32 output just above the binding limit
        const st = header({ w: { dtype: 'F4', shape: [n], data_offsets: [0, n / 2] } }, n / 2);
        const huge = d.limits.maxBufferSize + 4;
        const st2 = header({ h: { dtype: 'U8', shape: [huge], data_offsets: [0, huge] } }, huge);
        const buf = await (await fetch('/tmp/fixtures-webgpu/decode.safetensors')).arrayBuffer();
        const mem = SafeTensors.fromBytes(buf);
        return {
          limits: {
            maxBufferSize: d.limits.maxBufferSize,
            maxStorageBufferBindingSize: d.limits.maxStorageBufferBindingSize,
          },
          binding: await catchErr(toGPUBuffer(d, st.tensor('w'), { as: 'f32' })),
          many: await catchErr(toGPUBuffers(d, st, { as: 'f32' })),
          size: await catchErr(toGPUBuffer(d, st2.tensor('h'), { usage: GPUBufferUsage.COPY_SRC })),
          f16: await catchErr(toGPUBuffer(d, mem.tensor('BF16'), { as: 'f16' })),
          notFloat: await catchErr(toGPUBuffer(d, mem.tensor('ints.I8'), { as: 'f32' })),
          badAs: await catchErr(toGPUBuffer(d, mem.tensor('BF16'), { as: 'f64' })),
          mapRead: await catchErr(toGPUBuffer(d, mem.tensor('BF16'), { usage: GPUBufferUsage.MAP_READ })),
        };
      });
      const { maxBufferSize, maxStorageBufferBindingSize } = res.limits;
      assert.equal(res.binding.name, 'SafeTensorsError');
      assert.equal(res.binding.kind, 'GpuLimitExceeded');
      assert.equal(res.binding.tensor, 'w');
      assert.ok(
        res.binding.message.includes(`maxStorageBufferBindingSize of ${maxStorageBufferBindingSize}`),
        res.binding.message,
      );
      assert.deepEqual(res.many, res.binding);
      assert.equal(res.size.kind, 'GpuLimitExceeded');
      assert.ok(res.size.message.includes(`maxBufferSize of ${maxBufferSize}`), res.size.message);
      assert.equal(res.f16.kind, 'GpuFeatureMissing');
      assert.match(res.f16.message, /shader-f16/);
      assert.equal(res.notFloat.kind, 'DtypeMismatch');
      assert.match(res.notFloat.message, /I8 is not a float dtype/);
      assert.equal(res.badAs.kind, 'InvalidArgument');
      assert.equal(res.mapRead.kind, 'InvalidArgument');
      console.log(`# ${res.binding.message}`);
    });

    test('toGPUBuffers: a filter, a mode per tensor, overall progress, labels; a sharded model; cancel mid-upload destroys what was made', async () => {
      const res = await page.evaluate(async () => {
        const { SafeTensors } = window.stn;
        const { toGPUBuffers, toGPUBuffer } = window.gpu;
        const buf = await (await fetch('/tmp/fixtures-webgpu/decode.safetensors')).arrayBuffer();
        const st = await SafeTensors.fromBlob(new Blob([buf]));
        const calls = [];
        const map = await toGPUBuffers(window.device, st, {
          filter: (t) => t.name.startsWith('long.') || t.name === 'ints.I8',
          as: (t) => (t.dtype === 'I8' ? 'raw' : 'f32'),
          label: (t) => `model/${t.name}`,
          chunkBytes: 196608,
          onProgress: (done, total, name) => calls.push([done, total, name]),
        });
        const names = [...map.keys()];
        const labels = [...map.values()].map((b) => b.label);
        const sizes = [...map.values()].map((b) => b.size);
        const ints = [...new Int8Array((await window.readBack(window.device, map.get('ints.I8'))).buffer, 0, 3)];
        for (const b of map.values()) b.destroy();
        const total = calls[0][1];
        const monotonic = calls.every((c, i) => i === 0 || c[0] >= calls[i - 1][0]);
        // Cancel after the first chunk of a many-chunk upload.
        const ac = new AbortController();
        let chunks = 0;
        // A device that records the buffers made through it, to see that the
        // ones made before the abort were destroyed (a copy from a destroyed
        // buffer is a validation error).
        const d = window.device;
        const made = [];
        const recording = {
          features: d.features,
          limits: d.limits,
          queue: d.queue,
          createBuffer: (x) => {
            const b = d.createBuffer(x);
            made.push(b);
            return b;
          },
          createShaderModule: (x) => d.createShaderModule(x),
          createComputePipeline: (x) => d.createComputePipeline(x),
          createBindGroup: (x) => d.createBindGroup(x),
          createCommandEncoder: (x) => d.createCommandEncoder(x),
          pushErrorScope: (x) => d.pushErrorScope(x),
          popErrorScope: () => d.popErrorScope(),
        };
        const t0 = st.tensor('long.BF16');
        let err;
        try {
          await toGPUBuffers(recording, st, {
            filter: (t) => t.name.startsWith('long.'),
            as: 'f32',
            chunkBytes: 196608,
            signal: ac.signal,
            onProgress: (done) => {
              if (done > 0 && ++chunks === 2) ac.abort(new DOMException('stop', 'AbortError'));
            },
          });
        } catch (e) {
          err = { name: e.name, message: e.message };
        }
        const probe = d.createBuffer({ size: 4, usage: GPUBufferUsage.COPY_DST });
        const destroyed = [];
        for (const b of made.filter((b) => b.label.startsWith('long.'))) {
          d.pushErrorScope('validation');
          const enc = d.createCommandEncoder();
          enc.copyBufferToBuffer(b, 0, probe, 0, 4);
          d.queue.submit([enc.finish()]);
          destroyed.push([b.label, (await d.popErrorScope()) !== null]);
        }
        probe.destroy();
        // A sharded model: two shards (Files) and an index object.
        const { openSharded, serialize } = window.stn;
        const shard = async (name, tensors) => new File([await serialize(tensors)], name);
        const a = Uint16Array.of(0x3f80, 0xc000, 0x7f80); // BF16 1, -2, inf
        const model = await openSharded({ weight_map: { a: 'm-1.safetensors', b: 'm-2.safetensors' } }, [
          await shard('m-1.safetensors', { a: { dtype: 'BF16', shape: [3], data: a } }),
          await shard('m-2.safetensors', { b: { dtype: 'U8', shape: [5], data: Uint8Array.of(1, 2, 3, 4, 5) } }),
        ]);
        const sharded = await toGPUBuffers(d, model, { as: (t) => (t.dtype === 'BF16' ? 'f32' : 'raw') });
        const shardedValues = [
          [...new Float32Array((await window.readBack(d, sharded.get('a'))).buffer)],
          [...(await window.readBack(d, sharded.get('b')))],
        ];
        let err2;
        const ac2 = new AbortController();
        try {
          await toGPUBuffer(window.device, t0, {
            signal: ac2.signal,
            chunkBytes: 196608,
            onProgress: (done) => done > 0 && ac2.abort(),
          });
        } catch (e) {
          err2 = e.name;
        }
        return {
          names,
          labels,
          sizes,
          ints,
          total,
          last: calls.at(-1),
          monotonic,
          calls: calls.length,
          err,
          destroyed,
          chunks,
          err2,
          shardedValues,
        };
      });
      assert.deepEqual(res.names, ['long.BF16', 'long.F6_E3M2', 'long.F4', 'long.F64', 'ints.I8']);
      assert.deepEqual(
        res.labels,
        res.names.map((n) => `model/${n}`),
      );
      assert.deepEqual(res.sizes, [300000 * 4, 280000 * 4, 200002 * 4, 70000 * 4, 4]);
      assert.deepEqual(res.ints, [1, -2, 3]);
      assert.equal(res.total, 600000 + 210000 + 100001 + 560000 + 3);
      assert.deepEqual(res.last.slice(0, 2), [res.total, res.total]);
      assert.ok(res.monotonic);
      assert.ok(res.calls > 8, `${res.calls} progress calls`);
      assert.deepEqual(res.err, { name: 'AbortError', message: 'stop' });
      // The abort came in long.BF16's second chunk (of four): its buffer was made, then destroyed.
      assert.deepEqual(res.destroyed, [['long.BF16', true]]);
      assert.deepEqual(res.shardedValues, [
        [1, -2, Infinity],
        [1, 2, 3, 4, 5, 0, 0, 0],
      ]);
      assert.equal(res.chunks, 2);
      assert.equal(res.err2, 'AbortError');
    });

    // The page's JS memory, as V8 counts it: its heap plus the ArrayBuffers'
    // backing stores (CDP Runtime.getHeapUsage), sampled while `run` runs.
    async function peakMemory(run) {
      const cdp = await page.cdpSession();
      const usage = async () => {
        const h = await cdp.send('Runtime.getHeapUsage');
        return h.usedSize + h.backingStorageSize;
      };
      await page.evaluate(() => window.gc());
      const base = await usage();
      let peak = base;
      let done = false;
      const poll = (async () => {
        while (!done) {
          peak = Math.max(peak, await usage());
          await new Promise((r) => setTimeout(r, 10));
        }
      })();
      try {
        return { result: await run(), growth: peak - base };
      } finally {
        done = true;
        await poll;
        await cdp.detach();
      }
    }

    test('a tensor over 256 MB streams from a File to the GPU, JS memory within a few chunks (< 64 MB growth)', async () => {
      await page.setInputFiles('#file', makeBig());
      // collect: a GC after each chunk, so that the peak is what the upload
      // holds rather than garbage V8 has not collected yet.
      const upload = (collect) =>
        page.evaluate(
          async ({ marks, collect }) => {
            const { SafeTensors } = window.stn;
            const { toGPUBuffer } = window.gpu;
            const st = await SafeTensors.fromBlob(document.getElementById('file').files[0]);
            const t = st.tensor('big');
            const d = window.bigDevice;
            let calls = 0;
            const t0 = performance.now();
            const b = await toGPUBuffer(d, t, {
              onProgress: () => {
                calls++;
                if (collect) window.gc();
              },
            });
            const ms = performance.now() - t0;
            const got = [];
            for (const [at] of marks) got.push((await window.readBack(d, b, at - (at % 4), 4))[at % 4]);
            const size = b.size;
            b.destroy();
            return { got, size, calls, ms, byteLength: t.byteLength };
          },
          { marks: MARKS, collect },
        );
      const { result: res, growth } = await peakMemory(() => upload(true));
      const { growth: lazyGc } = await peakMemory(() => upload(false));
      const mib = (n) => (n / 2 ** 20).toFixed(1);
      console.log(
        `# ${res.byteLength} bytes from a File in ${res.ms.toFixed(0)} ms (${res.calls} progress calls); JS heap + ArrayBuffers grew ${mib(growth)} MiB (${mib(lazyGc)} MiB when V8 collects on its own schedule)`,
      );
      assert.deepEqual(
        res.got,
        MARKS.map(([, v]) => v),
      );
      assert.equal(res.size, BIG + 3);
      assert.ok(res.calls > 40);
      assert.ok(growth < 64 * 2 ** 20, `JS memory grew ${growth} bytes`);
    });
  });
