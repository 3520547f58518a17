#!/usr/bin/env bash
# Loads the pybind11 smoke extension into Debian's /usr/bin/python3.
set -euo pipefail
dir="$(cd "$(dirname "$1")" && pwd)"
/usr/bin/python3 - "$dir" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import _pybind_smoke as m
assert m.add(2, 3) == 5, m.add(2, 3)
try:
    m.fail()
except ValueError as e:
    assert str(e) == "bad input", e
else:
    raise AssertionError("C++ exception did not become ValueError")
print("pybind11 extension OK")
PY
