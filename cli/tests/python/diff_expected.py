"""The reference side of cli/tests/diff.rs: writes a base and a fine-tune
with the Python `safetensors` package, and prints what `diff --values`
must find, computed with numpy in float64 (values through ml_dtypes).

Usage: diff_expected.py A B   (writes A and B, prints the JSON)
"""
import json
import sys

import ml_dtypes
import numpy as np
from safetensors.numpy import save_file

a_path, b_path = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(11)
bf16 = ml_dtypes.bfloat16

def f(shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(np.float32).astype(dtype)

a = {
    "w.f32": f((300, 700)),             # more than one step of 65536 elements
    "w.f16": f((33, 5), np.float16),
    "w.bf16": f((64,), bf16),
    "w.f64": rng.standard_normal(1000),
    "w.i32": rng.integers(-1000, 1000, 77, dtype=np.int32),
    "same": f((4, 4)),
    "cast": f((10, 3)),                 # becomes BF16 in B
    "reshaped": f((6, 4)),              # becomes (4, 6) in B
    "zero": np.zeros(8, dtype=np.float32),
    "gone": f((2,)),
}
b = dict(a)
b["w.f32"] = a["w.f32"] + (rng.random((300, 700)) < 0.3) * f((300, 700)) * 1e-2
b["w.f32"] = b["w.f32"].astype(np.float32)
b["w.f16"] = (a["w.f16"].astype(np.float32) * 1.5).astype(np.float16)
b["w.bf16"] = (a["w.bf16"].astype(np.float32) + 0.25).astype(bf16)
b["w.f64"] = a["w.f64"] + 1e-9 * rng.standard_normal(1000)
b["w.i32"] = a["w.i32"].copy()
b["w.i32"][::7] += 3
b["cast"] = a["cast"].astype(bf16)
b["reshaped"] = a["reshaped"].reshape(4, 6)
b["zero"] = np.ones(8, dtype=np.float32)
del b["gone"]
b["new"] = f((3,))
save_file(a, a_path)
save_file(b, b_path)

values = []
for name in sorted(set(a) & set(b)):
    x, y = a[name], b[name]
    if x.shape != y.shape:
        continue
    x, y = x.astype(np.float64).ravel(), y.astype(np.float64).ravel()
    d = np.abs(y - x)
    base = np.sqrt(np.sum(x * x))
    diff = np.sqrt(np.sum(d * d))
    rel = 0.0 if diff == 0 else (None if base == 0 else float(diff / base))
    values.append({"name": name, "elements": int(x.size), "changed": int(np.count_nonzero(x != y)),
                   "max_abs_diff": float(d.max()) if x.size else 0.0, "rel_l2": rel})
print(json.dumps({"values": values}))
