#!/usr/bin/env bash
# GPU check (scripts/gpu_check.py, docs/gpu.md): a 5-step GRPO run with plain TRL, unsloth and
# vLLM on this machine's CUDA GPU, timed into results/gpu_check.json. Run from anywhere;
# it uses the repository's .venv (or $PYTHON) and passes its arguments on (--steps, --variants).
# Without a CUDA device it prints "gpu_check: no CUDA device here" and exits 2.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-$root/.venv/bin/python}"
if [ ! -x "$python" ]; then
  echo "gpu_check: no Python at $python (make setup, or set PYTHON)" >&2
  exit 1
fi
exec "$python" "$root/scripts/gpu_check.py" "$@"
