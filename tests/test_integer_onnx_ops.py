"""Models quantized elsewhere: ONNX's integer ops (QLinearConv, ConvInteger,
MatMulInteger) and what torch.onnx exports from torch.ao.quantization
models, compiled by cuvilc and checked against the operators' formulas in
numpy integer arithmetic, and against PyTorch's own quantized modules."""

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
from qdq_reference import constant, conv2d_reference, save  # noqa: E402


def level2_kernels(path, *flags):
    out = subprocess.run([str(CUVILC), "--quiet", str(path), "--emit=mlir-level2",
                          *flags], check=True, capture_output=True, text=True).stdout
    return set(re.findall(r'ukernel_call "([a-z_0-9]+)"', out))


def int_conv(x, x_zero, w, w_zero, stride, pad):
    """ConvInteger's formula in int64: sum of (x - x_zero)(w - w_zero); the
    padding is x_zero, a zero after the subtraction."""
    xs = x.astype(np.int64) - np.int64(x_zero)
    ws = w.astype(np.int64) - np.asarray(w_zero, np.int64).reshape(-1, 1, 1, 1)
    y = conv2d_reference(xs.astype(np.float64), ws.astype(np.float64),
                         np.zeros(w.shape[0]), stride, pad)
    return np.rint(y).astype(np.int64)  # float64 holds these sums exactly


def test_qlinearconv_with_int8_weights_runs_on_the_integer_kernel(tmp_path):
    """QLinearConv: uint8 input, int8 weights per output channel, an int32
    bias, uint8 output. ONNX's formula: (exact int32 sum + bias) times
    x_scale * w_scale / y_scale, rounded half to even, saturated. Cuvil
    scales in float32 steps, so a result within rounding of a halfway point
    may land one level off; nothing may be further."""
    rng = np.random.default_rng(23)
    c, o, size = 4, 6, 7
    w = rng.integers(-127, 128, (o, c, 3, 3), dtype=np.int8)
    ws = (rng.random(o) * 0.004 + 0.001).astype(np.float32)
    bias = rng.integers(-3000, 3000, o, dtype=np.int32)
    xs, xz, ys, yz = np.float32(0.03), np.uint8(110), np.float32(0.05), np.uint8(90)
    path = tmp_path / "qconv.onnx"
    save(path, [helper.make_node(
        "QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["y"],
        pads=[1, 1, 1, 1], name="qconv")],
        [helper.make_tensor_value_info("x", TensorProto.UINT8, [2, c, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, [2, o, size, size])],
        [constant("xs", xs), constant("xz", xz), constant("w", w),
         constant("ws", ws), constant("wz", np.zeros(o, np.int8)),
         constant("ys", ys), constant("yz", yz), constant("b", bias)])
    kernels = level2_kernels(path)
    assert "quantized_conv2d" in kernels and "conv2d" not in kernels
    model = compile_model(str(CUVILC), path, tmp_path / "qconv.so")
    x = rng.integers(0, 256, (2, c, size, size), dtype=np.uint8)
    (y,) = model(x)
    acc = int_conv(x, xz, w, 0, 1, 1) + bias.reshape(1, -1, 1, 1)
    scale = (xs * ws / ys).astype(np.float64).reshape(1, -1, 1, 1)
    expected = np.clip(np.rint(acc * scale) + int(yz), 0, 255)
    difference = np.abs(y.astype(np.int64) - expected)
    assert difference.max() <= 1
    assert np.count_nonzero(difference) <= 0.01 * difference.size


def test_qlinearconv_with_a_float_bias_is_refused(tmp_path):
    """The bias of QLinearConv is int32 at x_scale * w_scale; a float one is
    a malformed model, reported with the node."""
    path = tmp_path / "fbias.onnx"
    save(path, [helper.make_node(
        "QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["y"],
        name="qconv")],
        [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 2, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, [1, 3, 2, 2])],
        [constant("xs", np.float32(0.1)), constant("xz", np.uint8(0)),
         constant("w", np.ones((3, 2, 3, 3), np.int8)), constant("ws", np.float32(0.1)),
         constant("wz", np.int8(0)), constant("ys", np.float32(0.1)),
         constant("yz", np.uint8(0)), constant("b", np.zeros(3, np.float32))])
    result = subprocess.run([str(CUVILC), str(path), "-o", str(tmp_path / "f.so")],
                            capture_output=True, text=True)
    assert result.returncode != 0
    assert "'qconv'" in result.stderr
    assert "QLinearConv expects an int32 bias of rank 1, got 'tensor<3xf32>'" in result.stderr


def conv_integer_model(path, w, x_zero, w_zero, shape, out_shape):
    save(path, [helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"],
                                 pads=[1, 1, 1, 1], strides=[2, 2], name="cint")],
         [helper.make_tensor_value_info("x", TensorProto.UINT8, shape)],
         [helper.make_tensor_value_info("y", TensorProto.INT32, out_shape)],
         [constant("w", w), constant("xz", x_zero), constant("wz", w_zero)])


@pytest.mark.parametrize("weights", ["int8", "uint8"])
def test_convinteger_sums_exactly(tmp_path, weights):
    """ConvInteger's int32 sums, bit for bit. Symmetric int8 weights run on
    the integer kernel; uint8 weights with a zero point per output channel
    on dequantized values in float32, exact because the importer proved
    every partial sum below 2^24."""
    rng = np.random.default_rng(29)
    c, o = 8, 5
    if weights == "int8":
        w = rng.integers(-128, 128, (o, c, 3, 3), dtype=np.int8)
        w_zero = np.int8(0)
    else:
        w = rng.integers(0, 256, (o, c, 3, 3), dtype=np.uint8)
        w_zero = rng.integers(0, 256, o, dtype=np.uint8)
    path = tmp_path / "cint.onnx"
    conv_integer_model(path, w, np.uint8(7), w_zero, [3, c, 9, 9], [3, o, 5, 5])
    kernels = level2_kernels(path)
    assert ("quantized_conv2d" in kernels) == (weights == "int8"), kernels
    x = rng.integers(0, 256, (3, c, 9, 9), dtype=np.uint8)
    x[0] = 255  # the largest products, where AVX2's 16-bit pair sums saturate
    expected = int_conv(x, 7, w, w_zero, 2, 1)
    # This machine's kernel, AVX2's (vpmaddubsw) and the portable one.
    for cpu in ("native", "x86-64-v3", "x86-64"):
        model = compile_model(str(CUVILC), path, tmp_path / f"{cpu}.so", f"--cpu={cpu}")
        (y,) = model(x)
        assert y.dtype == np.int32
        assert np.array_equal(y, expected), cpu
        (two,) = model(x, threads=2)
        assert np.array_equal(y, two)


def test_matmulinteger_sums_exactly_with_batches_and_zero_points(tmp_path):
    """MatMulInteger of a batched uint8 A (zero point 3) and uint8 B with a
    zero point per column: exact int32 results."""
    rng = np.random.default_rng(31)
    b = rng.integers(0, 256, (24, 10), dtype=np.uint8)
    b_zero = rng.integers(0, 256, 10, dtype=np.uint8)
    path = tmp_path / "mmint.onnx"
    save(path, [helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])],
         [helper.make_tensor_value_info("a", TensorProto.UINT8, [2, 5, 24])],
         [helper.make_tensor_value_info("y", TensorProto.INT32, [2, 5, 10])],
         [constant("b", b), constant("az", np.uint8(3)), constant("bz", b_zero)])
    model = compile_model(str(CUVILC), path, tmp_path / "mmint.so")
    a = rng.integers(0, 256, (2, 5, 24), dtype=np.uint8)
    (y,) = model(a)
    expected = (a.astype(np.int64) - 3) @ (b.astype(np.int64) - b_zero.astype(np.int64))
    assert np.array_equal(y, expected)


def test_integer_sums_float32_cannot_hold_are_refused(tmp_path):
    """Large weights over many terms can sum past 2^24, where float32 stops
    holding every integer: a compile error naming the node and the way out,
    never an inexact int32."""
    path = tmp_path / "big.onnx"
    w = np.full((8, 512, 3, 3), 127, np.int8)
    conv_integer_model(path, w, np.uint8(0), np.int8(0), [1, 512, 8, 8], [1, 8, 4, 4])
    result = subprocess.run([str(CUVILC), str(path), "-o", str(tmp_path / "big.so")],
                            capture_output=True, text=True)
    assert result.returncode != 0
    assert "'cint'" in result.stderr and "2^24" in result.stderr
    assert "QLinearConv" in result.stderr
    assert not (tmp_path / "big.so").exists()


def cpu_has_vnni():
    flags = pathlib.Path("/proc/cpuinfo").read_text().split()
    return "avx512_vnni" in flags or "avx_vnni" in flags


@pytest.mark.parametrize("engine", ["qnnpack", "onednn"])
def test_a_torch_ao_quantized_model_exported_by_torch_onnx(tmp_path, engine):
    """A model quantized by torch.ao.quantization (static, calibrated) and
    exported by torch.onnx (as QDQ around Conv and Gemm): its convolution
    and linear layer run on Cuvil's integer kernels, and the logits match
    PyTorch's own quantized modules to within one output level (the two
    round a product near a halfway point differently)."""
    torch = pytest.importorskip("torch")
    if engine not in torch.backends.quantized.supported_engines:
        pytest.skip(f"this PyTorch build has no {engine} engine")
    if engine == "onednn" and not cpu_has_vnni():
        # Measured on an AVX2-only CPU: up to 16 output levels off exact
        # integer arithmetic on a 512-input linear layer.
        pytest.skip("oneDNN's int8 on a CPU without VNNI sums uint8 x int8 "
                    "pairs in saturating int16 (vpmaddubsw) and the onednn "
                    "qconfig does not reduce the range for it, so PyTorch's "
                    "outputs are not a reference here")
    from torch.ao.quantization import (DeQuantStub, QuantStub, convert,
                                       fuse_modules, get_default_qconfig, prepare)

    class SmallQuantizedNet(torch.nn.Module):
        """Conv + ReLU, Linear: the eager-mode torch.ao.quantization recipe."""

        def __init__(self):
            super().__init__()
            self.quant, self.dequant = QuantStub(), DeQuantStub()
            self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.relu = torch.nn.ReLU()
            self.fc = torch.nn.Linear(8 * 8 * 8, 10)

        def forward(self, x):
            x = self.relu(self.conv(self.quant(x)))
            return self.dequant(self.fc(torch.flatten(x, 1)))

    torch.backends.quantized.engine = engine
    torch.manual_seed(0)
    model = SmallQuantizedNet().eval()
    model.qconfig = get_default_qconfig(engine)
    fuse_modules(model, [["conv", "relu"]], inplace=True)
    prepare(model, inplace=True)
    with torch.no_grad():
        for _ in range(4):
            model(torch.randn(16, 3, 8, 8))
    convert(model, inplace=True)
    x = torch.randn(4, 3, 8, 8)
    path = tmp_path / "ao.onnx"
    torch.onnx.export(model, x, str(path), opset_version=13, input_names=["x"],
                      output_names=["y"])
    kernels = level2_kernels(path)
    assert {"quantized_conv2d", "quantized_matmul"} <= kernels, kernels
    assert not {"conv2d", "gemm", "matmul"} & kernels, kernels
    compiled = compile_model(str(CUVILC), path, tmp_path / "ao.so")
    (y,) = compiled(x.numpy())
    with torch.no_grad():
        expected = model(x).numpy()
    level = model.fc.scale
    assert np.abs(y - expected).max() <= level * 1.001
    assert np.count_nonzero(np.abs(y - expected) > level / 2) <= 0.05 * y.size
