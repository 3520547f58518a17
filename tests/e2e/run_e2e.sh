#!/usr/bin/env bash
# Runs cuvil_e2e.py under Debian's python3 (torch, onnx, numpy).
set -euo pipefail
script="$1"
shift
exec /usr/bin/python3 "$script" "$@"
