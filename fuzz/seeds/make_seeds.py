#!/usr/bin/env python3
"""Writes the committed seed corpora: fuzz/seeds/<target>/<name>.

Run from anywhere: python3 fuzz/seeds/make_seeds.py. Seeds are small
hand-made files (valid ones of every shape of header, and near misses);
the fuzzer grows its own corpus in fuzz/corpus (gitignored) from them.
"""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
DTYPES = {"BOOL": 8, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6, "U8": 8, "I8": 8, "F8_E5M2": 8,
          "F8_E4M3": 8, "F8_E8M0": 8, "F8_E4M3FNUZ": 8, "F8_E5M2FNUZ": 8, "I16": 16, "U16": 16,
          "F16": 16, "BF16": 16, "I32": 32, "U32": 32, "F32": 32, "C64": 64, "F64": 64,
          "I64": 64, "U64": 64}


def file(header: str, data_len: int, pad: bool = False) -> bytes:
    h = header.encode()
    if pad:
        h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + bytes(i % 251 for i in range(data_len))


def tensors(spec, metadata=None):
    """spec: [(name, dtype, shape)] → header text and data length."""
    out, off = {}, 0
    if metadata is not None:
        out["__metadata__"] = metadata
    for name, dtype, shape in spec:
        n = 1
        for d in shape:
            n *= d
        size = n * DTYPES[dtype] // 8
        out[name] = {"dtype": dtype, "shape": shape, "data_offsets": [off, off + size]}
        off += size
    return json.dumps(out, separators=(",", ":")), off


def valid_files():
    seeds = {}
    h, n = tensors([])
    seeds["empty"] = file(h, n)
    seeds["empty_padded"] = file("{}", 0, pad=True)
    h, n = tensors([("x", "U8", [3]), ("y", "F32", [2])], {"format": "pt"})
    seeds["reference_example"] = file(h, n, pad=True)
    h, n = tensors([(d.lower(), d, [2, 4]) for d in DTYPES])
    seeds["all_dtypes"] = file(h, n, pad=True)
    h, n = tensors([("scalar", "F64", []), ("empty", "F32", [0, 7]), ("big0", "U8", [4294967296, 4294967296, 0])])
    seeds["scalar_and_zero_dims"] = file(h, n)
    h, n = tensors([("f4", "F4", [3, 2]), ("f6", "F6_E2M3", [4]), ("f6b", "F6_E3M2", [8])])
    seeds["sub_byte"] = file(h, n)
    seeds["escaped_names"] = file(
        r'{"caf\u00e9\n":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},'
        r'"\ud83d\ude00\"\\\/":{"dtype":"\u0046\u0033\u0032","shape":[1],"data_offsets":[1,5]}}', 5)
    seeds["metadata_many"] = file(
        '{"__metadata__":{"a":"1","b":"","c\\u0000":"\\t"},"t":{"dtype":"I16","shape":[2],"data_offsets":[0,4]}}', 4)
    seeds["metadata_null_last"] = file(
        '{"t":{"dtype":"BOOL","shape":[2],"data_offsets":[0,2]},"__metadata__":null}', 2)
    seeds["unknown_fields"] = file(
        '{"t":{"x":[1,{"y":null,"z":[true,false,-1.5e-3]}],"dtype":"U16","shape":[1],'
        '"data_offsets":[0,2],"w":"s"}}', 2)
    seeds["whitespace"] = file(' \t\r\n{ "t" : { "dtype" : "U8" , "shape" : [ 1 ] , "data_offsets" : [ 0 , 1 ] } } \n', 1)
    seeds["unordered_offsets"] = file(
        '{"b":{"dtype":"U8","shape":[2],"data_offsets":[2,4]},"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},'
        '"z":{"dtype":"U8","shape":[0],"data_offsets":[4,4]}}', 4)
    return seeds


def near_misses():
    return {
        "too_short": b"\x05\x00\x00",
        "too_large": struct.pack("<Q", 100_000_001) + b"{}",
        "header_past_end": struct.pack("<Q", 10) + b"{}",
        "bad_utf8": file("{}", 0)[:8].replace(b"\x02", b"\x03") + b'{"\xff}',
        "duplicate_name": file('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},'
                               '"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}', 2),
        "array_entry": file('{"a":["U8",[1],[0,1]]}', 1),
        "map_dtype": file('{"a":{"dtype":{"U8":null},"shape":[1],"data_offsets":[0,1]}}', 1),
        "hole": file('{"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}', 2),
        "overflow": file('{"a":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,0]}}', 0),
        "misaligned_f4": file('{"a":{"dtype":"F4","shape":[3],"data_offsets":[0,1]}}', 1),
        "wrong_size": file('{"a":{"dtype":"U16","shape":[3],"data_offsets":[0,5]}}', 5),
        "trailing_data": file('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', 2),
        "float_dim": file('{"a":{"dtype":"U8","shape":[1.0],"data_offsets":[0,1]}}', 1),
        "deep_unknown": file('{"a":{"x":' + "[" * 130 + "]" * 130 + ',"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', 1),
        "three_offsets": file('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1,2]}}', 1),
        "lone_surrogate": file('{"a\\ud800":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', 1),
        "nul_after": file('{}\x00', 0),
        # Found by the differential target: equal data_offsets make the reference's verdict random.
        # Found by the differential target: a high surrogate >= 0xD840 in a pair decoded wrongly.
        "surrogate_pair_d84d": file('{"\\ud84d\\ude15":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', 1),
        "tied_offsets": file('{"a":{"dtype":"F64","shape":[],"data_offsets":[0,8]},'
                             '"b":{"dtype":"F32","shape":[0],"data_offsets":[0,8]}}', 8),
    }


def json_token_seeds():
    values = ['null', 'true', '[1,2.5e-3,-0,{"a":[]}]', '"s\\u00e9\\ud83d\\ude00"', '1e400', '18446744073709551616',
              '{"k":{"k":{"k":[[[]]]}}}', '01', '[1,]', '"\x01"', '-', '1.', 'nul', '[' * 126 + ']' * 126]
    names = ['plain', 'caf\\u00e9', '\\ud83d\\ude00', '\\ud800', '\\x', '\\u12', 'a\\"b\\\\c\\/d\\b\\f\\n\\r\\t',
             '\u00e9\u4e2d', '__metadata__', 'dtype']
    seeds = {}
    for i, v in enumerate(values):
        seeds[f"value_{i:02}"] = b"\x00" + v.encode()
    for i, s in enumerate(names):
        seeds[f"name_{i:02}"] = b"\x01" + s.encode()
        seeds[f"meta_{i:02}"] = b"\x02" + s.encode()
    return seeds


def write(target, seeds):
    d = os.path.join(HERE, target)
    os.makedirs(d, exist_ok=True)
    for name, data in seeds.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


files = {**valid_files(), **near_misses()}
write("parse_touch", files)
write("differential", files)
write("json_tokens", json_token_seeds())
