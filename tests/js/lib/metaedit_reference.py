"""The reference side of metaedit.test.js: the same tensors written by the
reference (safetensors.numpy.save_file) with each metadata a case asks for.

    python metaedit_reference.py MANIFEST.json

MANIFEST: {"source": PATH, "source_metadata": {...}, "cases": [{"out": PATH,
"metadata": {...} | null}]}. Writes the source file (the tensors with
source_metadata), then each case's file: the same tensors with its metadata.
"""

import json
import sys

import ml_dtypes
import numpy as np
from safetensors.numpy import save_file


def tensors():
    rng = np.random.default_rng(30)
    return {
        "model.embed.weight": rng.standard_normal((40, 16)).astype(np.float32),
        "model.norm.scale": rng.standard_normal(16).astype(np.float64),
        "model.half": rng.standard_normal((3, 5)).astype(np.float16),
        "model.bf": rng.standard_normal(7).astype(np.float32).astype(ml_dtypes.bfloat16),
        "step": np.array(12, dtype=np.int64),
        "empty": np.zeros((0, 3), dtype=np.float32),
        "mask": np.array([1, 0, 1], dtype=np.uint8),
    }


manifest = json.load(open(sys.argv[1]))
save_file(tensors(), manifest["source"], metadata=manifest["source_metadata"])
for case in manifest["cases"]:
    save_file(tensors(), case["out"], metadata=case["metadata"])
print(f"ok {len(manifest['cases'])}")
