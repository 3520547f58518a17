#!/usr/bin/env bash
# Generates the ONNX backend node and simple-model tests offline (Debian's
# python3-onnx) and runs them through cuvilc; fails on any crash or a pass
# rate under 90% of the cases whose ops Cuvil supports. The per-op reports
# are kept as test outputs (bazel-testlogs/.../test.outputs/
# onnx_node_report.md, onnx_simple_report.md).
#   conformance_test.sh CUVILC GENERATE_PY RUN_PY PER_OP
# PER_OP > 0 runs at most that many cases of each op; 0 runs them all.
set -euo pipefail
cuvilc="$(realpath "$1")" generate="$(realpath "$2")" runner="$(realpath "$3")"
per_op="${4:-0}"
dir="${TEST_TMPDIR:-$(mktemp -d)}/onnx-node-tests"
rm -rf "$dir"
/usr/bin/python3 "$generate" "$dir" > "$dir.log" 2>&1 || { cat "$dir.log"; exit 1; }
out="${TEST_UNDECLARED_OUTPUTS_DIR:-$dir}"
# The backend's "simple" model set too: the only other one onnx 1.12
# generates offline ("real" downloads its models; the pytorch-converted and
# pytorch-operator sets are stored files Debian's python3-onnx leaves out).
/usr/bin/python3 "$runner" "$cuvilc" "$dir/simple" \
  --report "$out/onnx_simple_report.md" --title "ONNX backend simple model tests" \
  --min-pass-rate 0.90 > "$dir.simple.log" || { cat "$dir.simple.log"; exit 1; }
exec /usr/bin/python3 "$runner" "$cuvilc" "$dir/node" \
  --report "$out/onnx_node_report.md" --min-pass-rate 0.90 --per-op "$per_op"
