// The viewer's pure modules in Node: chunk planning, streaming statistics merged across chunks,
// histograms, differences, the .npy header, and the decoding of the dtypes the package leaves to
// the viewer (integers, BOOL, complex).

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { decodeChunk, decodedByPackage } from '../../web-demo/decode.js';
import { DTYPE_BITS, fmtBytes, fmtNum, naturalCompare } from '../../web-demo/format.js';
import {
  DiffAccumulator,
  Histogram,
  StatsAccumulator,
  chunkPlan,
  elementsPerChunk,
  gridLayout,
  npyHeader,
  rowRange,
} from '../../web-demo/stats.js';
import { parseRange } from '../../scripts/serve.mjs';
import { rng, stats } from './fixtures.mjs';

test('chunks hold whole elements, start on byte boundaries and stay within the limit', () => {
  for (const [dtype, bits] of Object.entries(DTYPE_BITS)) {
    for (const limit of [1000, 4096, 64 * 1024 * 1024]) {
      const per = elementsPerChunk(dtype, limit);
      assert.ok(per % 8 === 0 && per > 0, `${dtype}: ${per}`);
      assert.ok((per * bits) / 8 <= Math.max(limit, bits), `${dtype}: raw bytes within ${limit}`);
      assert.ok(per * 4 * (dtype === 'C64' ? 2 : 1) <= Math.max(limit, 64), `${dtype}: floats within ${limit}`);
    }
    const count = 1024; // a whole number of bytes for every dtype
    const chunks = [...chunkPlan(dtype, count, 256)];
    assert.equal(chunks[0].e0, 0);
    assert.equal(chunks.at(-1).e1, count);
    assert.equal(chunks.at(-1).b1, (count * bits) / 8);
    for (let i = 1; i < chunks.length; i++) {
      assert.equal(chunks[i].e0, chunks[i - 1].e1);
      assert.equal(chunks[i].b0, chunks[i - 1].b1);
      assert.ok(Number.isInteger(chunks[i].b0));
    }
  }
});

test('statistics merged over many chunks equal the statistics of all values', () => {
  const r = rng(11);
  const n = 5000;
  const values = Float32Array.from({ length: n }, (_, i) =>
    i % 97 === 0 ? NaN : i % 89 === 0 ? (i % 2 ? Infinity : -Infinity) : i % 13 === 0 ? 0 : 1000 + r.gauss() * 3,
  );
  const want = stats(Array.from(values));
  for (const step of [n, 1000, 8, 333]) {
    const acc = new StatsAccumulator({ dtype: 'F32', shape: [50, 100], count: n });
    for (let e0 = 0; e0 < n; e0 += step) acc.add(values.subarray(e0, Math.min(n, e0 + step)), e0);
    const got = acc.result();
    for (const k of ['min', 'max', 'zeros', 'nan', 'posInf', 'negInf', 'finite'])
      assert.equal(got[k], want[k], `${k} with chunks of ${step}`);
    assert.ok(Math.abs(got.mean - want.mean) < 1e-9 * Math.abs(want.mean), `mean with chunks of ${step}`);
    assert.ok(Math.abs(got.std - want.std) < 1e-9, `std with chunks of ${step}: ${got.std} vs ${want.std}`);
    // First values grid: rows of the 2-D tensor, top-left 8 × 8.
    assert.equal(got.grid.rows, 8);
    for (const c of got.grid.cells)
      assert.ok(
        Object.is(c.value, values[c.r * 100 + c.c]) || (Number.isNaN(c.value) && Number.isNaN(values[c.r * 100 + c.c])),
      );
    // Heatmap: 50 × 100 is small enough to keep every value.
    assert.equal(got.heatmap.width, 100);
    assert.equal(got.heatmap.height, 50);
    assert.equal(got.heatmap.values[5 * 100 + 7], values[5 * 100 + 7]);
  }
});

test('the heatmap averages blocks and clips colours to percentiles', () => {
  const rows = 600;
  const cols = 1000;
  const values = Float32Array.from({ length: rows * cols }, (_, i) => Math.floor(i / cols)); // value = row
  const acc = new StatsAccumulator({ dtype: 'F32', shape: [rows, cols], count: rows * cols });
  for (let e0 = 0; e0 < values.length; e0 += 77777) acc.add(values.subarray(e0, e0 + 77777), e0);
  const hm = acc.result().heatmap;
  assert.deepEqual([hm.height, hm.width], [256, 256]);
  // Block row b covers rows r with floor(r * 256 / 600) = b; its mean is the mean of those rows.
  for (const b of [0, 100, 255]) {
    const rs = [];
    for (let r = 0; r < rows; r++) if (Math.floor((r * 256) / rows) === b) rs.push(r);
    const mean = rs.reduce((a, x) => a + x, 0) / rs.length;
    assert.ok(Math.abs(hm.values[b * 256 + 3] - mean) < 1e-4, `block row ${b}`);
  }
  assert.ok(hm.lo > hm.min && hm.hi < hm.max, 'percentile clip inside the range');
});

test('a heatmap of very long rows needs no per-column table', () => {
  const cols = (1 << 22) + 8;
  const acc = new StatsAccumulator({ dtype: 'F32', shape: [2, cols], count: 2 * cols });
  const chunk = new Float32Array(1 << 20).fill(1);
  for (let e0 = 0; e0 < 2 * cols; e0 += chunk.length)
    acc.add(chunk.subarray(0, Math.min(chunk.length, 2 * cols - e0)), e0);
  const hm = acc.result().heatmap;
  assert.deepEqual([hm.height, hm.width], [2, 256]);
  assert.ok(hm.values.every((v) => v === 1));
});

test('histograms: every finite value in exactly one bin; integers get one bin each', () => {
  const values = Float32Array.from([0, 0.1, 0.5, 0.99, 1, NaN, Infinity, -1]);
  const h = new Histogram(-1, 1, { bins: 4 });
  h.add(values);
  assert.deepEqual(h.result().counts, [1, 0, 2, 3]); // [-1,-.5) [-.5,0) [0,.5) [.5,1]
  const ints = new Histogram(0, 3, { bins: 64, dtype: 'U8' });
  ints.add(Float32Array.from([0, 1, 1, 3, 3, 3]));
  assert.deepEqual(ints.result().counts, [1, 2, 0, 3]);
  const flat = new Histogram(5, 5, { bins: 64 });
  flat.add(Float32Array.from([5, 5]));
  assert.deepEqual(flat.result().counts, [2]);
});

test('differences: max |Δ| and where, equal counts, NaN on one side', () => {
  const a = Float32Array.from([1, 2, 3, NaN, 5, NaN]);
  const b = Float32Array.from([1, 2.5, 1, NaN, 5, 7]);
  const d = new DiffAccumulator();
  d.add(a.subarray(0, 3), b.subarray(0, 3), 0);
  d.add(a.subarray(3), b.subarray(3), 3);
  const r = d.result();
  assert.equal(r.maxAbs, 2);
  assert.equal(r.argMax, 2);
  assert.equal(r.equal, 3);
  assert.equal(r.differing, 3);
  assert.equal(r.nanMismatch, 1);
  assert.deepEqual([r.min, r.max], [-2, 0.5]);
});

test('the .npy header is numpy v1.0, padded to 64 bytes', () => {
  for (const [descr, shape, dims] of [
    ['<f4', [2, 3], '(2, 3)'],
    ['|u1', [7], '(7,)'],
    ['<i8', [], '()'],
  ]) {
    const h = npyHeader(descr, shape);
    assert.equal(h.length % 64, 0);
    assert.deepEqual([...h.subarray(0, 8)], [0x93, 78, 85, 77, 80, 89, 1, 0]);
    const len = h[8] | (h[9] << 8);
    assert.equal(10 + len, h.length);
    const text = Buffer.from(h.subarray(10)).toString('latin1');
    assert.equal(text, `${`{'descr': '${descr}', 'fortran_order': False, 'shape': ${dims}, }`.padEnd(len - 1, ' ')}\n`);
  }
});

test('integers, BOOL and complex decode here; float dtypes go to the package', () => {
  const calls = [];
  const fake = (dtype, _bytes, out) => {
    calls.push(dtype);
    return out.fill(7);
  };
  const bytes = (view) => new Uint8Array(view.buffer);
  const dec = (dtype, view, n) => Array.from(decodeChunk(fake, dtype, bytes(view), new Float32Array(n)));
  assert.deepEqual(dec('I8', Int8Array.from([-128, 0, 127]), 3), [-128, 0, 127]);
  assert.deepEqual(dec('U16', Uint16Array.from([0, 65535]), 2), [0, 65535]);
  assert.deepEqual(dec('I32', Int32Array.from([-5, 2 ** 31 - 1]), 2), [-5, Math.fround(2 ** 31 - 1)]);
  assert.deepEqual(dec('I64', BigInt64Array.from([-3n, 2n ** 40n, -(2n ** 40n) - 1n, -(2n ** 20n) - 1n]), 4), [
    -3,
    2 ** 40,
    Math.fround(-(2 ** 40) - 1),
    -(2 ** 20) - 1,
  ]);
  assert.deepEqual(dec('U64', BigUint64Array.from([2n ** 63n, 5n]), 2), [2 ** 63, 5]);
  assert.deepEqual(dec('BOOL', Uint8Array.from([0, 1, 2, 255]), 4), [0, 1, 1, 1]);
  assert.deepEqual(dec('C64', Float32Array.from([1.5, -2, 0, 3]), 4), [1.5, -2, 0, 3]);
  assert.deepEqual(calls, []);
  // Unaligned input (a view at an odd offset) is copied, not misread.
  const odd = new Uint8Array(9);
  odd.set(bytes(Int16Array.from([-2, 300])), 1);
  assert.deepEqual(Array.from(decodeChunk(fake, 'I16', odd.subarray(1, 5), new Float32Array(2))), [-2, 300]);
  for (const d of ['F4', 'F6_E2M3', 'F8_E4M3', 'F8_E8M0', 'BF16', 'F16', 'F32', 'F64']) {
    assert.equal(decodedByPackage(d), true);
    decodeChunk(fake, d, new Uint8Array(8), new Float32Array(1));
  }
  assert.equal(calls.length, 8);
});

test('formatting: numeric-aware names, bytes, numbers', () => {
  assert.deepEqual(['layers.10', 'layers.2', 'layers.1'].sort(naturalCompare), ['layers.1', 'layers.2', 'layers.10']);
  assert.equal(fmtBytes(1536), '1.50 KiB');
  assert.equal(fmtBytes(20 * 2 ** 30), '20.00 GiB');
  assert.equal(fmtNum(NaN), 'NaN');
  assert.equal(fmtNum(-Infinity), '−Inf');
  assert.equal(fmtNum(0.000123456), '1.235e-4');
  assert.equal(gridLayout([3], 3).cells.length, 3);
});

test('the demo server answers byte ranges as HTTP says', () => {
  assert.equal(parseRange(undefined, 100), null);
  assert.deepEqual(parseRange('bytes=0-7', 100), [0, 7]);
  assert.deepEqual(parseRange('bytes=90-', 100), [90, 99]);
  assert.deepEqual(parseRange('bytes=90-500', 100), [90, 99]);
  assert.deepEqual(parseRange('bytes=-10', 100), [90, 99]);
  assert.deepEqual(parseRange('bytes=-500', 100), [0, 99]);
  for (const bad of ['bytes=100-', 'bytes=5-2', 'bytes=-0', 'bytes=-', 'items=0-1', 'bytes=0-1,4-5'])
    assert.equal(parseRange(bad, 100), 'bad', bad);
});

test('a row range is the byte range of those rows, its bounds resolved as numpy resolves t[a:b]', () => {
  const ref = { dtype: 'BF16', shape: [10, 3, 4], byteOffset: 1000, byteLength: 240 };
  const row = 3 * 4 * 2;
  const cases = [
    [2, 5, 2, 5],
    [null, 3, 0, 3],
    [-3, null, 7, 10],
    [8, 100, 8, 10],
    [-100, 2, 0, 2],
    [6, 4, 6, 6],
    [null, null, 0, 10],
  ];
  for (const [a, b, r0, r1] of cases) {
    const got = rowRange(ref, a, b);
    assert.deepEqual(
      [got.shape, got.byteOffset, got.byteLength, got.firstRow],
      [[r1 - r0, 3, 4], 1000 + r0 * row, (r1 - r0) * row, r0],
      `[${a}, ${b}]`,
    );
  }
  // Statistics of the rows only: the accumulator over the range's elements.
  const values = Float32Array.from({ length: 10 * 12 }, (_, i) => Math.floor(i / 12));
  const part = rowRange({ ...ref, dtype: 'F32', byteLength: 480 }, 4, 6);
  const acc = new StatsAccumulator({ dtype: 'F32', shape: part.shape, count: 24 });
  acc.add(values.subarray(part.firstRow * 12, (part.firstRow + part.shape[0]) * 12), 0);
  assert.deepEqual([acc.result().min, acc.result().max, acc.result().mean], [4, 5, 4.5]);
  // Sub-byte rows must hold whole bytes; bounds must be integers.
  assert.throws(() => rowRange({ dtype: 'F4', shape: [6, 1], byteOffset: 0, byteLength: 3 }, 1, 3), /inside a byte/);
  assert.equal(rowRange({ dtype: 'F4', shape: [6, 1], byteOffset: 0, byteLength: 3 }, 2, 4).byteLength, 1);
  assert.throws(() => rowRange(ref, 1.5, 3), /not an integer/);
});
