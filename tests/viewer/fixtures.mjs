// Test inputs for the web viewer, written by hand from the format's rules (not by the package
// under test): small files with known values, sharded models, a sparse 20 GB file, broken files.

import { execFileSync } from 'node:child_process';
import { closeSync, ftruncateSync, openSync, writeFileSync, writeSync } from 'node:fs';

import { DTYPE_BITS as BITS } from '../js/lib/headers.js';

export { BITS };

export const count = (shape) => shape.reduce((a, b) => a * b, 1);

export { rng } from '../js/lib/rng.mjs';

const asBytes = (view) => new Uint8Array(view.buffer, view.byteOffset, view.byteLength);

/**
 * A whole safetensors file: tensors [{name, dtype, shape, data (a typed array or bytes)}] laid out
 * in the given order, header padded with spaces to a multiple of 8.
 */
export function safetensors(tensors, metadata = null) {
  const header = {};
  if (metadata) header.__metadata__ = metadata;
  let pos = 0;
  const parts = [];
  for (const t of tensors) {
    const bytes = asBytes(t.data);
    header[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [pos, pos + bytes.length] };
    pos += bytes.length;
    parts.push(bytes);
  }
  return assemble(JSON.stringify(header), parts, pos);
}

export function assemble(json, parts = [], dataLen = 0) {
  const text = Buffer.from(json, 'utf8');
  const n = Math.ceil(text.length / 8) * 8;
  const out = Buffer.alloc(8 + n + dataLen, 0x20);
  out.writeBigUInt64LE(BigInt(n), 0);
  text.copy(out, 8);
  let at = 8 + n;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** float32 → bfloat16 bits by truncation (the test decodes them back exactly). */
export function bf16(values) {
  const f = Float32Array.from(values);
  const u = new Uint32Array(f.buffer);
  return Uint16Array.from(u, (x) => x >>> 16);
}
export function bf16ToFloat(bits) {
  const u = Uint32Array.from(bits, (b) => b << 16);
  return Array.from(new Float32Array(u.buffer));
}

/** Exact float16 bits for small multiples of 1/8 (|x| < 2048). */
export function f16(values) {
  return Uint16Array.from(values, (x) => {
    if (x === 0) return Object.is(x, -0) ? 0x8000 : 0;
    const sign = x < 0 ? 0x8000 : 0;
    const a = Math.abs(x);
    const e = Math.floor(Math.log2(a));
    const mant = Math.round((a / 2 ** e - 1) * 1024);
    return sign | ((e + 15) << 10) | mant;
  });
}

/** Statistics as the viewer defines them: over finite values, population std. */
export function stats(values) {
  const finite = values.filter((v) => Number.isFinite(v));
  const mean = finite.reduce((a, b) => a + b, 0) / finite.length;
  const std = Math.sqrt(finite.reduce((a, b) => a + (b - mean) ** 2, 0) / finite.length);
  return {
    min: Math.min(...finite),
    max: Math.max(...finite),
    mean,
    std,
    zeros: values.filter((v) => v === 0).length,
    nan: values.filter((v) => Number.isNaN(v)).length,
    posInf: values.filter((v) => v === Infinity).length,
    negInf: values.filter((v) => v === -Infinity).length,
    finite: finite.length,
  };
}

/**
 * A sparse file: the header is written, the data is a hole (no disk used). Returns
 * {size, headerSize, tensors, bytes}.
 */
export function writeSparse(path, entries) {
  const header = {};
  let pos = 0;
  for (const e of entries) {
    const len = (count(e.shape) * BITS[e.dtype]) / 8;
    header[e.name] = { dtype: e.dtype, shape: e.shape, data_offsets: [pos, pos + len] };
    pos += len;
  }
  const head = assemble(JSON.stringify(header));
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, head);
    ftruncateSync(fd, head.length + pos);
  } finally {
    closeSync(fd);
  }
  return { size: head.length + pos, headerSize: head.length - 8, tensors: entries.length, bytes: pos };
}

/**
 * A 20 GB mixture-of-experts checkpoint: 48 layers × 64 experts, BF16 — 9,555 tensors,
 * about 1 MB of header.
 */
export function moeEntries() {
  const out = [];
  const H = 2048;
  out.push({ name: 'model.embed_tokens.weight', dtype: 'BF16', shape: [102400, H] });
  for (let l = 0; l < 48; l++) {
    const p = `model.layers.${l}`;
    out.push({ name: `${p}.input_layernorm.weight`, dtype: 'F32', shape: [H] });
    for (const m of ['q', 'k', 'v', 'o'])
      out.push({ name: `${p}.self_attn.${m}_proj.weight`, dtype: 'BF16', shape: [H, H] });
    out.push({ name: `${p}.post_attention_layernorm.weight`, dtype: 'F32', shape: [H] });
    out.push({ name: `${p}.mlp.gate.weight`, dtype: 'F32', shape: [64, H] });
    for (let e = 0; e < 64; e++) {
      out.push({ name: `${p}.mlp.experts.${e}.gate_proj.weight`, dtype: 'BF16', shape: [512, H] });
      out.push({ name: `${p}.mlp.experts.${e}.up_proj.weight`, dtype: 'BF16', shape: [512, H] });
      out.push({ name: `${p}.mlp.experts.${e}.down_proj.weight`, dtype: 'BF16', shape: [H, 512] });
    }
  }
  out.push({ name: 'model.norm.weight', dtype: 'F32', shape: [H] });
  out.push({ name: 'lm_head.weight', dtype: 'BF16', shape: [102400, H] });
  return out;
}

export function writeFile(path, bytes) {
  writeFileSync(path, bytes);
  return path;
}

/**
 * What the host's Python model (tests/firmware/reference.py, the firmware's arithmetic in numpy)
 * predicts for the digits page's bundled samples: { predictions, correct, total }.
 */
export function hostDigits(root, python, digitsDir) {
  const script = [
    'import json, sys',
    "sys.path.insert(0, 'tests/firmware')",
    'import reference',
    `d = '${digitsDir}'`,
    "r = reference.evaluate(open(d + '/model.safetensors', 'rb').read(), open(d + '/samples.safetensors', 'rb').read())",
    'print(json.dumps(r))',
  ].join('\n');
  return JSON.parse(execFileSync(python, ['-c', script], { cwd: root, encoding: 'utf8' }));
}
