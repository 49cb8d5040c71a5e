#!/usr/bin/env node
// Writes the web demo's sample models with the package's `serialize` (no Python, no download):
//
//   samples/tiny-llama/                  a 12-layer toy decoder in two shards + index (BF16/F32)
//   samples/tiny-llama-tuned.safetensors the same model "fine-tuned": values nudged, one tensor
//                                        added, one removed, one dtype and one shape changed
//   samples/all-dtypes.safetensors       every dtype, 2-D where it makes sense, a few NaN/Inf
//   samples/broken.safetensors           a header whose data_offsets do not match the shape
//
// Usage: node scripts/make-sample.mjs OUT_DIR [PACKAGE_ENTRY]
//   PACKAGE_ENTRY defaults to web-demo/vendor/safetensors-nano/node.js (the built package).

import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { rng } from '../tests/js/lib/rng.mjs';

const out = resolve(process.argv[2] ?? 'dist/demo/samples');
const entry = resolve(
  process.argv[3] ?? new URL('../web-demo/vendor/safetensors-nano/node.js', import.meta.url).pathname,
);
const { serialize } = await import(pathToFileURL(entry).href);

// ------------------------------------------------------------ deterministic values

/** A weight matrix with visible structure: noise + a low-rank part + banded rows. */
function weight(rows, cols, seed, scale = 0.02) {
  const r = rng(seed);
  const u = Array.from({ length: rows }, () => r.gauss());
  const v = Array.from({ length: cols }, () => r.gauss());
  const a = new Float32Array(rows * cols);
  for (let i = 0; i < rows; i++) {
    const band = 1 + 0.8 * Math.sin((i / rows) * Math.PI * 3);
    for (let j = 0; j < cols; j++) {
      const diag = i % cols === j ? 2.5 : 0;
      a[i * cols + j] = scale * (band * r.gauss() + 0.6 * u[i] * v[j] + diag);
    }
  }
  return a;
}

function norm(n, seed) {
  const r = rng(seed);
  return Float32Array.from({ length: n }, () => 1 + 0.05 * r.gauss());
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** float32 → bfloat16 bits, round to nearest even. */
function bf16Bits(x) {
  f32[0] = x;
  const b = u32[0];
  if (Number.isNaN(x)) return 0x7fc0;
  return ((b + 0x7fff + ((b >>> 16) & 1)) >>> 16) & 0xffff;
}

/** float32 → float16 bits, round to nearest even (subnormals included). */
function f16Bits(x) {
  f32[0] = x;
  const b = u32[0];
  const sign = (b >>> 16) & 0x8000;
  const exp = (b >>> 23) & 0xff;
  let mant = b & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let h = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const half = 1 << (shift - 1);
    if (rem > half || (rem === half && h & 1)) h++;
    return sign | h;
  }
  let h = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && h & 1)) h++;
  return sign | h;
}

const toBf16 = (a) => Uint16Array.from(a, bf16Bits);
const toF16 = (a) => Uint16Array.from(a, f16Bits);

// ------------------------------------------------------------ the toy model

const V = 512;
const H = 128;
const KV = 32;
const I = 256;
const LAYERS = 12;

function tinyLlama() {
  const t = {};
  let seed = 1;
  const bf = (name, rows, cols, scale) => {
    t[name] = { dtype: 'BF16', shape: [rows, cols], data: toBf16(weight(rows, cols, seed++, scale)), f32: null };
  };
  bf('model.embed_tokens.weight', V, H, 0.05);
  for (let l = 0; l < LAYERS; l++) {
    const p = `model.layers.${l}`;
    t[`${p}.input_layernorm.weight`] = { dtype: 'F32', shape: [H], data: norm(H, seed++) };
    t[`${p}.post_attention_layernorm.weight`] = { dtype: 'F32', shape: [H], data: norm(H, seed++) };
    bf(`${p}.self_attn.q_proj.weight`, H, H);
    bf(`${p}.self_attn.k_proj.weight`, KV, H);
    bf(`${p}.self_attn.v_proj.weight`, KV, H);
    bf(`${p}.self_attn.o_proj.weight`, H, H);
    bf(`${p}.mlp.gate_proj.weight`, I, H);
    bf(`${p}.mlp.up_proj.weight`, I, H);
    bf(`${p}.mlp.down_proj.weight`, H, I);
  }
  t['model.norm.weight'] = { dtype: 'F32', shape: [H], data: norm(H, seed++) };
  bf('lm_head.weight', V, H, 0.05);
  return t;
}

function strip(tensors) {
  return Object.fromEntries(
    Object.entries(tensors).map(([k, v]) => [k, { dtype: v.dtype, shape: v.shape, data: v.data }]),
  );
}

async function writeSharded(dir, tensors) {
  mkdirSync(dir, { recursive: true });
  const names = Object.keys(tensors);
  const split = names.filter(
    (n) =>
      (/^model\.layers\.(\d+)\./.test(n) && Number(n.split('.')[2]) >= 6) ||
      n === 'model.norm.weight' ||
      n === 'lm_head.weight',
  );
  const second = new Set(split);
  const shards = [
    ['model-00001-of-00002.safetensors', names.filter((n) => !second.has(n))],
    ['model-00002-of-00002.safetensors', names.filter((n) => second.has(n))],
  ];
  const weightMap = {};
  let total = 0;
  for (const [file, list] of shards) {
    const part = Object.fromEntries(list.map((n) => [n, tensors[n]]));
    const bytes = await serialize(strip(part), { format: 'pt' });
    writeFileSync(join(dir, file), bytes);
    for (const n of list) {
      weightMap[n] = file;
      total += tensors[n].data.byteLength;
    }
  }
  const index = {
    metadata: { total_size: total },
    weight_map: Object.fromEntries(Object.entries(weightMap).sort(([a], [b]) => (a < b ? -1 : 1))),
  };
  writeFileSync(join(dir, 'model.safetensors.index.json'), `${JSON.stringify(index, null, 2)}\n`);
}

function tuned(base) {
  const t = {};
  const r = rng(99);
  for (const [name, v] of Object.entries(base)) {
    if (name === 'model.layers.11.post_attention_layernorm.weight') continue; // removed
    let data = v.data;
    if (/layers\.(10|11)\.mlp\./.test(name)) {
      // nudge bf16 values by a few ulps
      data = Uint16Array.from(v.data, (x) =>
        r.next() < 0.3 ? x + (r.next() < 0.5 ? 1 : -1) * (1 + Math.floor(r.next() * 3)) : x,
      );
    }
    t[name] = { dtype: v.dtype, shape: v.shape, data };
  }
  // dtype changed: lm_head in F32
  const lm = new Float32Array(V * H);
  const bits = new Uint32Array(lm.buffer);
  base['lm_head.weight'].data.forEach((b, i) => {
    bits[i] = b << 16;
  });
  t['lm_head.weight'] = { dtype: 'F32', shape: [V, H], data: lm };
  // shape changed: 8 more tokens
  const emb = new Uint16Array((V + 8) * H);
  emb.set(base['model.embed_tokens.weight'].data);
  emb.set(toBf16(weight(8, H, 777, 0.05)), V * H);
  t['model.embed_tokens.weight'] = { dtype: 'BF16', shape: [V + 8, H], data: emb };
  // added: a LoRA pair
  t['model.layers.0.self_attn.q_proj.lora_A.weight'] = { dtype: 'F32', shape: [8, H], data: weight(8, H, 501, 0.01) };
  t['model.layers.0.self_attn.q_proj.lora_B.weight'] = { dtype: 'F32', shape: [H, 8], data: new Float32Array(H * 8) };
  return t;
}

// ------------------------------------------------------------ every dtype

function allDtypes() {
  const r = rng(7);
  const R = 48;
  const C = 64;
  const n = R * C;
  const wave = (i) => Math.sin(((i % C) / C) * Math.PI * 4) * Math.cos((Math.floor(i / C) / R) * Math.PI * 2);
  const bytes = (len, pick) => Uint8Array.from({ length: len }, (_, i) => pick(i));
  const smooth = Float32Array.from({ length: n }, (_, i) => wave(i) + 0.1 * r.gauss());
  const t = {
    'float.f64': { dtype: 'F64', shape: [R, C], data: Float64Array.from(smooth, (x) => x * 1e3) },
    'float.f32': { dtype: 'F32', shape: [R, C], data: smooth },
    'float.f16': { dtype: 'F16', shape: [R, C], data: toF16(smooth) },
    'float.bf16': { dtype: 'BF16', shape: [R, C], data: toBf16(smooth) },
    'float.f32_specials': {
      dtype: 'F32',
      shape: [4, 4],
      data: Float32Array.from([0, -0, 1, -1, NaN, Infinity, -Infinity, 0.5, 2, 3, NaN, 4, 1e-30, 1e30, -2, 0]),
    },
    'fp8.e4m3': {
      dtype: 'F8_E4M3',
      shape: [R, C],
      data: bytes(n, (_i) => {
        const b = Math.floor(r.next() * 256);
        return (b & 0x7f) === 0x7f ? b - 1 : b;
      }),
    },
    'fp8.e5m2': {
      dtype: 'F8_E5M2',
      shape: [R, C],
      data: bytes(n, (_i) => {
        const b = Math.floor(r.next() * 256);
        return (b & 0x7c) === 0x7c ? b & 0x83 : b;
      }),
    },
    'fp8.e8m0_scales': { dtype: 'F8_E8M0', shape: [R, 2], data: bytes(R * 2, (i) => 120 + (i % 14)) },
    'fp8.e4m3fnuz': {
      dtype: 'F8_E4M3FNUZ',
      shape: [R, C],
      data: bytes(n, () => {
        const b = Math.floor(r.next() * 256);
        return b === 0x80 ? 0 : b;
      }),
    },
    'fp8.e5m2fnuz': {
      dtype: 'F8_E5M2FNUZ',
      shape: [R, C],
      data: bytes(n, () => {
        const b = Math.floor(r.next() * 256);
        return b === 0x80 ? 0 : b;
      }),
    },
    'mx.f6_e2m3': { dtype: 'F6_E2M3', shape: [R, C], data: bytes((n * 3) / 4, () => Math.floor(r.next() * 256)) },
    'mx.f6_e3m2': { dtype: 'F6_E3M2', shape: [R, C], data: bytes((n * 3) / 4, () => Math.floor(r.next() * 256)) },
    'mx.f4': { dtype: 'F4', shape: [R, C], data: bytes(n / 2, () => Math.floor(r.next() * 256)) },
    'complex.c64': {
      dtype: 'C64',
      shape: [R, C],
      data: Float32Array.from({ length: 2 * n }, (_, k) => (k % 2 ? Math.sin(k / 50) : Math.cos(k / 50))),
    },
    'int.i64_positions': {
      dtype: 'I64',
      shape: [1, 256],
      data: BigInt64Array.from({ length: 256 }, (_, i) => BigInt(i - 128)),
    },
    'int.u64_ids': {
      dtype: 'U64',
      shape: [64],
      data: BigUint64Array.from({ length: 64 }, (_, i) => BigInt(i) * 1000003n),
    },
    'int.i32': {
      dtype: 'I32',
      shape: [R, C],
      data: Int32Array.from({ length: n }, (_, i) => Math.round(wave(i) * 1000)),
    },
    'int.u32': {
      dtype: 'U32',
      shape: [R, C],
      data: Uint32Array.from({ length: n }, (_, i) => (i * 2654435761) >>> 20),
    },
    'int.i16': {
      dtype: 'I16',
      shape: [R, C],
      data: Int16Array.from({ length: n }, (_, i) => Math.round(wave(i) * 3000)),
    },
    'int.u16': { dtype: 'U16', shape: [R, C], data: Uint16Array.from({ length: n }, (_, i) => (i * 37) % 65536) },
    'int.i8_quantized': {
      dtype: 'I8',
      shape: [R, C],
      data: Int8Array.from({ length: n }, (_, i) =>
        Math.max(-128, Math.min(127, Math.round(wave(i) * 100 + r.gauss() * 10))),
      ),
    },
    'int.u8_image': { dtype: 'U8', shape: [R, C], data: bytes(n, (i) => Math.round(127.5 + 127 * wave(i))) },
    'bool.mask': { dtype: 'BOOL', shape: [R, C], data: bytes(n, (i) => (i % C < Math.floor(i / C) + 8 ? 1 : 0)) },
    'scalar.step': { dtype: 'I64', shape: [], data: BigInt64Array.from([12345n]) },
    'empty.bias': { dtype: 'F32', shape: [0], data: new Float32Array(0) },
  };
  return t;
}

// ------------------------------------------------------------ a broken file

function broken() {
  const header = JSON.stringify({
    __metadata__: { format: 'pt', note: 'up_proj says 96 bytes but its shape needs 128' },
    'model.layers.0.mlp.gate_proj.weight': { dtype: 'F32', shape: [4, 8], data_offsets: [0, 128] },
    'model.layers.0.mlp.up_proj.weight': { dtype: 'F32', shape: [4, 8], data_offsets: [128, 224] },
  });
  const padded = header.padEnd(Math.ceil(header.length / 8) * 8, ' ');
  const file = new Uint8Array(8 + padded.length + 224);
  new DataView(file.buffer).setBigUint64(0, BigInt(padded.length), true);
  file.set(new TextEncoder().encode(padded), 8);
  return file;
}

mkdirSync(out, { recursive: true });
const base = tinyLlama();
await writeSharded(join(out, 'tiny-llama'), base);
writeFileSync(
  join(out, 'tiny-llama-tuned.safetensors'),
  await serialize(strip(tuned(base)), { format: 'pt', finetune: 'toy example' }),
);
writeFileSync(
  join(out, 'all-dtypes.safetensors'),
  await serialize(allDtypes(), { format: 'pt', description: 'one tensor of every dtype' }),
);
writeFileSync(join(out, 'broken.safetensors'), broken());
console.error(`[make-sample] wrote samples to ${out}`);
