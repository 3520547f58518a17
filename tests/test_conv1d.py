"""1-D convolution and pooling (NCW inputs: torch's Conv1d, MaxPool1d,
AvgPool1d) imported as their 2-D forms over an image of height 1, checked
against PyTorch."""

import pathlib
import subprocess
import sys

import numpy as np
import pytest
import torch

ROOT = pathlib.Path(__file__).resolve().parents[1]
CUVILC = ROOT / "bazel-bin" / "tools" / "cuvilc"
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from cuvil_e2e import compile_model  # noqa: E402


def export(model, shape, path):
    torch.onnx.export(model, torch.randn(*shape), str(path),
                      input_names=["input"], output_names=["output"],
                      opset_version=13, dynamic_axes={"input": {0: "batch"},
                                                      "output": {0: "batch"}})
    return path


@pytest.mark.parametrize("padding,stride,dilation", [(1, 1, 1), (0, 2, 1),
                                                     (2, 1, 2)])
def test_conv1d_and_pooling_match_torch(tmp_path, padding, stride, dilation):
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv1d(3, 8, 3, padding=padding, stride=stride,
                        dilation=dilation),
        torch.nn.ReLU(), torch.nn.MaxPool1d(2), torch.nn.Conv1d(8, 4, 5),
        torch.nn.AvgPool1d(3, stride=1, padding=1),
        torch.nn.Flatten()).eval()
    path = export(model, (1, 3, 40), tmp_path / "conv1d.onnx")
    compiled = compile_model(str(CUVILC), path, tmp_path / "conv1d.so",
                             "--max-batch=4")
    x = np.random.default_rng(0).normal(0, 1, (4, 3, 40)).astype(np.float32)
    (y,) = compiled(x, batch=4)
    with torch.no_grad():
        expected = model(torch.tensor(x)).numpy()
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-5)


def test_conv3d_is_refused_with_the_shapes_it_takes(tmp_path):
    model = torch.nn.Conv3d(2, 2, 3)
    path = export(model, (1, 2, 5, 5, 5), tmp_path / "conv3d.onnx")
    result = subprocess.run([str(CUVILC), str(path), "--emit=mlir-level1"],
                            capture_output=True, text=True)
    assert result.returncode != 0
    assert "supported in 1-D and 2-D only" in result.stderr
