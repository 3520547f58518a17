"""Unsigned integers (uint16, uint32, uint64 beside uint8) through cuvilc
and the C ABI: ONNX BitShift against exact Python integers, and max, min
and mod on values past the signed range against numpy's uint64."""

import pathlib
import sys

import numpy as np
import pytest
from onnx import TensorProto, helper

ROOT = pathlib.Path(__file__).resolve().parents[1]
CUVILC = ROOT / "bazel-bin" / "tools" / "cuvilc"
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
from cuvil_e2e import compile_model  # noqa: E402
from qdq_reference import save  # noqa: E402

TYPES = {np.uint8: TensorProto.UINT8, np.uint16: TensorProto.UINT16,
         np.uint32: TensorProto.UINT32, np.uint64: TensorProto.UINT64}


def binary_model(tmp_path, op, dtype, shape, **attributes):
    path = tmp_path / f"{op}.onnx"
    onnx_type = TYPES[dtype]
    save(path, [helper.make_node(op, ["a", "b"], ["y"], **attributes)],
         [helper.make_tensor_value_info("a", onnx_type, shape),
          helper.make_tensor_value_info("b", onnx_type, shape[-1:])],
         [helper.make_tensor_value_info("y", onnx_type, shape)], [])
    return compile_model(CUVILC, path, tmp_path / f"{op}.so")


@pytest.mark.parametrize("dtype", list(TYPES))
@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_bit_shift_by_every_amount(tmp_path, dtype, direction):
    bits = np.dtype(dtype).itemsize * 8
    # Every shift from 0 to past the width, broadcast along the rows.
    amounts = np.arange(bits + 3, dtype=dtype)
    rng = np.random.default_rng(bits)
    values = rng.integers(0, 2 ** bits, (5, bits + 3), dtype=np.uint64,
                          endpoint=False).astype(dtype)
    compiled = binary_model(tmp_path, "BitShift", dtype, [5, bits + 3],
                            direction=direction)
    (y,) = compiled(values, amounts)
    mask = (1 << bits) - 1
    for r in range(5):
        for c, n in enumerate(amounts):
            v, n = int(values[r, c]), int(n)
            want = (v << n) & mask if direction == "LEFT" else v >> n
            assert int(y[r, c]) == want, (r, c, v, n)


@pytest.mark.parametrize("op,reference", [("Max", np.maximum), ("Min", np.minimum),
                                          ("Mod", np.mod)])
def test_comparisons_and_remainders_past_the_signed_range(tmp_path, op, reference):
    rng = np.random.default_rng(3)
    a = rng.integers(0, 2 ** 64, (4, 6), dtype=np.uint64, endpoint=False)
    b = rng.integers(1, 2 ** 64, 6, dtype=np.uint64, endpoint=False)
    a[0] = 2 ** 63 + 5  # above b in unsigned order, below it if signed
    b[0] = 7
    compiled = binary_model(tmp_path, op, np.uint64, [4, 6])
    (y,) = compiled(a, b)
    assert y.dtype == np.uint64
    assert np.array_equal(y, reference(a, b))
