"""examples/bazel_consumer, built the way a user's repository builds Cuvil:
a workspace of its own that reaches Cuvil through local_repository, from a
clean output base. It compiles two ONNX models at build time with the
cuvil_model rule and links both into one C program (and one as a shared
object into another), links Cuvil's IR and passes into a C++ program, and
builds @cuvil//tools:cuvilc and @cuvil//python:wheel. A model cuvilc
refuses fails the build with cuvilc's message; a private Cuvil target is
not visible to it.

Building all that compiles Cuvil a second time (in a consumer its sources
have other paths, so no cache of Cuvil's own build serves it): about 10
minutes on 2 cores, too much for every CI run. By default the consumer is
analyzed (its WORKSPACE, the rule, Cuvil's public targets and their
visibility, what depends on cuvilc); CUVIL_SLOW_TESTS=1, which scripts/bench
sets, builds and runs everything.
"""

import os
import pathlib
import subprocess
import sys
import zipfile

import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import model_reference  # noqa: E402
from bazel_workspace import Workspace  # noqa: E402

ROOT = HERE.parents[1]
CONSUMER = ROOT / "examples" / "bazel_consumer"
TARGETS = ["//...", "@cuvil//tools:cuvilc", "@cuvil//tools:cuvil-opt", "@cuvil//python:wheel"]
# Cuvil unoptimized: what is tested is the wiring. In a consumer Cuvil's
# sources have other paths (external/cuvil/...), so no cache of Cuvil's own
# build serves them, and a cold CI would compile the compiler twice at -O2.
FLAGS = ["--copt=-O0", "--copt=-U_FORTIFY_SOURCE"]
# Building Cuvil in a consumer takes ~10 min: the root conftest skips slow
# tests unless CUVIL_SLOW_TESTS=1 (scripts/bench).
FULL = os.environ.get("CUVIL_SLOW_TESTS") == "1"
full_build = pytest.mark.slow


@pytest.fixture(scope="module")
def consumer(tmp_path_factory):
    workspace = Workspace(CONSUMER, tmp_path_factory.mktemp("consumer") / "output_base",
                          flags=FLAGS)
    workspace.run("build", *([] if FULL else ["--nobuild"]), *TARGETS)
    yield workspace, workspace.bin()
    workspace.shutdown()


def test_models_are_compiled_by_cuvils_own_cuvilc(consumer):
    # Analysis: both models and the shared one are built by the rule's
    # action with @cuvil//tools:cuvilc, and the C++ tool links Cuvil's
    # public libraries.
    workspace, _ = consumer
    deps = workspace.run("cquery", "deps(//:two_models) + deps(//:shared_model)",
                         "--output=label").stdout
    assert "@cuvil//tools:cuvilc " in deps
    assert "//:classifier " in deps and "//:scorer " in deps
    tool = workspace.run("cquery", "deps(//:ir_tool)", "--output=label").stdout
    assert "@cuvil//cuvil/passes:passes " in tool


def run(path, *args):
    return subprocess.run([str(path), *map(str, args)], capture_output=True, text=True)


@full_build
def test_two_models_in_one_program(consumer):
    _, bin_dir = consumer
    result = run(bin_dir / "two_models")
    assert result.returncode == 0, result.stderr
    model_reference.check_two_models(result.stdout)


@full_build
def test_shared_model(consumer):
    _, bin_dir = consumer
    result = run(bin_dir / "shared_model")
    assert result.returncode == 0, result.stderr
    np.testing.assert_allclose(
        model_reference.parse_rows(result.stdout, "classifier_shared"),
        model_reference.classifier(np.array([[-2.0, -0.75, 0.5, 1.75]])), rtol=1e-5, atol=1e-7)
    needed = subprocess.run(["readelf", "-d", str(bin_dir / "shared_model")],
                            capture_output=True, text=True, check=True).stdout
    assert "classifier_shared.so" in needed


@full_build
def test_the_rule_output_is_what_cuvilc_writes(consumer, tmp_path):
    # Same inputs, same bytes: the action's library equals a second compile.
    _, bin_dir = consumer
    cuvilc = bin_dir / "external" / "cuvil" / "tools" / "cuvilc"
    result = run(cuvilc, CONSUMER / "models" / "scorer.onnx", "--quiet", "--emit=static",
                 f"-o={tmp_path / 'scorer.a'}", "--target=x86_64-linux-gnu", "--cpu=x86-64-v3",
                 "--symbol-prefix=scorer", "--threads-default=1", "--max-batch=8")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "scorer.a").read_bytes() == (bin_dir / "scorer.a").read_bytes()
    assert (tmp_path / "scorer.h").read_bytes() == (bin_dir / "scorer.h").read_bytes()


@full_build
def test_cuvil_libraries_in_a_program(consumer):
    _, bin_dir = consumer
    # examples/resnet_block.mlir: conv -> batch norm -> relu -> ...
    result = run(bin_dir / "ir_tool", ROOT / "examples" / "resnet_block.mlir",
                 "func.func(cuvil-fold-batch-norm)")
    assert result.returncode == 0, result.stderr
    assert "func.func @basic_block" in result.stdout
    assert "cuvil.conv2d" in result.stdout and "cuvil.batch_norm" not in result.stdout
    # The IR is checked: the bad model's error names its line.
    result = run(bin_dir / "ir_tool", CONSUMER / "broken" / "mismatch.mlir",
                 "func.func(cuvil-fold-batch-norm)")
    assert result.returncode == 1
    assert "mismatch.mlir:4:8: error: 'cuvil.matmul' op contracting dimensions differ" \
        in result.stderr, result.stderr


@full_build
def test_cuvil_tools_from_the_consumer(consumer):
    _, bin_dir = consumer
    result = run(bin_dir / "external" / "cuvil" / "tools" / "cuvilc", "--version")
    assert result.returncode == 0 and "cuvilc 0.1.0" in result.stdout
    wheels = list((bin_dir / "external" / "cuvil" / "python").glob("cuvil-*.whl"))
    assert len(wheels) == 1
    names = zipfile.ZipFile(wheels[0]).namelist()
    assert "cuvil/_C.so" in names and "cuvil/__init__.py" in names


@full_build
def test_a_model_cuvilc_refuses_fails_the_build(consumer):
    workspace, bin_dir = consumer
    result = workspace.run("build", "//broken:mismatch", check=False)
    assert result.returncode != 0
    assert "cuvilc: error:" in result.stderr
    assert "mismatch.mlir:4" in result.stderr, result.stderr[-3000:]
    assert not (bin_dir / "broken" / "mismatch.a").exists()


def test_private_targets_stay_private(consumer):
    workspace, _ = consumer
    # A package that reaches into Cuvil's internals is refused at analysis.
    result = workspace.run("build", "//visibility_probe:internal", check=False)
    assert result.returncode != 0
    assert "is not visible from target" in result.stderr, result.stderr[-3000:]
