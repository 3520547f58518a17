#!/usr/bin/env bash
# Runs one lit test file under Bazel.
#   lit_runner.sh TEST_FILE TOOL...
# Builds a one-file lit suite in $TEST_TMPDIR (so lit's config discovery does
# not depend on the runfiles layout), puts each TOOL's directory on PATH, runs
# LLVM 22's lit, and fails unless lit reports exactly this file as passed.
set -euo pipefail

test_file="$1"
shift

tool_path=""
for tool in "$@"; do
  dir="$(cd "$(dirname "$tool")" && pwd)"
  tool_path="${tool_path:+$tool_path:}$dir"
done

suite="${TEST_TMPDIR:-$(mktemp -d)}/lit-suite"
rm -rf "$suite"
mkdir -p "$suite/out"
cp "$test_file" "$suite/"
name="$(basename "$test_file")"

cat > "$suite/lit.cfg.py" <<PY
import lit.formats
config.name = "cuvil"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir", ".td", ".txt", ".onnx"]
config.test_source_root = "$suite"
config.test_exec_root = "$suite/out"
config.environment["PATH"] = "$tool_path:" + "/usr/bin:/bin"
config.environment["FILECHECK_OPTS"] = "--dump-input=fail --color=0"
# The workspace root in the runfiles, for tests that read shipped files.
config.substitutions.append(("%{cuvil_root}", "$PWD"))
# The ONNX test-model generator, run by Debian's python3 (with onnx).
config.substitutions.append(
    ("%{gen}", "/usr/bin/python3 $PWD/cuvil/importers/onnx/test/make_model.py"))
PY

lit="/usr/lib/llvm-22/bin/lit"
set +e
output="$(/usr/bin/python3 "$lit" -v "$suite/$name" 2>&1)"
status=$?
set -e
echo "$output"

if [[ $status -ne 0 ]]; then
  echo "lit_runner: $test_file FAILED (lit exit status $status)" >&2
  exit 1
fi
# The guard against silent skips: lit must have run this file and passed it.
if ! grep -Eq "^PASS: cuvil :: $name " <<<"$output"; then
  echo "lit_runner: lit did not run $test_file (unsupported, excluded or" \
       "not discovered); every lit file must run" >&2
  exit 1
fi
