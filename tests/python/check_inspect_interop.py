"""Files written by the Python `safetensors` package, for every dtype it can
write, read back identically through our `inspect --json`: names, dtypes,
shapes, offsets, metadata, and the SHA-256 of every tensor's bytes.

Usage: python check_inspect_interop.py COMMAND...
(e.g. `target/release/safetensors-nano inspect`; `--json FILE` is appended)
"""
import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from safetensors import TensorSpec, serialize

# numpy-style dtype names the Python package accepts -> (our dtype, bits).
WRITABLE = {
    "bool": ("BOOL", 8), "uint8": ("U8", 8), "int8": ("I8", 8),
    "float8_e5m2": ("F8_E5M2", 8), "float8_e4m3fn": ("F8_E4M3", 8), "float8_e8m0fnu": ("F8_E8M0", 8),
    "float8_e4m3fnuz": ("F8_E4M3FNUZ", 8), "float8_e5m2fnuz": ("F8_E5M2FNUZ", 8),
    "int16": ("I16", 16), "uint16": ("U16", 16), "float16": ("F16", 16), "bfloat16": ("BF16", 16),
    "int32": ("I32", 32), "uint32": ("U32", 32), "float32": ("F32", 32),
    "complex64": ("C64", 64), "float64": ("F64", 64), "int64": ("I64", 64), "uint64": ("U64", 64),
    "float4_e2m1fn_x2": ("F4", 8),
}

passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print(f"FAIL: {what}", file=sys.stderr)


def write(path, tensors, metadata):
    keep = []
    specs = {}
    for name, (dtype, shape, data) in tensors.items():
        buf = np.frombuffer(data, dtype=np.uint8).copy()
        keep.append(buf)
        specs[name] = TensorSpec(dtype=dtype, shape=shape, data_ptr=buf.ctypes.data, data_len=len(data))
    Path(path).write_bytes(bytes(serialize(specs, metadata)))


def inspect(command, path):
    out = subprocess.run([*command, "--json", str(path)], capture_output=True, text=True)
    return out.returncode, json.loads(out.stdout)


def main():
    binary = sys.argv[1:]
    rng = np.random.default_rng(7)
    tensors = {}
    for i, (np_name, (ours, bits)) in enumerate(WRITABLE.items()):
        shape = [3, 1 + i % 4] if ours != "BOOL" else [5]
        count = int(np.prod(shape))
        nbytes = count * bits // 8
        data = rng.integers(0, 256, nbytes, dtype=np.uint8).tobytes()
        if ours == "BOOL":
            data = bytes(b & 1 for b in data)
        tensors[f"model.{np_name}.weight"] = (np_name, shape, data)
    tensors["scalar"] = ("float32", [], np.float32(1.5).tobytes())
    tensors["empty"] = ("int64", [0, 3], b"")
    tensors["naïve \"quoted\"\n"] = ("uint8", [2], b"\x01\x02")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "all.safetensors"
        write(path, tensors, {"format": "np"})
        code, doc = inspect(binary, path)
        check(code == 0 and doc["ok"], f"inspect accepts the file: {doc}")
        check(doc.get("metadata") == {"format": "np"}, f"metadata: {doc.get('metadata')}")
        got = {t["name"]: t for t in doc.get("tensors", [])}
        check(len(got) == len(tensors), f"{len(got)} tensors of {len(tensors)}")
        offsets = [t["data_offsets"] for t in doc.get("tensors", [])]
        check(offsets == sorted(offsets), "tensors listed in data-offset order")
        for name, (np_name, shape, data) in tensors.items():
            t = got.get(name)
            if t is None:
                check(False, f"missing {name!r}")
                continue
            expected_dtype = WRITABLE.get(np_name, {"float32": ("F32",), "int64": ("I64",), "uint8": ("U8",)}.get(np_name))[0]
            check(t["dtype"] == expected_dtype, f"{name}: dtype {t['dtype']} vs {expected_dtype}")
            # float4_e2m1fn_x2 counts byte pairs; the file holds F4 elements.
            want_shape = shape[:-1] + [shape[-1] * 2] if np_name == "float4_e2m1fn_x2" else shape
            check(t["shape"] == want_shape, f"{name}: shape {t['shape']} vs {want_shape}")
            check(t["data_offsets"][1] - t["data_offsets"][0] == len(data), f"{name}: length")
            check(t["sha256"] == hashlib.sha256(data).hexdigest(), f"{name}: bytes differ")
        # A malformed file: one JSON document, exit 1, kind and offset.
        bad = Path(tmp) / "bad.safetensors"
        raw = path.read_bytes()
        n = int.from_bytes(raw[:8], "little")
        bad.write_bytes(raw[: 8 + n] + raw[8 + n :][:-1])
        code, doc = inspect(binary, bad)
        check(code == 1 and doc["ok"] is False, "truncated file rejected with exit 1")
        check(doc["error"]["kind"] == "MetadataIncompleteBuffer", f"kind {doc['error']}")
    print(f"inspect interop: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
