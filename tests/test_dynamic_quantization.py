"""Dynamic quantization graphs: DynamicQuantizeLinear, and QuantizeLinear
whose scale the model computes, compiled by cuvilc and checked against the
ONNX formulas in numpy (float32 arithmetic, rounding half to even)."""

import pathlib
import sys

import numpy as np
import pytest
from onnx import TensorProto, helper

ROOT = pathlib.Path(__file__).resolve().parents[1]
CUVILC = ROOT / "bazel-bin" / "tools" / "cuvilc"
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
from cuvil_e2e import compile_model  # noqa: E402
from qdq_reference import constant, save  # noqa: E402


def dynamic_quantize_reference(x):
    """ONNX DynamicQuantizeLinear: uint8 over x's range widened to hold 0."""
    low, high = np.float32(min(x.min(), 0)), np.float32(max(x.max(), 0))
    scale = np.float32((high - low) / np.float32(255))
    zero = np.clip(np.rint(-low / scale), 0, 255).astype(np.uint8)
    y = np.clip(np.rint(x / scale) + np.float32(zero), 0, 255).astype(np.uint8)
    return y, scale, zero


@pytest.mark.parametrize("offset", [0.0, 3.0, -3.0], ids=["both", "positive", "negative"])
def test_dynamic_quantize_linear(tmp_path, offset):
    path = tmp_path / "dql.onnx"
    save(path, [helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])],
         [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 33])],
         [helper.make_tensor_value_info("y", TensorProto.UINT8, [4, 33]),
          helper.make_tensor_value_info("s", TensorProto.FLOAT, []),
          helper.make_tensor_value_info("z", TensorProto.UINT8, [])], [], opset=13)
    compiled = compile_model(CUVILC, path, tmp_path / "dql.so")
    rng = np.random.default_rng(int(offset) + 5)
    for _ in range(3):
        x = (rng.standard_normal((4, 33)) * 2 + offset).astype(np.float32)
        y, scale, zero = compiled(x)
        want_y, want_scale, want_zero = dynamic_quantize_reference(x)
        # The same float32 operations in the same order: bit for bit.
        assert scale == want_scale and zero == want_zero
        assert y.dtype == np.uint8 and np.array_equal(y, want_y)


def test_quantize_linear_with_a_scale_per_row_computed_by_the_model(tmp_path):
    # Symmetric int8 per row: scale = max |x| / 127 along axis 1, as a
    # dynamic quantizer computes it, then QuantizeLinear(axis=0).
    path = tmp_path / "qrow.onnx"
    save(path, [
        helper.make_node("Abs", ["x"], ["a"]),
        helper.make_node("ReduceMax", ["a"], ["m"], axes=[1], keepdims=0),
        helper.make_node("Div", ["m", "q"], ["s"]),
        helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["y"], axis=0)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, 16])],
        [helper.make_tensor_value_info("y", TensorProto.INT8, [5, 16])],
        [constant("q", np.float32(127)), constant("zp", np.zeros(5, np.int8))])
    compiled = compile_model(CUVILC, path, tmp_path / "qrow.so")
    rng = np.random.default_rng(9)
    x = (rng.standard_normal((5, 16)) * rng.random((5, 1)) * 10).astype(np.float32)
    (y,) = compiled(x)
    scale = (np.abs(x).max(axis=1) / np.float32(127)).astype(np.float32)
    want = np.clip(np.rint(x / scale[:, None]), -128, 127).astype(np.int8)
    assert y.dtype == np.int8 and np.array_equal(y, want)
    # Each row's largest magnitude is exactly +-127.
    assert np.array_equal(np.abs(y.astype(int)).max(axis=1), np.full(5, 127))
