// Tensor.readSlice: byte for byte numpy's basic indexing on the same tensor
// (random specs over several dtypes, F4 and F6 included, in memory and read
// lazily from a Blob), the same runs as the core lays out (a golden file the
// core's tests write), only the selected bytes read, and typed errors for a
// bad spec before anything is read.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SafeTensors, DTYPE_INFO } from 'safetensors-nano';
import { rawFile, tensorFile } from '../lib/format.js';
import { python, referenceFiles } from '../lib/env.js';
import { startServer } from '../lib/server.js';

const here = dirname(fileURLToPath(import.meta.url));

let seed = 2024;
const rand = (n) => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) % n;
const hex = (b) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

/** A random spec for `shape`: nulls, indices and slices, negative and out-of-range bounds included. */
function randomSpec(shape) {
  const spec = [];
  const n = rand(shape.length + 1);
  for (let d = 0; d < n; d++) {
    const size = shape[d];
    const bound = () => (rand(6) === 0 ? null : rand(2 * size + 5) - size - 2);
    switch (rand(4)) {
      case 0:
        spec.push(null);
        break;
      case 1:
        // Mostly in range; now and then one past either end.
        spec.push(rand(10) === 0 ? size + rand(2) : rand(2 * size + 1) - size);
        break;
      default: {
        const entry = [bound(), bound()];
        if (rand(2)) entry.push(rand(3) === 0 ? null : 1 + rand(3));
        spec.push(entry);
      }
    }
  }
  return spec;
}

/** numpy's answers to cases ({ bits, shape, bytes, spec }). */
function numpy(cases) {
  const input = JSON.stringify(cases.map(({ bits, shape, bytes, spec }) => ({ bits, shape, data: hex(bytes), spec })));
  const r = spawnSync(python, [join(here, '..', 'lib', 'numpy_slice.py')], {
    input,
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  if (r.status !== 0) throw new Error(`numpy_slice.py failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

// Every case's readSlice (from `file`, and from a Blob of the same bytes)
// against numpy's answer: equal bytes and shape, or the typed error numpy's
// failure maps to (an index out of range; a sub-byte selection off a byte).
async function checkAgainstNumpy(fileBytes, cases) {
  const answers = numpy(cases);
  const inMemory = SafeTensors.fromBytes(fileBytes);
  const lazy = await SafeTensors.fromBlob(new Blob([fileBytes]));
  let compared = 0;
  for (const [i, c] of cases.entries()) {
    const want = answers[i];
    const what = `${c.name} ${JSON.stringify(c.shape)} spec ${JSON.stringify(c.spec)}`;
    for (const st of [inMemory, lazy]) {
      const read = st.tensor(c.name).readSlice(c.spec);
      if (want.error !== undefined) {
        const kind = want.error === 'IndexError' ? 'SliceOutOfRange' : 'SliceSubByte';
        await assert.rejects(read, (e) => e.kind === kind && e.tensor === c.name, what);
        continue;
      }
      const got = await read;
      assert.deepEqual(got.shape, want.shape, what);
      assert.equal(hex(got.bytes), want.data, what);
      compared++;
    }
  }
  return compared;
}

const SHAPES = [[], [7], [5, 6], [3, 4, 8], [2, 3, 2, 4], [1, 9], [4, 1, 6], [0, 3], [6, 0]];
const DTYPES = ['U8', 'I16', 'F32', 'F64', 'BF16', 'F8_E4M3', 'BOOL', 'F4', 'F6_E2M3'];

test('readSlice equals numpy on random specs over several dtypes and shapes', {
  skip: referenceFiles().skip,
}, async () => {
  const entries = [];
  const cases = [];
  for (const dtype of DTYPES) {
    const bits = DTYPE_INFO[dtype].bits;
    for (const [k, shape] of SHAPES.entries()) {
      const n = shape.reduce((a, b) => a * b, 1);
      // Sub-byte tensors must hold whole bytes: F4 even, F6 a multiple of 4.
      if ((n * bits) % 8 !== 0) continue;
      const bytes = new Uint8Array((n * bits) / 8).map(() => rand(256));
      const name = `${dtype}.${k}`;
      entries.push([name, dtype, shape, bytes]);
      for (let j = 0; j < 40; j++) cases.push({ name, bits, shape, bytes, spec: randomSpec(shape) });
    }
  }
  const compared = await checkAgainstNumpy(tensorFile(entries), cases);
  // Most cases select something (the errors are checked too).
  assert.ok(compared > cases.length, `${compared} results compared`);
});

test('readSlice equals numpy on the reference-written file of every dtype', {
  skip: referenceFiles().skip,
}, async () => {
  const { mixed } = referenceFiles();
  const st = SafeTensors.fromBytes(mixed);
  const cases = [];
  for (const t of st.tensors()) {
    const bytes = t.bytes();
    for (let j = 0; j < 12; j++)
      cases.push({ name: t.name, bits: DTYPE_INFO[t.dtype].bits, shape: t.shape, bytes, spec: randomSpec(t.shape) });
  }
  assert.ok((await checkAgainstNumpy(mixed, cases)) > 0);
});

test("the runs are the core's on the same specs (golden file written by the core)", async () => {
  const golden = JSON.parse(readFileSync(join(here, '..', 'lib', 'slice-ranges.json'), 'utf8'));
  assert.ok(golden.cases.length >= 200);
  for (const c of golden.cases) {
    // A tensor whose bytes are their own offsets (mod 256): the runs can be read back from the result.
    const n = c.shape.reduce((a, b) => a * b, 1);
    const len = (n * DTYPE_INFO[c.dtype].bits) / 8;
    const data = new Uint8Array(len).map((_, i) => i);
    const t = SafeTensors.fromBytes(tensorFile([['t', c.dtype, c.shape, data]])).tensor('t');
    const what = `${c.dtype} ${JSON.stringify(c.shape)} spec ${JSON.stringify(c.spec)}`;
    if (c.error !== undefined) {
      await assert.rejects(t.readSlice(c.spec), (e) => e.kind === c.error, what);
      continue;
    }
    const got = await t.readSlice(c.spec);
    assert.deepEqual(got.shape, c.result_shape, what);
    const want = new Uint8Array(c.runs.length * c.run_bytes);
    c.runs.forEach((begin, i) => {
      want.set(data.subarray(begin, begin + c.run_bytes), i * c.run_bytes);
    });
    assert.deepEqual(got.bytes, want, what);
  }
});

test('readSliceFloat32 decodes as readFloat32 does', async () => {
  const values = new Float32Array(60).map((_, i) => i * 0.5 - 7);
  const bf16 = new Uint16Array(new Uint32Array(values.buffer).map((u) => u >>> 16));
  const st = await SafeTensors.fromBlob(
    new Blob([
      tensorFile([
        ['f', 'F32', [6, 10], values],
        ['b', 'BF16', [6, 10], bf16],
      ]),
    ]),
  );
  for (const name of ['f', 'b']) {
    const whole = await st.tensor(name).readFloat32();
    const got = await st.tensor(name).readSliceFloat32([
      [1, 5, 2],
      [-3, null],
    ]);
    assert.deepEqual(got.shape, [2, 3]);
    assert.deepEqual(
      [...got.values],
      [17, 18, 19, 37, 38, 39].map((i) => whole[i]),
    );
  }
  const ints = SafeTensors.fromBytes(tensorFile([['i', 'I32', [4], new Int32Array(4)]])).tensor('i');
  await assert.rejects(ints.readSliceFloat32([[0, 2]]), { kind: 'DtypeMismatch' });
});

test('an invalid spec is a typed error, before anything is read', async () => {
  let reads = 0;
  const bytes = tensorFile([['m', 'F32', [4, 5], new Float32Array(20)]]);
  const blob = new Blob([bytes]);
  // A Blob-like object read by range only: counts its reads.
  const counting = {
    size: blob.size,
    slice: (a, b) => {
      reads++;
      return blob.slice(a, b);
    },
    arrayBuffer: () => blob.arrayBuffer(),
  };
  const st = await SafeTensors.fromBlob(counting);
  const m = st.tensor('m');
  const opened = reads;
  const bad = [
    [undefined, 'InvalidArgument'],
    [{ 0: 1 }, 'InvalidArgument'],
    [[1.5], 'InvalidArgument'],
    [['1'], 'InvalidArgument'],
    [[[1]], 'InvalidArgument'],
    [[[0, 1, 1, 1]], 'InvalidArgument'],
    [[[0, 2n]], 'InvalidArgument'],
    [[[0, 4, 0]], 'SliceInvalidRange'],
    [[[0, 4, -1]], 'SliceInvalidRange'],
    [[4], 'SliceOutOfRange'],
    [[-5], 'SliceOutOfRange'],
    [[null, 5], 'SliceOutOfRange'],
    [[0, 0, 0], 'SliceTooManyIndices'],
  ];
  for (const [spec, kind] of bad) {
    await assert.rejects(
      m.readSlice(spec),
      (e) => e.kind === kind && e.tensor === 'm' && e.message.length > 20,
      String(spec),
    );
  }
  assert.equal(reads, opened);
  // numpy's clamping: bounds past the ends and a reversed range are not errors.
  assert.deepEqual(
    (
      await m.readSlice([
        [2, 100],
        [-100, 1],
      ])
    ).shape,
    [2, 1],
  );
  assert.deepEqual((await m.readSlice([[3, 1]])).shape, [0, 5]);
  assert.equal((await m.readSlice([[3, 1]])).bytes.byteLength, 0);
});

test('only the selected bytes are read: runs next to each other in one read, far ones apart', async () => {
  // [2000, 384] F32 (3 MB): rows 1000–1009 are one contiguous run.
  const rows = 2000;
  const cols = 384;
  const data = new Float32Array(rows * cols).map((_, i) => i);
  const bytes = tensorFile([['emb', 'F32', [rows, cols], data]]);
  const blob = new Blob([bytes]);
  const log = [];
  const counting = {
    size: blob.size,
    slice: (a, b) => {
      log.push(b - a);
      return blob.slice(a, b);
    },
    arrayBuffer: () => blob.arrayBuffer(),
  };
  const st = await SafeTensors.fromBlob(counting);
  const emb = st.tensor('emb');
  log.length = 0;
  const progress = [];
  const got = await emb.readSliceFloat32([[1000, 1010]], { onProgress: (d, t) => progress.push([d, t]) });
  assert.deepEqual(got.shape, [10, cols]);
  assert.deepEqual(got.values, data.subarray(1000 * cols, 1010 * cols));
  assert.deepEqual(log, [10 * cols * 4]);
  assert.deepEqual(progress, [
    [0, 15360],
    [15360, 15360],
  ]);
  // Every 200th row: gaps of 300 KB, each row its own read.
  log.length = 0;
  const sparse = await emb.readSlice([
    [0, null, 200],
    [0, 8],
  ]);
  assert.deepEqual(sparse.shape, [10, 8]);
  assert.deepEqual(log, new Array(10).fill(32));
  // A column: runs of 4 bytes 1536 apart, read through in bounded spans (one here).
  log.length = 0;
  const column = await emb.readSliceFloat32([null, 7]);
  assert.deepEqual(
    [...column.values],
    Array.from({ length: rows }, (_, r) => r * cols + 7),
  );
  assert.deepEqual(log, [(rows - 1) * cols * 4 + 4]);
});

test('a strided slice over a huge tensor is a bounded number of bounded reads', async () => {
  // 4 M rows of one F32 (16 MB): every 3rd row. Runs of 4 bytes, gaps of 8:
  // read through, in spans of at most 8 MiB.
  const n = 4 * 1024 * 1024;
  const data = new Uint32Array(n).map((_, i) => i);
  const bytes = tensorFile([['v', 'U32', [n], data]]);
  const blob = new Blob([bytes]);
  const log = [];
  const counting = {
    size: blob.size,
    slice: (a, b) => {
      log.push(b - a);
      return blob.slice(a, b);
    },
    arrayBuffer: () => blob.arrayBuffer(),
  };
  const v = (await SafeTensors.fromBlob(counting)).tensor('v');
  log.length = 0;
  const got = await v.readSlice([[1, null, 3]]);
  const values = new Uint32Array(got.bytes.buffer);
  assert.equal(values.length, Math.ceil((n - 1) / 3));
  assert.ok(values.every((x, i) => x === 1 + 3 * i));
  assert.ok(log.length <= 3 && log.every((b) => b <= 8 * 1024 * 1024), JSON.stringify(log));
  // Every 40,000th element: 105 runs 160 KB apart (over the 64 KiB gap
  // allowance), one read each.
  log.length = 0;
  const far = await v.readSlice([[0, null, 40000]]);
  assert.equal(far.bytes.byteLength, 105 * 4);
  assert.deepEqual(log, new Array(105).fill(4));
});

test('an abort stops readSlice', async () => {
  const st = await SafeTensors.fromBlob(new Blob([tensorFile([['m', 'U8', [64, 64], new Uint8Array(4096)]])]));
  const c = new AbortController();
  c.abort();
  await assert.rejects(st.tensor('m').readSlice([[0, null, 2]], { signal: c.signal }), { name: 'AbortError' });
});

test('over HTTP, rows 1000–1009 of a [30522, 384] F32 embedding cost about 15 KB on the wire, not 47 MB', async () => {
  const rows = 30522;
  const cols = 384;
  // The file, made on demand by the server: a header, then float32 i at element i.
  const prefix = rawFile({
    word_embeddings: { dtype: 'F32', shape: [rows, cols], data_offsets: [0, rows * cols * 4] },
  });
  const size = prefix.byteLength + rows * cols * 4;
  const byteAt = (i) => {
    if (i < prefix.byteLength) return prefix[i];
    const k = i - prefix.byteLength;
    return new Uint8Array(new Float32Array([Math.floor(k / 4)]).buffer)[k % 4];
  };
  const virtual = new Map([
    [
      '/model.safetensors',
      {
        size: BigInt(size),
        read: (a, b) => Uint8Array.from({ length: Number(b - a) }, (_, j) => byteAt(Number(a) + j)),
      },
    ],
  ]);
  const server = await startServer({ root: here, virtual });
  try {
    let wire = 0;
    let requests = 0;
    // Counts the body bytes of every answer as they arrive.
    const countingFetch = async (input, init) => {
      requests++;
      const res = await fetch(input, init);
      if (res.body === null) return res;
      const counted = res.body.pipeThrough(
        new TransformStream({
          transform(chunk, c) {
            wire += chunk.byteLength;
            c.enqueue(chunk);
          },
        }),
      );
      return new Response(counted, { status: res.status, statusText: res.statusText, headers: res.headers });
    };
    const st = await SafeTensors.fromUrl(`${server.url}/model.safetensors`, { fetch: countingFetch, prefetch: 4096 });
    const [openedWire, openedRequests] = [wire, requests];
    const got = await st.tensor('word_embeddings').readSliceFloat32([[1000, 1010]]);
    assert.deepEqual(got.shape, [10, cols]);
    assert.ok(got.values.every((v, i) => v === 1000 * cols + i));
    const sliceWire = wire - openedWire;
    console.log(
      `# rows 1000-1009 of [${rows}, ${cols}] F32 (${size} B file): ${sliceWire} B on the wire in ${requests - openedRequests} request(s); open: ${openedWire} B`,
    );
    assert.equal(requests - openedRequests, 1);
    assert.equal(sliceWire, 10 * cols * 4);
  } finally {
    await server.close();
  }
});
