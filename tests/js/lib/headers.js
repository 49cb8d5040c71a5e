// Realistic safetensors headers for the benchmark and the tests, laid out
// as the reference writer lays them out: tensors sorted by dtype (descending
// in the format's enum order) then name, offsets from 0 without gaps,
// compact JSON with __metadata__ first, padded with spaces to a multiple of 8.
//
// The four benchmark headers are the core benchmark's
// (core/benches/headers/mod.rs), built from the same recipes: a 104-tensor
// F32 encoder (MiniLM-like), a Llama-3-8B-like 291 BF16 tensors, a
// 3,216-tensor MoE shard with F8 weights and scales, and a 10,000-tensor
// synthetic header (about 1.2 MB).

export const DTYPES = [
  'BOOL',
  'F4',
  'F6_E2M3',
  'F6_E3M2',
  'U8',
  'I8',
  'F8_E5M2',
  'F8_E4M3',
  'F8_E8M0',
  'F8_E4M3FNUZ',
  'F8_E5M2FNUZ',
  'I16',
  'U16',
  'F16',
  'BF16',
  'I32',
  'U32',
  'F32',
  'C64',
  'F64',
  'I64',
  'U64',
];
const BITS = [8, 4, 6, 6, 8, 8, 8, 8, 8, 8, 8, 16, 16, 16, 16, 32, 32, 32, 64, 64, 64, 64];
export const bitsOf = (dtype) => BITS[DTYPES.indexOf(dtype)];
/** Bits per element by dtype name: the tests' one copy of the format's table. */
export const DTYPE_BITS = Object.fromEntries(DTYPES.map((dtype, i) => [dtype, BITS[i]]));

/** Bytes of a tensor (BigInt: Llama's data runs past 2^32). */
export function byteSize(dtype, shape) {
  const elements = shape.reduce((a, d) => a * BigInt(d), 1n);
  return (elements * BigInt(bitsOf(dtype))) / 8n;
}

const enc = new TextEncoder();

/**
 * The header bytes (8-byte length + JSON + padding) for `tensors`
 * ([name, dtype, shape] triples) and optional metadata, plus the data length.
 */
export function referenceHeader(tensors, metadata) {
  const order = tensors
    .map(([name, dtype, shape]) => ({ name, dtype, shape, key: enc.encode(name) }))
    .sort((a, b) => DTYPES.indexOf(b.dtype) - DTYPES.indexOf(a.dtype) || compareBytes(a.key, b.key));
  const parts = [];
  if (metadata) {
    const keys = Object.keys(metadata).sort((a, b) => compareBytes(enc.encode(a), enc.encode(b)));
    parts.push(`"__metadata__":{${keys.map((k) => `${JSON.stringify(k)}:${JSON.stringify(metadata[k])}`).join(',')}}`);
  }
  let offset = 0n;
  for (const t of order) {
    const end = offset + byteSize(t.dtype, t.shape);
    parts.push(
      `${JSON.stringify(t.name)}:{"dtype":"${t.dtype}","shape":[${t.shape.join(',')}],"data_offsets":[${offset},${end}]}`,
    );
    offset = end;
  }
  const json = enc.encode(`{${parts.join(',')}}`);
  const padded = Math.ceil(json.length / 8) * 8;
  const out = new Uint8Array(8 + padded).fill(0x20, 8);
  new DataView(out.buffer).setBigUint64(0, BigInt(padded), true);
  out.set(json, 8);
  return { header: out, dataLength: offset, fileSize: BigInt(out.length) + offset };
}

function compareBytes(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

// The recipes of core/benches/headers/mod.rs (the core benchmark), tensor for tensor.

export function minilm() {
  const h = 384;
  const t = [
    ['embeddings.word_embeddings.weight', 'F32', [30522, h]],
    ['embeddings.position_embeddings.weight', 'F32', [512, h]],
    ['embeddings.token_type_embeddings.weight', 'F32', [2, h]],
    ['embeddings.LayerNorm.weight', 'F32', [h]],
    ['embeddings.LayerNorm.bias', 'F32', [h]],
    ['embeddings.position_ids', 'I64', [1, 512]],
  ];
  for (let l = 0; l < 6; l++) {
    for (const [name, shape] of [
      ['attention.self.query.weight', [h, h]],
      ['attention.self.query.bias', [h]],
      ['attention.self.key.weight', [h, h]],
      ['attention.self.key.bias', [h]],
      ['attention.self.value.weight', [h, h]],
      ['attention.self.value.bias', [h]],
      ['attention.output.dense.weight', [h, h]],
      ['attention.output.dense.bias', [h]],
      ['attention.output.LayerNorm.weight', [h]],
      ['attention.output.LayerNorm.bias', [h]],
      ['intermediate.dense.weight', [4 * h, h]],
      ['intermediate.dense.bias', [4 * h]],
      ['output.dense.weight', [h, 4 * h]],
      ['output.dense.bias', [h]],
      ['output.LayerNorm.weight', [h]],
      ['output.LayerNorm.bias', [h]],
    ]) {
      t.push([`encoder.layer.${l}.${name}`, 'F32', shape]);
    }
  }
  t.push(['pooler.dense.weight', 'F32', [h, h]], ['pooler.dense.bias', 'F32', [h]]);
  return t;
}

export function llama8b() {
  const [h, ff, kv, vocab] = [4096, 14336, 1024, 128256];
  const t = [
    ['model.embed_tokens.weight', 'BF16', [vocab, h]],
    ['model.norm.weight', 'BF16', [h]],
    ['lm_head.weight', 'BF16', [vocab, h]],
  ];
  for (let l = 0; l < 32; l++) {
    for (const [name, shape] of [
      ['input_layernorm.weight', [h]],
      ['self_attn.q_proj.weight', [h, h]],
      ['self_attn.k_proj.weight', [kv, h]],
      ['self_attn.v_proj.weight', [kv, h]],
      ['self_attn.o_proj.weight', [h, h]],
      ['post_attention_layernorm.weight', [h]],
      ['mlp.gate_proj.weight', [ff, h]],
      ['mlp.up_proj.weight', [ff, h]],
      ['mlp.down_proj.weight', [h, ff]],
    ]) {
      t.push([`model.layers.${l}.${name}`, 'BF16', shape]);
    }
  }
  return t;
}

/** A DeepSeek-V3-like MoE shard: F8_E4M3 expert weights with F32 block scales. */
export function moeShard() {
  const [h, ff] = [7168, 2048];
  const t = [];
  for (let l = 10; l < 12; l++) {
    const p = `model.layers.${l}`;
    for (let e = 0; e < 256; e++) {
      for (const [proj, shape] of [
        ['gate_proj', [ff, h]],
        ['up_proj', [ff, h]],
        ['down_proj', [h, ff]],
      ]) {
        t.push([`${p}.mlp.experts.${e}.${proj}.weight`, 'F8_E4M3', shape]);
        t.push([`${p}.mlp.experts.${e}.${proj}.weight_scale_inv`, 'F32', shape.map((d) => Math.ceil(d / 128))]);
      }
    }
    for (let i = 0; i < 72; i++)
      t.push([`${p}.self_attn.part_${i}.weight`, i % 3 === 0 ? 'BF16' : 'F8_E4M3', [512 + i, h]]);
  }
  return t;
}

/** 10,000 tensors of mixed dtypes and ranks (xorshift64 as the core bench), about 1.2 MB of header. */
export function synthetic() {
  const dtypes = ['F32', 'BF16', 'F16', 'I64', 'U8', 'F8_E5M2', 'I32', 'BOOL'];
  const M = (1n << 64n) - 1n;
  let state = 0x9e3779b97f4a7c15n;
  const next = () => {
    state ^= (state << 13n) & M;
    state ^= state >> 7n;
    state ^= (state << 17n) & M;
    return state;
  };
  const t = [];
  for (let i = 0; i < 10000; i++) {
    const rank = Number(next() % 4n);
    const shape = [];
    for (let r = 0; r < rank; r++) shape.push(1 + Number(next() % 64n));
    const dtype = dtypes[Number(next() % BigInt(dtypes.length))];
    t.push([`transformer.blocks.${Math.floor(i / 40)}.sublayer_${i % 40}.attn_out_proj.${i}.weight`, dtype, shape]);
  }
  return t;
}

export function benchHeaders() {
  return [
    { name: 'minilm_104', ...referenceHeader(minilm(), { format: 'pt' }), tensors: 104 },
    { name: 'llama3_8b_291', ...referenceHeader(llama8b(), { format: 'pt' }), tensors: 291 },
    { name: 'moe_3216', ...referenceHeader(moeShard()), tensors: 3216 },
    { name: 'synthetic_10000', ...referenceHeader(synthetic(), { format: 'synthetic' }), tensors: 10000 },
  ];
}
