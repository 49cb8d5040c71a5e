"""Golden files for the npm package's tests, made by the reference.

    python reference.py OUTDIR

writes, with the reference `safetensors` writer and `ml_dtypes` values:

- floats.safetensors: for every float dtype D the reference can write, a
  tensor "D" holding every code (all 2^16 for F16 and BF16; sample values for
  F32 and F64) and "D.expected", the F32 values ml_dtypes (numpy for F16,
  F32 and F64) decodes them to. F6 cannot be written by the reference: its
  codes are packed here (four per three bytes, element i at bits 6i..6i+5 of
  the little-endian 24-bit group) into a U8 tensor "D.bytes".
- mixed.safetensors: every dtype the reference writes, odd names (escapes,
  non-ASCII), a scalar and an empty tensor, one metadata key: the bytes our
  serialize() must reproduce exactly.
"""

import os
import sys

import ml_dtypes
import numpy as np
from safetensors import serialize, TensorSpec

KEEP = []


def spec(dtype, shape, data):
    buf = np.ascontiguousarray(np.frombuffer(bytes(data), dtype=np.uint8))
    KEEP.append(buf)
    return TensorSpec(dtype=dtype, shape=list(shape), data_ptr=buf.ctypes.data, data_len=buf.nbytes)


def write(path, tensors, metadata):
    with open(path, "wb") as f:
        f.write(bytes(serialize(tensors, metadata=metadata)))


def f32(values):
    return np.asarray(values, dtype=np.float32)


def floats(out):
    t = {}
    codes8 = np.arange(256, dtype=np.uint8)
    for name, mt, pyname in [
        ("F8_E5M2", ml_dtypes.float8_e5m2, "float8_e5m2"),
        ("F8_E4M3", ml_dtypes.float8_e4m3fn, "float8_e4m3fn"),
        ("F8_E8M0", ml_dtypes.float8_e8m0fnu, "float8_e8m0fnu"),
        ("F8_E4M3FNUZ", ml_dtypes.float8_e4m3fnuz, "float8_e4m3fnuz"),
        ("F8_E5M2FNUZ", ml_dtypes.float8_e5m2fnuz, "float8_e5m2fnuz"),
    ]:
        t[name] = spec(pyname, [256], codes8.tobytes())
        t[name + ".expected"] = spec("float32", [256], codes8.view(mt).astype(np.float32).tobytes())
    codes16 = np.arange(65536, dtype=np.uint16)
    t["F16"] = spec("float16", [65536], codes16.tobytes())
    t["F16.expected"] = spec("float32", [65536], codes16.view(np.float16).astype(np.float32).tobytes())
    t["BF16"] = spec("bfloat16", [65536], codes16.tobytes())
    t["BF16.expected"] = spec("float32", [65536], codes16.view(ml_dtypes.bfloat16).astype(np.float32).tobytes())
    rng = np.random.default_rng(4)
    v32 = np.concatenate([f32([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -3.4e38]), rng.standard_normal(1000).astype(np.float32)])
    t["F32"] = spec("float32", [v32.size], v32.tobytes())
    t["F32.expected"] = spec("float32", [v32.size], v32.tobytes())
    v64 = np.concatenate([
        np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-46, 1e-40, 3.5e38, -1e300, 1.0 + 2.0**-24, 1.0 + 3 * 2.0**-24]),
        rng.standard_normal(1000) * 10.0 ** rng.integers(-40, 40, 1000),
    ])
    t["F64"] = spec("float64", [v64.size], v64.tobytes())
    with np.errstate(over="ignore"):
        t["F64.expected"] = spec("float32", [v64.size], v64.astype(np.float32).tobytes())
    # F4: two per byte, the first element in the low nibble.
    codes4 = np.arange(16, dtype=np.uint8)
    t["F4"] = spec("float4_e2m1fn_x2", [8], (codes4[0::2] | (codes4[1::2] << 4)).tobytes())
    t["F4.expected"] = spec("float32", [16], codes4.view(ml_dtypes.float4_e2m1fn).astype(np.float32).tobytes())
    codes6 = np.arange(64, dtype=np.uint32)
    for name, mt in [("F6_E2M3", ml_dtypes.float6_e2m3fn), ("F6_E3M2", ml_dtypes.float6_e3m2fn)]:
        groups = codes6.reshape(-1, 4)
        word = groups[:, 0] | groups[:, 1] << 6 | groups[:, 2] << 12 | groups[:, 3] << 18
        packed = np.stack([word & 0xFF, (word >> 8) & 0xFF, (word >> 16) & 0xFF], axis=1).astype(np.uint8)
        t[name + ".bytes"] = spec("uint8", [48], packed.tobytes())
        t[name + ".expected"] = spec("float32", [64], codes6.astype(np.uint8).view(mt).astype(np.float32).tobytes())
    write(os.path.join(out, "floats.safetensors"), t, {"format": "golden"})


def mixed(out):
    rng = np.random.default_rng(7)
    sizes = {
        "bool": 1, "int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "int32": 4, "uint32": 4, "int64": 8,
        "uint64": 8, "float16": 2, "float32": 4, "float64": 8, "bfloat16": 2, "float8_e4m3fn": 1,
        "float8_e4m3fnuz": 1, "float8_e5m2": 1, "float8_e5m2fnuz": 1, "float8_e8m0fnu": 1, "complex64": 8,
    }
    t = {}
    for i, (dt, size) in enumerate(sizes.items()):
        shape = [2, 3] if i % 2 else [5]
        n = int(np.prod(shape))
        t[f"t.{dt}"] = spec(dt, shape, rng.integers(0, 256, n * size, dtype=np.uint8).tobytes())
    t["t.f4"] = spec("float4_e2m1fn_x2", [3, 2], rng.integers(0, 256, 6, dtype=np.uint8).tobytes())
    t["scalar"] = spec("float32", [], f32([1.5]).tobytes())
    t["empty"] = spec("int64", [0, 3], b"")
    t["caf\u00e9 \U0001F600"] = spec("uint8", [2], b"\x01\x02")
    t['quote"back\\slash\ttab\x01'] = spec("int8", [1], b"\x7f")
    t["slash/DEL\x7f"] = spec("uint8", [1], b"\x00")
    write(os.path.join(out, "mixed.safetensors"), t, {"format": "pt"})


if __name__ == "__main__":
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    floats(out)
    mixed(out)
