// serializeStream: the same bytes as the reference for every dtype, from
// every kind of data (typed arrays, Blobs, tensors of opened files), with
// and without float conversion; backpressure; abort; errors before bytes.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openAsBlob, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  SafeTensors,
  SafeTensorsError,
  editTensors,
  serialize,
  serializeStream,
  serializedSize,
} from 'safetensors-nano';
import { referenceFiles, scratch } from '../lib/env.js';
import { rawFile } from '../lib/format.js';
import { collect, compareConverted, convertReference, fileBytes } from '../lib/streams.js';

const ref = referenceFiles();
const conv = convertReference();

const isKind = (kind, tensor) => (e) => {
  assert.ok(e instanceof SafeTensorsError, String(e));
  assert.equal(e.kind, kind, e.message);
  if (tensor !== undefined) assert.equal(e.tensor, tensor);
  return true;
};

test('every dtype, no conversion: the reference file again, from tensors, Blobs and typed arrays, in any chunk size', {
  skip: ref.skip,
}, async () => {
  const blob = new Blob([ref.mixed]);
  const lazy = await SafeTensors.fromBlob(blob);
  const inMemory = SafeTensors.fromBytes(ref.mixed);
  assert.ok(lazy.length >= 20);
  const inputs = {
    'tensors of a lazily read file': editTensors(lazy),
    'tensors of an in-memory file': editTensors(inMemory),
    Blobs: new Map(
      lazy
        .tensors()
        .map((t) => [
          t.name,
          { dtype: t.dtype, shape: t.shape, data: blob.slice(t.byteOffset, t.byteOffset + t.byteLength) },
        ]),
    ),
    'typed arrays': Object.fromEntries(
      inMemory.tensors().map((t) => [t.name, { dtype: t.dtype, shape: t.shape, data: t.bytes().slice() }]),
    ),
  };
  for (const [what, tensors] of Object.entries(inputs)) {
    for (const chunkBytes of [undefined, 24, 1000]) {
      const { bytes } = await collect(serializeStream(tensors, lazy.metadata(), { chunkBytes }));
      assert.deepEqual(Buffer.from(bytes), Buffer.from(ref.mixed), `${what}, chunkBytes ${chunkBytes}`);
      assert.equal(await serializedSize(tensors, lazy.metadata()), ref.mixed.length);
    }
  }
});

test('every float dtype converted to F64, F32, F16 and BF16: the reference files (NaN payloads aside)', {
  skip: conv.skip,
}, async () => {
  const source = await SafeTensors.fromBlob(await openAsBlob(conv.source));
  // F6 (which the reference cannot write) from its packed codes, through our writer.
  const f6 = {};
  for (const d of ['F6_E2M3', 'F6_E3M2'])
    f6[d] = { dtype: d, shape: [64], data: await source.tensor(`${d}.bytes`).read() };
  const f6file = SafeTensors.fromBytes(await serialize(f6));
  const all = [...source.tensors(), ...f6file.tensors()];
  for (const [target, path] of Object.entries(conv.expected)) {
    const want = fileBytes(path);
    for (const chunkBytes of [undefined, 48]) {
      const tensors = editTensors(all, { drop: '*.bytes', convert: target });
      const { bytes } = await collect(serializeStream(tensors, { format: 'pt' }, { chunkBytes }));
      const { nanPayloads } = compareConverted((b) => SafeTensors.fromBytes(b), bytes, want);
      // Only NaN payloads differ (signalling NaNs kept by numpy, quieted by half's F16/BF16).
      assert.ok(nanPayloads <= 2100, `${target}: ${nanPayloads} NaN payloads differ`);
    }
  }
});

test('Float32Array and Float64Array data asked for as another float dtype are converted', {
  skip: conv.skip,
}, async () => {
  const source = SafeTensors.fromBytes(fileBytes(conv.source));
  const expected = SafeTensors.fromBytes(fileBytes(conv.expected.BF16));
  for (const [name, Ctor] of [
    ['F32', Float32Array],
    ['F64', Float64Array],
  ]) {
    const values = new Ctor(source.tensor(name).bytes().slice().buffer);
    const file = SafeTensors.fromBytes(
      (await collect(serializeStream({ [name]: { dtype: 'BF16', shape: [values.length], data: values } }))).bytes,
    );
    const got = file.tensor(name).bytes();
    const want = expected.tensor(name).bytes();
    assert.equal(got.length, want.length);
    for (let i = 0; i < want.length; i += 2) {
      const [g, w] = [got[i] | (got[i + 1] << 8), want[i] | (want[i + 1] << 8)];
      const nan = (v) => (v & 0x7fff) > 0x7f80;
      assert.ok(g === w || (nan(g) && nan(w)), `${name}[${i / 2}]: ${g.toString(16)} vs ${w.toString(16)}`);
    }
  }
  // The same arrays asked for as their own dtype, or as bytes of an integer dtype, are bytes.
  const f = new Float32Array([1.5, -2]);
  const file = SafeTensors.fromBytes(
    (
      await collect(
        serializeStream({ a: { dtype: 'F32', shape: [2], data: f }, b: { dtype: 'U8', shape: [8], data: f } }),
      )
    ).bytes,
  );
  assert.deepEqual([...file.tensor('a').view()], [1.5, -2]);
  assert.deepEqual([...file.tensor('b').bytes()], [...new Uint8Array(f.buffer)]);
});

test('backpressure: a source is read at most one chunk ahead of the consumer', async () => {
  const MiB = 2 ** 20;
  let slices = 0;
  class CountingBlob extends Blob {
    slice(...args) {
      slices++;
      return super.slice(...args);
    }
  }
  const blob = new CountingBlob([new Uint8Array(64 * MiB)]);
  const stream = serializeStream({ big: { dtype: 'U8', shape: [blob.size], data: blob } }, null, { chunkBytes: MiB });
  const reader = stream.getReader();
  const first = await reader.read(); // the header and the first MiB
  assert.equal(first.done, false);
  await new Promise((r) => setTimeout(r, 100));
  assert.ok(slices <= 3, `${slices} slices read after one chunk was taken`);
  let n = first.value.byteLength;
  for (let r = await reader.read(); !r.done; r = await reader.read()) n += r.value.byteLength;
  assert.equal(n, 64 * MiB + 8 + 72); // (a 72-byte header)
  assert.ok(slices <= 66, `${slices} slices`);
});

test("progress, and an abort mid-stream errors the stream with the signal's reason", async () => {
  const MiB = 2 ** 20;
  const data = new Float32Array(4 * MiB);
  const seen = [];
  const { bytes } = await collect(
    serializeStream({ x: { dtype: 'F16', shape: [data.length], data } }, null, {
      chunkBytes: MiB,
      onProgress: (d, t) => seen.push([d, t]),
    }),
  );
  assert.equal(seen[0][0], 0);
  assert.deepEqual(seen.at(-1), [bytes.length, bytes.length]);
  assert.ok(seen.length >= 5 && seen.every(([d], i) => i === 0 || d > seen[i - 1][0]));

  const controller = new AbortController();
  const stream = serializeStream({ x: { dtype: 'BF16', shape: [data.length], data } }, null, {
    chunkBytes: MiB,
    signal: controller.signal,
  });
  const reader = stream.getReader();
  await reader.read();
  controller.abort();
  await assert.rejects(
    async () => {
      for (;;) if ((await reader.read()).done) break;
    },
    (e) => e.name === 'AbortError',
  );
});

test('errors come through the stream before its first byte, naming the tensor', async () => {
  const first = (tensors, metadata) => serializeStream(tensors, metadata).getReader().read();
  await assert.rejects(
    first({ a: { dtype: 'U8', shape: [3], data: new Uint8Array(2) } }),
    isKind('DataLengthMismatch', 'a'),
  );
  await assert.rejects(
    serializedSize({ a: { dtype: 'U8', shape: [3], data: new Uint8Array(2) } }),
    isKind('DataLengthMismatch', 'a'),
  );
  await assert.rejects(
    first({ a: { dtype: 'U8', shape: [3], data: new Blob([new Uint8Array(4)]) } }),
    isKind('DataLengthMismatch', 'a'),
  );
  await assert.rejects(first({ a: { dtype: 'F9', shape: [1], data: new Uint8Array(1) } }), isKind('UnknownDtype', 'a'));
  await assert.rejects(first({ a: { dtype: 'U8', shape: [1], data: 'x' } }), isKind('InvalidArgument', 'a'));
  const ints = SafeTensors.fromBytes(
    await serialize({
      i: { dtype: 'I32', shape: [1], data: new Int32Array(1) },
      f: { dtype: 'F32', shape: [1], data: new Float32Array(1) },
    }),
  );
  await assert.rejects(
    first({ i: { dtype: 'F16', shape: [1], data: ints.tensor('i') } }),
    isKind('DtypeMismatch', 'i'),
  );
  await assert.rejects(
    first({ f: { dtype: 'F8_E4M3', shape: [1], data: ints.tensor('f') } }),
    isKind('DtypeMismatch', 'f'),
  );
  await assert.rejects(
    first({ f: { dtype: 'BF16', shape: [2], data: ints.tensor('f') } }),
    isKind('DataLengthMismatch', 'f'),
  );
  // A tensor's dtype and shape are its own unless given.
  const { bytes } = await collect(serializeStream({ g: { data: ints.tensor('f') } }));
  assert.deepEqual(SafeTensors.fromBytes(bytes).tensor('g').shape, [1]);
});

test('a Blob that changed since the stream was made: SourceChanged naming the tensor (a short read, a File edited on disk)', async () => {
  // A Blob whose bytes ran short: a slice gives fewer bytes than asked for.
  class ShortBlob extends Blob {
    slice(start, end) {
      return super.slice(start, Math.max(start, end - 1));
    }
  }
  const short = new ShortBlob([new Uint8Array(16)]);
  await assert.rejects(
    collect(serializeStream({ s: { dtype: 'U8', shape: [16], data: short } })),
    isKind('SourceChanged', 's'),
  );
  // A file on disk (fs.openAsBlob) rewritten after the Blob was made: NotReadableError.
  const path = join(scratch('stn-stream-'), 'edited.bin');
  writeFileSync(path, new Uint8Array(16).fill(1));
  const file = await openAsBlob(path);
  await new Promise((resolve) => setTimeout(resolve, 20));
  writeFileSync(path, new Uint8Array(16).fill(2));
  await assert.rejects(
    collect(serializeStream({ f: { dtype: 'U8', shape: [16], data: file } })),
    (e) => isKind('SourceChanged', 'f')(e) && e.cause?.name === 'NotReadableError',
  );
});

test('editTensors: keep, drop, rename by prefix or RegExp, convert; a duplicate after renaming is refused at once', async () => {
  const f = new Float32Array([1, 2]);
  const file = SafeTensors.fromBytes(
    await serialize({
      'model.a.weight': { dtype: 'F32', shape: [2], data: f },
      'model.b.weight': { dtype: 'F64', shape: [1], data: new Float64Array([3]) },
      'model.b.bias': { dtype: 'I8', shape: [1], data: new Int8Array([4]) },
      'optimizer.m': { dtype: 'F32', shape: [2], data: f },
    }),
  );
  const names = (m) => [...m.keys()].sort();
  assert.deepEqual(names(editTensors(file, { drop: 'optimizer.*' })), [
    'model.a.weight',
    'model.b.bias',
    'model.b.weight',
  ]);
  assert.deepEqual(names(editTensors(file, { keep: /weight$/ })), ['model.a.weight', 'model.b.weight']);
  assert.deepEqual(names(editTensors(file, { keep: ['*.bias', (n) => n === 'optimizer.m'] })), [
    'model.b.bias',
    'optimizer.m',
  ]);
  assert.deepEqual(names(editTensors(file, { drop: 'optimizer.*', rename: ['model.', 'transformer.'] })), [
    'transformer.a.weight',
    'transformer.b.bias',
    'transformer.b.weight',
  ]);
  assert.deepEqual(names(editTensors(file, { keep: 'model.?.weight', rename: [/^model\.(\w)\./g, 'h.$1.'] })), [
    'h.a.weight',
    'h.b.weight',
  ]);
  const edited = editTensors(file, { convert: 'BF16', drop: 'optimizer.*' });
  assert.deepEqual([...edited.values()].map((t) => t.dtype).sort(), ['BF16', 'BF16', 'I8']);
  const out = SafeTensors.fromBytes((await collect(serializeStream(edited))).bytes);
  assert.deepEqual([...out.tensor('model.b.weight').toFloat32()], [3]);
  assert.deepEqual([...editTensors(file, { convert: { F64: 'F32' } }).values()].map((t) => t.dtype).sort(), [
    'F32',
    'F32',
    'F32',
    'I8',
  ]);
  assert.throws(
    () => editTensors(file, { drop: 'optimizer.*', rename: [/\.(weight|bias)$/, ''] }),
    isKind('DuplicateTensorName', 'model.b'),
  );
  assert.throws(() => editTensors(file, { rename: () => '__metadata__' }), isKind('ReservedName'));
  assert.throws(() => editTensors(file, { convert: 'F8_E4M3' }), isKind('InvalidArgument'));
  assert.throws(() => editTensors(file, { keep: 3 }), TypeError);
});

test('the declarations type-check a use of the streaming writer, the edits and writeFile (tsc --strict)', async () => {
  const { spawnSync } = await import('node:child_process');
  const { createRequire } = await import('node:module');
  const { fileURLToPath } = await import('node:url');
  const project = fileURLToPath(new URL('..', import.meta.url));
  const tsc = createRequire(`${project}package.json`).resolve('typescript/bin/tsc');
  const r = spawnSync(
    process.execPath,
    [
      tsc,
      '--noEmit',
      '--strict',
      '--target',
      'es2022',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--lib',
      'es2022,dom,dom.asynciterable',
      `${project}types/stream.ts`,
    ],
    { cwd: project, encoding: 'utf8' },
  );
  assert.equal(r.status, 0, r.stdout + r.stderr);
});

// A file of one U8 tensor served by Range from memory through a fetch whose
// requests for data past its first `served` bytes never answer; `honour`:
// they reject when their signal aborts (as fetch does), else they ignore it.
async function stalledUrlTensor(bytes, served, honour) {
  const file = rawFile({ x: { dtype: 'U8', shape: [bytes], data_offsets: [0, bytes] } }, new Uint8Array(bytes));
  const stallFrom = file.length - bytes + served;
  const fetch = async (_url, init) => {
    const [, s, e] = /bytes=(\d+)-(\d+)/.exec(new Headers(init.headers).get('Range'));
    const [start, end] = [Number(s), Math.min(file.length, Number(e) + 1)];
    if (start >= stallFrom) {
      return new Promise((_resolve, reject) => {
        if (honour) init.signal.addEventListener('abort', () => reject(init.signal.reason), { once: true });
      });
    }
    const headers = {
      'Content-Range': `bytes ${start}-${end - 1}/${file.length}`,
      'Content-Length': String(end - start),
    };
    return new Response(file.slice(start, end), { status: 206, headers });
  };
  const st = await SafeTensors.fromUrl('http://test.invalid/x.safetensors', {
    fetch,
    prefetch: 8,
    timeout: Infinity,
    retries: 0,
  });
  return st.tensor('x');
}

const within = (promise, ms, what) =>
  Promise.race([
    promise,
    new Promise((_resolve, reject) =>
      setTimeout(() => reject(new Error(`${what}: still waiting after ${ms} ms`)), ms).unref(),
    ),
  ]);

test('cancel stops a source read in flight instead of waiting for it', async () => {
  const MiB = 2 ** 20;
  const x = await stalledUrlTensor(3 * MiB, MiB, true);
  const reader = serializeStream({ x: { data: x } }, null, { chunkBytes: MiB }).getReader();
  const first = await reader.read(); // the header and the first MiB; the next read stalls
  assert.ok(first.value.byteLength > MiB);
  await new Promise((r) => setTimeout(r, 20));
  await within(reader.cancel(new Error('stop')), 2000, 'cancel');
});

test('an abort while the consumer is not reading errors the stream at once', async () => {
  const MiB = 2 ** 20;
  const x = await stalledUrlTensor(3 * MiB, MiB, false);
  const controller = new AbortController();
  const reader = serializeStream({ x: { data: x } }, null, { chunkBytes: MiB, signal: controller.signal }).getReader();
  await reader.read();
  await new Promise((r) => setTimeout(r, 20)); // (the stream is pulling the next chunk: its read never answers)
  controller.abort();
  await assert.rejects(within(reader.read(), 2000, 'read after the abort'), (e) => e.name === 'AbortError');
});
