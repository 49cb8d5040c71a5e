// Helpers of the streaming writer's tests: the conversion golden files
// (convert_reference.py), collecting a stream, comparing converted files.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runReference } from './env.js';

let golden;
/**
 * The conversion golden files: `{ dir, source, expected: { F64, F32, F16,
 * BF16 } }` (paths), or `{ skip }` (see runReference).
 */
export function convertReference() {
  if (golden !== undefined) return golden;
  const run = runReference('convert_reference.py', 'stn-convert-');
  if (run.skip) return (golden = run);
  const expected = {};
  for (const t of ['F64', 'F32', 'F16', 'BF16']) expected[t] = join(run.dir, `expected-${t}.safetensors`);
  golden = { ...run, source: join(run.dir, 'source.safetensors'), expected };
  return golden;
}

/** Every byte of a stream, and how many chunks it came in. */
export async function collect(stream) {
  const parts = [];
  let n = 0;
  for await (const chunk of stream) {
    parts.push(chunk);
    n += chunk.byteLength;
  }
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return { bytes: out, chunks: parts.length };
}

const NAN = {
  F64: (b) => {
    const v = new DataView(b.buffer, b.byteOffset).getBigUint64(0, true);
    return { nan: (v & 0x7fffffffffffffffn) > 0x7ff0000000000000n, sign: v >> 63n };
  },
  F32: (b) => {
    const v = new DataView(b.buffer, b.byteOffset).getUint32(0, true);
    return { nan: (v & 0x7fffffff) > 0x7f800000, sign: v >>> 31 };
  },
  F16: (b) => {
    const v = b[0] | (b[1] << 8);
    return { nan: (v & 0x7fff) > 0x7c00, sign: v >> 15 };
  },
  BF16: (b) => {
    const v = b[0] | (b[1] << 8);
    return { nan: (v & 0x7fff) > 0x7f80, sign: v >> 15 };
  },
};
const WIDTH = { F64: 8, F32: 4, F16: 2, BF16: 2 };

/**
 * Compares a converted file with the expected one, opened by `open` (the
 * package's SafeTensors.fromBytes): the header bytes exactly, the data byte
 * for byte except NaN payloads (a NaN must be a NaN of the same sign).
 * Returns `{ nanPayloads }`, the count of elements that differed only so;
 * throws on any other difference.
 */
export function compareConverted(open, got, want) {
  const a = open(got);
  const b = open(want);
  if (Buffer.compare(Buffer.from(got.subarray(0, a.dataOffset)), Buffer.from(want.subarray(0, b.dataOffset))) !== 0) {
    throw new Error('the headers differ');
  }
  if (got.length !== want.length) throw new Error(`${got.length} bytes, expected ${want.length}`);
  let nanPayloads = 0;
  for (const t of b.tensors()) {
    const x = a.tensor(t.name).bytes();
    const y = t.bytes();
    if (Buffer.compare(Buffer.from(x), Buffer.from(y)) === 0) continue;
    const w = WIDTH[t.dtype];
    if (w === undefined) throw new Error(`${t.name} (${t.dtype}) differs`);
    for (let i = 0; i < y.length; i += w) {
      const ex = x.subarray(i, i + w);
      const ey = y.subarray(i, i + w);
      if (Buffer.compare(Buffer.from(ex), Buffer.from(ey)) === 0) continue;
      const [p, q] = [NAN[t.dtype](ex), NAN[t.dtype](ey)];
      if (!(p.nan && q.nan && p.sign === q.sign)) {
        throw new Error(`${t.name} element ${i / w}: [${[...ex]}], expected [${[...ey]}]`);
      }
      nanPayloads++;
    }
  }
  return { nanPayloads };
}

/** The bytes of a file. */
export function fileBytes(path) {
  return new Uint8Array(readFileSync(path));
}
