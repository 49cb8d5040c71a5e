// fromUrl against a server that ignores Range: Python's own
// `python3 -m http.server`, which answers every request with 200 and the
// whole file. A file over the 64 MiB kept in memory is listed from the
// start of that body (then cancelled); reads stream through a new body
// (noRange: 'stream', the default) or are refused (noRange: 'reject').
// Sparse files keep the 2 GiB case cheap on disk.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, ftruncateSync, openSync, utimesSync, writeFileSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SafeTensors, SafeTensorsError } from 'safetensors-nano';
import { rawFile, tensorFile } from '../lib/format.js';
import { scratch } from '../lib/env.js';
import { startPythonServer } from '../lib/python-server.js';

const here = dirname(fileURLToPath(import.meta.url));
const dir = scratch('stn-norange-');
const MiB = 2 ** 20;
const FIRST = [1.5, -2, 3.25, 4];
const LAST = [1, -2, 3];

// 'first' (F32) at the data's start, 'big' (U8 zeros: a hole, but for the
// bytes `marks` sets: offset in 'big' → value) of `bigBytes`, 'last' (BF16)
// at the file's end.
function sparseModel(name, bigBytes, marks = new Map()) {
  const header = {
    first: { dtype: 'F32', shape: [4], data_offsets: [0, 16] },
    big: { dtype: 'U8', shape: [bigBytes], data_offsets: [16, 16 + bigBytes] },
    last: { dtype: 'BF16', shape: [3], data_offsets: [16 + bigBytes, 22 + bigBytes] },
  };
  const head = rawFile(header);
  const path = join(dir, name);
  const size = head.length + 22 + bigBytes;
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, head, 0, head.length, 0);
    ftruncateSync(fd, size);
    writeSync(fd, new Uint8Array(new Float32Array(FIRST).buffer), 0, 16, head.length);
    writeSync(fd, Uint8Array.from([0x80, 0x3f, 0x00, 0xc0, 0x40, 0x40]), 0, 6, size - 6);
    for (const [at, value] of marks) writeSync(fd, Uint8Array.of(value), 0, 1, head.length + 16 + at);
  } finally {
    closeSync(fd);
  }
  return path;
}

sparseModel('big.safetensors', 2 * 1024 * MiB); // 2 GiB
sparseModel('far.safetensors', 160 * MiB); // over the 64 MiB kept; more than the RSS bound below
// Bytes 1…10 every 16 MiB of 'big', for a strided slice.
const STRIDE = 16 * MiB;
const MARKS = new Map(Array.from({ length: 10 }, (_, k) => [k * STRIDE, k + 1]));
sparseModel('strided.safetensors', 160 * MiB, MARKS);
const small = tensorFile([['w', 'F32', [2], new Float32Array([0.5, -8])]]);
writeFileSync(join(dir, 'small.safetensors'), small);

let server;
before(async () => {
  server = await startPythonServer(dir);
});
after(() => server?.close());

// The child process opens the URL and reads `names`: its own peak RSS and
// the bytes that arrived are the package's alone.
function child(file, mode, ...names) {
  const r = spawnSync(
    process.execPath,
    [join(here, '..', 'lib', 'norange-child.mjs'), server.base + file, mode, ...names],
    {
      encoding: 'utf8',
      timeout: 120_000,
    },
  );
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  // (Were Python's server ever to answer ranges, this test would prove nothing.)
  assert.equal(out.statuses[0], 200, `python3 -m http.server answered ${out.statuses[0]} to a Range request`);
  console.log(
    `${file} (${mode}): listing ${out.list.bytes} bytes in ${out.list.ms.toFixed(0)} ms; ` +
      out.reads.map((r) => `${r.name} ${r.bytes} bytes in ${r.ms.toFixed(0)} ms`).join('; ') +
      `; peak RSS +${((out.rssAfter - out.rssBefore) / MiB).toFixed(1)} MiB`,
  );
  return out;
}

const near = (values, want) =>
  assert.deepEqual(
    values.map((v) => Math.round(v * 1e6) / 1e6),
    want,
  );

test('a 2 GiB file from python3 -m http.server lists from a few MB, in bounded memory; a near tensor reads right', () => {
  const out = child('big.safetensors', 'stream', 'first');
  assert.deepEqual(out.list.names, ['first', 'big', 'last']);
  assert.equal(out.list.requests, 1);
  assert.ok(out.list.bytes <= 4 * MiB, `listing moved ${out.list.bytes} bytes`);
  const [first] = out.reads;
  near(first.values, FIRST);
  assert.ok(first.bytes <= 4 * MiB, `reading "first" moved ${first.bytes} bytes`);
  assert.ok(out.rssAfter - out.rssBefore < 256 * MiB, `peak RSS grew by ${out.rssAfter - out.rssBefore} bytes`);
});

test("noRange: 'stream' reads the far tensor of a file over 64 MiB through one body, in bounded memory", () => {
  const out = child('far.safetensors', 'stream', 'last', 'first');
  const [last, first] = out.reads;
  near(last.values, LAST);
  near(first.values, FIRST);
  // One pass to the file's end (the whole file went by), not one per chunk.
  assert.ok(last.bytes >= 160 * MiB && last.bytes < 164 * MiB, `reading "last" moved ${last.bytes} bytes`);
  assert.equal(out.statuses.length, 3);
  // (Less than the file: it was never held whole.)
  assert.ok(out.rssAfter - out.rssBefore < 128 * MiB, `peak RSS grew by ${out.rssAfter - out.rssBefore} bytes`);
});

test("noRange: 'reject' lists the file, then a read is RangeUnsupported, with nothing fetched", () => {
  const out = child('big.safetensors', 'reject', 'first', 'big');
  assert.ok(out.list.bytes <= 4 * MiB, `listing moved ${out.list.bytes} bytes`);
  for (const read of out.reads) {
    assert.equal(read.error?.kind, 'RangeUnsupported', JSON.stringify(read));
    assert.match(read.error.message, /ignores Range requests \(it answered 200 with the whole file of \d+ bytes/);
    assert.match(read.error.message, /noRange: 'stream'/);
    assert.equal(read.bytes, 0);
  }
  assert.equal(out.statuses.length, 1);
});

/** A fetch (`counting`) that logs the status of each answer in `statuses`. */
function statusLog() {
  const statuses = [];
  const counting = async (url, init) => {
    const res = await fetch(url, init);
    statuses.push(res.status);
    return res;
  };
  return { statuses, counting };
}

test("noRange: 'stream' reads a strided slice through one body, not one for each of its reads", async () => {
  const { statuses, counting } = statusLog();
  const st = await SafeTensors.fromUrl(`${server.base}strided.safetensors`, { fetch: counting });
  const listed = st.bytesRead;
  const progress = [];
  // Ten bytes 16 MiB apart: ten reads from a server with ranges.
  const slice = await st
    .tensor('big')
    .readSlice([[0, null, STRIDE]], { onProgress: (done, total) => progress.push([done, total]) });
  assert.deepEqual(slice.shape, [10]);
  assert.deepEqual([...slice.bytes], [...MARKS.values()]);
  assert.deepEqual(statuses, [200, 200]);
  // One pass to the last byte: its bytes before the tensor, and 9 strides.
  const moved = st.bytesRead - listed;
  assert.ok(moved >= 9 * STRIDE && moved < 9 * STRIDE + 2 * MiB, `the slice moved ${moved} bytes`);
  assert.deepEqual(progress.at(-1), [9 * STRIDE + 1, 9 * STRIDE + 1]);
  // Runs that share pieces of the body, and an empty slice (nothing read).
  const near = await st.tensor('big').readSlice([[STRIDE - 2, STRIDE + 3]]);
  assert.deepEqual([...near.bytes], [0, 0, 2, 0, 0]);
  assert.deepEqual([...(await st.tensor('big').readSlice([[5, 5]])).bytes], []);
  assert.equal(statuses.length, 3);
});

test('a file under 64 MiB from such a server is kept whole: one request, in-memory views', async () => {
  const { statuses, counting } = statusLog();
  const st = await SafeTensors.fromUrl(`${server.base}small.safetensors`, { fetch: counting, noRange: 'reject' });
  assert.deepEqual(statuses, [200]);
  assert.equal(st.bytesRead, small.length);
  assert.deepEqual(st.tensor('w').bytes(), small.subarray(small.length - 8));
  assert.deepEqual(Array.from(await st.tensor('w').readFloat32()), [0.5, -8]);
  assert.equal(statuses.length, 1);
});

test('streaming a file that changed since it was opened is SourceChanged, never other bytes', async () => {
  const path = join(dir, 'changing.safetensors');
  writeFileSync(path, rawFile({ x: { dtype: 'F32', shape: [1], data_offsets: [0, 4] } }, new Float32Array([7])));
  // Grown past the 64 MiB kept, so reads stream (a hole after the data is not part of it: the header says 4 bytes).
  const grow = (extra) => {
    const header = {
      x: { dtype: 'F32', shape: [1], data_offsets: [0, 4] },
      pad: { dtype: 'U8', shape: [extra], data_offsets: [4, 4 + extra] },
    };
    const head = rawFile(header);
    const fd = openSync(path, 'w');
    writeSync(fd, head, 0, head.length, 0);
    writeSync(fd, new Uint8Array(new Float32Array([7]).buffer), 0, 4, head.length);
    ftruncateSync(fd, head.length + 4 + extra);
    closeSync(fd);
  };
  grow(80 * MiB);
  utimesSync(path, new Date(2020, 0, 1), new Date(2020, 0, 1));
  const st = await SafeTensors.fromUrl(`${server.base}changing.safetensors`);
  assert.deepEqual(Array.from(await st.tensor('x').readFloat32()), [7]);
  // The same size, another Last-Modified.
  utimesSync(path, new Date(2021, 0, 1), new Date(2021, 0, 1));
  await assert.rejects(
    st.tensor('x').read(),
    (e) => e instanceof SafeTensorsError && e.kind === 'SourceChanged' && /Last-Modified/.test(e.message),
  );
  // Another size.
  grow(81 * MiB);
  await assert.rejects(
    st.tensor('x').readFloat32(),
    (e) => e instanceof SafeTensorsError && e.kind === 'SourceChanged',
  );
});
