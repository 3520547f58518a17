"""The README quick-start, verbatim, and what it produces."""

import ctypes
import os
import subprocess

import numpy as np
import torch

import cuvil


def test_readme_quickstart_verbatim(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # --- README snippet begins ---
    @torch.jit.script
    def simple_classifier(x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x @ torch.eye(10) * 0.1, dim=1)

    compiled = cuvil.compile(
        simple_classifier,
        input_signature=[("x", torch.float32, (1, 10))],
        target="x86_64-linux-gnu",
    )
    compiled.save("classifier.so")
    # --- README snippet ends ---
    assert (tmp_path / "classifier.so").stat().st_size > 0
    header = (tmp_path / "classifier.h").read_text()
    assert "cuvil_model_run" in header

    x = torch.randn(1, 10)
    expected = simple_classifier(x)
    result = compiled(x)
    assert isinstance(result, torch.Tensor)
    assert result.shape == (1, 10) and result.dtype == torch.float32
    torch.testing.assert_close(result, expected, rtol=1e-5, atol=1e-6)

    # The saved .so is the same model, loadable on its own.
    loaded = cuvil.load(tmp_path / "classifier.so")
    np.testing.assert_allclose(loaded(x.numpy()), expected.numpy(),
                               rtol=1e-5, atol=1e-6)

    # It needs only libc/libm and exports only the C ABI.
    dynamic = subprocess.run(["readelf", "-dW", "classifier.so"], check=True,
                             capture_output=True, text=True).stdout
    needed = {line.split("[")[1].rstrip("]") for line in dynamic.splitlines()
              if "(NEEDED)" in line}
    assert needed <= {"libc.so.6", "libm.so.6", "libpthread.so.0"}, needed


def test_metadata_describes_the_signature():
    compiled = cuvil.compile(lambda x, y: (x * y, x + 1),
                             [("x", torch.float32, (2, 3)),
                              ("y", "float32", (2, 3))])
    assert compiled.inputs == [
        {"name": "x", "dtype": "float32", "shape": (2, 3)},
        {"name": "y", "dtype": "float32", "shape": (2, 3)}]
    assert [o["name"] for o in compiled.outputs] == ["output_0", "output_1"]
    assert compiled.max_batch is None
    assert compiled.metadata["abi_version"] == 1
    assert "x: float32[2x3]" in repr(compiled)
    assert cuvil.__version__ == compiled.metadata["compiler"].split()[-1]


def test_so_is_usable_through_plain_ctypes(tmp_path):
    compiled = cuvil.compile(lambda x: x * 2, [("x", torch.float32, (4,))])
    path = compiled.save(tmp_path / "double.so")
    library = ctypes.CDLL(os.fspath(path))
    workspace = np.zeros(library.cuvil_model_workspace_size() + 64, np.uint8)
    x = np.arange(4, dtype=np.float32)
    y = np.zeros(4, dtype=np.float32)
    ins = (ctypes.c_void_p * 1)(x.ctypes.data)
    outs = (ctypes.c_void_p * 1)(y.ctypes.data)
    library.cuvil_model_run.argtypes = [ctypes.c_int64, ctypes.c_void_p,
                                        ctypes.c_void_p, ctypes.c_void_p,
                                        ctypes.c_size_t]
    assert library.cuvil_model_run(0, ins, outs, workspace.ctypes.data,
                                   workspace.size) == 0
    np.testing.assert_array_equal(y, x * 2)
