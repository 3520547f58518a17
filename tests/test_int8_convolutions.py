"""int8 convolution networks end to end: QDQ ONNX graphs and calibrated
float models compiled onto the integer convolutions (blocked direct tiles,
depthwise, requantizing epilogues), run through the C ABI.

The QDQ networks use power-of-two scales and biases on a power-of-two grid,
so every float32 step a layer takes (scale, bias, residual, activation,
division by the next scale) is exact: the outputs must equal, bit for bit,
the integer arithmetic written here in numpy (exact int64 sums, round half
to even, saturate), whatever the kernels fuse. With arbitrary scales, a
requantized value may differ by one level where float32 rounding lands on
a halfway point, so those runs are compared with a tolerance of one
quantization step of each layer.
"""

import json
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
from cuvil_e2e import CompiledModel, compile_model  # noqa: E402
from qdq_reference import constant, dequantize, quantize, save  # noqa: E402


def cuvilc(*args):
    result = subprocess.run([str(CUVILC), *map(str, args)], capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stderr
    return result


def conv_int(x, w, stride=1, pad=1, groups=1):
    """NCHW int64 x OIHW int64, zero padding (x is already q - zero)."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.zeros((n, c, h + 2 * pad, wd + 2 * pad), np.int64)
    xp[:, :, pad:pad + h, pad:pad + wd] = x
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    y = np.zeros((n, o, oh, ow), np.int64)
    og = o // groups
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                patch = xp[:, g * cg:(g + 1) * cg,
                           i:i + stride * oh:stride, j:j + stride * ow:stride]
                y[:, g * og:(g + 1) * og] += np.einsum(
                    "nchw,oc->nohw", patch, w[g * og:(g + 1) * og, :, i, j])
    return y


def max_pool_3x3(v):
    """3x3 max pooling, stride 1, padding 1 (padding never wins), NCHW."""
    h, w = v.shape[2:]
    padded = np.full(v.shape[:2] + (h + 2, w + 2), -np.inf, v.dtype)
    padded[:, :, 1:-1, 1:-1] = v
    return np.max([padded[:, :, i:i + h, j:j + w]
                   for i in range(3) for j in range(3)], axis=0)


class Layer:
    """One QDQ convolution: int8 OIHW weights, per-channel scales."""

    def __init__(self, rng, c, o, k, groups=1, exact=True, weight_max=127):
        self.w = rng.integers(-weight_max, weight_max + 1,
                              (o, c // groups, k, k)).astype(np.int8)
        if exact:
            self.ws = np.ldexp(1.0, -rng.integers(6, 9, o)).astype(np.float32)
            self.b = (rng.integers(-64, 65, o) / 32.0).astype(np.float32)
        else:
            self.ws = (rng.random(o) * 0.01 + 0.002).astype(np.float32)
            self.b = rng.normal(0, 0.5, o).astype(np.float32)
        self.k, self.groups = k, groups

    def value(self, q, zero, scale, stride=1):
        """The layer's float32 value on uint8 q: exact sums, then the scale
        (input scale x channel scale, rounded once to float32) and bias."""
        acc = conv_int(q.astype(np.int64) - zero, self.w.astype(np.int64),
                       stride, self.k // 2, self.groups)
        col = (np.float64(np.float32(scale)) * self.ws.astype(np.float64)).astype(np.float32)
        v = acc.astype(np.float32) * col[None, :, None, None]
        return v + self.b[None, :, None, None]


def network(tmp_path, rng, exact, weight_max=127, float_shortcut=False):
    """x [batch, 3, 12, 12] -> Q -> conv 3x3 (3 -> 16) + relu -> max pool
    3x3 -> Q ->
    depthwise 3x3 stride 2 + relu6 -> Q -> conv 1x1 (16 -> 16) + the
    depthwise's dequantized output -> relu: a plain input, a requantizing
    convolution (its quantize moved before the pool, so the pool runs on
    uint8), a requantizing depthwise one, and one adding a residual. With
    `float_shortcut`, the residual is the depthwise's float32 output."""
    scales = [np.float32(2.0 ** -5), np.float32(2.0 ** -3), np.float32(2.0 ** -4)]
    zeros = [np.uint8(128), np.uint8(0), np.uint8(3)]
    if not exact:
        scales = [np.float32(0.0371), np.float32(0.113), np.float32(0.0617)]
    layers = [Layer(rng, 3, 16, 3, 1, exact, weight_max),
              Layer(rng, 16, 16, 3, 16, exact, weight_max),
              Layer(rng, 16, 16, 1, 1, exact, weight_max)]
    nodes, inits = [], []
    for i, (s, z) in enumerate(zip(scales, zeros)):
        inits += [constant(f"s{i}", s), constant(f"z{i}", z)]
    for i, layer in enumerate(layers):
        inits += [constant(f"w{i}", layer.w), constant(f"ws{i}", layer.ws),
                  constant(f"wz{i}", np.zeros(len(layer.ws), np.int8)),
                  constant(f"b{i}", layer.b)]
        nodes.append(helper.make_node("DequantizeLinear",
                                      [f"w{i}", f"ws{i}", f"wz{i}"], [f"wd{i}"],
                                      axis=0))
    def qdq(src, i):
        nodes.append(helper.make_node("QuantizeLinear", [src, f"s{i}", f"z{i}"], [f"q{i}"]))
        nodes.append(helper.make_node("DequantizeLinear", [f"q{i}", f"s{i}", f"z{i}"], [f"d{i}"]))
        return f"d{i}"
    d0 = qdq("x", 0)
    nodes.append(helper.make_node("Conv", [d0, "wd0", "b0"], ["c0"], pads=[1] * 4, name="conv0"))
    nodes.append(helper.make_node("Relu", ["c0"], ["r0"]))
    nodes.append(helper.make_node("MaxPool", ["r0"], ["m0"], kernel_shape=[3, 3],
                                  pads=[1] * 4, name="pool"))
    d1 = qdq("m0", 1)
    nodes.append(helper.make_node("Conv", [d1, "wd1", "b1"], ["c1"], pads=[1] * 4,
                                  strides=[2, 2], group=16, name="depthwise"))
    inits += [constant("lo", np.float32(0)), constant("hi", np.float32(6))]
    nodes.append(helper.make_node("Clip", ["c1", "lo", "hi"], ["r1"]))
    d2 = qdq("r1", 2)
    nodes.append(helper.make_node("Conv", [d2, "wd2", "b2"], ["c2"], name="pointwise"))
    nodes.append(helper.make_node("Add", ["c2", "r1" if float_shortcut else d2], ["a2"]))
    nodes.append(helper.make_node("Relu", ["a2"], ["y"]))
    path = tmp_path / "net.onnx"
    save(path, nodes,
         [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 12, 12])],
         [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 16, 6, 6])],
         inits)

    def reference(x):
        q0 = quantize(x, scales[0], zeros[0], np.uint8)
        v0 = np.maximum(layers[0].value(q0, int(zeros[0]), scales[0]), 0)
        q1 = quantize(max_pool_3x3(v0), scales[1], zeros[1], np.uint8)
        v1 = np.clip(layers[1].value(q1, int(zeros[1]), scales[1], stride=2), 0, 6)
        q2 = quantize(v1, scales[2], zeros[2], np.uint8)
        v2 = layers[2].value(q2, int(zeros[2]), scales[2])
        shortcut = v1 if float_shortcut else dequantize(q2, scales[2], zeros[2])
        return np.maximum(v2 + shortcut, 0), (q1, q2)

    return path, reference, scales, layers


def test_a_qdq_network_runs_on_int8_kernels_bit_for_bit(tmp_path):
    rng = np.random.default_rng(5)
    path, reference, _, _ = network(tmp_path, rng, exact=True)
    level2 = cuvilc("--quiet", path, "--max-batch=4", "--emit=mlir-level2").stdout
    calls = re.findall(r'ukernel_call "quantized_conv2d".*', level2)
    assert len(calls) == 3 and '"conv2d"' not in level2
    # The first two requantize their results; every one runs blocked.
    assert level2.count("epilogue <steps = [relu, quantize]>") == 1
    assert level2.count("epilogue <steps = [clip, quantize]") == 1
    assert level2.count("epilogue <steps = [add, relu]>") == 1
    assert level2.count("algorithm <direct_blocked>") == 3
    # The pool reads and writes the requantized uint8 values.
    assert re.search(r'ukernel_call "max_pool2d".*!quant\.uniform<u8:f32, 1\.250000e-01>',
                     level2), level2
    # No reorder inside the graph: the one copy writes the model's output.
    assert level2.count("cuvil_l2.copy") == 1

    model = compile_model(str(CUVILC), path, tmp_path / "net.so", "--max-batch=4")
    kernels = model.metadata["kernels"]
    assert kernels["qconvb"] in ("avx2", "avx512bw", "avxvnni", "avx512vnni")
    x = rng.normal(0, 2, (3, 3, 12, 12)).astype(np.float32)
    (y,) = model(x, batch=3)
    expected, _ = reference(x)
    np.testing.assert_array_equal(y, expected)
    (two,) = model(x, batch=3, threads=2)
    np.testing.assert_array_equal(two, y)


def test_a_qdq_float_shortcut_stays_float(tmp_path):
    """An imported QDQ graph computes what it says: its float32 shortcut is
    not read as the 8-bit tensor beside it (cuvil-quantize-residuals runs
    only on models Cuvil quantizes), so the outputs are the reference's bit
    for bit."""
    rng = np.random.default_rng(6)
    path, reference, _, _ = network(tmp_path, rng, exact=True, float_shortcut=True)
    model = compile_model(str(CUVILC), path, tmp_path / "net.so", "--max-batch=4")
    x = rng.normal(0, 2, (3, 3, 12, 12)).astype(np.float32)
    (y,) = model(x, batch=3)
    expected, _ = reference(x)
    np.testing.assert_array_equal(y, expected)


def without_vnni():
    """The x86 targets without VNNI this machine runs, and their exact and
    narrow int8 tiles: AVX2, and AVX-512BW (Skylake-SP) where it has it."""
    targets = [("x86-64-v3", "avx2", "avx2_narrow")]
    if "avx512bw" in pathlib.Path("/proc/cpuinfo").read_text().split():
        targets.append(("skylake-avx512", "avx512bw", "avx512bw_narrow"))
    return targets


def test_narrow_weights_take_the_narrow_tiles(tmp_path):
    """Weights of magnitude <= 64 (what the quantizer writes for x86 without
    VNNI) run vpmaddubsw's tiles there, with the same results."""
    rng = np.random.default_rng(6)
    path, reference, _, _ = network(tmp_path, rng, exact=True, weight_max=64)
    x = rng.normal(0, 2, (2, 3, 12, 12)).astype(np.float32)
    for cpu, exact, narrow in without_vnni():
        model = compile_model(str(CUVILC), path, tmp_path / f"{cpu}.so", "--max-batch=2",
                              f"--cpu={cpu}")
        assert model.metadata["kernels"]["qconvb_narrow"] == narrow
        assert model.metadata["kernels"]["qconvb"] == exact
        (y,) = model(x, batch=2)
        np.testing.assert_array_equal(y, reference(x)[0])


def test_full_range_weights_take_the_exact_tiles_without_vnni(tmp_path):
    """Weights up to 127 (a QDQ model quantized elsewhere) on x86 without
    VNNI: the exact tiles (two vpmaddwd per four products), bit for bit."""
    rng = np.random.default_rng(9)
    path, reference, _, _ = network(tmp_path, rng, exact=True)
    x = rng.normal(0, 2, (2, 3, 12, 12)).astype(np.float32)
    for cpu, exact, _ in without_vnni():
        model = compile_model(str(CUVILC), path, tmp_path / f"{cpu}.so", "--max-batch=2",
                              f"--cpu={cpu}")
        assert model.metadata["kernels"]["qconvb"] == exact
        assert model.metadata["kernels"]["qconvb_narrow"] == "none"
        (y,) = model(x, batch=2)
        np.testing.assert_array_equal(y, reference(x)[0])


def test_the_portable_c_gives_the_same_bits(tmp_path):
    """--emit=c keeps to the reference kernels: the same outputs."""
    rng = np.random.default_rng(8)
    path, reference, _, _ = network(tmp_path, rng, exact=True)
    source = tmp_path / "net.c"
    cuvilc("--quiet", path, "--max-batch=2", "--emit=c", "-o", source)
    text = source.read_text()
    assert "cuvil_qconv2d_blocked(cuvil_qconvb_reference" in text or \
        "cuvil_qconv2d_blocked(CUVIL_QCONVB" in text
    library = tmp_path / "net_c.so"
    subprocess.run(["clang-22", "-std=c99", "-O2", "-shared", "-fPIC", "-o",
                    str(library), str(source), "-lm", "-lpthread"], check=True)
    model = CompiledModel(library)
    x = rng.normal(0, 2, (2, 3, 12, 12)).astype(np.float32)
    (y,) = model(x, batch=2)
    np.testing.assert_array_equal(y, reference(x)[0])


def test_arbitrary_scales_agree_within_a_level(tmp_path):
    rng = np.random.default_rng(7)
    path, reference, scales, layers = network(tmp_path, rng, exact=False)
    model = compile_model(str(CUVILC), path, tmp_path / "net.so", "--max-batch=4")
    x = rng.normal(0, 2, (4, 3, 12, 12)).astype(np.float32)
    (y,) = model(x, batch=4)
    expected, _ = reference(x)
    # A requantized input one level off (float32 rounding at a halfway
    # point) moves an output by at most one step of it through the last
    # layer's weights and its residual; allow a few such.
    last = layers[2]
    through = np.abs(last.w.astype(np.float64)).sum(axis=(1, 2, 3)) * last.ws
    step = float(scales[2]) * (through.max() + 1)
    difference = np.abs(y - expected)
    close = difference <= 1e-6 * np.abs(expected).max()
    assert close.mean() >= 0.99
    assert difference.max() <= 4 * step


def calibrated_cnn(tmp_path, rng):
    """A float ResNet-style CNN: stem conv + relu, a basic block (two 3x3
    convolutions, residual, relu), a depthwise-separable pair, global
    pooling and a linear classifier."""
    def w(*shape, scale=0.3):
        return rng.normal(0, scale, shape).astype(np.float32)
    inits = {"w0": w(16, 3, 3, 3), "b0": w(16, scale=0.1),
             "w1": w(16, 16, 3, 3, scale=0.1), "b1": w(16, scale=0.1),
             "w2": w(16, 16, 3, 3, scale=0.1), "b2": w(16, scale=0.1),
             "w3": w(16, 1, 3, 3), "b3": w(16, scale=0.1),
             "w4": w(32, 16, 1, 1), "b4": w(32, scale=0.1),
             "fc": w(10, 32), "fb": w(10, scale=0.1)}
    nodes = [
        helper.make_node("Conv", ["x", "w0", "b0"], ["c0"], pads=[1] * 4, name="stem"),
        helper.make_node("Relu", ["c0"], ["r0"]),
        helper.make_node("Conv", ["r0", "w1", "b1"], ["c1"], pads=[1] * 4, name="block.conv1"),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1] * 4, name="block.conv2"),
        helper.make_node("Add", ["c2", "r0"], ["a2"]),
        helper.make_node("Relu", ["a2"], ["r2"]),
        helper.make_node("Conv", ["r2", "w3", "b3"], ["c3"], pads=[1] * 4, strides=[2, 2],
                         group=16, name="dw"),
        helper.make_node("Relu", ["c3"], ["r3"]),
        helper.make_node("Conv", ["r3", "w4", "b4"], ["c4"], name="pw"),
        helper.make_node("Relu", ["c4"], ["r4"]),
        helper.make_node("GlobalAveragePool", ["r4"], ["p"]),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("Gemm", ["f", "fc", "fb"], ["y"], transB=1, name="fc")]
    path = tmp_path / "cnn.onnx"
    save(path, nodes,
         [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 16, 16])],
         [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 10])],
         [constant(k, v) for k, v in inits.items()])
    return path


def test_calibrated_cnn_quantizes_every_convolution(tmp_path):
    rng = np.random.default_rng(9)
    path = calibrated_cnn(tmp_path, rng)
    samples = rng.normal(0, 1, (64, 3, 16, 16)).astype(np.float32)
    np.savez(tmp_path / "cal.npz", x=samples)
    flags = ["--max-batch=8", "--quantize=int8", f"--calibration={tmp_path / 'cal.npz'}"]
    result = cuvilc(path, *flags, f"--quantization-report={tmp_path / 'r.json'}",
                    "-o", tmp_path / "int8.so")
    assert "int8: 6 layers quantized, 0 ops kept in float32" in result.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert {layer["node"] for layer in report["layers"] if layer["quantized"]} == {
        "stem", "block.conv1", "block.conv2", "dw", "pw", "fc"}
    level2 = cuvilc("--quiet", path, *flags, "--emit=mlir-level2").stdout
    # The stem, conv1, conv2 (after its residual) and the depthwise write the
    # next layer's uint8 input; pw (global pooling reads it) writes float32.
    # conv2 adds the stem's output as those uint8 bytes (its shortcut): no
    # float32 copy of it, and no dequantize of its own.
    assert level2.count("quantize]>") == 4
    assert level2.count("steps = [add, relu, quantize]>") == 1
    assert 'ukernel_call "dequantize"' not in level2
    cuvilc("--quiet", path, "--max-batch=8", "-o", tmp_path / "fp32.so")
    fp32, int8 = CompiledModel(tmp_path / "fp32.so"), CompiledModel(tmp_path / "int8.so")
    x = rng.normal(0, 1, (8, 3, 16, 16)).astype(np.float32)
    (a,) = fp32(x, batch=8)
    (b,) = int8(x, batch=8)
    cosine = np.sum(a * b) / np.linalg.norm(a) / np.linalg.norm(b)
    assert cosine > 0.999, cosine
    (two,) = int8(x, batch=8, threads=2)
    np.testing.assert_array_equal(two, b)


def test_grouped_convolutions_run_in_int8(tmp_path):
    """Grouped convolutions (2 groups of 4 channels, then 4 groups of 3)
    unfold each group onto the int8 GEMM; the first requantizes into the
    second's input. Exact scales: bit for bit."""
    rng = np.random.default_rng(10)
    scales = [np.float32(2.0 ** -5), np.float32(2.0 ** -3)]
    zeros = [np.uint8(128), np.uint8(2)]
    layers = [Layer(rng, 8, 12, 3, groups=2), Layer(rng, 12, 8, 1, groups=4)]
    nodes, inits = [], []
    for i, layer in enumerate(layers):
        inits += [constant(f"s{i}", scales[i]), constant(f"z{i}", zeros[i]),
                  constant(f"w{i}", layer.w), constant(f"ws{i}", layer.ws),
                  constant(f"wz{i}", np.zeros(len(layer.ws), np.int8)),
                  constant(f"b{i}", layer.b)]

    def grouped_conv(i, src, dst):
        layer = layers[i]
        nodes.extend([
            helper.make_node("QuantizeLinear", [src, f"s{i}", f"z{i}"], [f"q{i}"]),
            helper.make_node("DequantizeLinear", [f"q{i}", f"s{i}", f"z{i}"], [f"d{i}"]),
            helper.make_node("DequantizeLinear", [f"w{i}", f"ws{i}", f"wz{i}"], [f"wd{i}"],
                             axis=0),
            helper.make_node("Conv", [f"d{i}", f"wd{i}", f"b{i}"], [dst],
                             pads=[layer.k // 2] * 4, group=layer.groups,
                             name=f"grouped{i}")])
    grouped_conv(0, "x", "c0")
    nodes.append(helper.make_node("Relu", ["c0"], ["r0"]))
    grouped_conv(1, "r0", "y")
    path = tmp_path / "grouped.onnx"
    save(path, nodes,
         [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8, 7, 7])],
         [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 8, 7, 7])],
         inits)
    level2 = cuvilc("--quiet", path, "--max-batch=4", "--emit=mlir-level2").stdout
    calls = re.findall(r'ukernel_call "quantized_conv2d".*', level2)
    assert len(calls) == 2 and '"conv2d"' not in level2, level2
    assert "groups = 2" in calls[0] and "steps = [relu, quantize]" in calls[0]
    assert "groups = 4" in calls[1]
    model = compile_model(str(CUVILC), path, tmp_path / "grouped.so", "--max-batch=4")
    x = rng.normal(0, 2, (3, 8, 7, 7)).astype(np.float32)
    q0 = quantize(x, scales[0], zeros[0], np.uint8)
    v0 = np.maximum(layers[0].value(q0, int(zeros[0]), scales[0]), 0)
    q1 = quantize(v0, scales[1], zeros[1], np.uint8)
    expected = layers[1].value(q1, int(zeros[1]), scales[1])
    (y,) = model(x, batch=3)
    np.testing.assert_array_equal(y, expected)
    (two,) = model(x, batch=3, threads=2)
    np.testing.assert_array_equal(two, y)
