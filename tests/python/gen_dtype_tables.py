#!/usr/bin/env python3
"""Golden values for safetensors-nano's float decoding, from ml_dtypes and numpy.

Writes core/tests/data/dtype_tables.json (or the path given with --output; "-"
is stdout). core/tests/decode.rs checks the Rust decoders against the file and
re-runs this script to check that the file still matches the oracle.

Contents (all f32 results are bit patterns as unsigned integers):
  codes.<DTYPE>: the f32 of every code of each sub-16-bit float, as ml_dtypes
      converts it (one code per byte, unpacked): 256 for F8_*, 64 for F6_*,
      16 for F4. NaNs are given with their exact bits too.
  samples.F16 / samples.BF16: [code, f32 bits] pairs, the special codes plus
      pseudo-random ones; samples.F64: [f64 bits, f32 bits] pairs (numpy's
      float64 -> float32 cast, round to nearest even), incl. rounding ties.
The pseudo-random codes come from a fixed 64-bit LCG, so the output does not
depend on numpy's random generators.
"""

import argparse
import json
import sys

import ml_dtypes
import numpy as np

CODE_TABLES = [
    # (safetensors dtype, ml_dtypes type, number of codes)
    ("F8_E5M2", "float8_e5m2", 256),
    ("F8_E4M3", "float8_e4m3fn", 256),
    ("F8_E8M0", "float8_e8m0fnu", 256),
    ("F8_E4M3FNUZ", "float8_e4m3fnuz", 256),
    ("F8_E5M2FNUZ", "float8_e5m2fnuz", 256),
    ("F6_E2M3", "float6_e2m3fn", 64),
    ("F6_E3M2", "float6_e3m2fn", 64),
    ("F4", "float4_e2m1fn", 16),
]

SAMPLES = 300


class Lcg:
    """Knuth's MMIX LCG; the top bits are used."""

    def __init__(self, seed):
        self.state = seed

    def next64(self):
        self.state = (self.state * 6364136223846793005 + 1442695040888963407) % 2**64
        return self.state

    def bits(self, n):
        return self.next64() >> (64 - n)


def f32_bits(values):
    return [int(b) for b in np.asarray(values, dtype=np.float32).view(np.uint32)]


def code_table(ml_name, count):
    codes = np.arange(count, dtype=np.uint8).view(getattr(ml_dtypes, ml_name))
    return f32_bits(codes.astype(np.float32))


def half_samples(kind, rng):
    special = [0x0000, 0x8000, 0x0001, 0x8001, 0xFFFF, 0x7FFF]
    if kind == "F16":
        np_type = np.float16
        # subnormal edges, min normal, 1, max, inf, NaNs (quiet, signalling)
        special += [0x03FF, 0x0400, 0x3C00, 0xBC00, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00,
                    0x7C01, 0x7E00, 0xFE00, 0x7D00]
    else:
        np_type = ml_dtypes.bfloat16
        special += [0x007F, 0x0080, 0x3F80, 0xBF80, 0x7F7F, 0xFF7F, 0x7F80, 0xFF80,
                    0x7F81, 0x7FC0, 0xFFC0, 0x7FA0]
    codes = special + [rng.bits(16) for _ in range(SAMPLES - len(special))]
    values = np.array(codes, dtype=np.uint16).view(np_type).astype(np.float32)
    return [[c, b] for c, b in zip(codes, f32_bits(values))]


def f64_samples(rng):
    def bits_of(x):
        return int(np.array([x], dtype=np.float64).view(np.uint64)[0])

    codes = [
        0x0000000000000000, 0x8000000000000000,  # +-0
        0x7FF0000000000000, 0xFFF0000000000000,  # +-inf
        0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001,  # NaNs
        0x3FF0000000000000,  # 1
        0x47EFFFFFE0000000,  # f32::MAX
        0x47EFFFFFF0000000,  # f32::MAX + half an ulp: ties to even -> inf
        0x47EFFFFFEFFFFFFF,  # just below that tie -> f32::MAX
        0x7FEFFFFFFFFFFFFF,  # f64::MAX -> inf
        0x36A0000000000000,  # 2^-149, the smallest f32 subnormal
        0x3690000000000000,  # 2^-150: a tie between 0 and 2^-149 -> 0
        0x3690000000000001,  # just above it -> 2^-149
        0x36A8000000000000,  # 1.5 * 2^-149: a tie -> 2 * 2^-149
        0x0000000000000001,  # the smallest f64 subnormal -> 0
        0x3FF0000010000000,  # 1 + 2^-24: a tie -> 1 (even)
        0x3FF0000030000000,  # 1 + 3 * 2^-24: a tie -> 1 + 2^-22 (even)
    ]
    # Random f32 values plus exactly half an f32 ulp (ties) ...
    for _ in range(40):
        b32 = rng.bits(31) | (rng.bits(1) << 31)
        if (b32 >> 23) & 0xFF == 0xFF:
            continue
        b64 = bits_of(np.float64(np.array([b32], dtype=np.uint32).view(np.float32)[0]))
        codes.append(b64 | (1 << 28) if (b32 >> 23) & 0xFF else b64)
    # ... and random f64s with exponents around the f32 range.
    while len(codes) < SAMPLES:
        exponent = 1023 - 160 + rng.bits(9) % 300
        codes.append((rng.bits(1) << 63) | (exponent << 52) | rng.bits(52))
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        values = np.array(codes, dtype=np.uint64).view(np.float64).astype(np.float32)
    return [[c, b] for c, b in zip(codes, f32_bits(values))]


def build():
    rng = Lcg(0x5AFE_7E25_0000_0001)
    return {
        "generated_by": "tests/python/gen_dtype_tables.py",
        "versions": {"ml_dtypes": ml_dtypes.__version__, "numpy": np.__version__},
        "codes": {name: code_table(ml, n) for name, ml, n in CODE_TABLES},
        "ml_dtypes_names": {name: ml for name, ml, _ in CODE_TABLES},
        "samples": {
            "F16": half_samples("F16", rng),
            "BF16": half_samples("BF16", rng),
            "F64": f64_samples(rng),
        },
    }


def dump(data):
    """JSON with one line per table or sample, for readable diffs."""
    lines = ["{"]
    keys = list(data)
    for i, key in enumerate(keys):
        comma = "," if i + 1 < len(keys) else ""
        value = data[key]
        if key == "codes":
            lines.append(f'  "{key}": {{')
            names = list(value)
            for j, name in enumerate(names):
                sep = "," if j + 1 < len(names) else ""
                lines.append(f"    {json.dumps(name)}: {json.dumps(value[name])}{sep}")
            lines.append("  }" + comma)
        elif key == "samples":
            lines.append(f'  "{key}": {{')
            names = list(value)
            for j, name in enumerate(names):
                sep = "," if j + 1 < len(names) else ""
                lines.append(f"    {json.dumps(name)}: [")
                rows = value[name]
                for k, row in enumerate(rows):
                    lines.append(f"      {json.dumps(row)}" + ("," if k + 1 < len(rows) else ""))
                lines.append("    ]" + sep)
            lines.append("  }" + comma)
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default="core/tests/data/dtype_tables.json",
                        help='output path, "-" for stdout')
    args = parser.parse_args()
    text = dump(build())
    json.loads(text)  # well-formed
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
