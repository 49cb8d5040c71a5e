#!/usr/bin/env bash
# The firmware test: installs qemu-system-arm and the thumbv7em target when
# missing, then builds the Cortex-M firmware and runs it under QEMU
# (tests/firmware/run.py says what it checks).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
cd "$REPO"

bash scripts/setup.sh qemu

PY="$REPO/tests/.venv/bin/python"
if ! "$PY" -c 'import safetensors, numpy, ml_dtypes, sklearn' 2>/dev/null; then
  if [ -n "${CI:-}" ]; then
    echo "firmware test: $PY with safetensors, numpy, ml_dtypes and scikit-learn is required under CI" >&2
    echo "  (create it with: scripts/setup.sh python)" >&2
    exit 1
  fi
  echo "firmware test SKIPPED: no Python venv at tests/.venv (run scripts/setup.sh python)" >&2
  exit 0
fi
exec "$PY" "$REPO/tests/firmware/run.py" "$@"
