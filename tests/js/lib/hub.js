// A DeepSeek-V3-like sharded checkpoint, generated: the index
// (model.safetensors.index.json) and each shard's header, with the data left
// out — the shards are "sparse": served as virtual files (lib/server.js)
// whose header bytes are real and whose data reads as zeros.
//
// deepSeekLike() is the real model's layout: 61 decoder layers (the first 3
// dense, the rest 256 routed experts and a shared one, FP8 weights with F32
// block scales, BF16 norms and router), the multi-token-prediction layer,
// 91,990 tensors in 163 shards of about 4.3 GB. hubModel({ tensors, shards })
// repeats that layer pattern to any number of tensors and splits it into any
// number of shards, for the growth table of the bench.

const enc = new TextEncoder();
const H = 7168;

const ELEMENT_BYTES = { F8_E4M3: 1, BF16: 2, F32: 4 };

/** A weight in F8_E4M3 and its F32 block-scale inverse (128×128 blocks). */
function fp8(out, name, rows, cols) {
  out.push([`${name}.weight`, 'F8_E4M3', [rows, cols]]);
  out.push([`${name}.weight_scale_inv`, 'F32', [Math.ceil(rows / 128), Math.ceil(cols / 128)]]);
}

/** Tensors of decoder layer `l` (MoE unless `dense`), in the order the real checkpoint lists them. */
function layer(out, l, dense) {
  const p = `model.layers.${l}`;
  out.push([`${p}.input_layernorm.weight`, 'BF16', [H]]);
  out.push([`${p}.post_attention_layernorm.weight`, 'BF16', [H]]);
  fp8(out, `${p}.self_attn.q_a_proj`, 1536, H);
  out.push([`${p}.self_attn.q_a_layernorm.weight`, 'BF16', [1536]]);
  fp8(out, `${p}.self_attn.q_b_proj`, 24576, 1536);
  fp8(out, `${p}.self_attn.kv_a_proj_with_mqa`, 576, H);
  out.push([`${p}.self_attn.kv_a_layernorm.weight`, 'BF16', [512]]);
  fp8(out, `${p}.self_attn.kv_b_proj`, 32768, 512);
  fp8(out, `${p}.self_attn.o_proj`, H, 16384);
  if (dense) {
    fp8(out, `${p}.mlp.gate_proj`, 18432, H);
    fp8(out, `${p}.mlp.up_proj`, 18432, H);
    fp8(out, `${p}.mlp.down_proj`, H, 18432);
    return;
  }
  out.push([`${p}.mlp.gate.weight`, 'BF16', [256, H]]);
  out.push([`${p}.mlp.gate.e_score_correction_bias`, 'F32', [256]]);
  for (let e = 0; e < 256; e++) {
    fp8(out, `${p}.mlp.experts.${e}.gate_proj`, 2048, H);
    fp8(out, `${p}.mlp.experts.${e}.up_proj`, 2048, H);
    fp8(out, `${p}.mlp.experts.${e}.down_proj`, H, 2048);
  }
  fp8(out, `${p}.mlp.shared_experts.gate_proj`, 2048, H);
  fp8(out, `${p}.mlp.shared_experts.up_proj`, 2048, H);
  fp8(out, `${p}.mlp.shared_experts.down_proj`, H, 2048);
}

/** [name, dtype, shape] of about `tensors` tensors (at least the full layers that reach it). */
function tensorList(tensors) {
  const out = [
    ['model.embed_tokens.weight', 'BF16', [129280, H]],
    ['model.norm.weight', 'BF16', [H]],
    ['lm_head.weight', 'BF16', [129280, H]],
  ];
  for (let l = 0; out.length < tensors; l++) layer(out, l, l < 3);
  return out;
}

/** The 91,990 tensors of DeepSeek-V3: 61 layers and the prediction layer 61. */
function deepSeekList() {
  const out = tensorList(0);
  for (let l = 0; l <= 61; l++) layer(out, l, l < 3);
  const p = 'model.layers.61';
  for (const n of ['enorm', 'hnorm', 'shared_head.norm']) out.push([`${p}.${n}.weight`, 'BF16', [H]]);
  out.push([`${p}.eh_proj.weight`, 'BF16', [H, 2 * H]]);
  out.push([`${p}.shared_head.head.weight`, 'BF16', [129280, H]]);
  return out;
}

const bytesOf = ([, dtype, shape]) => shape.reduce((a, b) => a * b, 1) * ELEMENT_BYTES[dtype];

/**
 * Splits `list` into `shards` runs of about equal bytes and builds each
 * shard's header as the reference writer does (metadata first, compact
 * JSON, padded with spaces to a multiple of 8).
 */
function build(list, shards) {
  const total = list.reduce((n, t) => n + bytesOf(t), 0);
  const files = [];
  const weightMap = {};
  let at = 0;
  let sum = 0;
  for (let s = 0; s < shards; s++) {
    const name = `model-${String(s + 1).padStart(5, '0')}-of-${String(shards).padStart(5, '0')}.safetensors`;
    const goal = (total * (s + 1)) / shards;
    const parts = ['"__metadata__":{"format":"pt"}'];
    let offset = 0;
    // Tensors until this shard's share of the bytes is reached: at least
    // one, and one left for each shard after it.
    const first = at;
    while (at < list.length && list.length - at > shards - s - 1) {
      const n = bytesOf(list[at]);
      if (at > first && s < shards - 1 && sum + n > goal) break;
      const t = list[at++];
      parts.push(
        `${JSON.stringify(t[0])}:{"dtype":"${t[1]}","shape":[${t[2].join(',')}],"data_offsets":[${offset},${offset + n}]}`,
      );
      weightMap[t[0]] = name;
      offset += n;
      sum += n;
    }
    const text = `{${parts.join(',')}}`;
    const len = enc.encode(text).length;
    const padded = text + ' '.repeat((8 - (len % 8)) % 8);
    const json = enc.encode(padded);
    const header = new Uint8Array(8 + json.length);
    new DataView(header.buffer).setBigUint64(0, BigInt(json.length), true);
    header.set(json, 8);
    files.push({ name, header, size: header.length + offset });
  }
  const index = { metadata: { total_size: total }, weight_map: weightMap };
  return { index, indexText: JSON.stringify(index, null, 2), shards: files, tensors: list.length };
}

/** DeepSeek-V3's layout: 91,990 tensors in 163 shards. */
export function deepSeekLike() {
  return build(deepSeekList(), 163);
}

/** The DeepSeek-V3 layer pattern, about `tensors` tensors in `shards` shards. */
export function hubModel({ tensors, shards }) {
  return build(tensorList(tensors), shards);
}

/**
 * The server's virtual files for `model` (lib/server.js): the index, and
 * each shard as its header followed by zeros.
 */
export function virtualFiles(model, prefix = '/hub/') {
  const files = new Map();
  const indexBytes = enc.encode(model.indexText);
  files.set(`${prefix}model.safetensors.index.json`, {
    size: BigInt(indexBytes.length),
    read: (start, end) => indexBytes.subarray(Number(start), Number(end)),
  });
  for (const s of model.shards) {
    files.set(`${prefix}${s.name}`, {
      size: BigInt(s.size),
      read: (start, end) => {
        const out = new Uint8Array(Number(end - start));
        if (start < BigInt(s.header.length))
          out.set(s.header.subarray(Number(start), Math.min(s.header.length, Number(end))));
        return out;
      },
    });
  }
  return { files, indexBytes: indexBytes.length };
}

/** What an open must fetch at least: the index, and each shard's 8 + N bytes. */
export function minimumBytes(model) {
  return enc.encode(model.indexText).length + model.shards.reduce((n, s) => n + s.header.length, 0);
}
