"""numpy's answer to slice specs, for the readSlice tests.

    python numpy_slice.py < cases.json > answers.json

Each case is {"bits", "shape", "data" (hex), "spec"}, spec as readSlice
takes it (null, an integer, [start, end] or [start, end, step]). The answer
is {"shape", "data" (hex)} from numpy's basic indexing, or {"error":
"IndexError"} when numpy raises, or {"error": "SubByte"} when the selection
of a sub-byte dtype (F4, F6: elements packed little-endian bit after bit)
does not cover whole bytes. Sub-byte tensors are sliced as arrays of
elements (one row of bits each) and packed again.
"""

import json
import sys

import numpy as np


def index(entry):
    if entry is None:
        return slice(None)
    if isinstance(entry, int):
        return entry
    return slice(*entry)


def answer(case):
    bits, shape = case["bits"], case["shape"]
    data = np.frombuffer(bytes.fromhex(case["data"]), dtype=np.uint8)
    key = tuple(index(e) for e in case["spec"])
    try:
        if bits % 8 == 0:
            out = data.reshape(shape + [bits // 8])[key]
            return {"shape": list(out.shape[:-1]), "data": np.ascontiguousarray(out).tobytes().hex()}
        n = int(np.prod(shape, dtype=np.int64))
        elements = np.unpackbits(data, bitorder="little")[: n * bits].reshape(n, bits)
        picked = np.arange(n).reshape(shape)[key]
        flat = picked.ravel()
        # Whole bytes: every group of elements that fills a number of bytes
        # is taken whole or not at all.
        group = 8 // np.gcd(bits, 8)
        counts = np.bincount(flat // group, minlength=(n + group - 1) // group) if flat.size else np.zeros(0, dtype=np.int64)
        if np.any((counts != 0) & (counts != group)):
            return {"error": "SubByte"}
        packed = np.packbits(elements[flat].ravel(), bitorder="little")
        return {"shape": list(picked.shape), "data": packed.tobytes().hex()}
    except IndexError:
        return {"error": "IndexError"}


json.dump([answer(c) for c in json.load(sys.stdin)], sys.stdout)
