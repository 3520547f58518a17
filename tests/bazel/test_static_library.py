"""cuvilc --emit=static and --symbol-prefix: models linked into a program.

Two models compiled as static libraries under their own names link into one
C program (examples/bazel_consumer/two_models.c, the program the Bazel rule
builds) and compute what a numpy reference of their ONNX weights computes;
the archive's only global symbols are the prefixed ABI; without prefixes the
linker refuses the second model; the same inputs give the same bytes; and
the options' misuses are errors that say what to do.
"""

import ctypes
import pathlib
import re
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import model_reference  # noqa: E402

ROOT = HERE.parents[1]
CUVILC = ROOT / "bazel-bin" / "tools" / "cuvilc"
CONSUMER = ROOT / "examples" / "bazel_consumer"
LLVM = "/usr/lib/llvm-22/bin"
ABI = ["status_message", "model_metadata", "model_num_inputs",
       "model_num_outputs", "model_workspace_size", "model_run",
       "context_max_threads", "context_create", "context_run", "context_error",
       "context_destroy"]


def cuvilc(*args, cwd=None, env=None):
    return subprocess.run([str(CUVILC), "--quiet", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, env=env)


def compile_model(name, out, *flags, prefix=None):
    prefix = name if prefix is None else prefix
    args = [model_reference.MODELS / f"{name}.onnx", "--emit=static",
            "--cpu=x86-64-v3", "--max-batch=8", f"-o={out}", *flags]
    if prefix:
        args.append(f"--symbol-prefix={prefix}")
    result = cuvilc(*args)
    assert result.returncode == 0, result.stderr
    return out


def defined_globals(path, dynamic=False):
    args = [f"{LLVM}/llvm-nm", "-g", "--defined-only"] + (["-D"] if dynamic else []) + [str(path)]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    return sorted(line.split()[-1] for line in out.splitlines()
                  if len(line.split()) == 3)


@pytest.fixture(scope="module")
def archives(tmp_path_factory):
    folder = tmp_path_factory.mktemp("static")
    return {name: compile_model(name, folder / f"{name}.a")
            for name in ("classifier", "scorer")}


def test_two_models_in_one_program(archives, tmp_path):
    program = tmp_path / "two_models"
    subprocess.run(["cc", "-std=c11", "-Wall", "-Werror", "-I", str(tmp_path.parent),
                    f"-I{archives['classifier'].parent}",
                    str(CONSUMER / "two_models.c"), str(archives["classifier"]),
                    str(archives["scorer"]), "-lm", "-lpthread", "-o", str(program)],
                   check=True)
    out = subprocess.run([str(program)], capture_output=True, text=True, check=True).stdout
    model_reference.check_two_models(out)
    # Only the prefixed ABI is in the program; no model's internals leak.
    symbols = defined_globals(program)
    assert "classifier_model_run" in symbols and "scorer_model_run" in symbols
    assert not [s for s in symbols if s.startswith("cuvil_")]


def test_archive_exports_only_the_prefixed_abi(archives):
    assert defined_globals(archives["scorer"]) == sorted(f"scorer_{f}" for f in ABI)
    undefined = subprocess.run([f"{LLVM}/llvm-nm", "-u", str(archives["scorer"])], capture_output=True,
                               text=True, check=True).stdout.split()
    assert not [s for s in undefined if "cuvil" in s or s.startswith("scorer")]


def test_header_names_the_model(archives):
    header = archives["scorer"].with_suffix(".h").read_text()
    assert "int scorer_model_run(int64_t batch" in header
    assert "typedef struct scorer_context scorer_context;" in header
    assert "#define SCORER_MODEL_MAX_BATCH 8" in header
    assert not re.search(r"\bcuvil_(model|context)_|\bCUVIL_MODEL_", header)


def test_unprefixed_models_clash(tmp_path):
    # Why the prefix: two models with the default names cannot both link.
    first = compile_model("classifier", tmp_path / "a.a", prefix="")
    second = compile_model("scorer", tmp_path / "b.a", prefix="")
    (tmp_path / "main.c").write_text("int cuvil_model_num_inputs(void);\n"
                                     "int main(void) { return cuvil_model_num_inputs() - 1; }\n")
    result = subprocess.run(["cc", str(tmp_path / "main.c"), "-Wl,--whole-archive", str(first),
                             str(second), "-Wl,--no-whole-archive", "-lm", "-o",
                             str(tmp_path / "main")], capture_output=True, text=True)
    assert result.returncode != 0
    assert "multiple definition of `cuvil_model_run'" in result.stderr


def test_prefixed_shared_object(tmp_path):
    so = tmp_path / "net.so"
    result = cuvilc(model_reference.MODELS / "classifier.onnx", "--symbol-prefix=net",
                    "--max-batch=4", f"-o={so}")
    assert result.returncode == 0, result.stderr
    assert defined_globals(so, dynamic=True) == sorted(f"net_{f}" for f in ABI)
    library = ctypes.CDLL(str(so))
    library.net_model_num_inputs.restype = ctypes.c_int
    assert library.net_model_num_inputs() == 1
    assert "net_model_run" in (tmp_path / "net.h").read_text()


def test_aarch64_static_library(tmp_path):
    archive = tmp_path / "scorer.a"
    result = cuvilc(model_reference.MODELS / "scorer.onnx", "--emit=static",
                    "--target=aarch64-linux-gnu", "--cpu=cortex-a72", "--symbol-prefix=scorer",
                    f"-o={archive}")
    assert result.returncode == 0, result.stderr
    header = subprocess.run([f"{LLVM}/llvm-readelf", "-h", str(archive)], capture_output=True,
                            text=True, check=True).stdout
    assert "AArch64" in header
    assert defined_globals(archive) == sorted(f"scorer_{f}" for f in ABI)


@pytest.mark.parametrize("emit,suffixes", [("static", [".a", ".h"]), ("so", [".so", ".h"])])
def test_same_inputs_same_bytes(tmp_path, emit, suffixes):
    outputs = []
    for run in ("first", "second"):
        folder = tmp_path / run
        (folder / "tmp").mkdir(parents=True)
        result = cuvilc(model_reference.MODELS / "classifier.onnx", f"--emit={emit}",
                        "--cpu=x86-64-v3", "--symbol-prefix=classifier", "-o=model" + suffixes[0],
                        cwd=folder, env={"TMPDIR": str(folder / "tmp"), "PATH": "/usr/bin:/bin"})
        assert result.returncode == 0, result.stderr
        outputs.append([(folder / f"model{s}").read_bytes() for s in suffixes])
    assert outputs[0] == outputs[1]


@pytest.mark.parametrize("args,message", [
    (["--emit=static", "--symbol-prefix=2net"], "--symbol-prefix must be a C identifier"),
    (["--emit=static", "--symbol-prefix=net_"], "does not end in '_'"),
    (["--emit=static", "--symbol-prefix=a;b"], "not 'a;b'"),
    (["--emit=c", "--symbol-prefix=net"], "--symbol-prefix applies to --emit=so, static and header"),
    (["--emit=static", "--external-weights"], "--external-weights applies to --emit=so"),
    (["--target=fpga", "--device=xczu9eg", "--symbol-prefix=net"],
     "name an FPGA design's top function with --project"),
])
def test_errors(tmp_path, args, message):
    out = tmp_path / "out.a"
    result = cuvilc(model_reference.MODELS / "classifier.onnx", f"-o={out}", *args)
    assert result.returncode != 0
    assert message in result.stderr, result.stderr
    assert not list(tmp_path.iterdir())  # nothing written
