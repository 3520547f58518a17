"""ONNX ops whose training-time forms are deterministic, compiled by cuvilc:
BatchNormalization with training_mode (batch statistics and the moved
running statistics) against PyTorch's F.batch_norm and ONNX's formula,
Dropout at ratio 0 in training mode (the identity), and MaxPool of 8-bit
integers against PyTorch."""

import pathlib
import subprocess
import sys

import numpy as np
import pytest
import torch
from onnx import TensorProto, helper

ROOT = pathlib.Path(__file__).resolve().parents[1]
CUVILC = ROOT / "bazel-bin" / "tools" / "cuvilc"
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
from cuvil_e2e import compile_model  # noqa: E402
from qdq_reference import constant, save  # noqa: E402

FLOAT = TensorProto.FLOAT


def test_batch_norm_in_training_mode(tmp_path):
    n, c, h, w = 4, 3, 5, 6
    rng = np.random.default_rng(2)
    scale, bias = rng.random(c).astype(np.float32) + 0.5, rng.standard_normal(c).astype(np.float32)
    mean, var = rng.standard_normal(c).astype(np.float32), rng.random(c).astype(np.float32) + 1
    path = tmp_path / "bn.onnx"
    save(path, [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"],
                                 ["y", "rm", "rv"], training_mode=1, momentum=0.8,
                                 epsilon=1e-3)],
         [helper.make_tensor_value_info("x", FLOAT, [n, c, h, w])],
         [helper.make_tensor_value_info("y", FLOAT, [n, c, h, w]),
          helper.make_tensor_value_info("rm", FLOAT, [c]),
          helper.make_tensor_value_info("rv", FLOAT, [c])],
         [constant("s", scale), constant("b", bias), constant("m", mean),
          constant("v", var)], opset=15)
    compiled = compile_model(CUVILC, path, tmp_path / "bn.so")
    x = (rng.standard_normal((n, c, h, w)) * 3 + 1).astype(np.float32)
    y, running_mean, running_var = compiled(x)
    want = torch.nn.functional.batch_norm(
        torch.from_numpy(x), None, None, torch.from_numpy(scale), torch.from_numpy(bias),
        training=True, eps=1e-3)
    np.testing.assert_allclose(y, want.numpy(), rtol=1e-4, atol=1e-5)
    # ONNX moves the running variance toward the population variance
    # (PyTorch's own running_var would use the unbiased one).
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(running_mean, 0.8 * mean + 0.2 * x64.mean(axis=(0, 2, 3)),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(running_var, 0.8 * var + 0.2 * x64.var(axis=(0, 2, 3)),
                               rtol=1e-5, atol=1e-6)


def test_dropout_at_ratio_zero_in_training_mode_is_the_identity(tmp_path):
    path = tmp_path / "dropout.onnx"
    save(path, [helper.make_node("Dropout", ["x", "r", "t"], ["y", "mask"])],
         [helper.make_tensor_value_info("x", FLOAT, [3, 4])],
         [helper.make_tensor_value_info("y", FLOAT, [3, 4]),
          helper.make_tensor_value_info("mask", TensorProto.BOOL, [3, 4])],
         [constant("r", np.float32(0)), constant("t", np.bool_(True))], opset=13)
    compiled = compile_model(CUVILC, path, tmp_path / "dropout.so")
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    y, mask = compiled(x)
    assert np.array_equal(y, x) and mask.all()


def test_dropout_that_drops_in_training_mode_is_refused(tmp_path):
    path = tmp_path / "dropout.onnx"
    save(path, [helper.make_node("Dropout", ["x", "r", "t"], ["y"], name="drop")],
         [helper.make_tensor_value_info("x", FLOAT, [3, 4])],
         [helper.make_tensor_value_info("y", FLOAT, [3, 4])],
         [constant("r", np.float32(0.5)), constant("t", np.bool_(True))], opset=13)
    result = subprocess.run([str(CUVILC), "--quiet", str(path), "-o",
                             str(tmp_path / "dropout.so")], capture_output=True, text=True)
    assert result.returncode != 0
    assert "'drop'" in result.stderr
    assert "Dropout in training mode is not supported" in result.stderr
    assert not (tmp_path / "dropout.so").exists()


@pytest.mark.parametrize("dtype,onnx_type", [(np.uint8, TensorProto.UINT8),
                                             (np.int8, TensorProto.INT8)])
def test_max_pool_of_8_bit_integers(tmp_path, dtype, onnx_type):
    path = tmp_path / "pool.onnx"
    save(path, [helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3],
                                 strides=[2, 2], pads=[1, 1, 1, 1])],
         [helper.make_tensor_value_info("x", onnx_type, [2, 3, 9, 9])],
         [helper.make_tensor_value_info("y", onnx_type, [2, 3, 5, 5])], [], opset=12)
    compiled = compile_model(CUVILC, path, tmp_path / "pool.so")
    info = np.iinfo(dtype)
    x = np.random.default_rng(4).integers(info.min, info.max, (2, 3, 9, 9),
                                          endpoint=True).astype(dtype)
    (y,) = compiled(x)
    want = torch.nn.functional.max_pool2d(torch.from_numpy(x.astype(np.float32)), 3, 2, 1)
    assert y.dtype == dtype and np.array_equal(y, want.numpy().astype(dtype))
