#!/usr/bin/env python3
"""Checks the core crate's layout (`make lint`): what keeps it easy to find
one's way in, so that it stays that way.

- No import circle among the files of core/src: a module never uses,
  directly or through others, a module that uses it (test code aside).
- At most 12 files at the top of core/src: the parts live in folders.
- The size mode (`small`, wasm32) is chosen in core/src/mode.rs: at most 12
  lines elsewhere switch on it.

Prints the modules in dependency order (each after what it uses).
Usage: scripts/check-core-layout.py [core/src]
"""
import graphlib
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else 'core/src'
MAX_TOP_FILES = 12
MAX_MODE_LINES = 12
MODE_SWITCH = re.compile(r'cfg!?\((not\()?small\)|cfg_attr\((not\()?small|target_arch = "wasm32"')


def modules():
    """Module path (a tuple) → file, for every .rs file under ROOT."""
    out = {}
    for folder, _, names in os.walk(ROOT):
        for n in names:
            if n.endswith('.rs'):
                path = os.path.join(folder, n)
                parts = tuple(os.path.relpath(path, ROOT)[:-3].split(os.sep))
                if parts[-1] in ('mod', 'lib'):
                    parts = parts[:-1]
                out[parts] = path
    return out


def code_of(path):
    """The file's non-test code, without comments and string contents."""
    text = open(path, encoding='utf-8').read()
    text = re.split(r'\n#\[cfg\(test\)\]\s*\nmod tests', text)[0]
    text = re.sub(r'//[^\n]*', '', text)
    return re.sub(r'"(?:\\.|[^"\\])*"', '""', text)


def expand(tree):
    """`a::{b, c::{d, e}}` → ['a::b', 'a::c::d', 'a::c::e']."""
    tree = tree.strip()
    m = re.match(r'^(.*?)\{(.*)\}$', tree, re.S)
    if not m:
        return [tree.split(' as ')[0].strip()]
    prefix, inner = m.groups()
    parts, depth, cur = [], 0, ''
    for ch in inner:
        depth += (ch == '{') - (ch == '}')
        if ch == ',' and depth == 0:
            parts.append(cur)
            cur = ''
        else:
            cur += ch
    parts.append(cur)
    return [prefix + e if e != 'self' else prefix.rstrip(':') for p in parts if p.strip() for e in expand(p)]


def target(mods, here, path):
    """The module a path in module `here` names, or None (an external crate, a local item)."""
    segs = [s for s in re.sub(r'\s', '', path).split('::') if s]
    if not segs:
        return None
    if segs[0] == 'crate':
        full = segs[1:]
    elif segs[0] in ('super', 'self'):
        full = list(here)
        while segs and segs[0] == 'super':
            full, segs = full[:-1], segs[1:]
        if segs and segs[0] == 'self':
            segs = segs[1:]
        full += segs
    elif here + (segs[0],) in mods:
        full = list(here) + segs
    elif not here and (segs[0],) in mods:
        full = segs
    else:
        return None
    for k in range(len(full), 0, -1):
        if tuple(full[:k]) in mods:
            return tuple(full[:k])
    return None


def main():
    mods = modules()
    graph = {m: set() for m in mods if m}
    for mod, path in mods.items():
        if not mod:
            continue  # lib.rs re-exports; nothing uses it
        code = code_of(path)
        paths = [p for m in re.finditer(r'\buse\s+([^;]+);', code) for p in expand(m.group(1))]
        body = re.sub(r'\buse\s+[^;]+;', '', code)
        paths += re.findall(r'(?<![:\w])(\w+(?:::\w+)+)', body)
        for p in paths:
            t = target(mods, mod, p)
            if t and t != mod:
                graph[mod].add(t)
    name = lambda m: '/'.join(m)
    problems = []
    try:
        order = list(graphlib.TopologicalSorter(graph).static_order())
        print('core/src modules in dependency order:', ', '.join(name(m) for m in order))
    except graphlib.CycleError as e:
        problems.append('import circle: ' + ' -> '.join(name(m) for m in e.args[1]))
    top = sorted(n for n in os.listdir(ROOT) if n.endswith('.rs'))
    if len(top) > MAX_TOP_FILES:
        problems.append(f'{len(top)} files at the top of {ROOT} (at most {MAX_TOP_FILES}): {", ".join(top)}')
    switches = [f'{p}:{i}' for m, p in mods.items() if m != ('mode',)
                for i, line in enumerate(open(p, encoding='utf-8'), 1) if MODE_SWITCH.search(line)]
    print(f'{len(top)} files at the top of {ROOT}; {len(switches)} size-mode lines outside mode.rs')
    if len(switches) > MAX_MODE_LINES:
        problems.append(f'{len(switches)} lines switch on the size mode outside mode.rs '
                        f'(at most {MAX_MODE_LINES}): ' + ', '.join(switches))
    for p in problems:
        print('check-core-layout:', p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
