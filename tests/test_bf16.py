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
from qdq_reference import constant, save  # noqa: E402


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
    if "avx512f" in pathlib.Path("/proc/cpuinfo").read_text().split():
        variants.append(("x86-64-v4", "avx512"))
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


def cuvilc(*args):
    return subprocess.run([str(CUVILC), *map(str, args)], capture_output=True, text=True)


def test_bf16_keeps_what_it_cannot_convert_with_a_note(tmp_path):
    """A kept layer and a convolution stay float32, each with a warning
    naming the node."""
    rng = np.random.default_rng(5)
    path, _ = mlp(tmp_path, rng)
    result = cuvilc(path, "--quantize=bf16", "--keep-fp32=fc2", "--max-batch=4",
                    "-o", tmp_path / "kept.so")
    assert result.returncode == 0, result.stderr
    assert "'fc2'" in result.stderr and "kept in float32, as asked (keep-fp32 'fc2')" in result.stderr
    conv = tmp_path / "conv.onnx"
    save(conv, [helper.make_node("Conv", ["x", "w"], ["y"], name="conv")],
         [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 5, 5])],
         [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 3, 3])],
         [constant("w", np.ones((3, 2, 3, 3), np.float32))])
    result = cuvilc(conv, "--quantize=bf16", "-o", tmp_path / "conv.so")
    assert result.returncode == 0, result.stderr
    assert "'conv'" in result.stderr
    assert "stays float32: bfloat16 convolutions are not implemented yet" in result.stderr


def test_bf16_flag_errors(tmp_path):
    rng = np.random.default_rng(6)
    path, _ = mlp(tmp_path, rng)
    result = cuvilc(path, "--quantize=bf16", "--calibration=x.npz", "-o", tmp_path / "a.so")
    assert result.returncode != 0
    assert "--calibration applies with --quantize=int8; bf16 needs no calibration" in result.stderr
    result = cuvilc(path, "--quantize=fp8", "-o", tmp_path / "b.so")
    assert result.returncode != 0
    assert "unknown --quantize value 'fp8'; expected int8 or bf16" in result.stderr
    assert not (tmp_path / "a.so").exists() and not (tmp_path / "b.so").exists()
