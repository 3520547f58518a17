"""Quantized ONNX graphs (QDQ: QuantizeLinear / DequantizeLinear) compiled
by cuvilc and run through the C ABI, bit for bit against the ONNX
operators' formulas written here in numpy (round half to even, saturate;
(q - zero_point) * scale in float32). The ONNX backend node tests
(//tests/onnx_conformance) check the same ops against ONNX's own outputs."""

import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest
from onnx import TensorProto, helper

ROOT = pathlib.Path(__file__).resolve().parents[1]
CUVILC = ROOT / "bazel-bin" / "tools" / "cuvilc"
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
from cuvil_e2e import compile_model  # noqa: E402
from qdq_reference import (constant, conv2d_reference, dequantize,  # noqa: E402
                           quantize, save)

STORAGE = {TensorProto.INT8: np.int8, TensorProto.UINT8: np.uint8,
           TensorProto.INT32: np.int32}


def build(tmp_path, name, *graph, flags=()):
    assert CUVILC.exists(), "build //tools:cuvilc first (scripts/test does)"
    path = tmp_path / f"{name}.onnx"
    save(path, *graph)
    return compile_model(str(CUVILC), path, tmp_path / f"{name}.so", *flags)


# Values on both sides of halfway points, beyond the storage range, and
# zero; scale 0.5 puts x.25 and x.75 exactly halfway after the division.
EDGES = np.array([[0.0, 0.25, 0.75, 1.25, -0.25, -0.75, -1.25, 3.1],
                  [200.0, -200.0, 63.5, -64.25, 1e30, -1e30, 0.4999, 7.0]],
                 np.float32)


@pytest.mark.parametrize("storage", [TensorProto.INT8, TensorProto.UINT8])
def test_quantize_rounds_half_to_even_and_saturates(tmp_path, storage):
    dtype = STORAGE[storage]
    zero = 3 if dtype == np.int8 else 128
    model = build(tmp_path, "q", [
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info("q", storage, [2, 8])],
        [constant("s", np.float32(0.5)), constant("z", dtype(zero))])
    (q,) = model(EDGES)
    np.testing.assert_array_equal(q, quantize(EDGES, 0.5, zero, dtype))
    assert q[0, 1] == zero + 0 and q[0, 2] == zero + 2  # 0.5 -> 0, 1.5 -> 2


def test_quantize_without_zero_point_is_uint8(tmp_path):
    x = np.linspace(-3, 40, 24, dtype=np.float32).reshape(4, 6)
    model = build(tmp_path, "u8", [
        helper.make_node("QuantizeLinear", ["x", "s"], ["q"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 6])],
        [helper.make_tensor_value_info("q", TensorProto.UINT8, [4, 6])],
        [constant("s", np.float32(0.125))])
    (q,) = model(x)
    assert q.dtype == np.uint8
    np.testing.assert_array_equal(q, quantize(x, 0.125, 0, np.uint8))


def test_nan_quantizes_to_the_zero_point(tmp_path):
    x = np.array([np.nan, 1.0, -np.nan, np.inf], np.float32)
    model = build(tmp_path, "nan", [
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("q", TensorProto.INT8, [4])],
        [constant("s", np.float32(0.1)), constant("z", np.int8(-5))])
    (q,) = model(x)
    np.testing.assert_array_equal(q, [-5, 5, -5, 127])


def test_fake_quantized_activation_is_exact(tmp_path):
    # x -> Q -> DQ -> Relu, with a dynamic batch: what a QDQ model computes
    # in float between two quantized ops.
    rng = np.random.default_rng(0)
    x = rng.normal(0, 4, (3, 16)).astype(np.float32)
    model = build(tmp_path, "qdq", [
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
        helper.make_node("DequantizeLinear", ["q", "s", "z"], ["d"]),
        helper.make_node("Relu", ["d"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 16])],
        [constant("s", np.float32(0.07)), constant("z", np.int8(-4))],
        flags=("--max-batch=4",))
    (y,) = model(x, batch=3)
    expected = np.maximum(dequantize(quantize(x, 0.07, -4, np.int8), 0.07, -4), 0)
    np.testing.assert_array_equal(y, expected)


def test_per_channel_int8_weights_feed_a_matmul(tmp_path):
    # Weights stored as int8 with one scale per output column (axis 1), as
    # a quantization tool writes them; the product runs in float32.
    rng = np.random.default_rng(1)
    w = rng.integers(-128, 128, (5, 3), dtype=np.int8)
    scales = np.array([0.02, 0.5, 0.003], np.float32)
    zeros = np.array([0, 4, -7], np.int8)
    x = rng.normal(size=(2, 5)).astype(np.float32)
    model = build(tmp_path, "w", [
        helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wf"], axis=1),
        helper.make_node("MatMul", ["x", "wf"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [constant("w", w), constant("ws", scales), constant("wz", zeros)])
    (y,) = model(x)
    wf = dequantize(w, scales, zeros, axis=1)
    np.testing.assert_allclose(y, x @ wf, rtol=1e-6, atol=1e-6)


def test_int32_input_dequantizes_per_axis_zero(tmp_path):
    # A bias-like int32 input, per-axis along its first dimension.
    q = np.array([[1, -2, 300], [2**30, -(2**30), 7]], np.int32)
    scales = np.array([0.001, 2.0], np.float32)
    model = build(tmp_path, "i32", [
        helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=0)],
        [helper.make_tensor_value_info("q", TensorProto.INT32, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [constant("s", scales), constant("z", np.zeros(2, np.int32))])
    (y,) = model(q)
    np.testing.assert_array_equal(y, dequantize(q, scales, np.zeros(2), axis=0))


def compile_error(tmp_path, nodes, inputs, outputs, initializers, opset=13):
    path = tmp_path / "bad.onnx"
    save(path, nodes, inputs, outputs, initializers, opset)
    result = subprocess.run([str(CUVILC), "--quiet", str(path), "-o",
                             str(tmp_path / "bad.so")], capture_output=True, text=True)
    assert result.returncode != 0
    assert not (tmp_path / "bad.so").exists()
    return result.stderr


def test_a_scale_given_at_run_time_quantizes_at_run_time(tmp_path):
    # The scale is a graph input: no quantized type can hold it, so both ops
    # are their arithmetic (tests/test_dynamic_quantization.py has more).
    path = tmp_path / "qdq.onnx"
    save(path, [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
                helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"])],
         [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6]),
          helper.make_tensor_value_info("s", TensorProto.FLOAT, [])],
         [helper.make_tensor_value_info("y", TensorProto.FLOAT, [6])],
         [constant("z", np.uint8(100))])
    compiled = compile_model(CUVILC, path, tmp_path / "qdq.so")
    x = np.array([-3, -0.26, 0, 0.25, 1.7, 40], np.float32)
    for scale in (np.float32(0.1), np.float32(0.5)):
        (y,) = compiled(x, scale)
        q = np.clip(np.rint(x / scale) + 100, 0, 255)
        assert np.array_equal(y, ((q - 100) * scale).astype(np.float32))


def test_an_integer_scale_given_at_run_time_is_refused(tmp_path):
    stderr = compile_error(tmp_path, [
        helper.make_node("DequantizeLinear", ["q", "s"], ["y"], name="dq")],
        [helper.make_tensor_value_info("q", TensorProto.INT8, [4]),
         helper.make_tensor_value_info("s", TensorProto.INT32, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [])
    assert "'dq'" in stderr
    assert "DequantizeLinear expects a float scale, got 'tensor<i32>'" in stderr


def test_a_zero_point_of_another_shape_is_refused(tmp_path):
    stderr = compile_error(tmp_path, [
        helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=0,
                         name="dq")],
        [helper.make_tensor_value_info("q", TensorProto.INT8, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [constant("s", np.array([0.1, 0.2], np.float32)),
         constant("z", np.int8(0))])
    assert "DequantizeLinear has a zero point of type 'tensor<i8>' for a scale of shape [2]" \
        in stderr


def test_a_negative_scale_is_refused(tmp_path):
    stderr = compile_error(tmp_path, [
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], name="neg")],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("q", TensorProto.INT8, [4])],
        [constant("s", np.float32(-0.5)), constant("z", np.int8(0))])
    assert "'neg'" in stderr and "scale" in stderr


def test_scales_for_the_wrong_axis_are_refused(tmp_path):
    stderr = compile_error(tmp_path, [
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=1,
                         name="axis")],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("q", TensorProto.INT8, [2, 3])],
        [constant("s", np.array([0.1, 0.2], np.float32)),
         constant("z", np.zeros(2, np.int8))])
    assert "has 2 scales for the 3 indices of axis 1" in stderr


def linear_layer(tmp_path, name, x_zero, w_zero, x_type=TensorProto.UINT8, rows="batch"):
    """A QDQ linear layer as quantization tools write it: the activation
    quantized and dequantized, int8 weights dequantized per column."""
    rng = np.random.default_rng(7)
    k, n = 70, 37  # k and n with remainders of the 4 x 16 tiles
    w = rng.integers(-127, 128, (k, n), dtype=np.int8)
    ws = (rng.random(n) * 0.01 + 0.001).astype(np.float32)
    xz = STORAGE[x_type](x_zero)
    path = tmp_path / f"{name}.onnx"
    save(path, [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
        helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], axis=1),
        helper.make_node("MatMul", ["xd", "wd"], ["y"], name="linear")],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows, n])],
        [constant("xs", np.float32(0.05)), constant("xz", xz), constant("w", w),
         constant("ws", ws), constant("wz", np.full(n, w_zero, np.int8))])
    x = rng.normal(0, 3, (6, k)).astype(np.float32)
    dtype = STORAGE[x_type]
    xd = dequantize(quantize(x, 0.05, x_zero, dtype), 0.05, x_zero).astype(np.float64)
    wd = (w.astype(np.float64) - w_zero) * ws.astype(np.float64)
    return path, x, xd @ wd


def cuvilc_output(*args):
    return subprocess.run([str(CUVILC), *map(str, args)], check=True,
                          capture_output=True, text=True)


@pytest.mark.parametrize("x_type,x_zero", [(TensorProto.UINT8, 120), (TensorProto.INT8, -7)])
def test_a_qdq_linear_layer_multiplies_in_int8(tmp_path, x_type, x_zero):
    path, x, expected = linear_layer(tmp_path, "linear", x_zero, 0, x_type)
    level2 = cuvilc_output("--quiet", path, "--emit=mlir-level2", "--max-batch=8").stdout
    assert re.search(r'ukernel_call "quantized_matmul" .* packed_b', level2), level2
    assert '"matmul"' not in level2 and '"dequantize"' not in level2
    model = compile_model(str(CUVILC), path, tmp_path / "linear.so", "--max-batch=8")
    (y,) = model(x, batch=6)
    # Exact integer sums, then one float32 scale per column: within float32
    # rounding of the float64 product of the dequantized values.
    np.testing.assert_allclose(y, expected, rtol=0, atol=1e-6 * np.abs(expected).max())
    assert model.metadata["kernels"]["qgemm4"] in ("reference", "avx2", "avx512bw",
                                                   "avxvnni", "avx512vnni")


XS, WS1, HS, HZ, WS2, YS, YZ = 0.05, 0.002, 0.125, 3, 0.003, 0.25, 100


def two_int8_layers(tmp_path, rng, quantized_output=False):
    """A QDQ MLP of two int8 linear layers (and, if asked, its output
    quantized and dequantized), with the numpy int8 arithmetic of its
    float32 output: exact integer sums, the product of the two scales
    rounded once to float32, bias, relu, round half to even, saturate."""
    k, h, n = 45, 38, 9
    w1 = rng.integers(-127, 128, (k, h), dtype=np.int8)
    w2 = rng.integers(-127, 128, (h, n), dtype=np.int8)
    b1 = rng.normal(0, 2, h).astype(np.float32)
    path = tmp_path / "mlp.onnx"
    tail = [helper.make_node("QuantizeLinear", ["y", "ys", "yz"], ["yq"]),
            helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["out"])]
    save(path, [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
        helper.make_node("DequantizeLinear", ["w1", "ws1"], ["w1d"]),
        helper.make_node("MatMul", ["xd", "w1d"], ["m1"], name="fc1"),
        helper.make_node("Add", ["m1", "b1"], ["a1"]),
        helper.make_node("Relu", ["a1"], ["r1"]),
        helper.make_node("QuantizeLinear", ["r1", "hs", "hz"], ["hq"]),
        helper.make_node("DequantizeLinear", ["hq", "hs", "hz"], ["hd"]),
        helper.make_node("DequantizeLinear", ["w2", "ws2"], ["w2d"]),
        helper.make_node("MatMul", ["hd", "w2d"], ["y"], name="fc2"),
        *(tail if quantized_output else [])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", k])],
        [helper.make_tensor_value_info("out" if quantized_output else "y",
                                       TensorProto.FLOAT, ["batch", n])],
        [constant("xs", np.float32(XS)), constant("xz", np.uint8(128)),
         constant("w1", w1), constant("ws1", np.float32(WS1)), constant("b1", b1),
         constant("hs", np.float32(HS)), constant("hz", np.uint8(HZ)),
         constant("w2", w2), constant("ws2", np.float32(WS2)),
         constant("ys", np.float32(YS)), constant("yz", np.uint8(YZ))])

    def layer(q, zero, w, scale):
        """Exact integer sums, then the product of the two scales, rounded
        once to float32, as one float32 multiplication."""
        sums = (q.astype(np.int64) - zero) @ w.astype(np.int64)
        return sums.astype(np.float32) * np.float32(np.float64(np.float32(scale[0])) *
                                                    np.float64(np.float32(scale[1])))

    def reference(x):
        r1 = np.maximum(layer(quantize(x, XS, 128, np.uint8), 128, w1, (XS, WS1)) + b1, 0)
        return layer(quantize(r1, HS, HZ, np.uint8), HZ, w2, (HS, WS2))
    return path, k, reference


def test_two_int8_linear_layers_pass_bytes(tmp_path):
    """The first of two int8 linear layers writes the second's uint8 input
    itself: its bias, relu and the second's quantize are its epilogue, with
    the arithmetic of the unfused ops, bit for bit."""
    rng = np.random.default_rng(12)
    path, k, reference = two_int8_layers(tmp_path, rng)
    level2 = cuvilc_output("--quiet", path, "--emit=mlir-level2", "--max-batch=8").stdout
    assert re.search(r'ukernel_call "quantized_matmul" .* epilogue <steps = '
                     r'\[col_bias, relu, quantize\]>', level2), level2
    assert level2.count('ukernel_call "quantize"') == 1  # the model input's
    model = compile_model(str(CUVILC), path, tmp_path / "mlp.so", "--max-batch=8")
    x = rng.normal(0, 3, (7, k)).astype(np.float32)
    (y,) = model(x, batch=7)
    np.testing.assert_array_equal(y, reference(x))
    (two,) = model(x, batch=7, threads=2)
    np.testing.assert_array_equal(two, y)


def test_integer_io_passes_the_qdq_models_own_bytes(tmp_path):
    """--integer-io on a QDQ model: the input is the uint8 its QuantizeLinear
    makes and the output the uint8 its last QuantizeLinear makes, which the
    second layer's epilogue writes; no quantize is left to run, and the
    bytes are those of the float model's arithmetic, quantized."""
    rng = np.random.default_rng(13)
    path, k, reference = two_int8_layers(tmp_path, rng, quantized_output=True)
    level2 = cuvilc_output("--quiet", path, "--emit=mlir-level2", "--max-batch=8",
                           "--integer-io").stdout
    assert 'ukernel_call "quantize"' not in level2
    assert '"dequantize"' not in level2
    assert level2.count("epilogue <steps = [quantize]>") == 1, level2
    model = compile_model(str(CUVILC), path, tmp_path / "mlp.so", "--max-batch=8",
                          "--integer-io")
    (x_spec,), (y_spec,) = model.metadata["inputs"], model.metadata["outputs"]
    assert (x_spec["dtype"], y_spec["dtype"]) == ("uint8", "uint8")
    assert x_spec["quantization"] == {"scale": pytest.approx(XS, rel=1e-7),
                                      "zero_point": 128}
    assert y_spec["quantization"] == {"scale": YS, "zero_point": YZ}
    header = (tmp_path / "mlp.h").read_text()
    assert "/* input 0 'x': uint8 [batch, 45], real = 0.0500000007 * (q - 128) */" \
        in header, header
    x = rng.normal(0, 3, (7, k)).astype(np.float32)
    (y,) = model(quantize(x, XS, 128, np.uint8), batch=7)
    assert y.dtype == np.uint8
    np.testing.assert_array_equal(y, quantize(reference(x), YS, YZ, np.uint8))


def test_integer_io_needs_a_quantized_boundary(tmp_path):
    """A QDQ model whose output is a float op's (no DequantizeLinear) has no
    type to return it in without calibration: the error names it."""
    path, _, _ = two_int8_layers(tmp_path, np.random.default_rng(14))
    result = subprocess.run([str(CUVILC), str(path), "--integer-io", "-o",
                             str(tmp_path / "out.so")], capture_output=True,
                            text=True)
    assert result.returncode == 1
    assert "integer I/O: output 'y' is float32, not dequantized by the model " \
        "and has no calibrated range; calibrate the model (--quantize=int8) " \
        "or compile without --integer-io" in result.stderr, result.stderr
    assert not (tmp_path / "out.so").exists()


def test_the_int8_variant_follows_the_target(tmp_path):
    path, x, expected = linear_layer(tmp_path, "v3", 120, 0)
    variants = [("x86-64-v3", "avx2"), ("x86-64", "reference")]
    flags = pathlib.Path("/proc/cpuinfo").read_text().split()
    if "avx_vnni" in flags:
        variants.append(("alderlake", "avxvnni"))  # AVX-VNNI without AVX-512
    if "avx512bw" in flags:
        variants.append(("skylake-avx512", "avx512bw"))  # AVX-512 without VNNI
    for cpu, variant in variants:
        model = compile_model(str(CUVILC), path, tmp_path / f"{cpu}.so", f"--cpu={cpu}",
                              "--max-batch=8")
        assert model.metadata["kernels"]["qgemm4"] == variant
        (y,) = model(x, batch=6)
        np.testing.assert_allclose(y, expected, rtol=0, atol=1e-6 * np.abs(expected).max())


def test_asymmetric_weights_stay_float32_with_a_note(tmp_path):
    path, x, expected = linear_layer(tmp_path, "asym", 120, 3)
    compiled = cuvilc_output(path, "--max-batch=8", "-o", tmp_path / "asym.so")
    assert "note: " in compiled.stderr and "'linear'" in compiled.stderr
    assert "runs in float32 on dequantized values" in compiled.stderr
    assert "its rhs must be symmetric (zero points 0)" in compiled.stderr
    from cuvil_e2e import CompiledModel
    model = CompiledModel(tmp_path / "asym.so")
    assert model.metadata["kernels"]["qgemm4"] == "none"
    (y,) = model(x, batch=6)
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5 * np.abs(expected).max())


def test_a_qdq_gemm_linear_layer_multiplies_in_int8(tmp_path):
    """nn.Linear as quantization tools write it in ONNX: Gemm(transB=1) of
    the dequantized activation and int8 weights [N, K] per output channel
    (axis 0), plus a float bias."""
    rng = np.random.default_rng(11)
    k, n = 70, 37
    w = rng.integers(-127, 128, (n, k), dtype=np.int8)
    ws = (rng.random(n) * 0.01 + 0.001).astype(np.float32)
    bias = rng.normal(0, 1, n).astype(np.float32)
    path = tmp_path / "gemm.onnx"
    save(path, [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
        helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], axis=0),
        helper.make_node("Gemm", ["xd", "wd", "b"], ["y"], transB=1, name="fc")],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", n])],
        [constant("xs", np.float32(0.05)), constant("xz", np.uint8(120)),
         constant("w", w), constant("ws", ws), constant("wz", np.zeros(n, np.int8)),
         constant("b", bias)])
    level2 = cuvilc_output("--quiet", path, "--emit=mlir-level2", "--max-batch=8").stdout
    assert re.search(r'ukernel_call "quantized_matmul" .* packed_b', level2), level2
    assert '"gemm"' not in level2
    assert "epilogue <steps = [col_bias]>" in level2
    model = compile_model(str(CUVILC), path, tmp_path / "gemm.so", "--max-batch=8")
    x = rng.normal(0, 3, (6, k)).astype(np.float32)
    xd = dequantize(quantize(x, 0.05, 120, np.uint8), 0.05, 120).astype(np.float64)
    wd = w.astype(np.float64) * ws.astype(np.float64)[:, None]
    expected = xd @ wd.T + bias
    (y,) = model(x, batch=6)
    np.testing.assert_allclose(y, expected, rtol=0, atol=1e-6 * np.abs(expected).max())


def test_qlinearmatmul_with_int8_weights_runs_on_the_integer_kernel(tmp_path):
    """QLinearMatMul (an integer op of models quantized elsewhere) with
    constant symmetric int8 weights per column: the integer product, then the
    output requantized to uint8. Against ONNX's formula in numpy (exact int32
    sums, times a_scale * b_scale / y_scale, rounded half to even): Cuvil
    scales in two float32 steps, so a product within float32 rounding of a
    halfway point may land one level off; nothing may be further."""
    rng = np.random.default_rng(13)
    m, k, n = 16, 40, 24
    a = rng.integers(0, 256, (m, k), dtype=np.uint8)
    b = rng.integers(-127, 128, (k, n), dtype=np.int8)
    a_scale, a_zero = np.float32(0.02), np.uint8(128)
    b_scale = (rng.random(n) * 0.01 + 0.002).astype(np.float32)
    y_scale, y_zero = np.float32(0.5), np.uint8(100)
    path = tmp_path / "qlinear.onnx"
    save(path, [helper.make_node(
        "QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"],
        name="qmm")],
        [helper.make_tensor_value_info("a", TensorProto.UINT8, [m, k])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, [m, n])],
        [constant("as", a_scale), constant("az", a_zero), constant("b", b),
         constant("bs", b_scale), constant("bz", np.zeros(n, np.int8)),
         constant("ys", y_scale), constant("yz", y_zero)])
    level2 = cuvilc_output("--quiet", path, "--emit=mlir-level2").stdout
    assert '"quantized_matmul"' in level2 and '"matmul"' not in level2
    model = compile_model(str(CUVILC), path, tmp_path / "qlinear.so")
    (y,) = model(a, batch=1)
    acc = (a.astype(np.int64) - int(a_zero)) @ b.astype(np.int64)
    scale = (a_scale * b_scale / y_scale).astype(np.float32)
    expected = np.clip(np.rint(acc * scale) + int(y_zero), 0, 255).astype(np.uint8)
    difference = np.abs(y.astype(np.int64) - expected)
    assert difference.max() <= 1
    assert np.count_nonzero(difference) <= 0.01 * difference.size


def test_a_qdq_convolution_runs_on_the_integer_kernel(tmp_path):
    """A QDQ Conv as quantization tools write it: uint8 input, int8 OIHW
    weights per output channel (axis 0), a float bias; stride 2, padding 1
    (the zero point pads: a real zero). The integer convolution sums exactly,
    so it is the float64 convolution of the dequantized values to within
    float32 rounding, at 1 and 2 threads alike."""
    rng = np.random.default_rng(17)
    c, o, size = 5, 6, 9
    w = rng.integers(-127, 128, (o, c, 3, 3), dtype=np.int8)
    ws = (rng.random(o) * 0.01 + 0.001).astype(np.float32)
    bias = rng.normal(0, 1, o).astype(np.float32)
    path = tmp_path / "conv.onnx"
    save(path, [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
        helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], axis=0),
        helper.make_node("Conv", ["xd", "wd", "b"], ["y"], strides=[2, 2],
                         pads=[1, 1, 1, 1], name="conv")],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", c, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", o, 5, 5])],
        [constant("xs", np.float32(0.05)), constant("xz", np.uint8(120)),
         constant("w", w), constant("ws", ws), constant("wz", np.zeros(o, np.int8)),
         constant("b", bias)])
    level2 = cuvilc_output("--quiet", path, "--emit=mlir-level2", "--max-batch=4").stdout
    assert '"quantized_conv2d"' in level2 and '"conv2d"' not in level2
    model = compile_model(str(CUVILC), path, tmp_path / "conv.so", "--max-batch=4")
    x = rng.normal(0, 3, (3, c, size, size)).astype(np.float32)
    xd = dequantize(quantize(x, 0.05, 120, np.uint8), 0.05, 120).astype(np.float64)
    wd = w.astype(np.float64) * ws.astype(np.float64)[:, None, None, None]
    expected = conv2d_reference(xd, wd, bias, 2, 1)
    (y,) = model(x, batch=3)
    np.testing.assert_allclose(y, expected, rtol=0, atol=1e-5 * np.abs(expected).max())
    (two,) = model(x, batch=3, threads=2)
    assert np.array_equal(y, two)
