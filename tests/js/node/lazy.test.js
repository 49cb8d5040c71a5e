// Lazy sources: fromBlob (in-memory Blobs and files opened with
// fs.openAsBlob, including a sparse file over 4 GiB) and fromUrl against a
// local server with and without Range support.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, openAsBlob, openSync, readSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SafeTensors, SafeTensorsError } from 'safetensors-nano';
import { rawFile, tensorFile } from '../lib/format.js';
import { scratch } from '../lib/env.js';
import { makeSparseFile, SPARSE } from '../lib/sparse.js';
import { startServer } from '../lib/server.js';

const dir = scratch('stn-lazy-');
const bf16 = (...v) => new Uint16Array(new Float32Array(v).buffer.slice(0)).filter((_, i) => i % 2 === 1);
const model = tensorFile(
  [
    ['emb', 'BF16', [2, 3], bf16(1, -2, 3, 0.5, 0, -0)],
    ['scale', 'F32', [2], new Float32Array([0.25, 4])],
    ['flag', 'U8', [4], Uint8Array.of(1, 2, 3, 4)],
  ],
  { metadata: { format: 'pt' } },
);
writeFileSync(join(dir, 'model.safetensors'), model);
const badHeader = '{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}'; // no closing brace
writeFileSync(join(dir, 'bad.safetensors'), rawFile(badHeader, new Uint8Array(4)));
const sparse = makeSparseFile(dir);

// A file as a Blob-like object (size, slice().arrayBuffer()) read with
// fs.readSync: Node 20's fs.openAsBlob reports the size of a file over 4 GiB
// modulo 2^32, so the sparse file goes through this; fromBlob needs no more.
function fileBlob(path, start = 0, end = statSync(path).size) {
  return {
    size: end - start,
    slice(a = 0, b = end - start) {
      return fileBlob(path, start + a, start + Math.min(b, end - start));
    },
    async arrayBuffer() {
      const buf = new Uint8Array(end - start);
      const fd = openSync(path, 'r');
      try {
        let done = 0;
        while (done < buf.length) done += readSync(fd, buf, done, buf.length - done, start + done);
      } finally {
        closeSync(fd);
      }
      return buf.buffer;
    },
  };
}

// A Blob that counts the bytes sliced out of it.
class CountingBlob extends Blob {
  constructor(parts) {
    super(parts);
    this.sliced = [];
  }
  slice(start, end) {
    this.sliced.push([start, end]);
    return super.slice(start, end);
  }
}

const dataOffset = SafeTensors.fromBytes(model).dataOffset;

test('fromBlob reads 8 bytes, then the header, then tensors on demand', async () => {
  const blob = new CountingBlob([model]);
  const st = await SafeTensors.fromBlob(blob);
  assert.deepEqual(blob.sliced, [
    [0, 8],
    [8, dataOffset],
  ]);
  assert.equal(st.bytesRead, dataOffset);
  assert.deepEqual(st.names(), ['emb', 'scale', 'flag']);
  assert.deepEqual(st.metadata(), { format: 'pt' });
  assert.equal(st.fileSize, model.length);
  const flag = st.tensor('flag');
  assert.deepEqual([...(await flag.read())], [1, 2, 3, 4]);
  assert.equal(st.bytesRead, dataOffset + 4);
  assert.deepEqual([...(await st.tensor('emb').readFloat32())], [1, -2, 3, 0.5, 0, -0]);
  assert.throws(
    () => flag.bytes(),
    (e) => e instanceof SafeTensorsError && e.kind === 'NotInMemory' && e.tensor === 'flag',
  );
  assert.throws(
    () => flag.view(),
    (e) => e.kind === 'NotInMemory',
  );
});

test('fromBlob reports a malformed or truncated file like fromBytes', async () => {
  const bad = await openAsBlob(join(dir, 'bad.safetensors'));
  await assert.rejects(
    SafeTensors.fromBlob(bad),
    (e) => e instanceof SafeTensorsError && e.kind === 'UnexpectedEnd' && e.offset === badHeader.length,
  );
  await assert.rejects(
    SafeTensors.fromBlob(new Blob([model.subarray(0, model.length - 1)])),
    (e) => e.kind === 'MetadataIncompleteBuffer',
  );
  await assert.rejects(SafeTensors.fromBlob(new Blob([model.subarray(0, 5)])), (e) => e.kind === 'HeaderTooSmall');
  await assert.rejects(
    SafeTensors.fromBlob(new Blob([model.subarray(0, 40)])),
    (e) => e.kind === 'InvalidHeaderLength',
  );
  const huge = new Uint8Array(8);
  new DataView(huge.buffer).setBigUint64(0, 2n ** 62n, true);
  const blob = new CountingBlob([huge, new Uint8Array(100)]);
  await assert.rejects(SafeTensors.fromBlob(blob), (e) => e.kind === 'HeaderTooLarge');
  assert.deepEqual(blob.sliced, [[0, 8]]);
});

test('a sparse file over 4 GiB opens from its header alone; tensors past 4 GiB read exactly', async () => {
  const blob = fileBlob(sparse.path);
  assert.equal(blob.size, sparse.size);
  assert.ok(sparse.size > 2 ** 32);
  const st = await SafeTensors.fromBlob(blob);
  assert.ok(st.bytesRead < 400, `read ${st.bytesRead} bytes`);
  assert.equal(st.fileSize, sparse.size);
  assert.deepEqual(st.metadata(), { purpose: 'sparse > 4 GiB' });
  const hi = st.tensor('hi');
  assert.equal(hi.byteOffset, sparse.hiOffset);
  assert.ok(hi.byteOffset > 2 ** 32);
  assert.deepEqual(hi.dataOffsets, [SPARSE.lo, SPARSE.lo + 6]);
  assert.deepEqual(st.parameterCount(), {
    total: SPARSE.lo + 3 + SPARSE.tail,
    byDtype: { U8: SPARSE.lo + SPARSE.tail, BF16: 3 },
  });
  assert.deepEqual([...(await hi.read())], [...SPARSE.hi]);
  assert.deepEqual([...(await hi.readFloat32())], [1, -2, 3]);
  const tail = await st.tensor('tail').read();
  assert.equal(tail.length, SPARSE.tail);
  assert.equal(tail[SPARSE.tail - 1], 9);
  assert.equal(st.bytesRead, st.dataOffset + 6 + 6 + SPARSE.tail);
});

let ranged;
let plain;
before(async () => {
  const virtual = new Map();
  // A "file" whose header puts a tensor's end above 2^53 (size from Content-Range).
  const over = 2n ** 53n + 8n;
  const head = rawFile(`{"far":{"dtype":"U8","shape":[${over}],"data_offsets":[0,${over}]}}`);
  virtual.set('/huge.safetensors', {
    size: BigInt(head.length) + over,
    read: (start, end) => {
      const out = new Uint8Array(Number(end - start));
      if (start < BigInt(head.length)) out.set(head.subarray(Number(start), Math.min(head.length, Number(end))));
      return out;
    },
  });
  ranged = await startServer({ root: dir, range: true, virtual, requireHeaders: { Authorization: 'Bearer test' } });
  plain = await startServer({ root: dir, range: false });
});
after(async () => {
  await ranged?.close();
  await plain?.close();
});

test('fromUrl with Range support: one request for a small header, tensors by range', async () => {
  const before = ranged.requests.length;
  const st = await SafeTensors.fromUrl(`${ranged.url}/model.safetensors`);
  const reqs = ranged.requests.slice(before);
  assert.equal(reqs.length, 1);
  assert.equal(reqs[0].status, 206);
  assert.equal(st.bytesRead, model.length); // the 64 KiB prefetch got the whole small file
  assert.deepEqual(st.names(), ['emb', 'scale', 'flag']);
  assert.deepEqual([...(await st.tensor('scale').readFloat32())], [0.25, 4]);
});

test('fromUrl with a small prefetch: 8 bytes, then the rest of the header, then exact tensor ranges', async () => {
  const before = ranged.requests.length;
  const st = await SafeTensors.fromUrl(`${ranged.url}/model.safetensors`, { prefetch: 8 });
  assert.equal(st.bytesRead, dataOffset);
  const t = st.tensor('flag');
  assert.deepEqual([...(await t.read())], [1, 2, 3, 4]);
  assert.equal(st.bytesRead, dataOffset + 4);
  const ranges = ranged.requests.slice(before).map((r) => [r.range, r.status]);
  assert.deepEqual(ranges, [
    ['bytes=0-7', 206],
    [`bytes=8-${dataOffset - 1}`, 206],
    [`bytes=${t.byteOffset}-${t.byteOffset + 3}`, 206],
  ]);
});

test('fromUrl on the sparse file over 4 GiB reads the header and ranges past 4 GiB', async () => {
  const st = await SafeTensors.fromUrl(`${ranged.url}/sparse-4gib.safetensors`, { prefetch: 1024 });
  assert.equal(st.fileSize, sparse.size);
  assert.equal(st.bytesRead, 1024);
  assert.deepEqual([...(await st.tensor('hi').readFloat32())], [1, -2, 3]);
  assert.equal((await st.tensor('tail').read())[SPARSE.tail - 1], 9);
  assert.equal(st.bytesRead, 1024 + 6 + SPARSE.tail);
});

test('fromUrl against a server without Range support reads the whole body once', async () => {
  const before = plain.requests.length;
  const st = await SafeTensors.fromUrl(`${plain.url}/model.safetensors`, { prefetch: 8 });
  assert.equal(plain.requests.length - before, 1);
  assert.equal(plain.requests.at(-1).status, 200);
  assert.equal(st.bytesRead, model.length);
  assert.deepEqual([...st.tensor('flag').bytes()], [1, 2, 3, 4]);
  assert.deepEqual([...st.tensor('emb').toFloat32()], [1, -2, 3, 0.5, 0, -0]);
  assert.deepEqual([...(await st.tensor('flag').read())], [1, 2, 3, 4]);
  assert.equal(plain.requests.length - before, 1);
});

test('fromUrl passes headers, reports HTTP errors, honours abort, rejects offsets above 2^53', async () => {
  await assert.rejects(
    SafeTensors.fromUrl(`${ranged.url}/auth/model.safetensors`),
    (e) => e instanceof SafeTensorsError && e.kind === 'Http' && /401/.test(e.message),
  );
  const st = await SafeTensors.fromUrl(`${ranged.url}/auth/model.safetensors`, {
    headers: { Authorization: 'Bearer test' },
    prefetch: 8,
  });
  assert.deepEqual([...(await st.tensor('flag').read())], [1, 2, 3, 4]);
  await assert.rejects(
    SafeTensors.fromUrl(`${ranged.url}/missing.safetensors`),
    (e) => e.kind === 'Http' && /404/.test(e.message),
  );
  await assert.rejects(SafeTensors.fromUrl(`${ranged.url}/bad.safetensors`), (e) => e.kind === 'UnexpectedEnd');
  await assert.rejects(
    SafeTensors.fromUrl(`${ranged.url}/model.safetensors`, { signal: AbortSignal.abort() }),
    (e) => e.name === 'AbortError',
  );
  await assert.rejects(
    SafeTensors.fromUrl(`${ranged.url}/huge.safetensors`),
    (e) => e.kind === 'OffsetTooLarge' && e.tensor === 'far',
  );
});

test('fromUrl notices a file that changed after it was opened', async () => {
  const path = join(dir, 'changing.safetensors');
  writeFileSync(path, model);
  const st = await SafeTensors.fromUrl(`${ranged.url}/changing.safetensors`, { prefetch: 8 });
  writeFileSync(path, tensorFile([['other', 'U8', [300], new Uint8Array(300)]]));
  await assert.rejects(st.tensor('flag').read(), (e) => e instanceof SafeTensorsError && e.kind === 'SourceChanged');
});

test('readFloat32 in small chunks reports progress and equals toFloat32', async () => {
  const n = 1000;
  const vals = new Float32Array(n).map((_, i) => Math.sin(i) * 100);
  const file = tensorFile([['v', 'BF16', [n], bf16(...vals)]]);
  const expected = SafeTensors.fromBytes(file).tensor('v').toFloat32();
  const st = await SafeTensors.fromBlob(new Blob([file]));
  const progress = [];
  const got = await st.tensor('v').readFloat32({ chunkBytes: 100, onProgress: (d, t) => progress.push([d, t]) });
  assert.deepEqual([...got], [...expected]);
  assert.deepEqual(progress[0], [0, 2000]);
  assert.deepEqual(progress.at(-1), [2000, 2000]);
  assert.equal(progress.length, 1 + Math.ceil(2000 / 96));
  const ctrl = new AbortController();
  await assert.rejects(
    st.tensor('v').readFloat32({ chunkBytes: 100, signal: ctrl.signal, onProgress: (d) => d > 0 && ctrl.abort() }),
    (e) => e.name === 'AbortError',
  );
});
