"""1-D convolution and pooling (NCW inputs: torch's Conv1d, MaxPool1d,
AvgPool1d) imported as their 2-D forms over an image of height 1, and a
3-D block (Conv3d, MaxPool3d, ConvTranspose3d) as torch.onnx exports it,
checked against PyTorch."""

import pathlib
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


def test_a_3d_unet_block_from_pytorch(tmp_path):
    """Conv3d, MaxPool3d and ConvTranspose3d as torch.onnx exports them."""
    torch.manual_seed(3)
    model = torch.nn.Sequential(
        torch.nn.Conv3d(2, 4, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool3d(2),
        torch.nn.ConvTranspose3d(4, 2, 2, stride=2)).eval()
    path = export(model, (1, 2, 6, 8, 8), tmp_path / "unet3d.onnx")
    compiled = compile_model(str(CUVILC), path, tmp_path / "unet3d.so",
                             "--max-batch=2")
    x = np.random.default_rng(1).normal(0, 1, (2, 2, 6, 8, 8)).astype(np.float32)
    (y,) = compiled(x, batch=2)
    with torch.no_grad():
        expected = model(torch.tensor(x)).numpy()
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-5)
