#!/usr/bin/env bash
# A fixed-length libFuzzer run over the committed seed corpus: fails on any
# crash, sanitizer report, leak or per-input timeout. New interesting inputs
# stay in the test's output directory (add good ones to corpus/).
#   fuzz_test.sh FUZZER SEED_CORPUS_DIR
set -euo pipefail
fuzzer="$(realpath "$1")" seeds="$(realpath "$2")"
work="${TEST_UNDECLARED_OUTPUTS_DIR:-$(mktemp -d)}/corpus"
mkdir -p "$work"
cd "${TEST_TMPDIR:-/tmp}"
exec "$fuzzer" "$work" "$seeds" -max_total_time="${CUVIL_FUZZ_SECONDS:-30}" \
  -timeout=20 -rss_limit_mb=4096 -print_final_stats=1
