// toFloat32 / readFloat32 / decodeFloat32: every float dtype decodes to the
// exact f32 bits ml_dtypes gives (golden file written by the reference),
// in bounded wasm memory.

import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SafeTensors, SafeTensorsError, decodeFloat32, wasmMemoryBytes } from 'safetensors-nano';
import { referenceFiles } from '../lib/env.js';
import { tensorFile } from '../lib/format.js';
import { GOLDEN_FLOAT_DTYPES, bits, expectedFloats, sameBits } from '../lib/golden-floats.js';

const ref = referenceFiles();

test('toFloat32 of every float dtype equals the reference values bit for bit', { skip: ref.skip }, async () => {
  const st = SafeTensors.fromBytes(ref.floats);
  const blob = await SafeTensors.fromBlob(new Blob([ref.floats]));
  for (const d of GOLDEN_FLOAT_DTYPES) {
    const t = st.tensor(d);
    assert.equal(t.dtype, d);
    const want = expectedFloats(st, d);
    sameBits(t.toFloat32(), want, d);
    sameBits(await blob.tensor(d).readFloat32({ chunkBytes: 48 }), want, `${d} (readFloat32)`);
    sameBits(decodeFloat32(d, t.bytes()), want, `${d} (decodeFloat32)`);
  }
});

test('F6 codes packed four per three bytes decode as ml_dtypes says, in a file and directly', {
  skip: ref.skip,
}, () => {
  const st = SafeTensors.fromBytes(ref.floats);
  for (const d of ['F6_E2M3', 'F6_E3M2']) {
    const packed = st.tensor(`${d}.bytes`).bytes();
    const want = expectedFloats(st, d);
    sameBits(decodeFloat32(d, packed), want, d);
    const file = SafeTensors.fromBytes(tensorFile([['t', d, [8, 8], packed]]));
    sameBits(file.tensor('t').toFloat32(), want, `${d} in a file`);
  }
});

// The reader decodes these with wasm SIMD128 (the core's decode/simd) in whole
// blocks, 16 bytes for the 8-bit floats (16 elements) and F16 (8), 32 bytes for
// BF16 (16 elements), then a zero-padded partial last block. Starting 0..16
// elements in puts each code from index 15 on in every one of a block's 16
// element positions (codes 0..14 in fewer), and the lengths end in partial
// blocks of many sizes: every code must come out as the scalar decoders give it
// (the golden values, which the core's tests check the scalar spec against),
// and so must random sequences of 16-bit words.
test('the SIMD decoders give every code its scalar value in every lane and block position', { skip: ref.skip }, () => {
  const st = SafeTensors.fromBytes(ref.floats);
  const expected = (d) => expectedFloats(st, d);
  for (const d of ['F8_E5M2', 'F8_E4M3', 'F8_E8M0', 'F8_E4M3FNUZ', 'F8_E5M2FNUZ', 'F16', 'BF16']) {
    const codes = st.tensor(d).bytes();
    const want = expected(d);
    const w = codes.length / want.length;
    for (let skip = 0; skip < 17; skip++) {
      for (const keep of [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 300]) {
        const n = Math.min(keep, want.length - skip);
        sameBits(
          decodeFloat32(d, codes.subarray(skip * w, (skip + n) * w)),
          want.subarray(skip, skip + n),
          `${d} [${skip}, ${skip + n})`,
        );
      }
    }
    if (w === 2) {
      // 100,003 random words, with the edges (zeros, subnormals, infinities, NaNs) often.
      const edges = [
        0x0000, 0x8000, 0x0001, 0x03ff, 0x0400, 0x7bff, 0x7c00, 0x7c01, 0x7dff, 0x7e00, 0xfc00, 0xffff, 0x007f, 0x0080,
        0x7f7f, 0x7f80, 0x7f81, 0x7fc0, 0xff80,
      ];
      const words = new Uint16Array(100_003);
      let x = 7;
      for (let i = 0; i < words.length; i++) {
        x = (x * 1103515245 + 12345) >>> 0;
        words[i] = i % 5 === 0 ? edges[x % edges.length] : x >>> 16;
      }
      // (Bits copied as integers: a NaN read as a JS number may lose its payload.)
      const wantBits = bits(want);
      const wantWords = new Float32Array(Uint32Array.from(words, (c) => wantBits[c]).buffer);
      sameBits(decodeFloat32(d, new Uint8Array(words.buffer)), wantWords, `${d} random words`);
    }
  }
  for (const d of ['F6_E2M3', 'F6_E3M2']) {
    const packed = st.tensor(`${d}.bytes`).bytes();
    const want = expected(d);
    for (let g = 0; g < 16; g++) {
      for (let n = 1; g + n <= 16; n += 3)
        sameBits(
          decodeFloat32(d, packed.subarray(3 * g, 3 * (g + n))),
          want.subarray(4 * g, 4 * (g + n)),
          `${d} groups [${g}, ${g + n})`,
        );
    }
  }
  const f4 = st.tensor('F4').bytes();
  const want4 = expected('F4');
  for (let b = 0; b < 8; b++) {
    for (let n = 1; b + n <= 8; n++)
      sameBits(
        decodeFloat32('F4', f4.subarray(b, b + n)),
        want4.subarray(2 * b, 2 * (b + n)),
        `F4 bytes [${b}, ${b + n})`,
      );
  }
});

// F4 and F6 are unpacked with wasm SIMD128 too, 16 codes (8 or 12 bytes) a
// step, in stretches of 256 codes. Codes laid out so that each one sits in
// every position of a 16-code step (code (k + r) mod N at element 32r + k,
// or 64r + k for F6), cut to ranges that start at every group of a block and
// end in partial blocks and stretches of many sizes.
test('the SIMD unpacking gives every F4 and F6 code its value in every position and partial block', {
  skip: ref.skip,
}, () => {
  const st = SafeTensors.fromBytes(ref.floats);
  for (const [d, width, round] of [
    ['F4', 4, 32],
    ['F6_E2M3', 6, 64],
    ['F6_E3M2', 6, 64],
  ]) {
    const values = bits(expectedFloats(st, d));
    const n = values.length;
    const codes = Array.from({ length: round * 32 }, (_, i) => ((i % round) + Math.floor(i / round)) % n);
    const packed = pack(codes, width);
    const want = new Float32Array(Uint32Array.from(codes, (c) => values[c]).buffer);
    const group = width === 4 ? [1, 2] : [3, 4]; // [bytes, codes]
    const groups = packed.length / group[0];
    for (let g = 0; g < 24; g++) {
      for (const k of [1, 2, 3, 4, 5, 7, 8, 9, 11, 15, 16, 17, 63, 64, 65, 67, 129, 200, groups]) {
        const end = Math.min(g + k, groups);
        sameBits(
          decodeFloat32(d, packed.subarray(g * group[0], end * group[0])),
          want.subarray(g * group[1], end * group[1]),
          `${d} groups [${g}, ${end})`,
        );
      }
    }
  }
});

/** `codes` packed `bits` (4 or 6) wide, element i at bits i·bits.. of one little-endian integer. */
function pack(codes, bits) {
  const out = new Uint8Array((codes.length * bits) / 8);
  codes.forEach((c, i) => {
    const at = i * bits;
    out[at >> 3] |= (c << (at & 7)) & 0xff;
    if ((at & 7) + bits > 8) out[(at >> 3) + 1] |= c >> (8 - (at & 7));
  });
  return out;
}

test('decodeFloat32 fills a given output and rejects what the core rejects', () => {
  const out = new Float32Array(2);
  assert.equal(decodeFloat32('BF16', Uint8Array.of(0x80, 0x3f, 0x40, 0xc0), out), out);
  assert.deepEqual([...out], [1, -3]);
  const err = (fn, kind) => assert.throws(fn, (e) => e instanceof SafeTensorsError && e.kind === kind);
  err(() => decodeFloat32('I8', new Uint8Array(4)), 'DtypeMismatch');
  err(() => decodeFloat32('C64', new Uint8Array(8)), 'DtypeMismatch');
  err(() => decodeFloat32('I16', new Uint8Array(3)), 'DtypeMismatch');
  err(() => decodeFloat32('F32', new Uint8Array(5)), 'DataLengthMismatch');
  err(() => decodeFloat32('F6_E2M3', new Uint8Array(4)), 'DataLengthMismatch');
  err(() => decodeFloat32('F16', new Uint8Array(4), new Float32Array(3)), 'LengthMismatch');
  err(() => decodeFloat32('F17', new Uint8Array(4)), 'UnknownDtype');
  assert.deepEqual([...decodeFloat32('F8_E4M3', new Uint8Array(0))], []);
  const st = SafeTensors.fromBytes(tensorFile([['i', 'I32', [1], new Int32Array([5])]]));
  assert.throws(
    () => st.tensor('i').toFloat32(),
    (e) => e.kind === 'DtypeMismatch',
  );
});

test('toFloat32 of a 256 MiB BF16 tensor streams through bounded wasm memory', () => {
  const n = 128 * 2 ** 20;
  const data = new Uint16Array(n);
  for (let i = 0; i < n; i += 4099) data[i] = 0x3f80 + (i % 64); // sparse non-zero values
  const file = tensorFile([['w', 'BF16', [n], data]], { align: 8 });
  const st = SafeTensors.fromBytes(file);
  const before = wasmMemoryBytes();
  const out = st.tensor('w').toFloat32();
  const grown = wasmMemoryBytes() - before;
  assert.ok(grown < 8 * 2 ** 20, `wasm memory grew by ${grown} bytes`);
  assert.equal(out.length, n);
  for (let i = 0; i < n; i += 4099 * 97) {
    assert.equal(bits(out.subarray(i, i + 1))[0], (0x3f80 + (i % 64)) << 16, `element ${i}`);
  }
  assert.equal(out[1], 0);
});

test('an output array whose buffer was transferred is an error, and the module keeps working', () => {
  // In a child: a hang there (wasm holding its state lock after the JS
  // `set` threw) fails the test instead of stalling the run.
  const script = `
    import { decodeFloat32 } from 'safetensors-nano';
    const out = new Float32Array(0);
    structuredClone(out.buffer, { transfer: [out.buffer] });
    let kind = null;
    try { decodeFloat32('F32', new Uint8Array(0), out); } catch (e) { kind = e.kind; }
    const again = decodeFloat32('F32', new Uint8Array([0, 0, 128, 63]));
    process.stdout.write(kind + ' ' + String(again[0]));
  `;
  const cwd = fileURLToPath(new URL('..', import.meta.url));
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd,
    timeout: 10_000,
    encoding: 'utf8',
  });
  assert.equal(r.signal, null, 'the second decode hung');
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, 'InvalidArgument 1');
});

test('an output array of a subclass is written as plain memory (its own set is not called)', () => {
  class Watched extends Float32Array {
    set() {
      throw new Error('set called');
    }
  }
  const out = new Watched(2);
  assert.equal(decodeFloat32('BF16', Uint8Array.of(0x80, 0x3f, 0x40, 0xc0), out), out);
  assert.deepEqual([...out], [1, -3]);
});
