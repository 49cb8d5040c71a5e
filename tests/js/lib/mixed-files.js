// Files for the concurrency tests, the same in Node, a page and a Worker
// (plain ES module, no Node imports): valid files of mixed dtypes and
// malformed ones, from a seed; and `summarize`, the one description of an
// opened file (or its error) that every way of opening must agree on.

import { rng } from './rng.mjs';

const DTYPES = [
  ['F64', 8],
  ['F32', 4],
  ['F16', 2],
  ['BF16', 2],
  ['F8_E4M3', 1],
  ['F8_E5M2', 1],
  ['U8', 1],
  ['I16', 2],
  ['I32', 4],
  ['I64', 8],
  ['BOOL', 1],
];
const enc = new TextEncoder();

function file(header, data) {
  const json = enc.encode(JSON.stringify(header));
  const pad = (8 - (json.length % 8)) % 8;
  const out = new Uint8Array(8 + json.length + pad + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length + pad), true);
  out.set(json, 8);
  out.fill(0x20, 8 + json.length, 8 + json.length + pad);
  out.set(data, 8 + json.length + pad);
  return out;
}

function validFile(r, i) {
  const header = { __metadata__: { index: String(i) } };
  const parts = [];
  let offset = 0;
  const n = 1 + Math.floor(r.next() * 6);
  for (let t = 0; t < n; t++) {
    const [dtype, size] = DTYPES[Math.floor(r.next() * DTYPES.length)];
    const shape = [1 + Math.floor(r.next() * 40), 1 + Math.floor(r.next() * 40)];
    const bytes = new Uint8Array(shape[0] * shape[1] * size).map(() =>
      dtype === 'BOOL' ? r.next() < 0.5 : r.next() * 256,
    );
    header[`layer.${t}.w${i}`] = { dtype, shape, data_offsets: [offset, offset + bytes.length] };
    parts.push(bytes);
    offset += bytes.length;
  }
  const data = new Uint8Array(offset);
  let at = 0;
  for (const p of parts) {
    data.set(p, at);
    at += p.length;
  }
  return file(header, data);
}

// A valid file broken one way of several: cut short, a byte of its header
// changed, offsets that leave a gap, a header length past the end.
function malformed(r, i) {
  const f = validFile(r, i);
  const n = Number(new DataView(f.buffer).getBigUint64(0, true));
  switch (i % 4) {
    case 0:
      return f.subarray(0, Math.floor(r.next() * f.length));
    case 1: {
      const g = f.slice();
      g[8 + Math.floor(r.next() * n)] = 0x7b; // '{'
      return g;
    }
    case 2: {
      const text = new TextDecoder()
        .decode(f.subarray(8, 8 + n))
        .replace(/"data_offsets":\[(\d+),/, (_, a) => `"data_offsets":[${Number(a) + 1},`);
      return file(JSON.parse(text), f.subarray(8 + n));
    }
    default: {
      const g = f.slice();
      new DataView(g.buffer).setBigUint64(0, BigInt(g.length), true);
      return g;
    }
  }
}

/** `count` files from `seed`: every third one malformed. */
export function mixedFiles(count, seed = 21) {
  const r = rng(seed);
  return Array.from({ length: count }, (_, i) => ({
    name: `f${i}.safetensors`,
    bytes: i % 3 === 2 ? malformed(r, i) : validFile(r, i),
  }));
}

// FNV-1a over bytes: a short fingerprint of a tensor's data.
function fnv(bytes) {
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i], 0x01000193) >>> 0;
  return h.toString(16);
}

/**
 * What `open()` gives: every tensor (name, dtype, shape, offsets, and a
 * fingerprint of its data, decoded to f32 for float dtypes, through
 * readFloat32 in chunks) and the metadata, or the error's kind and message.
 * `stn` is the package module. An abort rejects (it is not a result).
 */
export async function summarize(stn, open, signal) {
  try {
    const st = await open();
    const tensors = [];
    for (const t of st.tensors()) {
      const float = stn.DTYPE_INFO[t.dtype].kind === 'float';
      const data = float
        ? new Uint8Array((await t.readFloat32({ signal, chunkBytes: 1024 })).buffer)
        : await t.read({ signal });
      tensors.push(`${t.name} ${t.dtype} ${t.shape.join('x')} ${t.dataOffsets.join('-')} ${fnv(data)}`);
    }
    return { ok: true, metadata: st.metadata(), tensors };
  } catch (e) {
    if (e?.name === 'AbortError') throw e;
    return { ok: false, kind: e?.kind ?? e?.name, message: e?.message };
  }
}
