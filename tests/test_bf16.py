"""bfloat16 linear layers (cuvilc --quantize=bf16), compiled from ONNX and
run through the C ABI: against numpy's float64 product of the same
bfloat16-rounded values (rounding to nearest even written out here), and
bit for bit across the kernel variants (AVX-512 BF16, AVX2, portable C),
which sum in one specified order."""

import pathlib
import re
import subprocess
import sys

import numpy as np
from onnx import TensorProto, helper

ROOT = pathlib.Path(__file__).resolve().parents[1]
CUVILC = ROOT / "bazel-bin" / "tools" / "cuvilc"
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
from cuvil_e2e import compile_model  # noqa: E402
from qdq_reference import constant, conv2d_reference, save  # noqa: E402


def to_bf16(x):
    """float32 to the nearest bfloat16 (ties to even), back as float32."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return rounded.astype(np.uint32).view(np.float32)


def mlp(tmp_path, rng, k=200, hidden=48, n=10):
    w1 = rng.normal(0, 0.1, (hidden, k)).astype(np.float32)
    b1 = rng.normal(0, 0.1, hidden).astype(np.float32)
    w2 = rng.normal(0, 0.2, (hidden, n)).astype(np.float32)
    path = tmp_path / "mlp.onnx"
    save(path, [helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], transB=1, name="fc1"),
                helper.make_node("Relu", ["h"], ["r"]),
                helper.make_node("MatMul", ["r", "w2"], ["y"], name="fc2")],
         [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", k])],
         [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", n])],
         [constant("w1", w1), constant("b1", b1), constant("w2", w2)])

    def reference(x):
        h = to_bf16(x).astype(np.float64) @ to_bf16(w1.T).astype(np.float64) + b1
        r = np.maximum(h, 0).astype(np.float32)
        return to_bf16(r).astype(np.float64) @ to_bf16(w2).astype(np.float64)
    return path, reference


def test_bf16_linear_layers_compute_on_rounded_values(tmp_path):
    """Both layers read bfloat16 and sum in float32: within float32's
    rounding of the exact product of the rounded values, far tighter than
    the distance to the float32 model."""
    rng = np.random.default_rng(3)
    path, reference = mlp(tmp_path, rng)
    level2 = subprocess.run([str(CUVILC), "--quiet", str(path), "--quantize=bf16",
                             "--max-batch=16", "--emit=mlir-level2"], check=True,
                            capture_output=True, text=True).stdout
    products = re.findall(r'ukernel_call "matmul" ins\(.*bf16.*\{acc_type = f32\}', level2)
    assert len(products) == 2, level2
    model = compile_model(str(CUVILC), path, tmp_path / "mlp.so", "--quantize=bf16",
                          "--max-batch=16")
    x = rng.normal(0, 1, (13, 200)).astype(np.float32)
    (y,) = model(x, batch=13)
    expected = reference(x)
    scale = np.abs(expected).max()
    np.testing.assert_allclose(y, expected, rtol=0, atol=2e-5 * scale)
    # Not the float32 model: bfloat16 rounding moves the result visibly.
    float32 = compile_model(str(CUVILC), path, tmp_path / "f32.so", "--max-batch=16")
    (y32,) = float32(x, batch=13)
    assert np.abs(y32 - y).max() > 10 * np.abs(y - expected).max()


def test_bf16_kernel_variants_agree_bit_for_bit(tmp_path):
    """The variant follows the target (recorded in the metadata), and every
    one gives the same bits, at one thread and two."""
    rng = np.random.default_rng(4)
    path, _ = mlp(tmp_path, rng, k=70, hidden=40, n=17)
    x = rng.normal(0, 1, (19, 70)).astype(np.float32)
    variants = [("x86-64-v3", "avx2"), ("x86-64", "reference")]
    flags = pathlib.Path("/proc/cpuinfo").read_text().split()
    if "avx512f" in flags:
        variants.append(("x86-64-v4", "avx512"))
    if "avx512_bf16" in flags:
        # vdpbf16ps where it runs faster than FMA (AMD's Zen), not on Intel's.
        variants += [("znver4", "avx512bf16"), ("cooperlake", "avx512")]
    results = []
    for cpu, variant in variants:
        model = compile_model(str(CUVILC), path, tmp_path / f"{cpu}.so",
                              "--quantize=bf16", f"--cpu={cpu}", "--max-batch=32")
        assert model.metadata["kernels"]["bgemm8"] == variant
        (y,) = model(x, batch=19)
        (two,) = model(x, batch=19, threads=2)
        assert np.array_equal(y, two)
        results.append(y)
    for y in results[1:]:
        assert np.array_equal(y, results[0])


def conv2d(x, w, b=None, stride=1, pad=0):
    """conv2d_reference (float64), the bias optional."""
    return conv2d_reference(x, w, np.zeros(len(w)) if b is None else b, stride, pad)


def cnn(tmp_path, rng):
    """A stem on a plain 3-channel image, a 3x3 convolution with a residual
    and relu, a strided 1x1, a depthwise one (which stays float32), a 3x3
    one whose output stays NCHW (a flatten reads it) and a linear head; the
    reference rounds each bfloat16 layer's operands and sums the rest in
    float64, storing float32 between layers."""
    w1 = rng.normal(0, 0.3, (16, 3, 3, 3)).astype(np.float32)
    b1 = rng.normal(0, 0.1, 16).astype(np.float32)
    w2 = rng.normal(0, 0.1, (16, 16, 3, 3)).astype(np.float32)
    w3 = rng.normal(0, 0.2, (32, 16, 1, 1)).astype(np.float32)
    b3 = rng.normal(0, 0.1, 32).astype(np.float32)
    wd = rng.normal(0, 0.3, (32, 1, 3, 3)).astype(np.float32)
    w5 = rng.normal(0, 0.1, (16, 32, 3, 3)).astype(np.float32)
    wf = rng.normal(0, 0.1, (10, 144)).astype(np.float32)
    path = tmp_path / "cnn.onnx"
    save(path, [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1] * 4,
                                 strides=[2, 2], name="stem"),
                helper.make_node("Relu", ["c1"], ["r1"]),
                helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1] * 4, name="conv2"),
                helper.make_node("Add", ["c2", "r1"], ["s2"]),
                helper.make_node("Relu", ["s2"], ["r2"]),
                helper.make_node("Conv", ["r2", "w3", "b3"], ["c3"], strides=[2, 2],
                                 name="down"),
                helper.make_node("Conv", ["c3", "wd"], ["c4"], pads=[1] * 4, group=32,
                                 name="depthwise"),
                helper.make_node("Conv", ["c4", "w5"], ["c5"], name="last"),
                helper.make_node("Relu", ["c5"], ["r5"]),
                helper.make_node("Flatten", ["r5"], ["f"]),
                helper.make_node("Gemm", ["f", "wf"], ["y"], transB=1, name="head")],
         [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 20, 20])],
         [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 10])],
         [constant(name, value) for name, value in
          [("w1", w1), ("b1", b1), ("w2", w2), ("w3", w3), ("b3", b3), ("wd", wd),
           ("w5", w5), ("wf", wf)]])

    def reference(x):
        f32 = lambda v: v.astype(np.float32)  # noqa: E731
        r1 = f32(np.maximum(conv2d(to_bf16(x), to_bf16(w1), b1, 2, 1), 0))
        r2 = f32(np.maximum(conv2d(to_bf16(r1), to_bf16(w2), None, 1, 1) + r1, 0))
        c3 = f32(conv2d(to_bf16(r2), to_bf16(w3), b3, 2, 0))
        c4 = np.zeros(c3.shape[:2] + (5, 5))
        for ch in range(32):  # depthwise, float32 weights
            c4[:, ch:ch + 1] = conv2d(c3[:, ch:ch + 1], wd[ch:ch + 1], None, 1, 1)
        r5 = f32(np.maximum(conv2d(to_bf16(f32(c4)), to_bf16(w5)), 0))
        f = r5.reshape(len(x), -1)
        return to_bf16(f).astype(np.float64) @ to_bf16(wf.T).astype(np.float64)
    return path, reference


def test_bf16_convolutions_compute_on_rounded_values(tmp_path):
    """The ungrouped convolutions read bfloat16 (their input cast fused into
    the kernel) and sum in float32, their bias, residual and relu fused;
    the depthwise one stays float32 with a note. Within float32's rounding
    of the reference, far from the float32 model."""
    rng = np.random.default_rng(7)
    path, reference = cnn(tmp_path, rng)
    result = cuvilc(path, "--quantize=bf16", "--max-batch=4", "--emit=mlir-level2")
    assert result.returncode == 0, result.stderr
    assert "'depthwise'" in result.stderr and "stays float32: it is grouped" in result.stderr
    convs = re.findall(r'ukernel_call "conv2d" ins\((%\w+).*acc_type = f32.*', result.stdout)
    assert len(convs) == 4, result.stdout
    # The last one writes blocks too: the flatten reads a plain copy of
    # them (a reorder before it).
    assert re.search(r'outs\(%\w+, %\w+ : memref<\?x16x3x3xf32, '
                     r'#cuvil_l2.layout<"NCHW" to "NCHW(8|16)c">>', result.stdout), result.stdout
    assert re.search(r'cuvil_l2.copy %\w+, %\w+ : memref<\?x16x3x3xf32, #cuvil_l2.layout'
                     r'<"NCHW" to "NCHW(8|16)c">>, memref<\?x16x3x3xf32>', result.stdout), \
        result.stdout
    # Each convolution rounds its own input: the head's cast is the only one.
    assert result.stdout.count('ukernel_call "cast"') == 1, result.stdout
    assert "steps = [add, relu]" in result.stdout
    model = compile_model(str(CUVILC), path, tmp_path / "cnn.so", "--quantize=bf16",
                          "--max-batch=4")
    x = rng.normal(0, 1, (3, 3, 20, 20)).astype(np.float32)
    (y,) = model(x, batch=3)
    expected = reference(x)
    scale = np.abs(expected).max()
    np.testing.assert_allclose(y, expected, rtol=0, atol=2e-5 * scale)
    float32 = compile_model(str(CUVILC), path, tmp_path / "f32.so", "--max-batch=4")
    (y32,) = float32(x, batch=3)
    assert np.abs(y32 - y).max() > 10 * np.abs(y - expected).max()


def test_bf16_convolution_variants_agree_bit_for_bit(tmp_path):
    """The tiles follow the target (recorded in the metadata); on one layout
    (blocks of 16) the widening AVX-512 tiles and vdpbf16ps give the same
    bits, at one thread and two; every layout is within float32 rounding
    of the reference."""
    rng = np.random.default_rng(8)
    path, reference = cnn(tmp_path, rng)
    x = rng.normal(0, 1, (2, 3, 20, 20)).astype(np.float32)
    expected = reference(x)
    flags = pathlib.Path("/proc/cpuinfo").read_text().split()
    variants = [("x86-64", "reference"), ("x86-64-v3", "avx2")]
    if "avx512f" in flags:
        variants.append(("x86-64-v4", "avx512"))
    if "avx512_bf16" in flags:
        variants.append(("cooperlake", "avx512bf16"))
    blocks16 = []
    for cpu, variant in variants:
        model = compile_model(str(CUVILC), path, tmp_path / f"{cpu}.so",
                              "--quantize=bf16", f"--cpu={cpu}", "--max-batch=2")
        assert model.metadata["kernels"]["bconvb"] == variant
        (y,) = model(x, batch=2)
        (two,) = model(x, batch=2, threads=2)
        assert np.array_equal(y, two), cpu
        np.testing.assert_allclose(y, expected, rtol=0,
                                   atol=2e-5 * np.abs(expected).max(), err_msg=cpu)
        if variant.startswith("avx512"):
            blocks16.append(y)
    for y in blocks16[1:]:
        assert np.array_equal(y, blocks16[0])


def cuvilc(*args):
    return subprocess.run([str(CUVILC), *map(str, args)], capture_output=True, text=True)


def test_bf16_keeps_what_it_cannot_convert_with_a_note(tmp_path):
    """A kept layer and a grouped convolution stay float32, each with a
    warning naming the node."""
    rng = np.random.default_rng(5)
    path, _ = mlp(tmp_path, rng)
    result = cuvilc(path, "--quantize=bf16", "--keep-fp32=fc2", "--max-batch=4",
                    "-o", tmp_path / "kept.so")
    assert result.returncode == 0, result.stderr
    assert "'fc2'" in result.stderr and "kept in float32, as asked (keep-fp32 'fc2')" in result.stderr
    conv = tmp_path / "conv.onnx"
    save(conv, [helper.make_node("Conv", ["x", "w"], ["y"], group=2, name="conv")],
         [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 5, 5])],
         [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 3, 3])],
         [constant("w", np.ones((4, 1, 3, 3), np.float32))])
    result = cuvilc(conv, "--quantize=bf16", "-o", tmp_path / "conv.so")
    assert result.returncode == 0, result.stderr
    assert "'conv'" in result.stderr
    assert ("stays float32: it is grouped (the bfloat16 kernels compute ungrouped "
            "convolutions)") in result.stderr


def test_bf16_flag_errors(tmp_path):
    rng = np.random.default_rng(6)
    path, _ = mlp(tmp_path, rng)
    result = cuvilc(path, "--quantize=bf16", "--calibration=x.npz", "-o", tmp_path / "a.so")
    assert result.returncode != 0
    assert "--calibration applies with --quantize=int8; bf16 needs no calibration" in result.stderr
    result = cuvilc(path, "--quantize=fp8", "-o", tmp_path / "b.so")
    assert result.returncode != 0
    assert "unknown --quantize value 'fp8'; expected int8, bf16 or fp16" in result.stderr
    assert not (tmp_path / "a.so").exists() and not (tmp_path / "b.so").exists()
