#!/usr/bin/env bash
# Generates the ONNX backend node tests offline (Debian's python3-onnx) and
# runs them through cuvilc; fails on any crash or a pass rate under 90% of
# the cases whose ops Cuvil supports. The per-op report is kept as a test
# output (bazel-testlogs/.../test.outputs/onnx_node_report.md).
#   conformance_test.sh CUVILC GENERATE_PY RUN_PY PER_OP
# PER_OP > 0 runs at most that many cases of each op; 0 runs them all.
set -euo pipefail
cuvilc="$(realpath "$1")" generate="$(realpath "$2")" runner="$(realpath "$3")"
per_op="${4:-0}"
dir="${TEST_TMPDIR:-$(mktemp -d)}/onnx-node-tests"
rm -rf "$dir"
/usr/bin/python3 "$generate" "$dir" > "$dir.log" 2>&1 || { cat "$dir.log"; exit 1; }
report="${TEST_UNDECLARED_OUTPUTS_DIR:-$dir}/onnx_node_report.md"
exec /usr/bin/python3 "$runner" "$cuvilc" "$dir/node" --report "$report" \
  --min-pass-rate 0.90 --per-op "$per_op"
