// Whole-model reads: readFloat32 over every tensor of a lazily opened file.
// Chunks are pipelined (the next read in flight while one decodes) and a
// Blob is read ahead into the next tensor when tensors are read in order;
// whatever the order, chunk size or concurrency, the values are those of
// toFloat32 on the file in memory.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { SafeTensors } from 'safetensors-nano';
import { tensorFile } from '../lib/format.js';

/** The engine's garbage collector as a function (node:v8's --expose-gc, turned on at run time). */
function collector() {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc');
}

/** How many of `refs` (WeakRefs) still hold their object after up to three collections. */
async function stillHeld(refs, gc) {
  for (let i = 0; i < 3 && refs.some((r) => r.deref() !== undefined); i++) {
    await new Promise((r) => setTimeout(r, 10));
    gc();
  }
  return refs.filter((r) => r.deref() !== undefined).length;
}

// 24 tensors of three float dtypes and various lengths, seeded values.
let seed = 12345;
const next = () => (seed = (seed * 1103515245 + 12345) >>> 0) >>> 8;
const entries = [];
for (let i = 0; i < 24; i++) {
  const n = 1 + (next() % 200);
  const dtype = ['BF16', 'F16', 'F32'][i % 3];
  const data =
    dtype === 'F32'
      ? new Float32Array(n).map(() => (next() % 2000) / 64 - 16)
      : new Uint16Array(n).map(() => next() & 0x7bff);
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
  st.tensors().forEach((t, i) => {
    same(all[i], t.name);
  });
});

test('a read-ahead cut short by an abort does not spoil the next read', async () => {
  const st = await SafeTensors.fromBlob(new Blob([bytes]));
  const [a, b, c] = st.tensors();
  same(await a.readFloat32({ chunkBytes: 48 }), a.name);
  const ctrl = new AbortController();
  await assert.rejects(
    b.readFloat32({ chunkBytes: 48, signal: ctrl.signal, onProgress: (d) => d > 0 && ctrl.abort() }),
  );
  same(await c.readFloat32({ chunkBytes: 48 }), c.name);
  same(await b.readFloat32({ chunkBytes: 48 }), b.name);
});

test("a Blob many times the stream's pieces: chunks that straddle two pieces", async () => {
  // Two F32 tensors of 36 MiB; 3 MiB chunks do not divide the pieces the
  // stream is read in, so some chunk is decoded from two of them.
  const n = 9 * 1024 * 1024;
  const a = new Float32Array(n).map((_, i) => i);
  const b = new Float32Array(n).map((_, i) => -i);
  const st = await SafeTensors.fromBlob(
    new Blob([
      tensorFile([
        ['a', 'F32', [n], a],
        ['b', 'F32', [n], b],
      ]),
    ]),
  );
  const chunkBytes = 3 * 1024 * 1024;
  const [ga, gb] = [await st.tensor('a').readFloat32({ chunkBytes }), await st.tensor('b').readFloat32({ chunkBytes })];
  assert.ok(ga.every((v, i) => v === i) && gb.every((v, i) => v === -i));
});

// A fetch that serves `file` by Range from memory; requests for which
// `fails(start)` is true reject (a network failure) after `delay` ms.
function rangeFetch(file, fails = () => false, delay = 30) {
  let requests = 0;
  const fetch = async (_url, init) => {
    requests++;
    const [, s, e] = /bytes=(\d+)-(\d+)/.exec(new Headers(init.headers).get('Range'));
    const [start, end] = [Number(s), Math.min(file.length, Number(e) + 1)];
    if (fails(start)) {
      await new Promise((r) => setTimeout(r, delay));
      throw new TypeError('fetch failed');
    }
    const headers = {
      'Content-Range': `bytes ${start}-${end - 1}/${file.length}`,
      'Content-Length': String(end - start),
    };
    return new Response(file.slice(start, end), { status: 206, headers });
  };
  return { fetch, count: () => requests };
}

test("a URL read whose onProgress throws leaves no unhandled rejection behind (the next chunk's read failing later)", async () => {
  const n = 4096;
  const file = tensorFile([['x', 'F16', [n], new Uint16Array(n)]]);
  const st = await SafeTensors.fromUrl('http://test.invalid/x.safetensors', {
    fetch: rangeFetch(file).fetch,
    prefetch: 8,
    retries: 0,
  });
  const dataStart = st.tensor('x').byteOffset;
  const failing = rangeFetch(file, (start) => start > dataStart);
  const lazy = await SafeTensors.fromUrl('http://test.invalid/x.safetensors', {
    fetch: failing.fetch,
    prefetch: 8,
    retries: 0,
  });
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

// Every buffer a Blob's slices give (by arrayBuffer() or through their
// streams' readers) goes to `watch`.
function watchedBlob(parts, watch) {
  return new (class extends Blob {
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
  })(parts);
}

test('a pass in order to the data end keeps no read-ahead buffer', async () => {
  const gc = collector();
  // Every buffer the Blob's slices give, watched for being let go.
  const refs = [];
  const watch = (buf) => {
    if (buf?.byteLength > 0) refs.push(new WeakRef(buf));
  };
  const st = await SafeTensors.fromBlob(watchedBlob([bytes], watch));
  for (const t of st.tensors()) same(await t.readFloat32({ chunkBytes: 48 }), t.name);
  const largest = refs.reduce((a, b) => (b.deref().byteLength > a.deref().byteLength ? b : a));
  assert.ok(largest.deref().byteLength > bytes.length / 2, 'the read-ahead holds most of the file');
  assert.equal(await stillHeld(refs, gc), 0, 'a read-ahead buffer is still held');
  assert.equal(st.length, 24);
});

test('readFloat32 refuses a chunkBytes that is not a positive integer (TypeError), as serializeStream does', async () => {
  const st = await SafeTensors.fromBlob(new Blob([bytes]));
  for (const chunkBytes of [NaN, 0, -48, 1.5, Infinity, '1000']) {
    await assert.rejects(st.tensor('t0').readFloat32({ chunkBytes }), TypeError, `chunkBytes ${chunkBytes}`);
  }
  same(await st.tensor('t0').readFloat32({ chunkBytes: 25 }), 't0');
});

test("pieces of a Blob's stream that cut elements in two (F8 of odd length, F6 in threes) decode as toFloat32", async () => {
  const { piecesFile } = await import('../lib/pieces.js');
  const file = piecesFile();
  const mem = SafeTensors.fromBytes(file);
  for (const chunkBytes of [undefined, 1024 * 1024 + 5]) {
    const st = await SafeTensors.fromBlob(new Blob([file]));
    for (const t of st.tensors()) {
      const got = await t.readFloat32({ chunkBytes });
      assert.deepEqual(
        new Uint32Array(got.buffer),
        new Uint32Array(mem.tensor(t.name).toFloat32().buffer),
        `${t.name}, chunks of ${chunkBytes}`,
      );
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
    for (const out of [new Float32Array(t.elementCount + 1), new Float32Array(t.elementCount - 1)]) {
      await assert.rejects(
        t.readFloat32({ out }),
        (e) => e.kind === 'LengthMismatch' && e.tensor === 't0' && /Float32Array of/.test(e.message),
        String(out.length),
      );
    }
    for (const out of [new Float64Array(t.elementCount), [0], null, 7]) {
      await assert.rejects(
        t.readFloat32({ out }),
        (e) => e.kind === 'InvalidArgument' && e.tensor === 't0' && /where a Float32Array of/.test(e.message),
        String(out?.constructor?.name),
      );
    }
    const detached = new Float32Array(t.elementCount);
    structuredClone(detached.buffer, { transfer: [detached.buffer] });
    await assert.rejects(
      t.readFloat32({ out: detached }),
      (e) => e.kind === 'InvalidArgument' && e.tensor === 't0' && /detached/.test(e.message),
    );
    // A Float32Array of another realm is one.
    const { runInNewContext } = await import('node:vm');
    const foreign = runInNewContext(`new Float32Array(${t.elementCount})`);
    assert.equal(foreign instanceof Float32Array, false);
    assert.equal(await t.readFloat32({ out: foreign }), foreign);
    same(Float32Array.from(foreign), 't0');
  }
});

test('decodeFloat32 checks `out` as readFloat32 does', async () => {
  const { decodeFloat32 } = await import('safetensors-nano');
  const { runInNewContext } = await import('node:vm');
  const src = new Uint16Array([0x3c00, 0xc000]);
  const kind = (out) => {
    try {
      decodeFloat32('F16', src, out);
      return 'ok';
    } catch (e) {
      return e.kind;
    }
  };
  assert.equal(kind(new Float32Array(3)), 'LengthMismatch');
  assert.equal(kind(new Float64Array(2)), 'InvalidArgument');
  assert.equal(kind([0, 0]), 'InvalidArgument');
  const detached = new Float32Array(2);
  structuredClone(detached.buffer, { transfer: [detached.buffer] });
  assert.equal(kind(detached), 'InvalidArgument');
  const foreign = runInNewContext('new Float32Array(2)');
  assert.equal(decodeFloat32('F16', src, foreign), foreign);
  assert.deepEqual(Array.from(foreign), [1, -2]);
});

test('an already aborted signal rejects readFloat32, even of a tensor served from the read-ahead or of no bytes', async () => {
  const file = tensorFile([
    ['a', 'F16', [4], new Uint16Array(4)],
    ['b', 'F16', [2], new Uint16Array(2)],
    ['empty', 'F32', [0], new Float32Array(0)],
    ['c', 'F16', [3], new Uint16Array(3)],
  ]);
  const gone = AbortSignal.abort(new Error('stop'));
  for (const st of [await SafeTensors.fromBlob(new Blob([file])), SafeTensors.fromBytes(file)]) {
    // a, then b: an in-order pass whose stream holds the rest of the file.
    await st.tensor('a').readFloat32();
    for (const name of ['b', 'empty', 'c']) {
      await assert.rejects(st.tensor(name).readFloat32({ signal: gone }), /stop/, name);
    }
    assert.deepEqual(Array.from(await st.tensor('b').readFloat32()), [0, 0]);
  }
});

test('one read out of order holds nothing of the file once it is done', async () => {
  const gc = collector();
  // A file of one small tensor then 8 MiB more: a stream to the file's end
  // would read megabytes.
  const big = tensorFile([
    ['small', 'F32', [32], new Float32Array(32).fill(1.5)],
    ['big', 'F32', [2 * 1024 * 1024], new Float32Array(2 * 1024 * 1024)],
  ]);
  const refs = [];
  let largest = 0;
  const st = await SafeTensors.fromBlob(
    watchedBlob([big], (buf) => {
      if (buf?.byteLength > 0) {
        refs.push(new WeakRef(buf));
        largest = Math.max(largest, buf.byteLength);
      }
    }),
  );
  const before = refs.length;
  assert.deepEqual(Array.from(await st.tensor('small').readFloat32()), new Array(32).fill(1.5));
  assert.ok(refs.length > before, 'the read went through the watched Blob');
  assert.ok(largest <= 1 << 16, `a buffer of ${largest} bytes for a 128-byte tensor`);
  assert.equal(await stillHeld(refs, gc), 0, 'a buffer of the read is still held');
  assert.equal(st.length, 2);
});

test('many small reads at once hold memory of their size, not of the file', async () => {
  const gc = collector();
  const n = 300;
  const tiny = [];
  for (let i = 0; i < n; i++) tiny.push([`t${i}`, 'F32', [32], new Float32Array(32).fill(i)]);
  tiny.push(['tail', 'U8', [16 * 1024 * 1024], new Uint8Array(16 * 1024 * 1024)]);
  const file = tensorFile(tiny);
  const { writeFileSync, mkdtempSync, rmSync, openAsBlob } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dir = mkdtempSync(join(tmpdir(), 'reads-'));
  writeFileSync(join(dir, 'm.safetensors'), file);
  try {
    for (const blob of [new Blob([file]), await openAsBlob(join(dir, 'm.safetensors'))]) {
      const st = await SafeTensors.fromBlob(blob);
      gc();
      const base = process.memoryUsage().arrayBuffers;
      let peak = 0;
      const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().arrayBuffers - base)), 1);
      // Every other tensor, all at once: no read starts where another ended.
      const names = [];
      for (let i = 0; i < n; i += 2) names.push(`t${i}`);
      const got = await Promise.all(names.map((name) => st.tensor(name).readFloat32()));
      peak = Math.max(peak, process.memoryUsage().arrayBuffers - base);
      clearInterval(timer);
      got.forEach((v, k) => {
        assert.equal(v[31], 2 * k);
      });
      // Before, each read held two buffers of 4 MiB (a stream to the end).
      assert.ok(
        peak < 64 * 1024 * 1024,
        `${(peak / 2 ** 20).toFixed(1)} MiB of ArrayBuffers for ${names.length} reads of 128 bytes`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a Blob whose stream gives small chunks of random sizes: every float dtype, in any order, as toFloat32', async () => {
  const dtypes = [
    ['F4', 4],
    ['F6_E2M3', 6],
    ['F6_E3M2', 6],
    ['F8_E5M2', 8],
    ['F8_E4M3', 8],
    ['F8_E8M0', 8],
    ['F8_E4M3FNUZ', 8],
    ['F8_E5M2FNUZ', 8],
    ['F16', 16],
    ['BF16', 16],
    ['F32', 32],
    ['F64', 64],
  ];
  let s = 99;
  const rnd = (n) => (s = (s * 1103515245 + 12345) >>> 0) % n;
  const list = [];
  for (let i = 0; i < 60; i++) {
    const [dtype, bits] = dtypes[i % dtypes.length];
    // Whole bytes: elements in groups of 8 / gcd(bits, 8); some empty.
    const group = bits % 8 === 0 ? 1 : bits === 4 ? 2 : 4;
    const n = i % 7 === 3 ? 0 : group * (1 + rnd(40));
    const data = new Uint8Array((n * bits) / 8).map(() => rnd(256));
    list.push([`t${i}`, dtype, [n], data]);
  }
  const file = tensorFile(list);
  const mem = SafeTensors.fromBytes(file);
  // A Blob-like object: its stream is not a byte stream and gives chunks of
  // 1 to 37 bytes, so elements of every width are cut at every place.
  const blobLike = (bytes) => ({
    size: bytes.length,
    slice: (a = 0, b = bytes.length) => blobLike(bytes.subarray(a, Math.min(b, bytes.length))),
    arrayBuffer: async () => bytes.slice().buffer,
    stream() {
      let at = 0;
      return new ReadableStream({
        pull(c) {
          if (at >= bytes.length) return c.close();
          const n = 1 + rnd(37);
          c.enqueue(bytes.slice(at, at + n));
          at += n;
        },
      });
    },
  });
  const same = async (t, got) =>
    assert.deepEqual(
      new Uint32Array((await got).buffer),
      new Uint32Array(mem.tensor(t.name).toFloat32().buffer),
      `${t.name} (${t.dtype}, ${t.elementCount})`,
    );
  for (const order of ['in order', 'reversed', 'all at once', 'mixed with read()']) {
    const st = await SafeTensors.fromBlob(blobLike(file));
    const tensors = st.tensors();
    if (order === 'reversed') tensors.reverse();
    if (order === 'all at once')
      await Promise.all(tensors.map((t) => same(t, t.readFloat32({ chunkBytes: 1 + rnd(100) }))));
    else {
      for (const t of tensors) {
        if (order === 'mixed with read()' && rnd(3) === 0) {
          const raw = await t.read();
          assert.deepEqual(raw, mem.tensor(t.name).bytes(), t.name);
        }
        await same(t, t.readFloat32({ chunkBytes: order === 'in order' ? undefined : 1 + rnd(100) }));
      }
    }
  }
});
