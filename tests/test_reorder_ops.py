"""ONNX ReverseSequence, MaxUnpool and Compress compiled by cuvilc:
ReverseSequence against a numpy loop, MaxUnpool against PyTorch's
max_unpool2d fed the indices of PyTorch's own max_pool2d, Compress (of a
constant condition) against numpy.compress."""

import pathlib
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


def reverse_reference(x, lengths, time_axis):
    y = x.copy()
    for b, n in enumerate(lengths):
        if time_axis == 0:
            y[:n, b] = x[:n, b][::-1]
        else:
            y[b, :n] = x[b, :n][::-1]
    return y


@pytest.mark.parametrize("time_axis", [0, 1])
def test_reverse_sequence_by_lengths_given_at_call_time(tmp_path, time_axis):
    steps, batch, features = 6, 4, 3
    shape = [steps, batch, features] if time_axis == 0 else [batch, steps, features]
    path = tmp_path / "reverse.onnx"
    save(path, [helper.make_node("ReverseSequence", ["x", "lengths"], ["y"],
                                 time_axis=time_axis, batch_axis=1 - time_axis)],
         [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape),
          helper.make_tensor_value_info("lengths", TensorProto.INT64, [batch])],
         [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], [])
    compiled = compile_model(CUVILC, path, tmp_path / "reverse.so")
    x = np.random.default_rng(time_axis).standard_normal(shape).astype(np.float32)
    for lengths in ([6, 1, 3, 0], [2, 6, 6, 5]):
        lengths = np.array(lengths, np.int64)
        (y,) = compiled(x, lengths)
        assert np.array_equal(y, reverse_reference(x, lengths, time_axis))
    # A length beyond the steps would read outside the tensor: an error.
    with pytest.raises(Exception, match="invalid argument"):
        compiled(x, np.array([7, 1, 1, 1], np.int64))


# Inputs whose windows cover them exactly: the unpooled shape is the
# pooled input's, where MaxPool's indices point.
@pytest.mark.parametrize("kernel,stride,size,output_size", [
    (2, 2, (8, 10), None), (3, 2, (9, 11), None), (2, 2, (8, 10), (9, 11))])
def test_max_unpool_matches_pytorch(tmp_path, kernel, stride, size, output_size):
    (n, c), (h, w) = (2, 3), size
    x = torch.randn(n, c, h, w, generator=torch.Generator().manual_seed(kernel))
    pooled, plane_indices = torch.nn.functional.max_pool2d(
        x, kernel, stride, return_indices=True)
    # ONNX's indices count over the whole tensor, PyTorch's over one plane.
    planes = (torch.arange(n * c).reshape(n, c, 1, 1) * h * w)
    indices = (plane_indices + planes).numpy()
    unpooled_h = (pooled.shape[2] - 1) * stride + kernel
    unpooled_w = (pooled.shape[3] - 1) * stride + kernel
    inputs = ["x", "i"] + (["shape"] if output_size else [])
    out_h, out_w = output_size or (unpooled_h, unpooled_w)
    path = tmp_path / "unpool.onnx"
    save(path, [helper.make_node("MaxUnpool", inputs, ["y"], kernel_shape=[kernel] * 2,
                                 strides=[stride] * 2)],
         [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(pooled.shape)),
          helper.make_tensor_value_info("i", TensorProto.INT64, list(pooled.shape))],
         [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n, c, out_h, out_w])],
         [constant("shape", np.array([n, c, out_h, out_w], np.int64))]
         if output_size else [])
    compiled = compile_model(CUVILC, path, tmp_path / "unpool.so")
    (y,) = compiled(pooled.numpy(), indices)
    want = torch.nn.functional.max_unpool2d(pooled, plane_indices, kernel, stride,
                                            output_size=(unpooled_h, unpooled_w))
    # A larger output_shape keeps each value's position and pads after it.
    want = torch.nn.functional.pad(want, (0, out_w - unpooled_w, 0, out_h - unpooled_h))
    assert np.array_equal(y, want.numpy())


@pytest.mark.parametrize("axis", [None, 0, -1])
def test_compress_by_a_constant_mask(tmp_path, axis):
    shape = [5, 6]
    # As long as axis 0; shorter than the others, whose rest are dropped.
    mask = np.array([1, 0, 1, 1, 0], bool)
    kept = np.compress(mask, np.zeros(shape), axis=axis).shape
    path = tmp_path / "compress.onnx"
    save(path, [helper.make_node("Compress", ["x", "mask"], ["y"],
                                 **({} if axis is None else {"axis": axis}))],
         [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
         [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(kept))],
         [constant("mask", mask)])
    compiled = compile_model(CUVILC, path, tmp_path / "compress.so")
    x = np.random.default_rng(7).standard_normal(shape).astype(np.float32)
    (y,) = compiled(x)
    assert np.array_equal(y, np.compress(mask, x, axis=axis))
