"""The wheel: its metadata, and a fresh venv where it installs and works."""

import base64
import hashlib
import os
import re
import subprocess
import sys
import zipfile

import pytest


def test_wheel_name_and_metadata(wheel_path):
    name = os.path.basename(wheel_path)
    version = name.split("-")[1]
    assert name == f"cuvil-{version}-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(wheel_path) as wheel:
        names = wheel.namelist()
        dist_info = f"cuvil-{version}.dist-info"
        metadata = wheel.read(f"{dist_info}/METADATA").decode()
        assert "Name: cuvil" in metadata and f"Version: {version}" in metadata
        assert "Requires-Dist: numpy" in metadata
        wheel_file = wheel.read(f"{dist_info}/WHEEL").decode()
        assert "Root-Is-Purelib: false" in wheel_file
        assert "Tag: cp311-cp311-linux_x86_64" in wheel_file
        entry_points = wheel.read(f"{dist_info}/entry_points.txt").decode()
        assert "cuvilc = cuvil._cli:main" in entry_points
        assert "cuvil/_C.so" in names and "cuvil/__init__.py" in names
        # RECORD lists every other file with its sha256 and size.
        record = wheel.read(f"{dist_info}/RECORD").decode().splitlines()
        listed = {}
        for line in record:
            path, digest, size = line.rsplit(",", 2)
            listed[path] = (digest, size)
        assert set(listed) == set(names)
        for path, (digest, size) in listed.items():
            if path.endswith("RECORD"):
                assert digest == "" and size == ""
                continue
            data = wheel.read(path)
            expected = base64.urlsafe_b64encode(
                hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert digest == f"sha256={expected}", path
            assert int(size) == len(data), path


QUICKSTART = os.path.join(os.path.dirname(__file__), "..", "..", "examples",
                          "quickstart.py")


@pytest.mark.skipif(sys.executable != "/usr/bin/python3",
                    reason="the wheel is for Debian's /usr/bin/python3")
def test_fresh_venv_installs_and_runs_the_quickstart(wheel_path, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages",
                    "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    pip = ["/usr/bin/python3", "-m", "pip", "--python", python,
           "--disable-pip-version-check", "--no-input"]
    env = dict(os.environ, PIP_NO_INDEX="1")

    def pip_check():
        # Debian's own site-packages may already have unmet requirements
        # (pygobject without pycairo); the wheel must add none.
        result = subprocess.run(pip + ["check"], capture_output=True,
                                text=True, env=env)
        return set(result.stdout.splitlines())

    before = pip_check()
    subprocess.run(pip + ["install", "--no-deps", wheel_path], check=True,
                   env=env)
    after = pip_check()
    assert after == before, after - before
    assert not any("cuvil" in line for line in after), after
    work = tmp_path / "work"
    work.mkdir()
    # The README quick-start (examples/quickstart.py, which scripts/quickstart
    # runs), from an unrelated folder, with the installed package.
    run = subprocess.run([python, QUICKSTART], cwd=work, capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stderr
    error = re.search(r"max \|cuvil - torch\| = (\S+)", run.stdout)
    assert error and float(error.group(1)) < 1e-6, run.stdout
    assert "Cuvil (CompiledModule)" in run.stdout
    assert "aten::matmul fails on the input signature" in run.stdout
    where = subprocess.run([python, "-c", "import cuvil; print(cuvil.__file__)"],
                           cwd=work, capture_output=True, text=True)
    assert where.stdout.startswith(str(venv)), where  # not a source tree
    # The console entry point runs the C++ command line.
    cuvilc = str(venv / "bin" / "cuvilc")
    version = subprocess.run([cuvilc, "--version"], capture_output=True,
                             text=True)
    assert version.returncode == 0 and version.stdout.startswith("cuvilc ")
    examples = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
    compiled = subprocess.run(
        [cuvilc, "--quiet", os.path.join(examples, "classifier.mlir"), "-o",
         str(work / "example.so")], capture_output=True, text=True)
    assert compiled.returncode == 0, compiled.stderr
    assert (work / "example.so").exists()
    bad = subprocess.run([cuvilc, str(work / "missing.onnx")],
                         capture_output=True, text=True)
    assert bad.returncode != 0 and "missing.onnx" in bad.stderr
