"""The reference side of cli/tests/edit.rs: for each case, what the Python
`safetensors` package writes (safetensors.numpy.save_file) for the tensors
`edit` should keep, under their new names, converted with numpy / ml_dtypes;
the CLI's output must be those bytes. Then the CLI's output is loaded back
with safetensors.numpy and its values compared.

Usage: edit_expected.py MANIFEST.json  (prints "ok N" for N cases checked)
"""
import json
import re
import sys

import ml_dtypes
import numpy as np
from safetensors import safe_open
from safetensors.numpy import load_file, save_file

NUMPY = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "BF16": ml_dtypes.bfloat16}

manifest = json.load(open(sys.argv[1]))
source = load_file(manifest["input"])
with safe_open(manifest["input"], framework="np") as f:
    metadata = f.metadata()

checked = 0
for case in manifest["cases"]:
    expected = {}
    for name, array in source.items():
        if case["keep"] and not any(re.search(k, name) for k in case["keep"]):
            continue
        if any(re.search(d, name) for d in case["drop"]):
            continue
        new = name
        for old, repl in case["rename"]:
            new = re.sub(old, re.sub(r"\$(\d+)", r"\\\1", repl), new)
        for frm, to in case["convert"]:
            if array.dtype == NUMPY[frm]:
                array = array.astype(NUMPY[to])
                break
        expected[new] = array
    reference = case["out"] + ".reference"
    save_file(expected, reference, metadata=metadata)
    ours = open(case["out"], "rb").read()
    theirs = open(reference, "rb").read()
    assert ours == theirs, (case, len(ours), len(theirs))
    back = load_file(case["out"])
    assert sorted(back) == sorted(expected), (case, sorted(back))
    for name, array in expected.items():
        assert back[name].dtype == array.dtype and back[name].shape == array.shape, name
        assert back[name].tobytes() == array.tobytes(), name
    checked += 1
print(f"ok {checked}")
