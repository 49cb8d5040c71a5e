#!/usr/bin/env python3
"""What `cargo publish` and `npm publish` would upload, checked without uploading: both
dry runs must succeed and name one version, the workspace's (Cargo.toml,
[workspace.package]), as must the CLI's --version; no manifest may name a placeholder host.

Usage: scripts/publish-dry-run.py NPM_TARBALL CLI_BINARY [--allow-dirty]
(make publish-dry-run; under CI the crates' files must be committed, so --allow-dirty is
left out there).
"""

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CRATES = ["safetensors-nano", "safetensors-nano-cli"]
MANIFESTS = ["Cargo.toml", "core/Cargo.toml", "cli/Cargo.toml", "wasm/Cargo.toml", "wasm/js/package.json"]


def run(cmd):
    print("+", " ".join(cmd), flush=True)
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    sys.stderr.write(done.stderr)
    if done.returncode != 0:
        sys.stdout.write(done.stdout)
        sys.exit(f"publish-dry-run: {cmd[0]} failed (exit {done.returncode})")
    return done


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    tarball, cli = argv[1], argv[2]
    dirty = ["--allow-dirty"] if "--allow-dirty" in argv[3:] else []
    version = tomllib.loads((ROOT / "Cargo.toml").read_text())["workspace"]["package"]["version"]
    problems = []

    cargo = run(["cargo", "publish", "--dry-run", *[a for c in CRATES for a in ("-p", c)], *dirty])
    uploads = dict(re.findall(r"Uploading (\S+) v(\S+) \(", cargo.stderr))
    for crate in CRATES:
        if uploads.get(crate) != version:
            problems.append(f"cargo publish would upload {crate} {uploads.get(crate)}, not {version}")

    # An absolute path: npm reads a relative `dir/name.tgz` as a GitHub repository `dir/name`.
    npm = run(["npm", "publish", "--dry-run", "--json", os.path.abspath(tarball)])
    # (npm prints its JSON summary on stdout; older versions print notices around it.)
    summary = json.loads(npm.stdout[npm.stdout.index("{"):])
    summary = summary.get("safetensors-nano", summary)
    if summary.get("version") != version:
        problems.append(f"npm publish would upload {summary.get('name')} {summary.get('version')}, not {version}")

    said = run([cli, "--version"]).stdout.strip()
    if said != f"safetensors-nano {version}":
        problems.append(f"{cli} --version says {said!r}, not 'safetensors-nano {version}'")

    for manifest in MANIFESTS:
        if "example.invalid" in (ROOT / manifest).read_text():
            problems.append(f"{manifest} names example.invalid: give a real address or none")

    for p in problems:
        print(f"publish-dry-run: {p}", file=sys.stderr)
    if problems:
        return 1
    print(f"publish-dry-run: {', '.join(CRATES)} and the npm package, all version {version}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
