# safetensors-nano: `make test` runs every test, `make demo` serves the viewer.
# Both install what they need first (scripts/setup.sh, idempotent).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
CARGO ?= cargo
PY := tests/.venv/bin/python
INSPECT := target/release/examples/inspect

.PHONY: all setup test demo demo-build demo-inspect test-demo lint unit nostd interop firmware bench fuzz miri doc clean

all: test

setup:
	bash scripts/setup.sh rust python

## Every test: formatting, lints, unit/integration/doc tests, cross builds, interop.
test: setup lint unit doc nostd interop firmware test-demo
	@echo "make test: all parts passed"

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets --all-features -- -D warnings

unit:
	$(CARGO) test --workspace --all-features
	$(CARGO) test -p safetensors-nano --no-default-features --lib

doc:
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc -p safetensors-nano --no-deps --all-features

## The core links into bare-metal and wasm32 binaries with no allocator.
nostd:
	cd tests/nostd && $(CARGO) build --release -p nostd-link-thumb --target thumbv6m-none-eabi
	cd tests/nostd && $(CARGO) build --release -p nostd-link-thumb --target thumbv7em-none-eabihf
	cd tests/nostd && $(CARGO) build --release -p nostd-link-wasm --target wasm32-unknown-unknown
	$(CARGO) build -p safetensors-nano --no-default-features --target thumbv6m-none-eabi

## Files written by the Python reference read identically through `inspect`.
interop: $(INSPECT)
	$(PY) tests/python/check_inspect_interop.py $(INSPECT)

$(INSPECT): FORCE
	$(CARGO) build --release -p safetensors-nano --example inspect

FORCE:

## The Cortex-M firmware runs its model from flash under QEMU.
firmware:
	bash tests/firmware/run.sh

## The web viewer at http://localhost:8080: the page, the npm package and generated samples.
demo: demo-build
	node scripts/serve.mjs --root dist/demo --port 8080

## dist/demo/: web-demo/ + the built package (scripts/build-package.sh when stale) + samples.
demo-build:
	bash scripts/setup.sh web
	bash scripts/build-demo.sh

## The viewer in headless Chromium (screenshots and numbers in test-output/demo/).
test-demo: demo-build
	node --test tests/browser/*.test.mjs

## A sample file written by the reference, shown by `inspect`.
demo-inspect: setup $(INSPECT)
	$(PY) -c "import numpy as np; from safetensors.numpy import save_file; \
	  save_file({'embed.weight': np.arange(12, dtype=np.float32).reshape(3, 4), 'head.bias': np.ones(4, dtype=np.float16)}, \
	  'target/sample.safetensors', metadata={'format': 'np'})"
	$(INSPECT) target/sample.safetensors

bench:
	$(CARGO) bench -p safetensors-nano

clean:
	$(CARGO) clean
	cd tests/nostd && $(CARGO) clean
