"""The reference side of cli/tests/edit.rs: for each case, what the Python
`safetensors` package writes (safetensors.numpy.save_file) for the tensors
`edit` should keep, under their new names, converted with numpy / ml_dtypes,
with the metadata edited (a case's optional "input", "set", "drop_metadata"
and "clear"); the CLI's output must be those bytes. With two or more
metadata keys the reference writes them in a random order (docs/format.md
W7): then ours must hold them sorted and be otherwise identical. Then the
CLI's output is loaded back with safetensors.numpy and its values compared.

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


def edited_metadata(case, metadata):
    """The metadata the case's options ask for: clear, then drop, then set."""
    if case.get("clear"):
        metadata = None
    if metadata is not None:
        metadata = {k: v for k, v in metadata.items() if k not in case.get("drop_metadata", [])}
    if case.get("set"):
        metadata = dict(metadata or {})
        for key, value in case["set"]:
            metadata[key] = value
    return metadata


def same_but_key_order(ours, theirs, metadata):
    """Equal files but for the order of the metadata's keys, ours sorted."""
    assert len(ours) == len(theirs)
    n = int.from_bytes(ours[:8], "little")
    assert theirs[:8] == ours[:8] and ours[8 + n:] == theirs[8 + n:]
    header = json.loads(ours[8:8 + n], object_pairs_hook=list)
    assert header[0][0] == "__metadata__"
    keys = [k for k, _ in header[0][1]]
    assert [k.encode() for k in keys] == sorted(k.encode() for k in metadata), keys
    assert json.loads(ours[8:8 + n]) == json.loads(theirs[8:8 + n])


checked = 0
for case in manifest["cases"]:
    source_path = case.get("input", manifest["input"])
    source = load_file(source_path)
    with safe_open(source_path, framework="np") as f:
        metadata = edited_metadata(case, f.metadata())
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
    if metadata is not None and len(metadata) > 1:
        same_but_key_order(ours, theirs, metadata)
    else:
        assert ours == theirs, (case, len(ours), len(theirs))
    with safe_open(case["out"], framework="np") as f:
        assert f.metadata() == metadata, (case, f.metadata())
    back = load_file(case["out"])
    assert sorted(back) == sorted(expected), (case, sorted(back))
    for name, array in expected.items():
        assert back[name].dtype == array.dtype and back[name].shape == array.shape, name
        assert back[name].tobytes() == array.tobytes(), name
    checked += 1
print(f"ok {checked}")
