"""Tests of the cuvil Python package, run against the built wheel.

The package under test is the wheel `bazel build //python:wheel` makes,
unpacked: what users install. scripts/test builds it and passes its path in
CUVIL_WHEEL; run alone, pytest builds it here.
"""

import atexit
import glob
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import zipfile

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _wheel():
    wheel = os.environ.get("CUVIL_WHEEL")
    if wheel:
        return wheel
    subprocess.run(["bazel", "build", "//python:wheel"], cwd=ROOT, check=True)
    wheels = glob.glob(str(ROOT / "bazel-bin/python/cuvil-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


WHEEL = _wheel()
_UNPACKED = tempfile.mkdtemp(prefix="cuvil-wheel-")
atexit.register(shutil.rmtree, _UNPACKED, True)
with zipfile.ZipFile(WHEEL) as archive:
    archive.extractall(_UNPACKED)
# zipfile drops permissions; the extension is loaded by dlopen, which does
# not need them, but keep the tree as pip would install it.
os.chmod(os.path.join(_UNPACKED, "cuvil", "_C.so"), 0o755)
sys.path.insert(0, _UNPACKED)
# For subprocesses that import cuvil the same way.
PACKAGE_DIR = _UNPACKED

import pytest  # noqa: E402


@pytest.fixture(scope="session")
def wheel_path():
    """The wheel under test."""
    return WHEEL


@pytest.fixture(scope="session")
def package_dir():
    """The folder holding the unpacked `cuvil` package (for subprocesses)."""
    return PACKAGE_DIR
