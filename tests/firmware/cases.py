"""Hostile inputs for the firmware's second build.

``malformed(model)`` is the model with one tensor's offsets shifted: a file
the firmware must reject with a typed error. ``stress_cases(model)`` is a
seeded list of files, valid and not, each with what the firmware's parser
must say: ``expect`` is an error kind name where safetensors-nano
deliberately differs from the reference (or has a limit of its own), else
``None``: then it must accept exactly when the reference accepts.
"""

import json
import random
import struct

# Firmware settings (firmware/src/main.rs): HEADER_BUF - 8, SLOTS.
HEADER_LIMIT = 1016
SLOTS = 16


def split(data):
    n = struct.unpack_from("<Q", data)[0]
    return data[8 : 8 + n], data[8 + n :]


def join(header, data, pad=True):
    if isinstance(header, str):
        header = header.encode()
    if pad:
        header += b" " * (-len(header) % 8)
    return struct.pack("<Q", len(header)) + header + data


def file_of(tensors, metadata=None, pad=True):
    """A file from {name: (dtype, shape, data bytes)}, laid out in the given order."""
    header, data, at = {}, b"", 0
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [at, at + len(raw)]}
        data += raw
        at += len(raw)
    return join(json.dumps(header, separators=(",", ":")), data, pad)


def malformed(model):
    """The model with its last tensor's data_offsets moved by one byte."""
    header, data = split(model)
    entries = json.loads(header)
    last = max((k for k in entries if k != "__metadata__"), key=lambda k: entries[k]["data_offsets"][0])
    begin, end = entries[last]["data_offsets"]
    entries[last]["data_offsets"] = [begin + 1, end + 1]
    return join(json.dumps(entries, separators=(",", ":")), data + b"\0"), last


def has_duplicate_keys(data):
    """Whether the header (if it is JSON at all) repeats a key anywhere."""
    seen_dup = []

    def hook(pairs):
        keys = [k for k, _ in pairs]
        if len(keys) != len(set(keys)):
            seen_dup.append(True)
        return dict(pairs)

    try:
        n = struct.unpack_from("<Q", data)[0]
        json.loads(data[8 : 8 + n].decode("utf-8"), object_pairs_hook=hook)
    except Exception:
        return False
    return bool(seen_dup)


def stress_cases(model):
    rng = random.Random(20240611)
    cases = []

    def add(label, data, expect=None):
        cases.append({"label": label, "data": bytes(data), "expect": expect})

    header, data = split(model)
    add("model", model)
    add("empty", b"")
    add("seven bytes", b"\x00" * 7)
    add("empty object", join("{}", b""))
    add("length past the end", struct.pack("<Q", 64) + b"{}")
    add("length 2^64-1", b"\xff" * 8 + b"{}")
    add("header over the firmware limit", file_of({"x": ("U8", [1], b"\x01")}, {"pad": "p" * 2000}),
        expect="HeaderTooLarge")
    add("trailing byte", model + b"\0")
    for cut in sorted(rng.sample(range(1, len(model)), 12)):
        add(f"truncated to {cut}", model[:cut])

    # Nesting in an ignored field: the reference (serde_json) allows 128 levels in all.
    for depth in (1, 100, 124, 125, 126, 127, 128, 129, 300, 5000):
        extra = "[" * depth + "]" * depth
        add(f"ignored field nested {depth}",
            join('{"t":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"x":%s}}' % extra, b"\x07"))
    add("unclosed nesting", join('{"t":{"x":' + "[" * 900, b""))
    add("deep object nesting", join('{"t":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"x":'
                                    + '{"a":' * 120 + "1" + "}" * 120 + "}}", b"\x07"))

    # Table capacity: tensors plus metadata entries.
    many = lambda n: {f"t{i:02}": ("U8", [1], bytes([i])) for i in range(n)}
    add("16 tensors", file_of(many(16)))
    add("17 tensors (over the table)", file_of(many(17)), expect="CapacityExceeded")
    add("12 tensors + 4 metadata", file_of(many(12), {f"k{i}": "v" for i in range(4)}))
    add("12 tensors + 5 metadata (over the table)", file_of(many(12), {f"k{i}": "v" for i in range(5)}),
        expect="CapacityExceeded")

    # Names, strings, numbers.
    add("escaped names", file_of({"caf\u00e9": ("U8", [1], b"\x01"), "tab\tname": ("U8", [1], b"\x02")}))
    add("escapes everywhere", join('{"\\u0074":{"dtype":"\\u0046\\u0033\\u0032","shape":[1],'
                                   '"data_offsets":[0,4]}}', b"\0\0\x80\x3f"))
    add("surrogate pair name", join('{"\\ud83d\\ude00":{"dtype":"U8","shape":[],"data_offsets":[0,1]}}', b"\x01"))
    add("lone surrogate", join('{"\\ud83d":{"dtype":"U8","shape":[],"data_offsets":[0,1]}}', b"\x01"))
    add("raw control character", join('{"a\x01":{"dtype":"U8","shape":[],"data_offsets":[0,1]}}', b"\x01"))
    add("invalid UTF-8", join(b'{"\xff":{"dtype":"U8","shape":[],"data_offsets":[0,1]}}', b"\x01"))
    add("duplicate name", join('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},'
                               '"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}', b"\x01\x02"),
        expect="DuplicateTensorName")
    add("shape overflow", join('{"a":{"dtype":"F32","shape":[4294967296,4294967296,4],'
                               '"data_offsets":[0,4]}}', b"\0" * 4))
    add("offset 2^64-1", join('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,18446744073709551615]}}', b"\0"))
    add("offset 2^64", join('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,18446744073709551616]}}', b"\0"))
    add("huge ignored number", join('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"x":1e400}}', b"\0"))
    add("long ignored string", join('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"x":"%s"}}'
                                    % ("\\n" * 300), b"\0"))
    add("overlapping tensors", join('{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},'
                                    '"b":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}}', b"\0" * 3))
    add("F4 odd count", join('{"a":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}}', b"\0\0"))
    add("bad dtype", join('{"a":{"dtype":"F33","shape":[1],"data_offsets":[0,4]}}', b"\0" * 4))
    add("not an object", join("[]", b""))

    # Random corruption of the model's header: byte flips and replacements.
    for i in range(40):
        h = bytearray(header)
        for _ in range(rng.choice((1, 1, 2, 3))):
            at = rng.randrange(len(h))
            h[at] = rng.choice((rng.randrange(256), ord(rng.choice('{}[]":,0123456789 '))))
        mutated = struct.pack("<Q", len(h)) + bytes(h) + data
        add(f"corrupt header #{i}", mutated, expect="DuplicateTensorName" if has_duplicate_keys(mutated) else None)
    return cases


def pack(cases):
    """The firmware's stress pack: per file, u32 length, 4 zero bytes, the file, padding to 8."""
    out = b""
    for case in cases:
        d = case["data"]
        out += struct.pack("<II", len(d), 0) + d + b"\0" * (-len(d) % 8)
    return out


def pack_parts(cases, room):
    """The stress pack split into packs of at most ``room`` bytes each (a
    board whose flash cannot hold it all runs it in parts), in order."""
    parts, current = [], []
    for case in cases:
        if current and len(pack(current + [case])) > room:
            parts.append(current)
            current = []
        current.append(case)
    if current:
        parts.append(current)
    return parts
