// Realistic safetensors headers for the benchmark and the tests, laid out
// as the reference writer lays them out: tensors sorted by dtype (descending
// in the format's enum order) then name, offsets from 0 without gaps,
// compact JSON with __metadata__ first, padded with spaces to a multiple of 8.
//
// The four benchmark headers are the ones issue 2 names for the core
// benchmark: a 104-tensor F32 encoder (MiniLM-like), a Llama-3-8B-like 291
// BF16 tensors, a 3,216-tensor MoE shard with F8 weights and scales, and a
// 10,000-tensor synthetic header (about 1.2 MB).

export const DTYPES = [
  'BOOL', 'F4', 'F6_E2M3', 'F6_E3M2', 'U8', 'I8', 'F8_E5M2', 'F8_E4M3', 'F8_E8M0',
  'F8_E4M3FNUZ', 'F8_E5M2FNUZ', 'I16', 'U16', 'F16', 'BF16', 'I32', 'U32', 'F32',
  'C64', 'F64', 'I64', 'U64',
];
const BITS = [8, 4, 6, 6, 8, 8, 8, 8, 8, 8, 8, 16, 16, 16, 16, 32, 32, 32, 64, 64, 64, 64];
export const bitsOf = (dtype) => BITS[DTYPES.indexOf(dtype)];

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
    parts.push(`${JSON.stringify(t.name)}:{"dtype":"${t.dtype}","shape":[${t.shape.join(',')}],"data_offsets":[${offset},${end}]}`);
    offset = end;
  }
  let json = enc.encode(`{${parts.join(',')}}`);
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

export function minilm() {
  const h = 384;
  const t = [
    ['embeddings.word_embeddings.weight', 'F32', [30522, h]],
    ['embeddings.position_embeddings.weight', 'F32', [512, h]],
    ['embeddings.token_type_embeddings.weight', 'F32', [2, h]],
    ['embeddings.LayerNorm.weight', 'F32', [h]],
    ['embeddings.LayerNorm.bias', 'F32', [h]],
    ['embeddings.position_ids', 'I64', [1, 512]],
    ['pooler.dense.weight', 'F32', [h, h]],
    ['pooler.dense.bias', 'F32', [h]],
  ];
  for (let i = 0; i < 6; i++) {
    const p = `encoder.layer.${i}.`;
    for (const m of ['query', 'key', 'value']) {
      t.push([`${p}attention.self.${m}.weight`, 'F32', [h, h]], [`${p}attention.self.${m}.bias`, 'F32', [h]]);
    }
    t.push(
      [`${p}attention.output.dense.weight`, 'F32', [h, h]],
      [`${p}attention.output.dense.bias`, 'F32', [h]],
      [`${p}attention.output.LayerNorm.weight`, 'F32', [h]],
      [`${p}attention.output.LayerNorm.bias`, 'F32', [h]],
      [`${p}intermediate.dense.weight`, 'F32', [4 * h, h]],
      [`${p}intermediate.dense.bias`, 'F32', [4 * h]],
      [`${p}output.dense.weight`, 'F32', [h, 4 * h]],
      [`${p}output.dense.bias`, 'F32', [h]],
      [`${p}output.LayerNorm.weight`, 'F32', [h]],
      [`${p}output.LayerNorm.bias`, 'F32', [h]],
    );
  }
  return t;
}

export function llama8b() {
  const t = [
    ['model.embed_tokens.weight', 'BF16', [128256, 4096]],
    ['lm_head.weight', 'BF16', [128256, 4096]],
    ['model.norm.weight', 'BF16', [4096]],
  ];
  for (let i = 0; i < 32; i++) {
    const p = `model.layers.${i}.`;
    t.push(
      [`${p}self_attn.q_proj.weight`, 'BF16', [4096, 4096]],
      [`${p}self_attn.k_proj.weight`, 'BF16', [1024, 4096]],
      [`${p}self_attn.v_proj.weight`, 'BF16', [1024, 4096]],
      [`${p}self_attn.o_proj.weight`, 'BF16', [4096, 4096]],
      [`${p}mlp.gate_proj.weight`, 'BF16', [14336, 4096]],
      [`${p}mlp.up_proj.weight`, 'BF16', [14336, 4096]],
      [`${p}mlp.down_proj.weight`, 'BF16', [4096, 14336]],
      [`${p}input_layernorm.weight`, 'BF16', [4096]],
      [`${p}post_attention_layernorm.weight`, 'BF16', [4096]],
    );
  }
  return t;
}

/** A DeepSeek-V3-like shard: F8_E4M3 weights with F32 block scales. */
export function moeShard() {
  const t = [];
  const fp8 = (name, shape) => {
    t.push([`${name}.weight`, 'F8_E4M3', shape]);
    t.push([`${name}.weight_scale_inv`, 'F32', shape.map((d) => Math.ceil(d / 128))]);
  };
  const layer = (i, experts, full) => {
    const p = `model.layers.${i}.`;
    for (let e = 0; e < experts; e++) {
      fp8(`${p}mlp.experts.${e}.gate_proj`, [2048, 7168]);
      fp8(`${p}mlp.experts.${e}.up_proj`, [2048, 7168]);
      fp8(`${p}mlp.experts.${e}.down_proj`, [7168, 2048]);
    }
    t.push([`${p}input_layernorm.weight`, 'BF16', [7168]], [`${p}post_attention_layernorm.weight`, 'BF16', [7168]]);
    t.push([`${p}self_attn.q_a_layernorm.weight`, 'BF16', [1536]], [`${p}self_attn.kv_a_layernorm.weight`, 'BF16', [512]]);
    if (!full) return;
    fp8(`${p}mlp.shared_experts.gate_proj`, [2048, 7168]);
    fp8(`${p}mlp.shared_experts.up_proj`, [2048, 7168]);
    fp8(`${p}mlp.shared_experts.down_proj`, [7168, 2048]);
    fp8(`${p}self_attn.q_a_proj`, [1536, 7168]);
    fp8(`${p}self_attn.q_b_proj`, [24576, 1536]);
    fp8(`${p}self_attn.kv_a_proj_with_mqa`, [576, 7168]);
    fp8(`${p}self_attn.kv_b_proj`, [32768, 512]);
    fp8(`${p}self_attn.o_proj`, [7168, 16384]);
    t.push([`${p}mlp.gate.weight`, 'BF16', [256, 7168]], [`${p}mlp.gate.e_score_correction_bias`, 'F32', [256]]);
  };
  layer(10, 256, true);
  layer(11, 256, true);
  layer(12, 16, false);
  return t;
}

/** 10,000 tensors of mixed dtypes and ranks, about 1.2 MB of header. */
export function synthetic() {
  const dtypes = ['F32', 'F16', 'BF16', 'I64', 'U8', 'F8_E4M3', 'I32', 'F64'];
  const t = [];
  for (let i = 0; i < 10000; i++) {
    const rank = 1 + (i % 3);
    const shape = [];
    for (let r = 0; r < rank; r++) shape.push(1 + ((i * 7919 + r * 104729) % 1024));
    t.push([`blocks.${Math.floor(i / 40)}.sublayer.${i % 40}.projection_parameter_${i}`, dtypes[i % dtypes.length], shape]);
  }
  return t;
}

export function benchHeaders() {
  return [
    { name: 'MiniLM F32 (104)', ...referenceHeader(minilm(), { format: 'pt' }), tensors: 104 },
    { name: 'Llama-3-8B BF16 (291)', ...referenceHeader(llama8b(), { format: 'pt' }), tensors: 291 },
    { name: 'MoE F8 shard (3,216)', ...referenceHeader(moeShard(), { format: 'pt' }), tensors: 3216 },
    { name: 'synthetic (10,000)', ...referenceHeader(synthetic(), { format: 'pt', note: 'synthetic' }), tensors: 10000 },
  ];
}
