//! Realistic headers, written by the reference writer. Only the header is
//! materialised: the tensors' views report their real byte length but hand
//! over no bytes, so the reference emits exactly `8 + N` bytes.
#![allow(dead_code)]

use std::borrow::Cow;

use safetensors::tensor::View;
use safetensors::Dtype;

struct HeaderOnly {
    dtype: Dtype,
    shape: Vec<usize>,
}

impl View for &HeaderOnly {
    fn dtype(&self) -> Dtype {
        self.dtype
    }
    fn shape(&self) -> &[usize] {
        &self.shape
    }
    fn data(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(&[])
    }
    fn data_len(&self) -> usize {
        self.shape.iter().product::<usize>() * self.dtype.bitsize() / 8
    }
}

/// `(name, dtype, shape)` list → the reference writer's `8 + N` header prefix.
fn write(tensors: Vec<(String, Dtype, Vec<usize>)>, metadata: Option<(&str, &str)>) -> Vec<u8> {
    let views: Vec<(String, HeaderOnly)> = tensors
        .into_iter()
        .map(|(name, dtype, shape)| (name, HeaderOnly { dtype, shape }))
        .collect();
    let info = metadata.map(|(k, v)| [(k.to_string(), v.to_string())].into_iter().collect());
    // `serialize` reserves the whole file's size up front; `serialize_to_file`
    // makes a sparse file of the full size and streams the header into it.
    let path = std::env::temp_dir().join(format!(
        "safetensors-nano-bench-{}.header",
        std::process::id()
    ));
    safetensors::tensor::serialize_to_file(views.iter().map(|(n, v)| (n.as_str(), v)), info, &path)
        .expect("valid specs");
    let bytes = read_prefix(&path);
    let _ = std::fs::remove_file(&path);
    bytes
}

fn read_prefix(path: &std::path::Path) -> Vec<u8> {
    use std::io::Read;
    let mut file = std::fs::File::open(path).expect("just written");
    let mut len = [0u8; 8];
    file.read_exact(&mut len).expect("8-byte prefix");
    let mut prefix = len.to_vec();
    prefix.resize(8 + u64::from_le_bytes(len) as usize, 0);
    file.read_exact(&mut prefix[8..]).expect("header");
    prefix
}

/// A MiniLM-like sentence encoder: 104 F32 tensors (+1 I64).
pub fn minilm() -> Vec<u8> {
    let h = 384;
    let mut t = vec![
        (
            "embeddings.word_embeddings.weight".into(),
            Dtype::F32,
            vec![30522, h],
        ),
        (
            "embeddings.position_embeddings.weight".into(),
            Dtype::F32,
            vec![512, h],
        ),
        (
            "embeddings.token_type_embeddings.weight".into(),
            Dtype::F32,
            vec![2, h],
        ),
        ("embeddings.LayerNorm.weight".into(), Dtype::F32, vec![h]),
        ("embeddings.LayerNorm.bias".into(), Dtype::F32, vec![h]),
        ("embeddings.position_ids".into(), Dtype::I64, vec![1, 512]),
    ];
    for l in 0..6 {
        let p = format!("encoder.layer.{l}");
        for (name, shape) in [
            ("attention.self.query.weight", vec![h, h]),
            ("attention.self.query.bias", vec![h]),
            ("attention.self.key.weight", vec![h, h]),
            ("attention.self.key.bias", vec![h]),
            ("attention.self.value.weight", vec![h, h]),
            ("attention.self.value.bias", vec![h]),
            ("attention.output.dense.weight", vec![h, h]),
            ("attention.output.dense.bias", vec![h]),
            ("attention.output.LayerNorm.weight", vec![h]),
            ("attention.output.LayerNorm.bias", vec![h]),
            ("intermediate.dense.weight", vec![4 * h, h]),
            ("intermediate.dense.bias", vec![4 * h]),
            ("output.dense.weight", vec![h, 4 * h]),
            ("output.dense.bias", vec![h]),
            ("output.LayerNorm.weight", vec![h]),
            ("output.LayerNorm.bias", vec![h]),
        ] {
            t.push((format!("{p}.{name}"), Dtype::F32, shape));
        }
    }
    t.push(("pooler.dense.weight".into(), Dtype::F32, vec![h, h]));
    t.push(("pooler.dense.bias".into(), Dtype::F32, vec![h]));
    write(t, Some(("format", "pt")))
}

/// A Llama-3-8B-like checkpoint: 291 BF16 tensors.
pub fn llama() -> Vec<u8> {
    let (h, ff, kv, vocab) = (4096, 14336, 1024, 128256);
    let mut t = vec![
        (
            "model.embed_tokens.weight".into(),
            Dtype::BF16,
            vec![vocab, h],
        ),
        ("model.norm.weight".into(), Dtype::BF16, vec![h]),
        ("lm_head.weight".into(), Dtype::BF16, vec![vocab, h]),
    ];
    for l in 0..32 {
        let p = format!("model.layers.{l}");
        for (name, shape) in [
            ("input_layernorm.weight", vec![h]),
            ("self_attn.q_proj.weight", vec![h, h]),
            ("self_attn.k_proj.weight", vec![kv, h]),
            ("self_attn.v_proj.weight", vec![kv, h]),
            ("self_attn.o_proj.weight", vec![h, h]),
            ("post_attention_layernorm.weight", vec![h]),
            ("mlp.gate_proj.weight", vec![ff, h]),
            ("mlp.up_proj.weight", vec![ff, h]),
            ("mlp.down_proj.weight", vec![h, ff]),
        ] {
            t.push((format!("{p}.{name}"), Dtype::BF16, shape));
        }
    }
    write(t, Some(("format", "pt")))
}

/// A DeepSeek-V3-like MoE shard: 3,216 tensors, F8_E4M3 expert weights with
/// F32 block scales, BF16 norms and router.
pub fn moe() -> Vec<u8> {
    let (h, ff) = (7168, 2048);
    let mut t = Vec::new();
    for l in 10..12 {
        let p = format!("model.layers.{l}");
        for e in 0..256 {
            for (proj, shape) in [
                ("gate_proj", [ff, h]),
                ("up_proj", [ff, h]),
                ("down_proj", [h, ff]),
            ] {
                let shape: [usize; 2] = shape;
                t.push((
                    format!("{p}.mlp.experts.{e}.{proj}.weight"),
                    Dtype::F8_E4M3,
                    shape.to_vec(),
                ));
                let scale = vec![shape[0].div_ceil(128), shape[1].div_ceil(128)];
                t.push((
                    format!("{p}.mlp.experts.{e}.{proj}.weight_scale_inv"),
                    Dtype::F32,
                    scale,
                ));
            }
        }
        for i in 0..72 {
            let name = format!("{p}.self_attn.part_{i}.weight");
            let dtype = if i % 3 == 0 {
                Dtype::BF16
            } else {
                Dtype::F8_E4M3
            };
            t.push((name, dtype, vec![512 + i, h]));
        }
    }
    assert_eq!(t.len(), 3216);
    write(t, None)
}

/// 10,000 synthetic tensors of mixed dtypes and ranks (a header of about 1.2 MB).
pub fn synthetic() -> Vec<u8> {
    let dtypes = [
        Dtype::F32,
        Dtype::BF16,
        Dtype::F16,
        Dtype::I64,
        Dtype::U8,
        Dtype::F8_E5M2,
        Dtype::I32,
        Dtype::BOOL,
    ];
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let t = (0..10_000)
        .map(|i| {
            let rank = (next() % 4) as usize;
            let shape: Vec<usize> = (0..rank).map(|_| 1 + (next() % 64) as usize).collect();
            let dtype = dtypes[(next() % dtypes.len() as u64) as usize];
            let name = format!(
                "transformer.blocks.{}.sublayer_{}.attn_out_proj.{i}.weight",
                i / 40,
                i % 40
            );
            (name, dtype, shape)
        })
        .collect();
    write(t, Some(("format", "synthetic")))
}

/// 100,000 tiny tensors (one or two elements each, short names): the
/// header where per-entry work weighs most (about 6.6 MB).
pub fn tiny() -> Vec<u8> {
    let t = (0..100_000)
        .map(|i| {
            let (dtype, shape) = if i % 2 == 0 {
                (Dtype::F32, vec![1])
            } else {
                (Dtype::BF16, vec![2])
            };
            (format!("blocks.{}.p{}", i / 100, i % 100), dtype, shape)
        })
        .collect();
    write(t, None)
}

/// All five, with their names.
pub fn all() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("minilm_104", minilm()),
        ("llama3_8b_291", llama()),
        ("moe_3216", moe()),
        ("synthetic_10000", synthetic()),
        ("tiny_100000", tiny()),
    ]
}
