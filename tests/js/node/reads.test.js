// Whole-model reads: readFloat32 over every tensor of a lazily opened file.
// Chunks are pipelined (the next read in flight while one decodes) and a
// Blob is read ahead into the next tensor when tensors are read in order;
// whatever the order, chunk size or concurrency, the values are those of
// toFloat32 on the file in memory.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SafeTensors } from 'safetensors-nano';
import { tensorFile } from '../lib/format.js';

// 24 tensors of three float dtypes and various lengths, seeded values.
let seed = 12345;
const next = () => (seed = (seed * 1103515245 + 12345) >>> 0) >>> 8;
const entries = [];
for (let i = 0; i < 24; i++) {
  const n = 1 + (next() % 200);
  const dtype = ['BF16', 'F16', 'F32'][i % 3];
  const data = dtype === 'F32' ? new Float32Array(n).map(() => (next() % 2000) / 64 - 16) : new Uint16Array(n).map(() => next() & 0x7bff);
  entries.push([`t${i}`, dtype, [n], data]);
}
const bytes = tensorFile(entries);
const inMemory = SafeTensors.fromBytes(bytes);
const want = new Map(inMemory.tensors().map((t) => [t.name, t.toFloat32()]));

const same = (got, name) => assert.deepEqual(new Uint32Array(got.buffer), new Uint32Array(want.get(name).buffer), name);

for (const chunkBytes of [24, 48, 1000, undefined]) {
  test(`every tensor in order, chunks of ${chunkBytes ?? 'the default'} bytes`, async () => {
    const st = await SafeTensors.fromBlob(new Blob([bytes]));
    for (const t of st.tensors()) same(await t.readFloat32({ chunkBytes }), t.name);
  });
}

test('in reverse order, and all at once', async () => {
  const st = await SafeTensors.fromBlob(new Blob([bytes]));
  for (const t of st.tensors().reverse()) same(await t.readFloat32({ chunkBytes: 48 }), t.name);
  const all = await Promise.all(st.tensors().map((t) => t.readFloat32({ chunkBytes: 72 })));
  st.tensors().forEach((t, i) => same(all[i], t.name));
});

test('a read-ahead cut short by an abort does not spoil the next read', async () => {
  const st = await SafeTensors.fromBlob(new Blob([bytes]));
  const [a, b, c] = st.tensors();
  same(await a.readFloat32({ chunkBytes: 48 }), a.name);
  const ctrl = new AbortController();
  await assert.rejects(b.readFloat32({ chunkBytes: 48, signal: ctrl.signal, onProgress: (d) => d > 0 && ctrl.abort() }));
  same(await c.readFloat32({ chunkBytes: 48 }), c.name);
  same(await b.readFloat32({ chunkBytes: 48 }), b.name);
});

test('a Blob many times the stream\'s pieces: chunks that straddle two pieces', async () => {
  // Two F32 tensors of 36 MiB; 3 MiB chunks do not divide the pieces the
  // stream is read in, so some chunk is decoded from two of them.
  const n = 9 * 1024 * 1024;
  const a = new Float32Array(n).map((_, i) => i);
  const b = new Float32Array(n).map((_, i) => -i);
  const st = await SafeTensors.fromBlob(new Blob([tensorFile([['a', 'F32', [n], a], ['b', 'F32', [n], b]])]));
  const chunkBytes = 3 * 1024 * 1024;
  const [ga, gb] = [await st.tensor('a').readFloat32({ chunkBytes }), await st.tensor('b').readFloat32({ chunkBytes })];
  assert.ok(ga.every((v, i) => v === i) && gb.every((v, i) => v === -i));
});

// A fetch that serves `file` by Range from memory; requests for which
// `fails(start)` is true reject (a network failure) after `delay` ms.
function rangeFetch(file, fails = () => false, delay = 30) {
  let requests = 0;
  const fetch = async (url, init) => {
    requests++;
    const [, s, e] = /bytes=(\d+)-(\d+)/.exec(new Headers(init.headers).get('Range'));
    const [start, end] = [Number(s), Math.min(file.length, Number(e) + 1)];
    if (fails(start)) {
      await new Promise((r) => setTimeout(r, delay));
      throw new TypeError('fetch failed');
    }
    const headers = { 'Content-Range': `bytes ${start}-${end - 1}/${file.length}`, 'Content-Length': String(end - start) };
    return new Response(file.slice(start, end), { status: 206, headers });
  };
  return { fetch, count: () => requests };
}

test('a URL read whose onProgress throws leaves no unhandled rejection behind (the next chunk\'s read failing later)', async () => {
  const n = 4096;
  const file = tensorFile([['x', 'F16', [n], new Uint16Array(n)]]);
  const st = await SafeTensors.fromUrl('http://test.invalid/x.safetensors', { fetch: rangeFetch(file).fetch, prefetch: 8, retries: 0 });
  const dataStart = st.tensor('x').byteOffset;
  const failing = rangeFetch(file, (start) => start > dataStart);
  const lazy = await SafeTensors.fromUrl('http://test.invalid/x.safetensors', { fetch: failing.fetch, prefetch: 8, retries: 0 });
  const unhandled = [];
  const onUnhandled = (e) => unhandled.push(e);
  process.on('unhandledRejection', onUnhandled);
  try {
    const boom = new Error('progress failed');
    const onProgress = (done) => {
      if (done > 0) throw boom;
    };
    await assert.rejects(lazy.tensor('x').readFloat32({ chunkBytes: 1200, onProgress }), (e) => e === boom);
    await new Promise((r) => setTimeout(r, 100)); // (the second chunk's read has failed by now)
    assert.deepEqual(unhandled, []);
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});

test('readFloat32 of a dtype that does not decode is DtypeMismatch before any byte is read', async () => {
  const file = tensorFile([['i', 'I32', [1024], new Int32Array(1024)]]);
  const counting = rangeFetch(file);
  const st = await SafeTensors.fromUrl('http://test.invalid/i.safetensors', { fetch: counting.fetch, retries: 0 });
  const before = counting.count();
  await assert.rejects(st.tensor('i').readFloat32(), (e) => e.kind === 'DtypeMismatch');
  assert.equal(counting.count(), before);
});

test('a pass in order to the data end keeps no read-ahead buffer', async () => {
  const { setFlagsFromString } = await import('node:v8');
  const { runInNewContext } = await import('node:vm');
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc');
  // Every buffer the Blob's slices give (by arrayBuffer() or through their
  // streams' readers), watched for being let go.
  const refs = [];
  const watch = (buf) => {
    if (buf?.byteLength > 0) refs.push(new WeakRef(buf));
  };
  class WatchedBlob extends Blob {
    slice(...args) {
      const part = super.slice(...args);
      const arrayBuffer = part.arrayBuffer.bind(part);
      part.arrayBuffer = async () => {
        const buf = await arrayBuffer();
        watch(buf);
        return buf;
      };
      const stream = part.stream.bind(part);
      part.stream = () => {
        const s = stream();
        const getReader = s.getReader.bind(s);
        s.getReader = (opts) => {
          const reader = getReader(opts);
          const read = reader.read.bind(reader);
          reader.read = async (...a) => {
            const r = await read(...a);
            watch(r.value?.buffer);
            return r;
          };
          return reader;
        };
        return s;
      };
      return part;
    }
  }
  const st = await SafeTensors.fromBlob(new WatchedBlob([bytes]));
  for (const t of st.tensors()) same(await t.readFloat32({ chunkBytes: 48 }), t.name);
  const largest = refs.reduce((a, b) => (b.deref().byteLength > a.deref().byteLength ? b : a));
  assert.ok(largest.deref().byteLength > bytes.length / 2, 'the read-ahead holds most of the file');
  for (let i = 0; i < 3 && refs.some((r) => r.deref() !== undefined); i++) {
    await new Promise((r) => setTimeout(r, 10));
    gc();
  }
  assert.equal(refs.filter((r) => r.deref() !== undefined).length, 0, 'a read-ahead buffer is still held');
  assert.equal(st.length, 24);
});

test('readFloat32 refuses a chunkBytes that is not a positive integer (TypeError), as serializeStream does', async () => {
  const st = await SafeTensors.fromBlob(new Blob([bytes]));
  for (const chunkBytes of [NaN, 0, -48, 1.5, Infinity, '1000']) {
    await assert.rejects(st.tensor('t0').readFloat32({ chunkBytes }), TypeError, `chunkBytes ${chunkBytes}`);
  }
  same(await st.tensor('t0').readFloat32({ chunkBytes: 25 }), 't0');
});

test('pieces of a Blob\'s stream that cut elements in two (F8 of odd length, F6 in threes) decode as toFloat32', async () => {
  const { piecesFile } = await import('../lib/pieces.js');
  const file = piecesFile();
  const mem = SafeTensors.fromBytes(file);
  for (const chunkBytes of [undefined, 1024 * 1024 + 5]) {
    const st = await SafeTensors.fromBlob(new Blob([file]));
    for (const t of st.tensors()) {
      const got = await t.readFloat32({ chunkBytes });
      assert.deepEqual(new Uint32Array(got.buffer), new Uint32Array(mem.tensor(t.name).toFloat32().buffer), `${t.name}, chunks of ${chunkBytes}`);
    }
    assert.equal(st.bytesRead, file.length);
  }
});

test('readFloat32 decodes into `out` (a Blob read in order, bytes in memory), and refuses a wrong one', async () => {
  for (const st of [await SafeTensors.fromBlob(new Blob([bytes])), SafeTensors.fromBytes(bytes)]) {
    const largest = Math.max(...st.tensors().map((t) => t.elementCount));
    const buf = new Float32Array(largest + 2).fill(NaN);
    for (const t of st.tensors()) {
      const out = buf.subarray(1, 1 + t.elementCount);
      const got = await t.readFloat32({ out, chunkBytes: 48 });
      assert.equal(got, out);
      same(got.slice(), t.name);
    }
    assert.ok(Number.isNaN(buf[0]) && Number.isNaN(buf[largest + 1]), 'nothing written outside out');
    const t = st.tensor('t0');
    for (const out of [new Float32Array(t.elementCount + 1), new Float32Array(t.elementCount - 1), new Float64Array(t.elementCount), [0], null]) {
      await assert.rejects(t.readFloat32({ out }), (e) => e.kind === 'LengthMismatch' && e.tensor === 't0' && /Float32Array of/.test(e.message), String(out?.constructor?.name));
    }
    const detached = new Float32Array(t.elementCount);
    structuredClone(detached.buffer, { transfer: [detached.buffer] });
    await assert.rejects(t.readFloat32({ out: detached }), (e) => e.kind === 'InvalidArgument' && e.tensor === 't0');
  }
});
