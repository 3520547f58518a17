"""cuvil.compile(target="aarch64-linux-gnu") on this x86-64 machine: a
cuvil.CrossCompiledModule, checked from its bytes as an aarch64 model,
that describes itself, refuses to run here with a message saying where it
runs, and saves a .so and header that do run there (under qemu-aarch64
here, against torch)."""

import os
import pathlib
import subprocess

import numpy as np
import pytest
import torch

import cuvil

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLANG = "/usr/lib/llvm-22/bin/clang"


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(20, 64)
        self.b = torch.nn.Linear(64, 5)

    def forward(self, x):
        return torch.softmax(self.b(torch.relu(self.a(x))), dim=1)


def test_cross_compiled_model_saves_for_the_board(tmp_path):
    torch.manual_seed(0)
    model = Mlp().eval()
    compiled = cuvil.compile(model, input_signature=[("x", torch.float32, (2, 20))],
                             target="aarch64-linux-gnu", cpu="cortex-a72")
    assert isinstance(compiled, cuvil.CrossCompiledModule)
    assert compiled.target["triple"] == "aarch64-linux-gnu"
    assert compiled.target["cpu"] == "cortex-a72"
    assert compiled.inputs == [{"name": "x", "dtype": "float32", "shape": (2, 20)}]
    assert compiled.outputs[0]["shape"] == (2, 5)
    assert "CrossCompiledModule[aarch64-linux-gnu]" in repr(compiled)
    x = torch.randn(2, 20)
    with pytest.raises(RuntimeError, match=r"built for aarch64-linux-gnu \(cortex-a72\) "
                       r"and cannot run on this machine: save\(\) it"):
        compiled(x)

    so = pathlib.Path(compiled.save(tmp_path / "mlp.so"))
    assert so.read_bytes()[18:20] == (183).to_bytes(2, "little")  # EM_AARCH64
    assert (tmp_path / "mlp.h").exists()
    with pytest.raises(cuvil.LoadError, match="was built for aarch64, this machine "
                       "is x86-64"):
        cuvil.load(so)

    # It runs on an (emulated) Cortex-A72, from its header alone.
    driver = tmp_path / "run_model"
    (tmp_path / "model.h").write_bytes((tmp_path / "mlp.h").read_bytes())
    subprocess.run([CLANG, "--target=aarch64-linux-gnu", "-fuse-ld=lld", "-O2",
                    f"-I{tmp_path}",
                    str(ROOT / "tests" / "aarch64" / "run_model.c"), str(so),
                    "-Wl,-rpath,$ORIGIN", "-o", str(driver)], check=True)
    x.numpy().tofile(tmp_path / "x.bin")
    subprocess.run(["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu", "-cpu",
                    "cortex-a72", str(driver), "1", "2", str(tmp_path / "x.bin"),
                    "--", f"{tmp_path / 'y.bin'}:40"], check=True)
    y = np.fromfile(tmp_path / "y.bin", np.float32).reshape(2, 5)
    with torch.no_grad():
        np.testing.assert_allclose(y, model(x).numpy(), atol=1e-6)


def test_a_cross_target_takes_its_own_cpu_names():
    with pytest.raises(cuvil.CompileError, match="unknown --cpu 'znver4' for aarch64"):
        cuvil.compile(Mlp().eval(), input_signature=[("x", torch.float32, (1, 20))],
                      target="aarch64", cpu="znver4")


def test_fp16_cross_compiles_in_float16_arithmetic(tmp_path):
    torch.manual_seed(1)
    model = Mlp().eval()
    fp16 = cuvil.quantization.FP16(keep_fp32="b")
    assert repr(fp16) == "FP16(keep_fp32=['b'])"
    compiled = cuvil.compile(model, input_signature=[("x", torch.float32, (2, 20))],
                             target="aarch64-linux-gnu", cpu="cortex-a76",
                             quantize=fp16)
    kernels = compiled.metadata["kernels"]
    assert kernels["hgemm4"] == "neon_fp16"
