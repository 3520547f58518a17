"""cuvilc --target=mlu: the project folder, its plan in --emit=mlir-level2,
the generated sources built with the folder's own Makefile against the
emulator and run, and every user-facing error (nothing written then)."""

import json
import pathlib
import subprocess

import numpy as np
import pytest
import torch

ROOT = pathlib.Path(__file__).resolve().parents[2]
CUVILC = ROOT / "bazel-bin" / "tools" / "cuvilc"
CXX = "/usr/lib/llvm-22/bin/clang++"


def cuvilc(*args):
    assert CUVILC.exists(), "build //tools:cuvilc first (scripts/test does)"
    return subprocess.run([str(CUVILC), "--quiet", *map(str, args)],
                          capture_output=True, text=True)


def export(model, shape, path):
    torch.onnx.export(model.eval(), torch.randn(*shape), str(path),
                      input_names=["x"], output_names=["y"], opset_version=13)
    return path


def small_cnn():
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(),
        torch.nn.MaxPool2d(2), torch.nn.Conv2d(8, 16, 3, stride=2),
        torch.nn.Hardswish(), torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(), torch.nn.Linear(16, 4), torch.nn.Softmax(1))


def build_and_run(folder, tmp_path):
    """Builds `folder` with its Makefile against the emulator and runs
    small_cnn's input through run_model_emu: (input, output)."""
    build = subprocess.run(["make", "-s", "emulate", f"CXX={CXX}"],
                           cwd=folder, capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    torch.manual_seed(3)
    x = torch.randn(2, 3, 20, 20)
    x.numpy().tofile(tmp_path / "x.bin")
    run = subprocess.run([folder / "run_model_emu", folder / "weights.bin",
                          tmp_path / "x.bin", tmp_path / "y.bin"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return x, np.fromfile(tmp_path / "y.bin", np.float32).reshape(2, 4)


def test_folder_builds_and_runs(tmp_path):
    model = small_cnn()
    onnx_path = export(model, (2, 3, 20, 20), tmp_path / "cnn.onnx")
    folder = tmp_path / "cnn_mlu"
    result = cuvilc(onnx_path, "--target=mlu", "--device=mlu290", "-o", folder)
    assert result.returncode == 0, result.stderr
    report = json.loads((folder / "report.json").read_text())
    assert report["device"]["name"] == "mlu290"
    assert report["inputs"][0]["shape"] == [2, 3, 20, 20]
    text = (folder / "report.txt").read_text()
    assert "estimated" in text and "/0/Conv" in text
    kernels = (folder / "kernels.mlu").read_text()
    assert "__mlu_global__ void cuvil_layer0(" in kernels
    assert "<<<dim, type, queue>>>" in kernels
    assert "cnrtQueueCreate" in (folder / "host.cpp").read_text()
    x, y = build_and_run(folder, tmp_path)
    with torch.no_grad():
        expected = model(x).numpy()
    assert np.abs(y - expected).sum() / np.abs(expected).sum() <= 1e-5
    # A weights file of another size is refused, with the sizes.
    (tmp_path / "short.bin").write_bytes(b"\0" * 16)
    run = subprocess.run([folder / "run_model_emu", tmp_path / "short.bin",
                          tmp_path / "x.bin", tmp_path / "y.bin"],
                         capture_output=True, text=True)
    assert run.returncode == 1
    assert "holds 16 bytes; this model's weights.bin has" in run.stderr


def test_int8_folder_builds_and_runs(tmp_path):
    """--precision=int8 with --calibration: the products on the tensor unit
    (their weights in WRAM), built by the folder's Makefile and run; within
    int8's error of float32 PyTorch (test_mlu.py checks the fixed point
    exactly)."""
    model = small_cnn()
    onnx_path = export(model, (2, 3, 20, 20), tmp_path / "cnn.onnx")
    torch.manual_seed(2)
    np.savez(tmp_path / "cal.npz", x=torch.randn(16, 3, 20, 20).numpy())
    folder = tmp_path / "cnn_mlu"
    result = cuvilc(onnx_path, "--target=mlu", "--device=mlu270",
                    "--precision=int8", f"--calibration={tmp_path / 'cal.npz'}",
                    "-o", folder)
    assert result.returncode == 0, result.stderr
    report = json.loads((folder / "report.json").read_text())
    assert report["precision"] == "int8"
    functions = [layer["library_function"] for layer in report["layers"]]
    assert functions.count("conv2d_int8") == 2 and "gemm_int8" in functions
    assert "cuvil_wram_area" in (folder / "kernels.mlu").read_text()
    readme = (folder / "README.md").read_text()
    assert "precision int8" in readme and "## int8" in readme
    x, y = build_and_run(folder, tmp_path)
    with torch.no_grad():
        expected = model(x).numpy()
    assert np.abs(y - expected).sum() / np.abs(expected).sum() <= 0.05


def test_level2_shows_the_plan(tmp_path):
    onnx_path = export(small_cnn(), (1, 3, 20, 20), tmp_path / "cnn.onnx")
    result = cuvilc(onnx_path, "--target=mlu", "--device=mlu270",
                    "--emit=mlir-level2")
    assert result.returncode == 0, result.stderr
    assert "#cuvil_l2.space<nram>" in result.stdout
    assert "#cuvil_l2.task_split<axis = 0, parts = 16>" in result.stdout
    assert 'function_type = "block"' in result.stdout


def test_list_devices_and_help():
    result = cuvilc("--list-devices")
    assert "mlu270" in result.stdout and "mtp_372" in result.stdout
    assert "--target=mlu" in subprocess.run(
        [str(CUVILC), "--help"], capture_output=True, text=True).stdout


@pytest.mark.parametrize("flags,message", [
    ([], "--target=mlu needs --device=NAME"),
    (["--device=mlu100"], "unknown MLU 'mlu100'; --device takes one of "
                          "mlu270, mlu290, mlu370"),
    (["--device=mlu270", "--precision=int8"],
     "--precision=int8 needs --calibration=FILE.npz"),
    (["--device=mlu270", "--quantize=int8", "--calibration=cal.npz"],
     "the mlu target's numbers are its precision: ask for int8 with "
     "--precision=int8"),
    (["--device=mlu270", "--precision=int8", "--calibration=cal.npz",
      "--integer-io"],
     "--integer-io does not apply to the mlu target"),
    (["--device=mlu270", "--precision=bf16"],
     "precision 'bf16' is not one the MLU target knows: fp32, fp16 or int8"),
    (["--device=mlu270", "--external-weights"],
     "--external-weights applies to the CPU targets"),
])
def test_option_errors(tmp_path, flags, message):
    onnx_path = export(small_cnn(), (1, 3, 20, 20), tmp_path / "cnn.onnx")
    result = cuvilc(onnx_path, "--target=mlu", *flags, "-o", tmp_path / "out")
    assert result.returncode != 0
    assert message in result.stderr
    assert not (tmp_path / "out").exists()


class CumSum(torch.nn.Module):
    def forward(self, x):
        return torch.cumsum(x, 1)


class LongSoftmax(torch.nn.Module):
    def forward(self, x):
        return torch.softmax(x, 1)


@pytest.mark.parametrize("model,shape,message", [
    (CumSum(), (2, 8), "'cumsum' cannot run on the MLU target: the target "
                       "has no kernel for it yet"),
    (LongSoftmax(), (2, 150000), "'softmax' does not fit the MLU: its "
                                 "smallest tile (one row) needs"),
])
def test_layer_errors_name_the_node(tmp_path, model, shape, message):
    onnx_path = export(model, shape, tmp_path / "m.onnx")
    result = cuvilc(onnx_path, "--target=mlu", "--device=mlu270", "-o",
                    tmp_path / "out")
    assert result.returncode != 0
    assert message in result.stderr
    assert "m.onnx" in result.stderr  # the node's location
    assert not (tmp_path / "out").exists()


def test_hostile_names_stay_text(tmp_path):
    """Node and tensor names reach comments, the README and the report
    only escaped: the folder still builds and runs, and no name can close a
    comment or start a directive."""
    import onnx
    onnx_path = export(torch.nn.Sequential(torch.nn.Linear(4, 3)), (2, 4),
                       tmp_path / "m.onnx")
    model = onnx.load(str(onnx_path))
    evil = "*/ #include </etc/passwd>\n#define cnrtMalloc oops /*"
    for node in model.graph.node:
        node.name = evil
    model.graph.name = evil
    onnx.save(model, str(onnx_path))
    folder = tmp_path / "out"
    result = cuvilc(onnx_path, "--target=mlu", "--device=mlu270", "-o", folder)
    assert result.returncode == 0, result.stderr
    for name in ("kernels.mlu", "kernels.h", "host.cpp", "model.h",
                 "CMakeLists.txt", "run_model.cpp"):
        for line in (folder / name).read_text().splitlines():
            assert not line.lstrip().startswith(
                ("#include </etc", "#define cnrtMalloc")), (name, line)
            assert "*/ #include" not in line, (name, line)
    build = subprocess.run(["make", "-s", "emulate", f"CXX={CXX}"],
                           cwd=folder, capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    report = json.loads((folder / "report.json").read_text())
    assert report["layers"][0]["where"].startswith("'*/ #include")


def test_control_flow_is_refused_naming_the_if(tmp_path):
    class Branch(torch.nn.Module):
        def forward(self, x):
            return x * 2 if bool(x.sum() > 0) else x - 1

    # Scripted, the branch becomes an ONNX If (traced, it would be folded).
    path = export(torch.jit.script(Branch()), (2, 4), tmp_path / "m.onnx")
    result = cuvilc(path, "--target=mlu", "--device=mlu270", "-o",
                    tmp_path / "out")
    assert result.returncode != 0
    assert "m.onnx): error: control flow (an ONNX If, Loop or Scan" \
        in result.stderr and "'/If' (" in result.stderr
    assert "cannot run on the MLU target yet" in result.stderr
    assert not (tmp_path / "out").exists()


def test_integer_tensors_are_refused_with_the_node(tmp_path):
    """An embedding lookup (int64 indices): the target computes floats only."""
    torch.manual_seed(0)
    path = tmp_path / "embedding.onnx"
    torch.onnx.export(torch.nn.Embedding(10, 4).eval(),
                      torch.zeros(2, 3, dtype=torch.int64), str(path),
                      input_names=["ids"], output_names=["y"], opset_version=13)
    result = cuvilc(path, "--target=mlu", "--device=mlu270", "-o",
                    tmp_path / "out")
    assert result.returncode != 0
    assert "this target compiles float32 models (--precision=fp16 runs them " \
           "in float16; integer and int8 tensors are not supported yet)" \
        in result.stderr
    assert "embedding.onnx" in result.stderr
    assert not (tmp_path / "out").exists()
