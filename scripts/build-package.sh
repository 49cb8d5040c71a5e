#!/usr/bin/env bash
# Builds the npm package safetensors-nano into dist/safetensors-nano-<version>.tgz.
#
#   1. wasm-pack (target web, --mode no-install: the wasm-bindgen CLI on PATH
#      must match the crate's pinned version, or this fails at once), built
#      with the size-first `wasm` profile of the root Cargo.toml, no wasm-opt,
#      twice: the reader's module (feature `reader`: what every page loads to
#      open files) and the writer's (feature `writer`: loaded by the first
#      `serialize`);
#   2. wasm-opt from the npm package binaryen (tests/js/node_modules):
#      Debian's binaryen 108 produces a module that fails to load. The
#      reader gets -O4 (its parse runs ~5% faster than after -Oz, for ~120
#      bytes), the writer -Oz; both without the target-features section
#      (the features the build used: for linkers and tools, not engines);
#   3. the package directory: wasm-bindgen's glue and .wasm, the whole ES
#      module layer of wasm/js/ (every module, any folder of them, the
#      declarations; its package.json's `files` picks what ships), README;
#   4. npm pack into dist/.
#
# Usage: scripts/build-package.sh        (needs: scripts/setup.sh web)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

log() { printf '[build-package] %s\n' "$*" >&2; }

WASM_OPT=$ROOT/tests/js/node_modules/.bin/wasm-opt
if [ ! -x "$WASM_OPT" ]; then
  log "installing tests/js dependencies (binaryen, playwright-core)"
  (cd tests/js && npm ci --no-audit --no-fund --loglevel=error)
fi

# The project's version, as `cargo xtask gen` writes it from the workspace's Cargo.toml.
VERSION=$(node -p "require('./wasm/js/package.json').version")
OUT=$ROOT/target/npm
PKG=$OUT/safetensors-nano
rm -rf "$OUT" && mkdir -p "$OUT"

# The features rustc enables by default for wasm32-unknown-unknown, and SIMD128
# (the reader's float decoders, core/src/decode/simd; every engine the
# package supports runs it).
OPT_FEATURES=(--enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext
  --enable-mutable-globals --enable-reference-types --enable-multivalue --enable-simd)
for part in reader writer; do
  name=safetensors_nano_$part
  [ "$part" = reader ] && name=safetensors_nano_wasm
  log "wasm-pack build: $part (version $VERSION)"
  simd=
  [ "$part" = reader ] && simd="-C target-feature=+simd128"
  RUSTFLAGS="${RUSTFLAGS:-} $simd" wasm-pack --quiet build wasm --target web --mode no-install --no-opt --no-pack \
    --profile wasm --out-dir "$OUT/bindgen-$part" --out-name "$name" \
    -- --no-default-features --features "$part" >&2
  level=-Oz
  [ "$part" = reader ] && level=-O4
  log "wasm-opt $level: $part"
  "$WASM_OPT" "$level" --strip-debug --strip-producers --strip-target-features "${OPT_FEATURES[@]}" \
    "$OUT/bindgen-$part/${name}_bg.wasm" -o "$OUT/${name}_bg.wasm"
  cp "$OUT/bindgen-$part/$name.js" "$OUT/"
done

mkdir -p "$PKG"
cp "$OUT"/safetensors_nano_{wasm,writer}_bg.wasm "$OUT"/safetensors_nano_{wasm,writer}.js "$PKG/"
cp -R wasm/js/. "$PKG/"
cp wasm/README.md "$PKG/"
cp LICENSE-MIT LICENSE-APACHE "$PKG/"

mkdir -p dist
rm -f dist/safetensors-nano-*.tgz
(cd "$PKG" && npm pack --silent --pack-destination "$ROOT/dist" >/dev/null)
TGZ=$(ls dist/safetensors-nano-*.tgz)
for name in wasm writer; do
  f=$PKG/safetensors_nano_${name}_bg.wasm
  log "$name: $(stat -c %s "$f") bytes raw, $(gzip -9 -c "$f" | wc -c) bytes gzip -9"
done
log "package: $TGZ"
echo "$TGZ"
