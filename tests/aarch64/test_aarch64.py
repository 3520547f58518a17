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
