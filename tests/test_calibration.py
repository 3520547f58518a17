"""cuvilc --quantize=int8 --calibration=FILE.npz: post-training quantization
of ONNX models from the command line, its report and its errors.

The numerics are checked against int8 arithmetic written here in numpy:
the activation quantized with the scale and zero point the compiler chose
(read from --quantization-report, whose ranges are checked against the
float32 activations numpy computes), weights per column symmetric int8
(scale max|w| / m, round half to even, m the report's weight_max: 127, or
64 on x86 without VNNI), exact integer sums, one float32 scale per column,
the bias added in float32.
"""

import json
import pathlib
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

ROOT = pathlib.Path(__file__).resolve().parents[1]
CUVILC = ROOT / "bazel-bin" / "tools" / "cuvilc"
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
from cuvil_e2e import CompiledModel  # noqa: E402

K, HIDDEN, N = 20, 33, 10


def mlp(tmp_path, rng):
    """x [batch, 20] -> Gemm (nn.Linear: transB, bias) -> Relu -> MatMul ->
    Add: both ONNX spellings of a linear layer."""
    w1 = rng.normal(0, 0.3, (HIDDEN, K)).astype(np.float32)
    b1 = rng.normal(0, 0.1, HIDDEN).astype(np.float32)
    w2 = rng.normal(0, 0.3, (HIDDEN, N)).astype(np.float32)
    w2[:, 3] = 0  # a column of zeros: scale 1, every q 0
    b2 = rng.normal(0, 0.1, N).astype(np.float32)
    graph = helper.make_graph([
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], transB=1, name="fc1"),
        helper.make_node("Relu", ["h"], ["r"], name="relu"),
        helper.make_node("MatMul", ["r", "w2"], ["m"], name="fc2"),
        helper.make_node("Add", ["m", "b2"], ["y"], name="bias2")], "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", K])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", N])],
        [numpy_helper.from_array(a, name) for a, name in
         ((w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    path = tmp_path / "mlp.onnx"
    onnx.save(model, str(path))
    return path, (w1.T.copy(), b1, w2, b2)


def cuvilc(*args, check=True):
    result = subprocess.run([str(CUVILC), *map(str, args)], capture_output=True,
                            text=True)
    if check:
        assert result.returncode == 0, result.stderr
    return result


def int8_layer(a, w, bias, scale, zero, weight_max):
    """The int8 layer: quantize a, integer product with per-column int8 w in
    [-weight_max, weight_max]."""
    qa = np.clip(np.rint(a / np.float32(scale)) + zero, 0, 255).astype(np.int64)
    amax = np.abs(w).max(axis=0)
    wscale = np.where(amax > 0, (amax / float(weight_max)).astype(np.float32), 1.0)
    qw = np.clip(np.rint(w / wscale), -weight_max, weight_max).astype(np.int64)
    acc = (qa - zero) @ qw
    col_scale = (np.float64(np.float32(scale)) * wscale).astype(np.float32)
    return acc.astype(np.float32) * col_scale + bias


def test_int8_mlp_matches_integer_arithmetic(tmp_path):
    rng = np.random.default_rng(3)
    path, (w1, b1, w2, b2) = mlp(tmp_path, rng)
    samples = rng.normal(0, 1, (200, K)).astype(np.float32)
    np.savez(tmp_path / "cal.npz", x=samples)
    report_path = tmp_path / "report.json"
    result = cuvilc(path, "--max-batch=16", "--quantize=int8",
                    f"--calibration={tmp_path / 'cal.npz'}",
                    f"--quantization-report={report_path}", "-o",
                    tmp_path / "mlp.so")
    assert "calibrating: building the float32 model to observe 2 activations" \
        in result.stderr
    assert "int8: 2 layers quantized, 0 ops kept in float32" in result.stderr
    report = json.loads(report_path.read_text())
    assert report["samples"] == 200 and report["calls"] == 13  # 12 x 16 + 8
    fc1, fc2 = report["layers"]
    assert (fc1["node"], fc1["op"], fc2["node"], fc2["op"]) == (
        "fc1", "cuvil.gemm", "fc2", "cuvil.matmul")
    # The ranges are the float32 activations' extremes over all samples.
    hidden = np.maximum(samples @ w1 + b1, 0)
    assert fc1["observed_min"] == samples.min()
    assert fc1["observed_max"] == samples.max()
    assert fc2["observed_min"] == 0
    assert fc2["observed_max"] == pytest.approx(hidden.max(), rel=1e-6)
    assert fc2["zero_point"] == 0 and fc2["columns"] == N

    model = CompiledModel(tmp_path / "mlp.so")
    assert model.metadata["kernels"]["qgemm4"] != "none"
    x = rng.normal(0, 1.2, (7, K)).astype(np.float32)  # beyond the range too
    (y,) = model(x, batch=7)
    m = report["weight_max"]
    assert m in (64, 127)
    if m == 64:  # x86 without VNNI: 7-bit weights run on vpmaddubsw
        assert model.metadata["kernels"]["qgemm4_narrow"] == "avx2_narrow"
    h = np.maximum(int8_layer(x, w1, b1, fc1["scale"], fc1["zero_point"], m), 0)
    expected = int8_layer(h, w2, b2, fc2["scale"], fc2["zero_point"], m)
    np.testing.assert_allclose(y, expected, rtol=0,
                               atol=1e-5 * np.abs(expected).max())
    # The bias (and fc1's ReLU and fc2's quantize: fc1 writes bytes) ride in
    # the int8 kernel's epilogue, and rows split over threads compute the
    # same bits.
    level2 = cuvilc("--quiet", path, "--max-batch=16", "--quantize=int8",
                    f"--calibration={tmp_path / 'cal.npz'}",
                    "--emit=mlir-level2").stdout
    assert level2.count('"quantized_matmul"') == 2
    assert "epilogue <steps = [col_bias, relu, quantize]>" in level2
    assert level2.count('ukernel_call "quantize"') == 1
    assert "epilogue <steps = [col_bias]>" in level2
    big = rng.normal(0, 1, (16, K)).astype(np.float32)
    (one,) = model(big, batch=16)
    (two,) = model(big, batch=16, threads=2)
    assert np.array_equal(one, two)


def quantize_u8(x, scale, zero):
    return np.clip(np.rint(x / np.float32(scale)) + zero, 0, 255).astype(np.uint8)


def test_int8_mlp_with_integer_io(tmp_path):
    """--integer-io: x comes in as the uint8 fc1 reads (its calibrated type)
    and y goes out as uint8 over its calibrated range, written by fc2's
    epilogue; the bytes are the int8 model's float output, quantized."""
    rng = np.random.default_rng(8)
    path, (w1, b1, w2, b2) = mlp(tmp_path, rng)
    samples = rng.normal(0, 1, (100, K)).astype(np.float32)
    np.savez(tmp_path / "cal.npz", x=samples)
    flags = [path, "--max-batch=8", "--quantize=int8", "--integer-io",
             f"--calibration={tmp_path / 'cal.npz'}"]
    result = cuvilc(*flags, f"--quantization-report={tmp_path / 'r.json'}",
                    "-o", tmp_path / "mlp.so")
    report = json.loads((tmp_path / "r.json").read_text())
    fc1, fc2 = report["layers"]
    x_io, y_io = report["io"]
    assert (x_io["name"], x_io["input"], y_io["name"], y_io["input"]) == (
        "x", True, "y", False)
    assert (x_io["scale"], x_io["zero_point"]) == (fc1["scale"], fc1["zero_point"])
    m = report["weight_max"]
    # The observed range is that of the float32 model, close to the int8 one.
    float_y = np.maximum(samples @ w1 + b1, 0) @ w2 + b2
    assert y_io["observed_min"] == pytest.approx(float_y.min(), rel=1e-5)
    assert y_io["observed_max"] == pytest.approx(float_y.max(), rel=1e-5)
    lo, hi = min(y_io["observed_min"], 0), max(y_io["observed_max"], 0)
    assert y_io["scale"] == pytest.approx(np.float32((hi - lo) / 255), rel=1e-7)
    assert y_io["zero_point"] == round(-lo / y_io["scale"])
    assert "int8: 2 layers quantized" in result.stderr

    model = CompiledModel(tmp_path / "mlp.so")
    (x_spec,), (y_spec,) = model.metadata["inputs"], model.metadata["outputs"]
    assert x_spec["dtype"] == y_spec["dtype"] == "uint8"
    assert x_spec["quantization"] == {"scale": x_io["scale"],
                                      "zero_point": x_io["zero_point"]}
    assert y_spec["quantization"] == {"scale": y_io["scale"],
                                      "zero_point": y_io["zero_point"]}
    x = rng.normal(0, 1, (7, K)).astype(np.float32)
    qx = quantize_u8(x, x_io["scale"], x_io["zero_point"])
    (qy,) = model(qx, batch=7)
    xd = (qx.astype(np.float32) - x_io["zero_point"]) * np.float32(x_io["scale"])
    h = np.maximum(int8_layer(xd, w1, b1, fc1["scale"], fc1["zero_point"], m), 0)
    expected = quantize_u8(int8_layer(h, w2, b2, fc2["scale"], fc2["zero_point"], m),
                           y_io["scale"], y_io["zero_point"])
    # float32 sums in another order may land on the other side of a
    # rounding point: one step at most, and rarely.
    diff = np.abs(qy.astype(np.int64) - expected)
    assert diff.max() <= 1 and np.count_nonzero(diff) <= 2, (qy, expected)
    level2 = cuvilc("--quiet", *flags, "--emit=mlir-level2",
                    f"--quantization-report={tmp_path / 'r.txt'}").stdout
    assert 'ukernel_call "quantize"' not in level2
    assert "epilogue <steps = [col_bias, quantize]>" in level2, level2
    text = (tmp_path / "r.txt").read_text().splitlines()
    at = text.index("integer I/O (real = scale * (q - zero point)):")
    assert text[at + 1].split()[:7] == [
        "input", "x", "uint8", "scale", f"{x_io['scale']:.6g}", "zero",
        str(x_io["zero_point"])]
    assert text[at + 2].split()[:3] == ["output", "y", "uint8"]
    assert "(observed [" in text[at + 2]


def test_integer_io_errors(tmp_path):
    path, _ = mlp(tmp_path, np.random.default_rng(9))
    result = cuvilc(path, "--integer-io", "-o", tmp_path / "out.so", check=False)
    assert result.returncode == 1
    assert "integer I/O: input 'x' is float32, and the model neither quantizes " \
        "it nor has a calibrated range for it; calibrate the model " \
        "(--quantize=int8) or compile without --integer-io" in result.stderr
    result = cuvilc(path, "--integer-io", "--quantize=bf16", "-o",
                    tmp_path / "out.so", check=False)
    assert result.returncode == 2
    assert "--integer-io passes 8-bit quantized tensors; use it with " \
        "--quantize=int8 (or an ONNX QDQ model), not bf16" in result.stderr
    assert not (tmp_path / "out.so").exists()


def test_text_report_and_keep_fp32(tmp_path):
    rng = np.random.default_rng(4)
    path, _ = mlp(tmp_path, rng)
    np.savez(tmp_path / "cal.npz", x=rng.normal(0, 1, (32, K)))  # float64
    result = cuvilc(path, "--max-batch=8", "--quantize=int8",
                    f"--calibration={tmp_path / 'cal.npz'}", "--keep-fp32=fc2",
                    "--observer=percentile", "--percentile=99",
                    f"--quantization-report={tmp_path / 'report.txt'}", "-o",
                    tmp_path / "mlp.so")
    kept = f"'fc2' ({path}): kept in float32, as asked (keep-fp32 'fc2')"
    assert f"note: {kept}" in result.stderr
    text = (tmp_path / "report.txt").read_text()
    lines = text.splitlines()
    assert lines[0] in (
        f"int8 quantization: percentile observers over 32 samples (4 calls); "
        f"weights in [-{m}, {m}]" for m in (64, 127))
    assert lines[1].split() == ["layer", "op", "observed", "[min,", "max]",
                                "quantized", "[lo,", "hi]", "activation", "/",
                                "weights"]
    assert lines[2].startswith("fc1 ") and "uint8 scale" in lines[2]
    assert "int8 x 33 columns" in lines[2]
    assert lines[3:] == ["kept in float32:", f"  {kept}"]


@pytest.mark.parametrize("arrays,message", [
    ({"z": np.zeros((3, K), np.float32)},
     "has an array 'z', which is not an input of the model (inputs: x)"),
    ({}, "has no array for input 'x'; save one per input"),
    ({"x": np.zeros((3, K + 1), np.float32)},
     "calibration array 'x' has shape [3, 21]; the input is [-1, 20], so it "
     "needs shape [N, 20] (samples first)"),
    ({"x": np.zeros((3, K), np.int32)},
     "calibration array 'x' is int32, but the input is float32"),
])
def test_calibration_data_errors(tmp_path, arrays, message):
    path, _ = mlp(tmp_path, np.random.default_rng(5))
    np.savez(tmp_path / "bad.npz", **arrays)
    result = cuvilc(path, "--max-batch=4", "--quantize=int8",
                    f"--calibration={tmp_path / 'bad.npz'}", "-o",
                    tmp_path / "out.so", check=False)
    assert result.returncode == 1
    assert message in result.stderr, result.stderr
    assert not (tmp_path / "out.so").exists()


def test_compressed_and_missing_calibration_files(tmp_path):
    path, _ = mlp(tmp_path, np.random.default_rng(6))
    np.savez_compressed(tmp_path / "c.npz", x=np.zeros((3, K), np.float32))
    result = cuvilc(path, "--quantize=int8", f"--calibration={tmp_path / 'c.npz'}",
                    "--max-batch=4", "-o", tmp_path / "out.so", check=False)
    assert "is compressed; save calibration data with numpy.savez, not " \
        "numpy.savez_compressed" in result.stderr
    result = cuvilc(path, "--quantize=int8", f"--calibration={tmp_path / 'no.npz'}",
                    "--max-batch=4", "-o", tmp_path / "out.so", check=False)
    assert result.returncode == 1 and "no.npz" in result.stderr


@pytest.mark.parametrize("flags,message", [
    (["--quantize=int8"], "--quantize=int8 needs --calibration=FILE.npz"),
    (["--calibration=c.npz"], "--calibration applies with --quantize=int8"),
    (["--keep-fp32=fc1"], "--keep-fp32 applies with --quantize=int8"),
    (["--quantize=int4", "--calibration=c.npz"],
     "unknown --quantize value 'int4'; expected int8"),
    (["--quantize=int8", "--calibration=c.npz", "--observer=kl"],
     "--observer: unknown observer 'kl'; expected minmax, percentile or entropy"),
    (["--quantize=int8", "--calibration=c.npz", "--percentile=20"],
     "--percentile must be in (50, 100], got 20"),
])
def test_quantization_flag_errors(tmp_path, flags, message):
    path, _ = mlp(tmp_path, np.random.default_rng(7))
    result = cuvilc(path, *flags, "-o", tmp_path / "out.so", check=False)
    assert result.returncode == 2
    assert message in result.stderr, result.stderr
