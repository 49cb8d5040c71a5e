//! Interop with the Python `safetensors` package: files our writer makes
//! load there (raw, through `safetensors.numpy`, and values through numpy /
//! ml_dtypes) with identical values and metadata, and Python re-saving them
//! gives back the same bytes.
//!
//! Needs `$REPO/tests/.venv` (scripts/setup.sh python). Without it the test
//! is skipped with a message, unless `CI` is set: then it fails.

use safetensors_nano_test_support::python::venv;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use half::{bf16, f16};
use safetensors_nano::write::convert_into;
use safetensors_nano::{Dtype, SafeTensors, Slot};
use safetensors_nano_test_support::tensors::{byte_len, bytes_from_seed, write, Owned};
use serde_json::{json, Value};

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
    let Some(python) = venv() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut manifest = Vec::new();
    for case in cases() {
        let owned: Vec<Owned> = case.tensors.iter().map(|(t, _)| t.clone()).collect();
        let file = write(&owned, case.metadata.as_deref()).unwrap();
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

/// Runs a Python script with arguments in `dir`; panics with its output on failure.
fn run_python(python: &Path, dir: &Path, script: &str, args: &[&Path]) -> String {
    let path = dir.join("script.py");
    std::fs::write(&path, script).unwrap();
    let out: Output = Command::new(python)
        .arg(&path)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "python failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

const WRITE: &str = r#"
import json, sys
import numpy as np
import ml_dtypes
from safetensors.numpy import save_file

out = sys.argv[1]
rng = np.random.default_rng(7)
DTYPES = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "I64": np.int64, "U64": np.uint64,
          "I32": np.int32, "U32": np.uint32, "I16": np.int16, "U16": np.uint16, "I8": np.int8,
          "U8": np.uint8, "BOOL": np.bool_, "C64": np.complex64}
SHAPES = [(), (5,), (2, 3), (0, 4), (3, 1, 2)]

def array(name, i):
    dt = DTYPES[name]
    shape = SHAPES[i % len(SHAPES)]
    n = int(np.prod(shape))
    if name in ("F64", "F32", "F16"):
        a = rng.standard_normal(n) * 10.0 ** rng.integers(-6, 6, n)
        special = [np.nan, np.inf, -np.inf, -0.0, 0.0]
        a[: min(n, 5)] = special[: min(n, 5)]
        return a.astype(dt).reshape(shape)
    if name == "BOOL":
        return (rng.integers(0, 2, n) == 1).reshape(shape)
    if name == "C64":
        return (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt).reshape(shape)
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, n, dtype=dt, endpoint=True).reshape(shape)

def conversion_sources():
    # f32 values on and around bf16 and f16 ties, overflow, subnormals
    bits = rng.integers(0, 2**32, 4000, dtype=np.uint64).astype(np.uint32)
    bits[:1000] = (bits[:1000] & 0xFFFF0000) | 0x8000      # bf16 ties
    bits[1000:2000] = (bits[1000:2000] & 0xFFFFE000) | 0x1000  # f16 ties (normal range)
    f32 = bits.view(np.float32)
    f32 = np.concatenate([f32, np.float32([65504, 65519.99, 65520, 1e-8, 6e-8, -3e-5, np.inf, -np.inf])])
    f32 = f32[~np.isnan(f32)]
    f32[1000:2000] = np.clip(np.abs(f32[1000:2000]), 1e-4, 6e4) * np.sign(f32[1000:2000])
    f64 = np.concatenate([rng.standard_normal(3000) * 10.0 ** rng.integers(-9, 6, 3000),
                          f32.astype(np.float64) * (1 + 2.0 ** -40)])
    f64 = f64[np.isfinite(f64) | np.isinf(f64)]
    return f32, f64

files = []
def save(fname, tensors, metadata):
    path = f"{out}/{fname}"
    save_file(tensors, path, metadata=metadata)
    files.append({
        "path": path,
        "metadata": metadata,
        "tensors": {k: {"dtype": d, "shape": list(v.shape), "hex": np.ascontiguousarray(v).tobytes().hex()}
                    for k, (d, v) in ((k, (dname[k], v)) for k, v in tensors.items())},
    })

dname = {}
tensors = {}
for i, name in enumerate(DTYPES):
    key = f"layer.{i}.{name.lower()}"
    tensors[key] = array(name, i)
    dname[key] = name
save("py_numpy.safetensors", tensors, {"format": "np"})

weird = {}
for i, key in enumerate(["q\"uote", "back\\slash", "tab\tnl\n", "ctl\x01\x1f", "café/\x7f", "😀", ""]):
    name = list(DTYPES)[i]
    weird[key] = array(name, i + 1)
    dname[key] = name
save("py_names.safetensors", weird, {"b": "2", "a": "1", "é": "\x00\"", "": ""})
dname["only"] = "I32"
save("py_nometa.safetensors", {"only": np.arange(6, dtype=np.int32).reshape(2, 3)}, None)

f32, f64 = conversion_sources()
dname["f32"] = "F32"
dname["f64"] = "F64"
save("py_convert.safetensors", {"f32": f32, "f64": f64}, None)
expected = {
    "f32_bf16": f32.astype(ml_dtypes.bfloat16).tobytes().hex(),
    "f32_f16": f32.astype(np.float16).tobytes().hex(),
    "f64_f16": f64.astype(np.float16).tobytes().hex(),
    "f64_f32": f64.astype(np.float32).tobytes().hex(),
}
json.dump({"files": files, "converted": expected}, open(f"{out}/manifest.json", "w"))
print("written", len(files))
"#;

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn we_read_what_python_writes_and_rewrite_it_identically() {
    let Some(python) = venv() else { return };
    let dir = tempfile::tempdir().unwrap();
    run_python(&python, dir.path(), WRITE, &[dir.path()]);
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("manifest.json")).unwrap()).unwrap();
    let files = manifest["files"].as_array().unwrap();
    assert_eq!(files.len(), 4);
    for entry in files {
        let path = PathBuf::from(entry["path"].as_str().unwrap());
        let bytes = std::fs::read(&path).unwrap();
        let st = SafeTensors::parse(&bytes, vec![Slot::EMPTY; 64]).unwrap();
        // tensors: names, dtypes, shapes, bytes
        let expected = entry["tensors"].as_object().unwrap();
        assert_eq!(st.len(), expected.len(), "{}", path.display());
        for view in st.iter() {
            let name = view.name().to_string();
            let e = &expected[&name];
            assert_eq!(view.dtype().name(), e["dtype"], "{name:?}");
            let shape: Vec<u64> = view.shape().iter().collect();
            assert_eq!(json!(shape), e["shape"], "{name:?}");
            assert_eq!(
                view.data(),
                &unhex(e["hex"].as_str().unwrap())[..],
                "{name:?}"
            );
        }
        // metadata
        match (st.metadata(), entry["metadata"].as_object()) {
            (None, None) => {}
            (Some(ours), Some(theirs)) => {
                assert_eq!(ours.len(), theirs.len());
                for (k, v) in theirs {
                    assert_eq!(
                        ours.get(k).map(|n| n.to_string()),
                        v.as_str().map(str::to_owned),
                        "{k:?}"
                    );
                }
            }
            (ours, theirs) => panic!("metadata {:?} vs {theirs:?}", ours.map(|m| m.len())),
        }
        // our canonical re-write of what we read: identical to Python's file
        // with ≤ 1 key
        let tensors: Vec<Owned> = st
            .iter()
            .map(|v| {
                let shape: Vec<u64> = v.shape().iter().collect();
                Owned::new(&v.name().to_string(), v.dtype(), &shape, v.data())
            })
            .collect();
        let metadata: Option<Vec<(String, String)>> = st.metadata().map(|m| {
            m.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        });
        let again = write(&tensors, metadata.as_deref()).unwrap();
        let keys = entry["metadata"].as_object().map_or(0, |m| m.len());
        if keys <= 1 {
            assert_eq!(again, bytes, "{}", path.display());
        } else {
            let st2 = SafeTensors::parse(&again, vec![Slot::EMPTY; 64]).unwrap();
            assert_eq!(st2.len(), st.len());
            for view in st.iter() {
                let name = view.name().to_string();
                assert_eq!(st2.tensor(&name).unwrap().data(), view.data());
            }
            // keys sorted bytewise, written raw (é) or escaped (\u0000, \")
            let expected =
                "{\"__metadata__\":{\"\":\"\",\"a\":\"1\",\"b\":\"2\",\"é\":\"\\u0000\\\"\"}";
            assert_eq!(
                String::from_utf8_lossy(&again[8..8 + expected.len()]),
                expected
            );
        }
    }

    // Conversions match numpy (F16, F32) and ml_dtypes (BF16), bit for bit.
    let source = std::fs::read(dir.path().join("py_convert.safetensors")).unwrap();
    let st = SafeTensors::parse(&source, vec![Slot::EMPTY; 4]).unwrap();
    let converted = &manifest["converted"];
    for (tensor, from, to, key) in [
        ("f32", Dtype::F32, Dtype::BF16, "f32_bf16"),
        ("f64", Dtype::F64, Dtype::F16, "f64_f16"),
        ("f32", Dtype::F32, Dtype::F16, "f32_f16"),
        ("f64", Dtype::F64, Dtype::F32, "f64_f32"),
    ] {
        let view = st.tensor(tensor).unwrap();
        assert_eq!(view.dtype(), from);
        let expected = unhex(converted[key].as_str().unwrap());
        let mut got = vec![0u8; expected.len()];
        convert_into(from, view.data(), to, &mut got).unwrap();
        let diffs = got.iter().zip(&expected).filter(|(a, b)| a != b).count();
        assert_eq!(diffs, 0, "{key}: {diffs} bytes differ from Python");
    }
}
