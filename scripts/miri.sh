#!/usr/bin/env bash
# Runs the core's unit tests under Miri (nightly + the miri component; scripts/setup.sh nightly).
# Any undefined behaviour Miri detects fails the run.
#
# Usage: scripts/miri.sh [extra test-harness args, e.g. a test name filter]
#
# MIRIFLAGS (override to change): the strict-provenance model and host access
# (proptest reads the working directory for its failure files; PROPTEST_CASES keeps its
# property tests short under the interpreter). Not -Zmiri-symbolic-alignment-check: typed
# views check alignment at run time through bytemuck (an address test), which that mode
# reports as a false positive, as its documentation warns.
#
# MIRI_SKIP: names of tests to leave out (none by default).
set -euo pipefail
cd "$(dirname "$0")/.."
export MIRIFLAGS=${MIRIFLAGS:--Zmiri-strict-provenance -Zmiri-disable-isolation}
export PROPTEST_CASES=${PROPTEST_CASES:-8}
MIRI_SKIP=${MIRI_SKIP-}
skip=()
for t in $MIRI_SKIP; do skip+=(--skip "$t"); done
cargo +nightly miri setup >/dev/null 2>&1 || cargo +nightly miri setup
# The unit tests, default features: the no-alloc build that firmware uses.
cargo +nightly miri test -p safetensors-nano --lib -- "${skip[@]}" "$@"
