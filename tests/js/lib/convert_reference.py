"""Golden files for the streaming writer's float conversion, made by the reference.

    python convert_reference.py OUTDIR

writes, with the reference `safetensors` writer:

- source.safetensors: a tensor per float dtype D the reference writes, named
  D: every code of the 4-, 8- and 16-bit dtypes; for F32 and F64, special
  values, ties of the narrower formats, overflow and underflow, random
  values over a wide range. F6 cannot be written by the reference: its 64
  codes are packed (four per three bytes, element i at bits 6i..6i+5 of the
  little-endian 24-bit group) into a U8 tensor "D.bytes".
- expected-T.safetensors for T in F64, F32, F16, BF16: every source tensor
  (the F6 ones as F6 values) converted to T, rounded to nearest with ties to
  even once from the exact value, metadata {"format": "pt"}. A tensor
  already of dtype T keeps its bytes. Conversions from F64 to F16 and BF16
  are computed here exactly with fractions, not through numpy or ml_dtypes
  (which round F64 to BF16 through F32, twice).

NaN payloads are not compared by the tests (only NaN and its sign): numpy
and ml_dtypes keep a signalling NaN's bits where the core may quiet it
(half's F16 and BF16 conversions do).
"""

import math
import os
import sys
from fractions import Fraction

import ml_dtypes
import numpy as np
from safetensors import TensorSpec, serialize

SMALL = {
    "F8_E5M2": ml_dtypes.float8_e5m2,
    "F8_E4M3": ml_dtypes.float8_e4m3fn,
    "F8_E8M0": ml_dtypes.float8_e8m0fnu,
    "F8_E4M3FNUZ": ml_dtypes.float8_e4m3fnuz,
    "F8_E5M2FNUZ": ml_dtypes.float8_e5m2fnuz,
}
PYNAME = {
    "F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16", "U8": "uint8",
    "F8_E5M2": "float8_e5m2", "F8_E4M3": "float8_e4m3fn", "F8_E8M0": "float8_e8m0fnu",
    "F8_E4M3FNUZ": "float8_e4m3fnuz", "F8_E5M2FNUZ": "float8_e5m2fnuz", "F4": "float4_e2m1fn_x2",
}
# (significand bits after the point, smallest normal exponent, numpy type)
NARROW = {"F16": (10, -14, np.float16), "BF16": (7, -126, ml_dtypes.bfloat16)}


def narrow_from_f64(v, target):
    """v rounded to nearest, ties to even, into F16 or BF16, exactly (as bytes)."""
    kind = NARROW[target][2]
    if math.isnan(v):
        return np.array([np.float32(v)]).astype(kind).tobytes()
    if math.isinf(v) or v == 0:
        return np.array([v]).astype(np.float32).astype(kind).tobytes()
    frac_bits, min_exp, _ = NARROW[target]
    exp = math.frexp(abs(v))[1] - 1
    quantum = Fraction(2) ** (max(exp, min_exp) - frac_bits)
    rounded = round(Fraction(v) / quantum) * quantum  # round() on a Fraction: ties to even
    with np.errstate(over="ignore"):
        # Exact in float32 (both targets' values are), or past the range: ±inf.
        # (copysign: a tiny negative value rounds to -0.)
        as32 = np.float32(math.copysign(float(rounded) if abs(rounded) < 2**128 else np.inf, v))
        return np.array([as32]).astype(kind).tobytes()


def convert(name, values32, values64, target):
    """The target bytes of a source tensor: values32 (exact F32 values), or values64 for F64."""
    if values64 is not None:
        if target == "F64":
            return values64.tobytes()
        if target == "F32":
            with np.errstate(over="ignore"):
                return values64.astype(np.float32).tobytes()
        return b"".join(narrow_from_f64(float(v), target) for v in values64)
    if target == "F64":
        return values32.astype(np.float64).tobytes()
    if target == "F32":
        return values32.tobytes()
    return values32.astype(NARROW[target][2]).tobytes()


def ties32():
    """F32 values on and around the rounding ties of F16 and BF16, and their ranges' edges."""
    out = []
    for frac_bits in (10, 7):
        for k in range(8):
            base = 1.0 + k * 2.0**-frac_bits
            half = 2.0 ** -(frac_bits + 1)
            out += [base + half, base + half * (1 - 2**-12), base + half * (1 + 2**-12), -(base + half)]
    out += [65504.0, 65519.0, 65520.0, 65536.0, 2.0**-24, 2.0**-25, 3 * 2.0**-26, 6e-8, 3.38e38, 3.4028235e38, 1e-40, -1e-45]
    return np.array(out, dtype=np.float32)


def main(out):
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(16)
    source = {}
    expected = {t: {} for t in ("F64", "F32", "F16", "BF16")}
    keep = []

    def put(table, name, dtype, shape, data):
        buf = np.ascontiguousarray(np.frombuffer(bytes(data), dtype=np.uint8))
        keep.append(buf)  # (the specs point into it until the files are written)
        if dtype == "F4":  # the reference counts float4_e2m1fn_x2 in pairs: it writes twice this last dim
            shape = [*shape[:-1], shape[-1] // 2]
        table[name] = TensorSpec(dtype=PYNAME[dtype], shape=list(shape), data_ptr=buf.ctypes.data, data_len=buf.nbytes)

    def both(name, dtype, shape, data, values32=None, values64=None):
        put(source, name, dtype, shape, data)
        for t in expected:
            bytes_t = bytes(data) if t == dtype else convert(name, values32, values64, t)
            put(expected[t], name, t, shape, bytes_t)

    np.seterr(over="ignore", invalid="ignore")  # overflow to ±inf is the point
    codes8 = np.arange(256, dtype=np.uint8)
    for name, mt in SMALL.items():
        both(name, name, [256], codes8.tobytes(), values32=codes8.view(mt).astype(np.float32))
    codes16 = np.arange(65536, dtype=np.uint16)
    both("F16", "F16", [256, 256], codes16.tobytes(), values32=codes16.view(np.float16).astype(np.float32))
    both("BF16", "BF16", [65536], codes16.tobytes(), values32=codes16.view(ml_dtypes.bfloat16).astype(np.float32))
    v32 = np.concatenate([
        np.array([0.0, -0.0, np.inf, -np.inf, np.nan], dtype=np.float32),
        ties32(),
        (rng.standard_normal(4000) * 10.0 ** rng.integers(-45, 39, 4000)).astype(np.float32),
    ])
    both("F32", "F32", [v32.size], v32.tobytes(), values32=v32)
    v64 = np.concatenate([
        np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-46, 1e-40, 3.5e38, -1e300, 65519.99, 65520.0]),
        np.array([1.0 + 2.0**-11 + 2.0**-42, 1.0 + 2.0**-8 + 2.0**-40, 1.0 + 2.0**-24, 1.0 + 3 * 2.0**-24]),
        ties32().astype(np.float64),
        rng.standard_normal(3000) * 10.0 ** rng.integers(-50, 50, 3000),
    ])
    both("F64", "F64", [v64.size], v64.tobytes(), values64=v64)
    codes4 = np.arange(16, dtype=np.uint8)
    both("F4", "F4", [16], (codes4[0::2] | (codes4[1::2] << 4)).tobytes(),
         values32=codes4.view(ml_dtypes.float4_e2m1fn).astype(np.float32))
    codes6 = np.arange(64, dtype=np.uint32)
    for name, mt in [("F6_E2M3", ml_dtypes.float6_e2m3fn), ("F6_E3M2", ml_dtypes.float6_e3m2fn)]:
        groups = codes6.reshape(-1, 4)
        word = groups[:, 0] | groups[:, 1] << 6 | groups[:, 2] << 12 | groups[:, 3] << 18
        packed = np.stack([word & 0xFF, (word >> 8) & 0xFF, (word >> 16) & 0xFF], axis=1).astype(np.uint8)
        put(source, name + ".bytes", "U8", [48], packed.tobytes())
        values = codes6.astype(np.uint8).view(mt).astype(np.float32)
        for t in expected:
            put(expected[t], name, t, [64], convert(name, values, None, t))

    def write(path, tensors):
        with open(path, "wb") as f:
            f.write(bytes(serialize(tensors, metadata={"format": "pt"})))

    write(os.path.join(out, "source.safetensors"), source)
    for t, tensors in expected.items():
        write(os.path.join(out, f"expected-{t}.safetensors"), tensors)


if __name__ == "__main__":
    main(sys.argv[1])
