"""Same sources, same bytes: the wheel's native extensions rebuilt from
scratch in a second output base (no cache of any kind) equal the ones this
checkout built, and the wheel's own action, run again on the same files,
writes the same wheel. (The full wheel, _C.so included, rebuilt from scratch
takes as long as Cuvil's whole build: scripts/check-reproducible.)
"""

import json
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bazel_workspace import Workspace  # noqa: E402

ROOT = HERE.parents[1]
SMALL_EXTENSIONS = ["//python:_lean.so", "//python:_artifact.so"]


def test_native_extensions_rebuild_to_the_same_bytes(tmp_path):
    subprocess.run(["bazel", "build", *SMALL_EXTENSIONS], cwd=ROOT, check=True,
                   capture_output=True)
    workspace = Workspace(ROOT, tmp_path / "output_base")
    try:
        result = workspace.run("build", *SMALL_EXTENSIONS, cached=False)
        rebuilt = workspace.bin()
    finally:
        workspace.shutdown()
    assert "remote cache hit" not in result.stderr  # really rebuilt
    for target in SMALL_EXTENSIONS:
        name = target.split(":")[1]
        assert (rebuilt / "python" / name).read_bytes() == \
            (ROOT / "bazel-bin" / "python" / name).read_bytes(), name


def test_wheel_action_writes_the_same_bytes_again(tmp_path):
    subprocess.run(["bazel", "build", "//python:wheel"], cwd=ROOT, check=True,
                   capture_output=True)
    query = subprocess.run(["bazel", "aquery", "--output=jsonproto",
                            "mnemonic(PyWheel, //python:wheel)"], cwd=ROOT, check=True,
                           capture_output=True, text=True)
    (action,) = json.loads(query.stdout)["actions"]
    argv = action["arguments"]
    output = argv.index("--output")
    built = ROOT / "bazel-bin" / "python" / pathlib.Path(argv[output + 1]).name
    argv[output + 1] = str(tmp_path / "again.whl")
    execroot = subprocess.run(["bazel", "info", "execution_root"], cwd=ROOT, check=True,
                              capture_output=True, text=True).stdout.strip()
    subprocess.run(argv, cwd=execroot, check=True)
    assert (tmp_path / "again.whl").read_bytes() == built.read_bytes()
