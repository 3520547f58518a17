"""The aarch64-linux-gnu target, verified here under qemu-aarch64.

Every e2e model is cross-compiled (the NEON kernels chosen by the CPU's
features), run under emulation by a C driver that uses only the generated
header, and compared with PyTorch eager within the x86 e2e tolerance
(max |cuvil - torch| <= 1e-4 * max |torch|). Also: the same bits for any
thread count, the load-time CPU check (a model built for a Cortex-A76 on
an emulated Cortex-A72 returns CUVIL_ERROR_UNSUPPORTED_CPU, never
SIGILL), readelf's view of the artifact, the portable C output, int8 on
the dot-product and plain NEON kernels bit for bit against integer
arithmetic, and the user-facing errors.
"""

import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest
import torch

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[0] / "models"))
sys.path.insert(0, str(HERE.parents[0]))
import export_models  # noqa: E402
from qemu_model import (CUVILC, LLVM, SYSROOT, Aarch64Model, QemuError,  # noqa: E402
                        build_driver, cross_compile)

RELATIVE_TOLERANCE = 1e-4
CUVIL_ERROR_UNSUPPORTED_CPU = 4


def mlp():
    return torch.nn.Sequential(
        torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
        torch.nn.ReLU(), torch.nn.Linear(512, 512)), torch.randn(1, 512)


class Classifier(torch.nn.Module):
    """The README's quick-start classifier."""

    def forward(self, x):
        return torch.softmax(x @ torch.eye(10) * 0.1, dim=1)


def export(name, path, dynamic_batch=False):
    """The model (random weights, seed 0) as ONNX, and torch's output."""
    torch.manual_seed(0)
    if name in export_models.MODELS:
        model, example = export_models.export(name, str(path), opset=14,
                                              dynamic_batch=dynamic_batch)
    else:
        model, example = {"mlp": mlp, "classifier": lambda: (
            Classifier(), torch.randn(1, 10))}[name]()
        model.eval()
        torch.onnx.export(model, example, str(path), input_names=["input"],
                          output_names=["output"], opset_version=14)
    with torch.no_grad():
        return example, model(example).numpy()


def assert_close(got, expected):
    scale = float(np.abs(expected).max())
    err = float(np.abs(got - expected).max())
    assert err <= RELATIVE_TOLERANCE * scale, f"max |err| {err} vs scale {scale}"


# (model, --cpu, qemu -cpu, kernels the metadata must name).
MODELS = [
    ("resnet18", "cortex-a76", "cortex-a76", {"sgemm4": "neon", "convb": "neon"}),
    ("mobilenet_v2", "generic", "cortex-a53", {"dwconv": "neon", "convb": "neon"}),
    ("efficientnet_b0", "cortex-a72", "cortex-a72", {"convb": "neon"}),
    ("transformer_encoder_layer", "neoverse-n1", "neoverse-n1", {"sgemm4": "neon"}),
    ("mlp", "generic", "max", {"sgemm4": "neon"}),
    ("classifier", "generic", "cortex-a53", {}),
]


@pytest.mark.parametrize("name,cpu,emulated,kernels", MODELS,
                         ids=[m[0] for m in MODELS])
def test_model_matches_pytorch_under_qemu(tmp_path, name, cpu, emulated, kernels):
    example, expected = export(name, tmp_path / "model.onnx")
    model = cross_compile(tmp_path / "model.onnx", tmp_path / "build", cpu=cpu)
    target = model.metadata["target"]
    assert target["triple"] == "aarch64-linux-gnu" and target["cpu"] == cpu
    assert "neon" in target["features"]
    for family, variant in kernels.items():
        assert model.metadata["kernels"][family] == variant, model.metadata["kernels"]
    (got,) = model.run(example.numpy(), cpu=emulated)
    assert_close(got, expected)
    if name in ("resnet18", "transformer_encoder_layer"):
        (two,) = model.run(example.numpy(), threads=2, cpu=emulated)
        np.testing.assert_array_equal(two, got)


def test_dynamic_batch_and_threads_give_the_same_bits(tmp_path):
    torch.manual_seed(0)
    export("mobilenet_v2", tmp_path / "m.onnx", dynamic_batch=True)
    model = cross_compile(tmp_path / "m.onnx", tmp_path / "build", "--max-batch=4")
    torch.manual_seed(1)
    x = torch.randn(3, 3, 224, 224)
    torch.manual_seed(0)
    reference, _ = export_models.MODELS["mobilenet_v2"]()
    with torch.no_grad():
        expected = reference.eval()(x).numpy()
    (one,) = model.run(x.numpy(), batch=3, cpu="cortex-a72")
    assert_close(one, expected)
    (three,) = model.run(x.numpy(), batch=3, threads=3, cpu="cortex-a72")
    np.testing.assert_array_equal(three, one)


def test_a_cpu_without_the_features_is_refused_not_faulted(tmp_path):
    # Built for a Cortex-A76 (dot product, fp16, LSE atomics, ...), run on an
    # emulated Cortex-A72, which has none of them.
    example, _ = export("classifier", tmp_path / "c.onnx")
    model = cross_compile(tmp_path / "c.onnx", tmp_path / "a76", cpu="cortex-a76")
    assert "dotprod" in model.metadata["target"]["features"]
    with pytest.raises(QemuError) as refused:
        model.run(example.numpy(), cpu="cortex-a72")
    assert refused.value.status == CUVIL_ERROR_UNSUPPORTED_CPU
    assert "lacks an instruction set the model was compiled for (cortex-a76)" \
        in refused.value.message
    # generic (armv8-a and NEON) runs on any of them.
    generic = cross_compile(tmp_path / "c.onnx", tmp_path / "generic")
    for cpu in ("cortex-a53", "cortex-a72", "cortex-a76", "neoverse-n1"):
        generic.run(example.numpy(), cpu=cpu)


def test_readelf_sees_an_aarch64_library_of_libc_and_libm_exporting_the_abi(tmp_path):
    export("classifier", tmp_path / "c.onnx")
    model = cross_compile(tmp_path / "c.onnx", tmp_path / "build")
    header = subprocess.run([str(LLVM / "llvm-readelf"), "-h", "-d", str(model.so)],
                            capture_output=True, text=True, check=True).stdout
    assert re.search(r"Machine:\s+AArch64", header)
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.*)\]", header)
    assert sorted(needed) == ["libc.so.6", "libm.so.6"]
    symbols = subprocess.run(
        [str(LLVM / "llvm-nm"), "-D", "--defined-only", str(model.so)],
        capture_output=True, text=True, check=True).stdout.split("\n")
    exported = sorted(line.split()[-1] for line in symbols if line.strip())
    assert exported == sorted([
        "cuvil_status_message", "cuvil_model_metadata", "cuvil_model_num_inputs",
        "cuvil_model_num_outputs", "cuvil_model_workspace_size", "cuvil_model_run",
        "cuvil_context_max_threads", "cuvil_context_create", "cuvil_context_run",
        "cuvil_context_error", "cuvil_context_destroy"])
    notes = subprocess.run([str(LLVM / "llvm-readelf"), "-n", str(model.so)],
                           capture_output=True, text=True, check=True).stdout
    assert "Cuvil" in notes


def test_the_portable_c_builds_for_aarch64_on_the_reference_kernels(tmp_path):
    example, expected = export("mobilenet_v2", tmp_path / "m.onnx")
    source = tmp_path / "model.c"
    subprocess.run([str(CUVILC), "--quiet", str(tmp_path / "m.onnx"),
                    "--target=aarch64-linux-gnu", "--emit=c", "-o", str(source)],
                   check=True)
    text = source.read_text()
    assert "#define CUVIL_SGEMM4 cuvil_sgemm4_reference" in text
    so = tmp_path / "model.so"
    subprocess.run([str(LLVM / "clang"), "--target=aarch64-linux-gnu", "-std=c99",
                    "-pedantic", "-Werror", "-O2", "-fPIC", "-shared",
                    "-fuse-ld=lld", str(source), "-lm", "-o", str(so)], check=True)
    # The header is the file's first part (the single source holds it).
    header = text[text.index("#ifndef CUVIL_MODEL_H"):
                  text.index("#endif /* CUVIL_MODEL_H */") + 26]
    (tmp_path / "model.h").write_text(header)
    model = Aarch64Model(so)
    assert model.metadata["kernels"]["sgemm4"] == "reference"
    (got,) = model.run(example.numpy(), cpu="cortex-a53")
    assert_close(got, expected)


@pytest.mark.parametrize("cpu,emulated,qgemm4", [
    ("generic", "cortex-a72", "neon"),
    ("cortex-a76", "cortex-a76", "neon_dotprod"),
])
def test_int8_runs_bit_for_bit_on_neon_and_the_dot_product(tmp_path, cpu, emulated, qgemm4):
    from test_int8_convolutions import network
    rng = np.random.default_rng(5)
    path, reference, _, _ = network(tmp_path, rng, exact=True)
    model = cross_compile(path, tmp_path / "build", "--max-batch=4", cpu=cpu)
    assert model.metadata["kernels"]["qgemm4"] == qgemm4
    x = rng.normal(0, 2, (3, 3, 12, 12)).astype(np.float32)
    (y,) = model.run(x, batch=3, cpu=emulated)
    expected, _ = reference(x)
    np.testing.assert_array_equal(y, expected)
    (two,) = model.run(x, batch=3, threads=2, cpu=emulated)
    np.testing.assert_array_equal(two, y)


def test_errors_name_what_to_use(tmp_path):
    export("classifier", tmp_path / "c.onnx")
    result = subprocess.run([str(CUVILC), str(tmp_path / "c.onnx"),
                             "--target=aarch64-linux-gnu", "--cpu=skylake",
                             "-o", str(tmp_path / "c.so")],
                            capture_output=True, text=True)
    assert result.returncode != 0
    assert ("unknown --cpu 'skylake' for aarch64; use generic (any armv8-a) or "
            "an LLVM CPU name such as cortex-a53, cortex-a72, cortex-a76 or "
            "neoverse-n1") in result.stderr
    assert not (tmp_path / "c.so").exists()
    # native, when cross-compiling, is generic.
    model = cross_compile(tmp_path / "c.onnx", tmp_path / "native", cpu="native")
    assert model.metadata["target"]["cpu"] == "generic"


def test_float16_tensors_round_as_numpy_does(tmp_path):
    # Half conversions are fcvt on aarch64 (runtime/math/scalar.h): a cast
    # to float16 (ties, subnormals, overflow to inf) and a float16 sum give
    # numpy's bits.
    from onnx import TensorProto, helper, numpy_helper, save_model
    rng = np.random.default_rng(3)
    x = np.concatenate([
        rng.normal(0, 100, 960).astype(np.float32),
        np.float32([1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11, 65504, 65520, 1e6, -1e6,
                    2.0 ** -24, 2.0 ** -25, 3 * 2.0 ** -25, 2.0 ** -14, 0.0, -0.0]),
        rng.normal(0, 1e-5, 28).astype(np.float32)]).reshape(1, 1000)
    c = rng.normal(0, 10, (1, 1000)).astype(np.float16)
    graph = helper.make_graph(
        [helper.make_node("Cast", ["x"], ["h"], to=TensorProto.FLOAT16),
         helper.make_node("Identity", ["h"], ["y"]),
         helper.make_node("Add", ["h", "c"], ["z"])],
        "halves",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1000])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [1, 1000]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT16, [1, 1000])],
        [numpy_helper.from_array(c, "c")])
    save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]),
               str(tmp_path / "halves.onnx"))
    model = cross_compile(tmp_path / "halves.onnx", tmp_path / "build")
    y, z = model.run(x, cpu="cortex-a53")
    with np.errstate(over="ignore"):
        expected = x.astype(np.float16)
    np.testing.assert_array_equal(y.view(np.uint16), expected.view(np.uint16))
    np.testing.assert_array_equal(z.view(np.uint16), (expected + c).view(np.uint16))


def test_bf16_runs_on_the_reference_kernels(tmp_path):
    # No Arm bf16 kernels yet: bfloat16 products take the portable reference
    # (docs/edge.md), with the x86 results' accuracy.
    example, expected = export("mlp", tmp_path / "mlp.onnx")
    model = cross_compile(tmp_path / "mlp.onnx", tmp_path / "build", "--quantize=bf16")
    assert model.metadata["kernels"]["bgemm8"] == "reference"
    (got,) = model.run(example.numpy(), cpu="cortex-a72")
    cosine = float((got * expected).sum() / np.linalg.norm(got) / np.linalg.norm(expected))
    assert cosine > 0.9999


def fused_f16_products(a, b):
    """a [M, K] @ b [K, N] in float16 arithmetic as the fp16 kernels define
    it (runtime/hgemm): per output, fused float16 multiply-adds over k in
    order from 0, each rounded once (numpy rounds float64 to float16
    directly)."""
    a64, b64 = a.astype(np.float16).astype(np.float64), b.astype(np.float16).astype(np.float64)
    acc = np.zeros((a.shape[0], b.shape[1]), np.float16)
    for l in range(a.shape[1]):
        acc = (acc.astype(np.float64) + a64[:, l:l + 1] * b64[l:l + 1, :]).astype(np.float16)
    return acc


def patches(x, k, stride, pad):
    """im2col of NCHW x: [N, C * k * k, OH * OW], rows in (c, ky, kx) order."""
    n, c, h, w = x.shape
    xp = np.zeros((n, c, h + 2 * pad, w + 2 * pad), x.dtype)
    xp[:, :, pad:pad + h, pad:pad + w] = x
    oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    cols = [xp[:, :, ky:ky + stride * oh:stride, kx:kx + stride * ow:stride]
            for ky in range(k) for kx in range(k)]
    # [N, C, k*k, OH, OW] -> rows (c, ky, kx)
    stacked = np.stack(cols, axis=2).reshape(n, c * k * k, oh * ow)
    return stacked, oh, ow


def test_fp16_layers_are_float16_arithmetic_bit_for_bit(tmp_path):
    # A conv 3x3 + ReLU, a strided pointwise conv, and a linear layer, each
    # in float16 arithmetic (--quantize=fp16 on a Cortex-A76: neon_fp16),
    # against numpy's fused float16 steps; the portable C (the reference
    # kernel) gives the same bits.
    torch.manual_seed(3)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Conv2d(3, 12, 3, padding=1)
            self.b = torch.nn.Conv2d(12, 8, 1, stride=2)
            self.fc = torch.nn.Linear(8 * 5 * 5, 10)

        def forward(self, x):
            y = self.b(torch.relu(self.a(x)))
            return self.fc(y.flatten(1))

    net = Net().eval()
    x = torch.randn(2, 3, 10, 10)
    torch.onnx.export(net, x, str(tmp_path / "net.onnx"), input_names=["input"],
                      output_names=["output"], opset_version=14)
    model = cross_compile(tmp_path / "net.onnx", tmp_path / "neon", "--quantize=fp16",
                          cpu="cortex-a76")
    assert model.metadata["kernels"]["hgemm4"] == "neon_fp16"
    (got,) = model.run(x.numpy(), cpu="cortex-a76")

    def conv(v, layer, stride, pad):
        w = layer.weight.detach().numpy()
        cols, oh, ow = patches(v.astype(np.float16), w.shape[2], stride, pad)
        out = np.stack([fused_f16_products(w.reshape(w.shape[0], -1), c) for c in cols])
        y = out.astype(np.float32) + layer.bias.detach().numpy()[:, None]
        return y.reshape(v.shape[0], w.shape[0], oh, ow)

    h = np.maximum(conv(x.numpy(), net.a, 1, 1), 0)
    h = conv(h, net.b, 2, 0).reshape(2, -1)
    expected = (fused_f16_products(h, net.fc.weight.detach().numpy().T).astype(np.float32)
                + net.fc.bias.detach().numpy())
    np.testing.assert_array_equal(got, expected)
    with torch.no_grad():
        reference = net(x).numpy()
    # float16 carries 11 bits: within 1% of the float32 model's scale.
    assert np.abs(got - reference).max() <= 1e-2 * np.abs(reference).max()

    # The portable C: the reference micro-kernel, the same bits.
    source = tmp_path / "net.c"
    subprocess.run([str(CUVILC), "--quiet", str(tmp_path / "net.onnx"),
                    "--target=aarch64-linux-gnu", "--cpu=cortex-a76",
                    "--quantize=fp16", "--emit=c", "-o", str(source)], check=True)
    so = tmp_path / "portable" / "model.so"
    so.parent.mkdir()
    subprocess.run([str(LLVM / "clang"), "--target=aarch64-linux-gnu", "-std=c99",
                    "-O2", "-fPIC", "-shared", "-fuse-ld=lld", str(source), "-lm",
                    "-o", str(so)], check=True)
    (so.parent / "model.h").write_bytes((tmp_path / "neon" / "model.h").read_bytes())
    portable = Aarch64Model(so)
    assert portable.metadata["kernels"]["hgemm4"] == "reference"
    (same,) = portable.run(x.numpy(), cpu="cortex-a76")
    np.testing.assert_array_equal(same, got)


def test_fp16_mobilenet_keeps_float32_accuracy(tmp_path):
    example, expected = export("mobilenet_v2", tmp_path / "m.onnx")
    model = cross_compile(tmp_path / "m.onnx", tmp_path / "build", "--quantize=fp16",
                          cpu="cortex-a76")
    (got,) = model.run(example.numpy(), cpu="cortex-a76")
    cosine = float((got * expected).sum() / np.linalg.norm(got) / np.linalg.norm(expected))
    assert cosine > 0.9995, cosine


def test_fp16_needs_float16_arithmetic(tmp_path):
    export("mlp", tmp_path / "mlp.onnx")
    result = subprocess.run(
        [str(CUVILC), str(tmp_path / "mlp.onnx"), "--target=aarch64-linux-gnu",
         "--cpu=cortex-a72", "--quantize=fp16", "-o", str(tmp_path / "model.so")],
        capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert ("stays float32: the target (aarch64 cortex-a72) has no float16 "
            "arithmetic") in result.stderr
    model = Aarch64Model(tmp_path / "model.so")
    assert model.metadata["kernels"]["hgemm4"] == "none"


def test_fp16_flag_errors(tmp_path):
    export("classifier", tmp_path / "c.onnx")
    for flags, message in [
        (["--calibration=x.npz"],
         "--calibration applies with --quantize=int8; fp16 needs no calibration"),
        (["--integer-io"],
         "--integer-io passes 8-bit quantized tensors; use it with "
         "--quantize=int8 (or an ONNX QDQ model), not fp16"),
    ]:
        result = subprocess.run(
            [str(CUVILC), str(tmp_path / "c.onnx"), "--target=aarch64-linux-gnu",
             "--cpu=cortex-a76", "--quantize=fp16", *flags,
             "-o", str(tmp_path / "c.so")], capture_output=True, text=True)
        assert result.returncode != 0 and message in result.stderr, result.stderr
        assert not (tmp_path / "c.so").exists()
    # x86 has no float16 arithmetic kernels: the model stays float32, noted.
    result = subprocess.run(
        [str(CUVILC), str(tmp_path / "c.onnx"), "--quantize=fp16",
         "--cpu=x86-64-v3", "-o", str(tmp_path / "x86.so")],
        capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "stays float32: the target (x86 x86-64-v3) has no float16 arithmetic" \
        in result.stderr
