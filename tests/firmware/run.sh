#!/usr/bin/env bash
# The firmware test: installs what it needs first (qemu-system-arm, the
# thumbv7em target, the Python venv tests/.venv with numpy, scikit-learn,
# ml_dtypes and safetensors), then builds the Cortex-M firmware and runs it
# under QEMU (tests/firmware/run.py says what it checks). Nothing is skipped:
# a set-up step that fails fails the test.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
cd "$REPO"

bash scripts/setup.sh qemu python

PY="$REPO/tests/.venv/bin/python"
if ! "$PY" -c 'import safetensors, numpy, ml_dtypes, sklearn'; then
  echo "firmware test: $PY lacks safetensors, numpy, ml_dtypes or scikit-learn after scripts/setup.sh python" >&2
  exit 1
fi
exec "$PY" "$REPO/tests/firmware/run.py" "$@"
