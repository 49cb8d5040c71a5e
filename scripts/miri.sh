#!/usr/bin/env bash
# Runs the core's unit tests under Miri (nightly + the miri component; scripts/setup.sh nightly).
# Any undefined behaviour Miri detects fails the run.
#
# Usage: scripts/miri.sh [extra test-harness args, e.g. a test name filter]
#
# MIRIFLAGS (override to change): symbolic alignment checks (alignment as the program may
# rely on it, not by accident of the allocator), the strict-provenance model, and host access
# (proptest reads the working directory for its failure files; PROPTEST_CASES keeps its
# property tests short under the interpreter).
#
# MIRI_SKIP: names of tests to leave out (none by default).
set -euo pipefail
cd "$(dirname "$0")/.."
export MIRIFLAGS=${MIRIFLAGS:--Zmiri-symbolic-alignment-check -Zmiri-strict-provenance -Zmiri-disable-isolation}
export PROPTEST_CASES=${PROPTEST_CASES:-8}
MIRI_SKIP=${MIRI_SKIP-}
skip=()
for t in $MIRI_SKIP; do skip+=(--skip "$t"); done
cargo +nightly miri setup >/dev/null 2>&1 || cargo +nightly miri setup
# The unit tests, default features: the no-alloc build that firmware uses.
cargo +nightly miri test -p safetensors-nano --lib -- "${skip[@]}" "$@"
