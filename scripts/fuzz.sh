#!/usr/bin/env bash
# Runs the cargo-fuzz targets in fuzz/ (nightly toolchain, cargo-fuzz; see scripts/setup.sh nightly).
#
# Usage:
#   scripts/fuzz.sh smoke                      each target for $SMOKE_SECONDS (15) seconds
#   scripts/fuzz.sh full [RUNS]                each target until RUNS executions (default 10,000,000)
#   scripts/fuzz.sh run TARGET [--seconds N | --runs M]
#   scripts/fuzz.sh build                      build all targets
#   scripts/fuzz.sh test                       the fuzz crate's own tests (smoke and full run them too)
#   scripts/fuzz.sh list                       list the targets
#
# Targets are built with optimisations, debug assertions and overflow checks, without a
# sanitizer by default (the core forbids unsafe code; FUZZ_SANITIZER=address to change that).
# Corpora grow in fuzz/corpus/<target> (gitignored), seeded from fuzz/seeds/<target>;
# crashes land in fuzz/artifacts/<target>/, and each run's log in fuzz/artifacts/<target>.log.
# The summary line per target gives executions, speed and libFuzzer's coverage counters
# (cov: edges covered, ft: features). Exit status is non-zero on any crash, hang or
# disagreement.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"

TARGETS=(parse_touch json_tokens differential write_read)
SANITIZER=${FUZZ_SANITIZER:-none}
SMOKE_SECONDS=${SMOKE_SECONDS:-15}
MAX_LEN=${FUZZ_MAX_LEN:-16384}

# Targets that exist in this checkout (write_read needs the writer).
available() {
  local t
  for t in "${TARGETS[@]}"; do
    [ -f "fuzz_targets/$t.rs" ] && echo "$t"
  done
}

build() {
  local out
  out=$(cargo +nightly fuzz build -s "$SANITIZER" "$@" 2>&1) || { echo "$out" >&2; return 1; }
}

# The fuzz crate's unit tests: its committed inputs (dictionary, seeds) name every dtype.
unit_tests() {
  local out
  out=$(cargo +nightly test --quiet --lib 2>&1) || { echo "$out" >&2; return 1; }
}

# run TARGET EXTRA_LIBFUZZER_ARGS...
run() {
  local target=$1; shift
  mkdir -p "corpus/$target" "artifacts/$target"
  local log="artifacts/$target.log"
  local status=0
  cargo +nightly fuzz run -s "$SANITIZER" "$target" "corpus/$target" "seeds/$target" -- \
    -dict=safetensors.dict -max_len="$MAX_LEN" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="artifacts/$target/" "$@" >"$log" 2>&1 || status=$?
  local execs speed cov ft
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | awk '{print $2}')
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | awk '{print $2}')
  local corpus; corpus=$(find "corpus/$target" -type f | wc -l)
  printf '%-13s executions=%s exec/s=%s cov=%s ft=%s corpus=%s status=%s\n' \
    "$target" "${execs:-?}" "${speed:-?}" "${cov:-?}" "${ft:-?}" "$corpus" \
    "$([ "$status" -eq 0 ] && echo ok || echo "FAILED($status), see fuzz/$log")"
  if [ "$status" -ne 0 ]; then
    grep -E 'panicked|disagreement|ERROR|Test unit written|SUMMARY' "$log" | head -20 >&2 || true
  fi
  return "$status"
}

mode=${1:-smoke}
case "$mode" in
  list) available ;;
  build) build ;;
  test) unit_tests ;;
  smoke)
    unit_tests
    build
    failed=0
    for t in $(available); do run "$t" -max_total_time="$SMOKE_SECONDS" || failed=1; done
    exit "$failed"
    ;;
  full)
    runs=${2:-10000000}
    unit_tests
    build
    failed=0
    for t in $(available); do run "$t" -runs="$runs" || failed=1; done
    exit "$failed"
    ;;
  run)
    target=${2:?target name}
    shift 2
    args=()
    while [ $# -gt 0 ]; do
      case "$1" in
        --seconds) args+=(-max_total_time="$2"); shift 2 ;;
        --runs) args+=(-runs="$2"); shift 2 ;;
        *) args+=("$1"); shift ;;
      esac
    done
    build "$target"
    run "$target" "${args[@]}"
    ;;
  *) echo "usage: $0 smoke | full [RUNS] | run TARGET [--seconds N | --runs M] | build | test | list" >&2; exit 2 ;;
esac
