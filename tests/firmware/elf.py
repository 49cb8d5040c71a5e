"""Section and symbol sizes of a 32-bit little-endian ELF file (standard library only)."""

import re
import struct


def _sections(data):
    if data[:4] != b"\x7fELF" or data[4] != 1 or data[5] != 1:
        raise ValueError("not a 32-bit little-endian ELF file")
    shoff, = struct.unpack_from("<I", data, 0x20)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x2E)
    raw = []
    for i in range(shnum):
        raw.append(struct.unpack_from("<IIIIIIIIII", data, shoff + i * shentsize))
    names_off = raw[shstrndx][4]

    def name_at(off):
        end = data.index(b"\0", names_off + off)
        return data[names_off + off : end].decode()

    out = []
    for name, typ, flags, addr, offset, size, link, _info, _align, entsize in raw:
        out.append(
            {"name": name_at(name), "type": typ, "flags": flags, "addr": addr,
             "offset": offset, "size": size, "link": link, "entsize": entsize}
        )
    return out


def section_sizes(path):
    """{section name: size in bytes} for the sections loaded at run time."""
    with open(path, "rb") as f:
        data = f.read()
    SHF_ALLOC = 2
    return {s["name"]: s["size"] for s in _sections(data) if s["flags"] & SHF_ALLOC and s["size"]}


SHF_WRITE, SHF_ALLOC, SHT_NOBITS = 1, 2, 8
# Sections that mark free RAM (riscv-rt's heap and stack regions), not data.
_FREE_RAM = {".stack", ".heap"}


def memory_use(path):
    """(flash, static RAM) in bytes: flash is every loaded section with
    contents (code, read-only data, the initial values of .data); static RAM
    is every writable loaded section (.data, .bss, .uninit)."""
    with open(path, "rb") as f:
        secs = _sections(f.read())
    flash = sum(s["size"] for s in secs if s["flags"] & SHF_ALLOC and s["type"] != SHT_NOBITS)
    static = sum(s["size"] for s in secs if s["flags"] & SHF_ALLOC and s["flags"] & SHF_WRITE
                 and s["name"] not in _FREE_RAM)
    return flash, static


def function_sizes(path):
    """[(size, mangled name)] of the function symbols, largest first."""
    with open(path, "rb") as f:
        data = f.read()
    secs = _sections(data)
    symtab = next((s for s in secs if s["name"] == ".symtab"), None)
    if symtab is None:
        return []
    strtab = secs[symtab["link"]]
    out = []
    for i in range(symtab["size"] // 16):
        name, _value, size, info, _other, _shndx = struct.unpack_from("<IIIBBH", data, symtab["offset"] + i * 16)
        if info & 0xF != 2 or size == 0:  # STT_FUNC
            continue
        start = strtab["offset"] + name
        out.append((size, data[start : data.index(b"\0", start)].decode(errors="replace")))
    return sorted(out, reverse=True)


_ESCAPES = {"$LT$": "<", "$GT$": ">", "$u20$": " ", "$RF$": "&", "$C$": ",", "$u5b$": "[", "$u5d$": "]",
            "$u7b$": "{", "$u7d$": "}", "$BP$": "*", "$SP$": "@", "$LP$": "(", "$RP$": ")", "..": "::"}


def demangle(name):
    """A readable form of a Rust symbol (legacy `_ZN…E` without its hash, or
    the identifiers of a v0 `_R…` path); other names unchanged."""
    if name.startswith("_R"):
        return _v0_path(name) or name
    if not (name.startswith("_ZN") and name.endswith("E")):
        return name
    parts, i = [], 3
    while i < len(name) - 1:
        j = i
        while j < len(name) and name[j].isdigit():
            j += 1
        if j == i:
            return name
        n = int(name[i:j])
        parts.append(name[j : j + n])
        i = j + n
    if parts and parts[-1].startswith("h") and len(parts[-1]) == 17:
        parts.pop()
    out = "::".join(p[1:] if p.startswith("_$") else p for p in parts)
    for k, v in _ESCAPES.items():
        out = out.replace(k, v)
    return out


def _v0_path(name):
    """The identifiers of a v0-mangled path, joined by `::` (enough for
    plain paths such as core functions; generic arguments come out flat)."""
    idents, i = [], 2
    while i < len(name):
        if name.startswith("Cs", i) and "_" in name[i:]:
            i = name.index("_", i) + 1  # crate root and its disambiguator
            continue
        if name[i].isdigit():
            j = i
            while j < len(name) and name[j].isdigit():
                j += 1
            n = int(name[i:j])
            if j < len(name) and name[j] == "_":
                j += 1
            idents.append(name[j : j + n])
            i = j + n
            continue
        i += 1
    # Anything else (generic arguments, back-references) reads badly: keep it mangled.
    if not all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", ident) for ident in idents):
        return ""
    return "::".join(idents)
