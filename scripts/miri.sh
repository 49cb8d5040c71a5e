#!/usr/bin/env bash
# Runs the core's unit tests under Miri (nightly + the miri component; scripts/setup.sh nightly).
# Any undefined behaviour Miri detects fails the run.
#
# Usage: scripts/miri.sh [extra cargo test args, e.g. a test name filter]
# MIRIFLAGS can be overridden; the default keeps the run short while still checking
# every access: symbolic alignment checks (alignment as the program may rely on it,
# not by accident of the allocator), and a strict-provenance model.
set -euo pipefail
cd "$(dirname "$0")/.."
export MIRIFLAGS=${MIRIFLAGS:--Zmiri-symbolic-alignment-check -Zmiri-strict-provenance}
cargo +nightly miri setup >/dev/null 2>&1 || cargo +nightly miri setup
# The unit tests (default features: the no-alloc build that firmware uses).
cargo +nightly miri test -p safetensors-nano --lib "$@"
