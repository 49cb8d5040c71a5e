//! Interop with the Python `safetensors` package: files our writer makes
//! load there (raw, through `safetensors.numpy`, and values through numpy /
//! ml_dtypes) with identical values and metadata, and Python re-saving them
//! gives back the same bytes.
//!
//! Needs `$REPO/tests/.venv` (scripts/setup.sh python). Without it the test
//! is skipped with a message, unless `CI` is set: then it fails.

mod write_support;

use std::path::{Path, PathBuf};
use std::process::Command;

use half::{bf16, f16};
use safetensors_nano::Dtype;
use serde_json::{json, Value};
use write_support::{byte_len, bytes_from_seed, ours, Owned};

fn python() -> Option<PathBuf> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let python = repo.join("tests/.venv/bin/python");
    if python.exists() {
        return Some(python);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{} is missing (run scripts/setup.sh python); required under CI",
        python.display()
    );
    eprintln!(
        "SKIPPED: {} is missing (run scripts/setup.sh python)",
        python.display()
    );
    None
}

const CHECK: &str = r#"
import json, sys
import numpy as np
import ml_dtypes
import safetensors
import safetensors.numpy as stn
from safetensors import safe_open

NUMPY = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "U64": "<u8", "I32": "<i4",
         "U32": "<u4", "I16": "<i2", "U16": "<u2", "I8": "|i1", "U8": "|u1", "BOOL": "|b1", "C64": "<c8"}
ML = {"BF16": ml_dtypes.bfloat16}

def same_value(a, b):
    return a == b and (a != 0 or np.signbit(a) == np.signbit(b))

manifest = json.load(open(sys.argv[1]))
tensors_checked = 0
resaved = 0
for entry in manifest:
    path, expected = entry["path"], entry["tensors"]
    raw = open(path, "rb").read()
    # 1. the raw reader
    got = dict(safetensors.deserialize(raw))
    assert sorted(got) == sorted(t["name"] for t in expected), (path, sorted(got))
    for t in expected:
        g = got[t["name"]]
        assert g["dtype"] == t["dtype"], (path, t["name"], g["dtype"])
        assert list(g["shape"]) == t["shape"], (path, t["name"], g["shape"])
        assert bytes(g["data"]).hex() == t["hex"], (path, t["name"])
        tensors_checked += 1
    # 2. metadata through safe_open
    with safe_open(path, "numpy") as f:
        assert f.metadata() == entry["metadata"], (path, f.metadata(), entry["metadata"])
        assert sorted(f.keys()) == sorted(t["name"] for t in expected)
    # 3. values through numpy (load_file) or ml_dtypes
    numpy_only = all(t["dtype"] in NUMPY for t in expected)
    arrays = stn.load_file(path) if numpy_only else {}
    for t in expected:
        if t["dtype"] in NUMPY:
            arr = arrays[t["name"]] if numpy_only else np.frombuffer(bytes.fromhex(t["hex"]), NUMPY[t["dtype"]]).reshape(t["shape"])
            assert arr.dtype.str == NUMPY[t["dtype"]], (t["name"], arr.dtype.str)
        elif t["dtype"] in ML:
            arr = np.frombuffer(bytes.fromhex(t["hex"]), ML[t["dtype"]]).reshape(t["shape"])
        else:
            continue
        assert list(arr.shape) == t["shape"], (t["name"], arr.shape)
        assert arr.tobytes().hex() == t["hex"], t["name"]
        if t.get("values") is not None:
            flat = arr.ravel()
            if t["dtype"] == "C64":
                got_values = [[float(z.real), float(z.imag)] for z in flat]
                pairs = zip(sum(got_values, []), sum(t["values"], []))
            elif t["dtype"] == "BOOL":
                pairs = zip([bool(x) for x in flat], t["values"])
            elif t["dtype"][0] in "FB":
                pairs = zip([float(x) for x in flat], t["values"])
            else:
                pairs = zip([int(x) for x in flat], t["values"])
            for a, b in pairs:
                assert same_value(a, b), (path, t["name"], a, b)
    # 4. Python re-saving what it loaded gives our bytes (reference writer, <= 1 key)
    if numpy_only and entry["resave_identical"]:
        again = stn.save(arrays, metadata=entry["metadata"])
        assert again == raw, (path, again[:200], raw[:200])
        resaved += 1
print(f"ok: {len(manifest)} files, {tensors_checked} tensors, {resaved} re-saved identical")
"#;

const FLOATS: [f64; 12] = [
    0.0, -0.0, 1.0, -2.0, 0.5, 3.140625, -65504.0, 1e-3, 6.0e-8, 1e4, -1e-30, 123.456,
];

/// A tensor whose bytes encode known values; returns it and the values as
/// Python will see them.
fn valued(name: &str, dtype: Dtype, shape: &[u64], seed: u64) -> (Owned, Option<Value>) {
    let n = usize::try_from(shape.iter().product::<u64>()).unwrap();
    let float = |i: usize| FLOATS[(i + seed as usize) % FLOATS.len()];
    let random = bytes_from_seed(seed, byte_len(dtype, shape));
    let (data, values): (Vec<u8>, Option<Value>) = match dtype {
        Dtype::F64 => (
            (0..n).flat_map(|i| float(i).to_le_bytes()).collect(),
            Some(json!((0..n).map(float).collect::<Vec<_>>())),
        ),
        Dtype::F32 => (
            (0..n)
                .flat_map(|i| (float(i) as f32).to_le_bytes())
                .collect(),
            Some(json!((0..n)
                .map(|i| f64::from(float(i) as f32))
                .collect::<Vec<_>>())),
        ),
        Dtype::F16 => (
            (0..n)
                .flat_map(|i| f16::from_f64(float(i)).to_le_bytes())
                .collect(),
            Some(json!((0..n)
                .map(|i| f16::from_f64(float(i)).to_f64())
                .collect::<Vec<_>>())),
        ),
        Dtype::BF16 => (
            (0..n)
                .flat_map(|i| bf16::from_f64(float(i)).to_le_bytes())
                .collect(),
            Some(json!((0..n)
                .map(|i| bf16::from_f64(float(i)).to_f64())
                .collect::<Vec<_>>())),
        ),
        Dtype::C64 => (
            (0..n)
                .flat_map(|i| [(float(i) as f32), (float(i + 5) as f32)])
                .flat_map(f32::to_le_bytes)
                .collect(),
            Some(json!((0..n)
                .map(|i| [f64::from(float(i) as f32), f64::from(float(i + 5) as f32)])
                .collect::<Vec<_>>())),
        ),
        Dtype::BOOL => {
            let data: Vec<u8> = random.iter().map(|b| b & 1).collect();
            let values = json!(data.iter().map(|&b| b != 0).collect::<Vec<_>>());
            (data, Some(values))
        }
        Dtype::U8 => (random.clone(), Some(json!(random))),
        Dtype::I8 => (
            random.clone(),
            Some(json!(random.iter().map(|&b| b as i8).collect::<Vec<_>>())),
        ),
        Dtype::U16 | Dtype::I16 | Dtype::U32 | Dtype::I32 | Dtype::U64 | Dtype::I64 => {
            let width = usize::from(dtype.bits() / 8);
            let signed = matches!(dtype, Dtype::I16 | Dtype::I32 | Dtype::I64);
            let values: Vec<Value> = random
                .chunks(width)
                .map(|c| {
                    let mut b = [0u8; 8];
                    b[..width].copy_from_slice(c);
                    let u = u64::from_le_bytes(b);
                    if signed {
                        let shift = 64 - 8 * width as u32;
                        json!(((u << shift) as i64) >> shift)
                    } else {
                        json!(u)
                    }
                })
                .collect();
            (random.clone(), Some(Value::Array(values)))
        }
        _ => (random, None),
    };
    (Owned::new(name, dtype, shape, &data), values)
}

struct Case {
    file: &'static str,
    tensors: Vec<(Owned, Option<Value>)>,
    metadata: Option<Vec<(String, String)>>,
}

fn cases() -> Vec<Case> {
    let numpy = [
        Dtype::F64,
        Dtype::F32,
        Dtype::F16,
        Dtype::I64,
        Dtype::U64,
        Dtype::I32,
        Dtype::U32,
        Dtype::I16,
        Dtype::U16,
        Dtype::I8,
        Dtype::U8,
        Dtype::BOOL,
        Dtype::C64,
    ];
    let shapes: [&[u64]; 4] = [&[], &[5], &[2, 3], &[0, 4]];
    let meta = |pairs: &[(&str, &str)]| {
        Some(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    };
    vec![
        Case {
            file: "numpy_dtypes.safetensors",
            tensors: numpy
                .iter()
                .enumerate()
                .map(|(i, &d)| valued(&format!("t{i}.{d}"), d, shapes[i % 4], i as u64))
                .collect(),
            metadata: meta(&[("format", "np")]),
        },
        Case {
            file: "names.safetensors",
            tensors: [
                "q\"uote",
                "back\\slash",
                "tab\tnew\nline",
                "ctl\u{1}\u{1f}",
                "caf\u{e9}/\u{7f}",
                "\u{1F600}",
                "",
            ]
            .iter()
            .enumerate()
            .map(|(i, name)| valued(name, numpy[i % numpy.len()], &[3], 100 + i as u64))
            .collect(),
            metadata: meta(&[
                ("k\"1", "v\n1"),
                ("\u{e9}", "\u{1F600}"),
                ("a", ""),
                ("ctl\u{2}", "x\\y"),
            ]),
        },
        Case {
            file: "all_dtypes.safetensors",
            tensors: Dtype::ALL
                .iter()
                .enumerate()
                .map(|(i, &d)| valued(&format!("{d}"), d, &[2, 4], 200 + i as u64))
                .collect(),
            metadata: None,
        },
        Case {
            file: "empty_metadata.safetensors",
            tensors: vec![],
            metadata: meta(&[]),
        },
        Case {
            file: "nothing.safetensors",
            tensors: vec![],
            metadata: None,
        },
    ]
}

#[test]
fn python_reads_what_we_write() {
    let Some(python) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut manifest = Vec::new();
    for case in cases() {
        let owned: Vec<Owned> = case.tensors.iter().map(|(t, _)| t.clone()).collect();
        let file = ours(&owned, case.metadata.as_deref()).unwrap();
        let path = dir.path().join(case.file);
        std::fs::write(&path, &file).unwrap();
        let metadata = case
            .metadata
            .as_ref()
            .map(|m| Value::Object(m.iter().map(|(k, v)| (k.clone(), json!(v))).collect()));
        manifest.push(json!({
            "path": path.to_str().unwrap(),
            "metadata": metadata,
            "resave_identical": case.metadata.as_ref().is_none_or(|m| m.len() <= 1) && !owned.is_empty(),
            "tensors": case.tensors.iter().map(|(t, values)| json!({
                "name": t.name,
                "dtype": t.dtype.name(),
                "shape": t.shape,
                "hex": t.data.iter().map(|b| format!("{b:02x}")).collect::<String>(),
                "values": values,
            })).collect::<Vec<_>>(),
        }));
    }
    let manifest_path = dir.path().join("manifest.json");
    std::fs::write(&manifest_path, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let script = dir.path().join("check.py");
    std::fs::write(&script, CHECK).unwrap();
    let out = Command::new(&python)
        .arg(&script)
        .arg(&manifest_path)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "python check failed:\n{stdout}\n{stderr}"
    );
    println!("{stdout}");
    assert_eq!(
        stdout.trim(),
        "ok: 5 files, 42 tensors, 1 re-saved identical"
    );
}
