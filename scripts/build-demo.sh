#!/usr/bin/env bash
# Assembles the web viewer into dist/demo/: the page (web-demo/), the built npm package
# (unpacked from dist/safetensors-nano-*.tgz, as a user would install it) and sample models
# written by scripts/make-sample.mjs with the package's own serialize.
#
# Also fills web-demo/vendor/ (gitignored), so web-demo/ itself can be served while editing.
#
# Usage: scripts/build-demo.sh            builds the package first if it is missing or stale
#        PKG_TGZ=path.tgz scripts/build-demo.sh   uses that tarball
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
log() { printf '[build-demo] %s\n' "$*" >&2; }

TGZ=${PKG_TGZ:-$(ls -t dist/safetensors-nano-*.tgz 2>/dev/null | head -n1 || true)}
if [ -z "${PKG_TGZ:-}" ]; then
  stale=
  if [ -z "$TGZ" ]; then
    stale="no package built yet"
  elif [ -n "$(find wasm core -newer "$TGZ" -type f \( -name '*.rs' -o -name '*.js' -o -name '*.ts' -o -name '*.toml' -o -name '*.json' \) -print -quit 2>/dev/null)" ]; then
    stale="sources changed since $TGZ"
  fi
  if [ -n "$stale" ]; then
    [ -x scripts/build-package.sh ] || { log "$stale, and scripts/build-package.sh is missing"; exit 1; }
    log "$stale: scripts/build-package.sh"
    TGZ=$(scripts/build-package.sh | tail -n1)
  fi
fi
[ -f "$TGZ" ] || { log "package tarball not found: $TGZ"; exit 1; }
log "package: $TGZ"

VENDOR=web-demo/vendor
rm -rf "$VENDOR" && mkdir -p "$VENDOR/safetensors-nano"
tar -xzf "$TGZ" -C "$VENDOR/safetensors-nano" --strip-components=1
# The worker imports this path; the browser entry initialises the wasm.
cat >"$VENDOR/safetensors-nano.js" <<'JS'
// Written by scripts/build-demo.sh: the viewer's import of the npm package.
export * from './safetensors-nano/index.js';
JS

# The digits page's model and test samples: the firmware's, trained by the same
# script (seeded: the same bytes every build; needs scripts/setup.sh python).
tests/.venv/bin/python scripts/train_digits.py --out "$VENDOR/digits" 2>&1 | sed 's/^/[build-demo] /' >&2

OUT=dist/demo
rm -rf "$OUT" && mkdir -p "$OUT"
cp web-demo/*.html web-demo/*.js web-demo/*.css "$OUT/"
cp -r "$VENDOR" "$OUT/vendor"
node scripts/make-sample.mjs "$OUT/samples" "$VENDOR/safetensors-nano/node.js"
log "built $OUT ($(du -sh "$OUT" | cut -f1)); serve it with: node scripts/serve.mjs --root $OUT --port 8080"
