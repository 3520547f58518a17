"""ONNX Det compiled by cuvilc and checked against numpy.linalg.det (LAPACK's
LU in float64): random matrices, ones that need row swaps (a zero leading
entry, a permutation), singular ones (a zero column, repeated rows), a
dynamic batch (every input's first dim), float64, 1 x 1 and 12 x 12; and
Det's compile-time errors."""

import pathlib
import subprocess
import sys

import numpy as np
import pytest
from onnx import TensorProto, helper

ROOT = pathlib.Path(__file__).resolve().parents[1]
CUVILC = ROOT / "bazel-bin" / "tools" / "cuvilc"
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
from cuvil_e2e import compile_model  # noqa: E402
from qdq_reference import save  # noqa: E402

FLOAT, DOUBLE = TensorProto.FLOAT, TensorProto.DOUBLE


def hard_matrices(rng):
    """4 x 4 matrices that defeat elimination without pivoting, or are singular."""
    permutation = np.eye(4)[[2, 0, 3, 1]] * np.array([1.5, -2.0, 0.5, 3.0])
    zero_lead = rng.standard_normal((4, 4))
    zero_lead[0, 0] = 0.0
    zero_column = rng.standard_normal((4, 4))
    zero_column[:, 2] = 0.0
    repeated = rng.standard_normal((4, 4))
    repeated[3] = repeated[1]
    tiny_pivot = rng.standard_normal((4, 4))
    tiny_pivot[0, 0] = 1e-9
    return [permutation, zero_lead, zero_column, repeated, tiny_pivot]


def test_det_matches_numpy(tmp_path):
    path = tmp_path / "det.onnx"
    save(path, [helper.make_node("Det", [x], [y]) for x, y in
                [("a", "da"), ("b", "db"), ("c", "dc"), ("e", "de")]],
         [helper.make_tensor_value_info("a", FLOAT, ["N", 4, 4]),
          helper.make_tensor_value_info("b", DOUBLE, ["N", 7, 7]),
          helper.make_tensor_value_info("c", FLOAT, ["N", 3, 1, 1]),
          helper.make_tensor_value_info("e", FLOAT, ["N", 12, 12])],
         [helper.make_tensor_value_info("da", FLOAT, ["N"]),
          helper.make_tensor_value_info("db", DOUBLE, ["N"]),
          helper.make_tensor_value_info("dc", FLOAT, ["N", 3]),
          helper.make_tensor_value_info("de", FLOAT, ["N"])], [], opset=13)
    compiled = compile_model(CUVILC, path, tmp_path / "det.so", "--max-batch=16")
    rng = np.random.default_rng(7)
    a = np.stack(hard_matrices(rng) + list(rng.standard_normal((4, 4, 4)))
                 ).astype(np.float32)
    b = rng.standard_normal((len(a), 7, 7))
    c = rng.standard_normal((len(a), 3, 1, 1)).astype(np.float32)
    e = rng.standard_normal((len(a), 12, 12)).astype(np.float32)
    da, db, dc, de = compiled(a, b, c, e, batch=len(a))
    want = np.linalg.det(a.astype(np.float64))
    # float32 elimination: errors relative to the product of the row norms
    # (Hadamard's bound on |det|), which is what rounding scales with.
    scale = np.prod(np.linalg.norm(a.astype(np.float64), axis=2), axis=1)
    np.testing.assert_array_less(np.abs(da - want), 1e-5 * scale)
    assert da[2] == 0.0  # a zero column: an exact zero pivot
    np.testing.assert_allclose(db, np.linalg.det(b), rtol=1e-12)
    np.testing.assert_array_equal(dc, c[..., 0, 0])
    want_e = np.linalg.det(e.astype(np.float64))
    scale_e = np.prod(np.linalg.norm(e.astype(np.float64), axis=2), axis=1)
    np.testing.assert_array_less(np.abs(de - want_e), 1e-5 * scale_e)


@pytest.mark.parametrize("shape,message", [
    ([3, 4], "Det expects square matrices of a static size"),
    ([2, 129, 129], "Det supports matrices of order 1 to 128"),
    (["N", "M", 3, 3], "at most one dynamic batch dim"),
])
def test_det_errors_name_the_node(tmp_path, shape, message):
    path = tmp_path / "bad.onnx"
    save(path, [helper.make_node("Det", ["x"], ["y"], name="det_node")],
         [helper.make_tensor_value_info("x", FLOAT, shape)],
         [helper.make_tensor_value_info("y", FLOAT, [])], [], opset=13)
    result = subprocess.run([CUVILC, str(path), "-o", str(tmp_path / "bad.so")],
                            capture_output=True, text=True)
    assert result.returncode != 0
    assert "det_node" in result.stderr and message in result.stderr, result.stderr
    assert not (tmp_path / "bad.so").exists()
