# safetensors-nano: `make test` runs every test, `make demo` serves the viewer.
# Both install what they need first (scripts/setup.sh, idempotent).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
CARGO ?= cargo
PY := tests/.venv/bin/python
CLI := target/release/safetensors-nano
# The inspect command the JS boundary fuzzing compares fromBytes with (its words; it is
# run as `$(INSPECT_JSON) --json --no-hash FILE...`, one JSON line per file), and the CLI
# whose `verify --json` the shard-check comparison runs (tests/js/node/shardcheck-agree.test.js).
INSPECT_JSON ?= $(CURDIR)/$(CLI) inspect
BOUNDARY_ENV = INSPECT_JSON="$(INSPECT_JSON)" VERIFY_CLI="$(CURDIR)/$(CLI)"

.PHONY: all setup test demo demo-build demo-inspect test-demo lint unit nostd interop firmware package test-js test-bundlers test-snippets publish-dry-run bench bench-wasm bench-cli fuzz fuzz-js fuzz-smoke miri bounds verdicts-wasm hardening doc clean

all: test

setup:
	bash scripts/setup.sh rust python web cli browsers nginx

## Every test: formatting, lints, unit/integration/doc tests, cross builds, interop.
test: setup lint unit doc nostd interop firmware test-js test-bundlers test-snippets publish-dry-run test-demo hardening
	@echo "make test: all parts passed"

lint:
	$(CARGO) fmt --all -- --check
	for d in firmware fuzz tests/nostd tests/snippets; do (cd $$d && $(CARGO) fmt --all -- --check); done
	$(CARGO) clippy --workspace --all-targets --all-features -- -D warnings
	for part in reader writer; do $(CARGO) clippy -p safetensors-nano-wasm --all-targets --no-default-features --features $$part -- -D warnings; done
	# The reader as the package builds it: wasm32 with SIMD128 (core/src/decode/simd/wasm.rs).
	RUSTFLAGS="$${RUSTFLAGS:-} -C target-feature=+simd128" $(CARGO) clippy -p safetensors-nano-wasm --target wasm32-unknown-unknown --no-default-features --features reader -- -D warnings
	# No import circle in core/src, at most 12 files at its top, the size mode chosen in mode.rs.
	python3 scripts/check-core-layout.py core/src
	# JavaScript (wasm/js, web-demo, tests, scripts): Biome's format and lint, check mode (biome.json).
	bash scripts/setup.sh web
	tests/js/node_modules/.bin/biome ci --error-on-warnings .
	# The hand-written .d.ts of the npm package against its code: values, class members, parameter counts, visible returns.
	node scripts/check-declarations.mjs

# (The wasm crate is a cdylib: linking it for the host with the core's defmt
# feature on would export defmt's JSON-named symbols, so features go per crate.)
unit:
	$(CARGO) test --workspace
	$(CARGO) test -p safetensors-nano --all-features
	$(CARGO) test -p safetensors-nano --no-default-features --lib
	# The whole suite again through the code bare metal uses (core/build.rs: cfg(small)).
	RUSTFLAGS="--cfg safetensors_nano_small" CARGO_TARGET_DIR=target/small $(CARGO) test -p safetensors-nano --all-features

doc:
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc -p safetensors-nano --no-deps --all-features
	# The READMEs the registries show: no relative or intra-doc link, no hidden doctest line,
	# every docs.rs link a page and anchor that cargo doc made.
	python3 scripts/check-readme-links.py target/doc core/README.md wasm/README.md

## The core links into bare-metal and wasm32 binaries with no allocator.
nostd:
	cd tests/nostd && $(CARGO) build --release -p nostd-link-thumb --target thumbv6m-none-eabi
	cd tests/nostd && $(CARGO) build --release -p nostd-link-thumb --target thumbv7em-none-eabihf
	cd tests/nostd && $(CARGO) build --release -p nostd-link-wasm --target wasm32-unknown-unknown
	$(CARGO) build -p safetensors-nano --no-default-features --target thumbv6m-none-eabi

## Files written by the Python reference read identically through `safetensors-nano inspect`.
interop: $(CLI)
	$(PY) tests/python/check_inspect_interop.py $(CLI) inspect

$(CLI): FORCE
	$(CARGO) build --release -p safetensors-nano-cli

FORCE:

## The Cortex-M firmware runs its model from flash under QEMU.
firmware:
	bash tests/firmware/run.sh

## The npm package: wasm-pack build, wasm-opt from npm's binaryen, npm pack into dist/.
package:
	bash scripts/setup.sh web
	bash scripts/build-package.sh

## Node tests, and browser tests in Chromium, Firefox ESR and WebKitGTK (ENGINES=firefox for
## fewer), against the packed tarball, installed as a user would.
test-js: package $(CLI)
	bash scripts/setup.sh python browsers nginx
	$(BOUNDARY_ENV) node tests/js/run.mjs test

## The package through Vite, webpack, esbuild, Rollup and a plain page in headless Chromium,
## and in Node 20 and 22 by import and require() (about 10 s after the package).
test-bundlers: package
	node tests/bundlers/run.mjs

## Every code block of the READMEs, as printed (tests/snippets): the Rust ones as doctests,
## the JS ones in Node against the tarball and through tsc --strict, the shell ones run
## (or listed with why not); a block no test covers fails.
test-snippets: package
	bash scripts/setup.sh rust python qemu
	cd tests/snippets && $(CARGO) test
	node tests/snippets/snippets.mjs all

## What `cargo publish` (the core and the CLI) and `npm publish` would upload, checked without
## uploading: one version everywhere, the workspace's.
## (Under CI, as in .ci/run, the core's files must be committed; elsewhere uncommitted
## changes are allowed, so that a working tree can run `make test`.)
publish-dry-run: package $(CLI)
	python3 scripts/publish-dry-run.py dist/safetensors-nano-*.tgz $(CLI) $(if $(CI),,--allow-dirty)

## The web viewer at http://localhost:8080: the page, the npm package and generated samples.
demo: demo-build
	node scripts/serve.mjs --root dist/demo --port 8080

## dist/demo/: web-demo/ + the built package (scripts/build-package.sh when stale) + samples.
demo-build:
	bash scripts/setup.sh web python
	bash scripts/build-demo.sh

## The viewer in headless Chromium, and its main paths in Firefox ESR and WebKitGTK too
## (engines.test.mjs; screenshots and numbers in test-output/demo/).
test-demo: demo-build
	bash scripts/setup.sh browsers
	node --test tests/viewer/*.test.mjs

## A sample file written by the reference, shown by `inspect`.
demo-inspect: setup $(CLI)
	$(PY) -c "import numpy as np; from safetensors.numpy import save_file; \
	  save_file({'embed.weight': np.arange(12, dtype=np.float32).reshape(3, 4), 'head.bias': np.ones(4, dtype=np.float16)}, \
	  'target/sample.safetensors', metadata={'format': 'np'})"
	$(CLI) inspect target/sample.safetensors

## Parsing (fastest of interleaved batches, under Cargo's default profile and fat LTO + one
## codegen unit, then both side by side), allocations counted apart, writing, and decoding
## beside half and numpy + ml_dtypes.
bench:
	$(CARGO) bench -p safetensors-nano --features alloc --bench parse_allocs
	$(CARGO) bench -p safetensors-nano --features alloc --bench parse --profile bench-lto
	$(CARGO) bench -p safetensors-nano --features alloc --bench parse
	$(CARGO) bench -p safetensors-nano --bench write
	$(CARGO) bench -p safetensors-nano --features std --bench decode

## The CLI's `edit --convert F32:BF16` on a sparse 20 GB F32 file against `cp` of it: throughput
## ratio and peak RSS (SIZE=4G for a smaller file; needs about SIZE of free disk).
bench-cli:
	bash scripts/setup.sh cli
	bash scripts/bench-cli.sh

## The npm package against the common JS approach, and toFloat32 against a JS loop;
## the streaming writer (1 GiB F32 → BF16) against reading the same Blob; sharded opens and
## whole-model reads; WebGPU uploads with GPU decode against a plain writeBuffer (Chromium).
bench-wasm: package
	node tests/js/run.mjs bench

## The viewer opening a DeepSeek-like 163-shard index by ?url= (30 ms per response) in Chromium,
## over HTTP/1.1 and over HTTP/2 (TLS, a throwaway certificate) side by side: fastest and median
## time to list all tensors against each goal (1.5 s, 0.5 s), the floor of each, requests and
## bytes, the CPU an open costs, the same requests from a bare page, and where the fastest open
## spent its time.
.PHONY: bench-demo
bench-demo: demo-build
	node tests/viewer/bench-viewer.mjs --runs 9 --profile

## Hardening (issue 7). Fuzzing and Miri need the nightly toolchain (scripts/setup.sh nightly).
## Each fuzz target to 10 million executions (corpora in fuzz/corpus, crashes in fuzz/artifacts).
fuzz: fuzz-js
	bash scripts/setup.sh nightly
	bash scripts/fuzz.sh full

## The packed package's fromBytes against the native inspect --json: the fuzz seeds, the
## adversarial suite and 1,000,000 generated files (tests/js/lib/boundary.js; a few minutes).
fuzz-js: package $(CLI)
	$(BOUNDARY_ENV) node tests/js/run.mjs fuzz 1000000

## Every fuzz target for 15 s (about a minute in all, after the first build).
fuzz-smoke:
	bash scripts/setup.sh nightly
	bash scripts/fuzz.sh smoke

## The core's unit tests under Miri.
miri:
	bash scripts/setup.sh nightly
	bash scripts/miri.sh

## Hostile sizes: linear time, 64 KiB stack, no allocation (optimised build, ~10 s).
bounds:
	$(CARGO) test --release -p safetensors-nano --test bounds

## The adversarial suite (tests/adversarial) as wasm32 in Node: the same verdicts as natively.
## (wasm-bindgen-test-runner comes with wasm-bindgen-cli: scripts/setup.sh web.)
verdicts-wasm:
	bash scripts/setup.sh rust
	CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
	  $(CARGO) test -p safetensors-nano --target wasm32-unknown-unknown --test wasm_verdicts

hardening: bounds verdicts-wasm fuzz-smoke miri

clean:
	$(CARGO) clean
	cd tests/nostd && $(CARGO) clean
