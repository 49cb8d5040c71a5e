#!/usr/bin/env python3
"""The READMEs that registries show (crates.io and docs.rs: core/README.md; npm:
wasm/README.md) render there as written, so:

- every link is absolute (https://…) or an anchor of the same page (#…): a relative
  link such as ../docs/format.md points nowhere on a registry page;
- no rustdoc intra-doc link ([`Name`] with no URL): the registries print it raw;
- no hidden doctest line (`# …` in a rust block): the registries show it;
- every docs.rs link into this crate names a page and anchor that `cargo doc` made
  (pass its output folder, target/doc), so a renamed item breaks the build, not the page.

Usage: scripts/check-readme-links.py TARGET_DOC README...
"""

import re
import sys
from pathlib import Path

DOCS_RS = "https://docs.rs/safetensors-nano/latest/"
LINK = re.compile(r"\]\(([^)\s]*)\)")
INTRA = re.compile(r"\[`[^`\]]+`\](?![(\[:])")


def problems(readme: Path, doc_root: Path):
    in_rust = False
    fence = None
    for n, line in enumerate(readme.read_text(encoding="utf-8").splitlines(), 1):
        where = f"{readme}:{n}"
        stripped = line.strip()
        if stripped.startswith("```"):
            if fence is None:
                fence = stripped
                in_rust = stripped.startswith("```rust")
            else:
                fence = None
                in_rust = False
            continue
        if fence is not None:
            if in_rust and (stripped == "#" or stripped.startswith("# ")):
                yield f"{where}: a hidden doctest line, shown as is on the registry: {stripped}"
            continue
        for target in LINK.findall(line):
            if not (target.startswith("https://") or target.startswith("#")):
                yield f"{where}: a relative link, broken on the registry: {target}"
            elif target.startswith(DOCS_RS):
                yield from docs_rs_problem(where, target, doc_root)
        for m in INTRA.finditer(line):
            yield f"{where}: an intra-doc link, printed raw on the registry: {m.group(0)}"


def docs_rs_problem(where, url, doc_root: Path):
    path, _, anchor = url[len(DOCS_RS):].partition("#")
    page = doc_root / path
    if not page.is_file():
        yield f"{where}: {url}: cargo doc made no {path}"
    elif anchor and f'id="{anchor}"' not in page.read_text(encoding="utf-8"):
        yield f"{where}: {url}: {path} has no #{anchor}"


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    doc_root = Path(argv[1])
    found = [p for readme in argv[2:] for p in problems(Path(readme), doc_root)]
    for p in found:
        print(p, file=sys.stderr)
    print(f"check-readme-links: {len(argv) - 2} READMEs, {len(found)} problems")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
