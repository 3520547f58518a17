"""Calling compiled models: numpy and torch, threads, the GIL, no torch."""

import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import torch

import cuvil


@pytest.fixture(scope="module")
def mlp():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(),
                                torch.nn.Linear(256, 10)).eval()
    compiled = cuvil.compile(model, [("x", torch.float32, (None, 64))],
                             max_batch=16)
    return model, compiled


def test_numpy_in_numpy_out_and_torch_in_torch_out(mlp):
    model, compiled = mlp
    x = np.random.default_rng(0).standard_normal((3, 64), dtype=np.float32)
    y = compiled(x)
    assert isinstance(y, np.ndarray) and y.shape == (3, 10)
    t = compiled(torch.from_numpy(x))
    assert isinstance(t, torch.Tensor) and t.dtype == torch.float32
    np.testing.assert_array_equal(t.numpy(), y)
    with torch.no_grad():
        np.testing.assert_allclose(y, model(torch.from_numpy(x)).numpy(),
                                   rtol=1e-4, atol=1e-5)


def test_non_contiguous_and_grad_inputs(mlp):
    _, compiled = mlp
    base = torch.randn(64, 4)
    transposed = base.t()  # non-contiguous view
    assert not transposed.is_contiguous()
    needs_grad = transposed.clone().requires_grad_(True)
    expected = compiled(transposed.contiguous())
    torch.testing.assert_close(compiled(transposed), expected)
    torch.testing.assert_close(compiled(needs_grad), expected)
    fortran = np.asfortranarray(transposed.numpy())
    np.testing.assert_array_equal(compiled(fortran), expected.numpy())


def test_torch_calls_return_fresh_outputs():
    compiled = cuvil.compile(lambda x, y: (x * y, x + y),
                             [("x", torch.float32, (None, 3)),
                              ("y", torch.float32, (None, 3))], max_batch=8)
    x, y = torch.randn(2, 3), torch.randn(2, 3)
    product, total = compiled(x, y)
    kept = product.clone()
    for batch in (2, 5, 2):
        a, b = torch.randn(batch, 3), torch.randn(batch, 3)
        p, s = compiled(a, b)
        assert p.shape == s.shape == (batch, 3)
        assert p.is_contiguous() and s.is_contiguous()
        assert p.data_ptr() != product.data_ptr()
        torch.testing.assert_close(p, a * b)
        torch.testing.assert_close(s, a + b)
    torch.testing.assert_close(product, kept)  # earlier results stay
    torch.testing.assert_close(total, x + y)
    # A Tensor subclass (a Parameter) is called like a tensor.
    weight = torch.nn.Parameter(torch.randn(1, 3))
    torch.testing.assert_close(compiled(weight, y[:1])[0], (weight * y[:1]).detach())


def test_many_python_threads_on_one_model(mlp):
    _, compiled = mlp
    rng = np.random.default_rng(1)
    inputs = [rng.standard_normal((1 + i % 16, 64), dtype=np.float32)
              for i in range(8)]
    expected = [compiled(x) for x in inputs]
    failures = []

    def worker(index):
        for _ in range(200):
            y = compiled(inputs[index])
            if not np.array_equal(y, expected[index]):
                failures.append(index)
                return

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures


def test_calls_release_the_gil():
    # A model whose call takes a while: if the GIL were held during the
    # call, two threads' calls could never overlap in time.
    torch.manual_seed(0)
    weights = torch.randn(512, 512) / 23

    def deep(x):
        for _ in range(40):
            x = torch.tanh(x @ weights)
        return x

    compiled = cuvil.compile(deep, [("x", torch.float32, (256, 512))])
    x = np.random.default_rng(0).standard_normal((256, 512), dtype=np.float32)
    # Contiguous numpy arrays and torch tensors go through cuvil._lean, a
    # transposed copy through the general path (ctypes).
    strided = np.asfortranarray(x)
    for value in (x, torch.from_numpy(x), strided):
        intervals = []

        def worker():
            for _ in range(3):
                start = time.monotonic()
                compiled(value)
                intervals.append((start, time.monotonic()))

        threads = [threading.Thread(target=worker) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        intervals.sort()
        overlaps = sum(a_end > b_start for (_, a_end), (b_start, _) in
                       zip(intervals, intervals[1:]))
        assert overlaps > 0, (type(value), intervals)


def test_lean_call_takes_only_the_common_call(mlp):
    # cuvil._lean runs contiguous CPU tensors of the model's dtypes and
    # shapes, without grad; for anything else it answers None and
    # CompiledModule's general path takes over.
    from cuvil import _lean
    _, compiled = mlp
    state = compiled._lean_state(torch)
    x = torch.randn(3, 64)
    y = _lean.call(state, (x,))
    assert isinstance(y, torch.Tensor) and y.shape == (3, 10)
    np.testing.assert_array_equal(y.numpy(), compiled(x.numpy()))
    for inputs in [(x.t().contiguous().t(),),          # non-contiguous
                   (x.clone().requires_grad_(True),),  # grad
                   (x.double(),),                      # dtype
                   (torch.randn(3, 65),),              # shape
                   (torch.randn(3, 64, 1),),           # rank
                   (torch.randn(17, 64),),             # batch > max_batch
                   (torch.nn.Parameter(x),),           # a Tensor subclass
                   (x.numpy(),),                       # numpy
                   (x, x)]:                            # count
        assert _lean.call(state, inputs) is None, inputs


def test_lean_call_takes_numpy_arrays(mlp):
    # The same for C-contiguous numpy arrays of the model's dtypes and
    # shapes: outputs are fresh numpy arrays, equal to the general path's;
    # anything else is None.
    from cuvil import _lean
    _, compiled = mlp
    state = compiled._lean_numpy_state()
    x = np.random.default_rng(0).standard_normal((3, 64), dtype=np.float32)
    y = _lean.call(state, (x,))
    assert type(y) is np.ndarray and y.shape == (3, 10) and y.flags.c_contiguous
    # A Fortran-ordered copy takes the general path: the same numbers.
    np.testing.assert_array_equal(y, compiled(np.asfortranarray(x)))
    assert _lean.call(state, (x,)) is not y  # a new output every call
    wide = np.ones((3, 128), np.float32)
    for inputs in [(np.asfortranarray(x),),          # not C-contiguous
                   (wide[:, ::2],),                  # strided
                   (x.astype(np.float64),),          # dtype
                   (np.ones((3, 65), np.float32),),  # shape
                   (x[..., None],),                  # rank
                   (np.ones((17, 64), np.float32),), # batch > max_batch
                   (np.ones((0, 64), np.float32),),  # batch 0
                   (x.view(np.matrix),),             # an ndarray subclass
                   (memoryview(x),),                 # a buffer, not an array
                   (torch.from_numpy(x),),           # torch
                   (x, x)]:                          # count
        assert _lean.call(state, inputs) is None, inputs


def test_save_and_load_round_trip(mlp, tmp_path):
    _, compiled = mlp
    path = compiled.save(tmp_path / "mlp.so")
    assert sorted(os.listdir(tmp_path)) == ["mlp.h", "mlp.so"]
    loaded = cuvil.load(path)
    assert loaded.inputs == compiled.inputs and loaded.max_batch == 16
    x = np.ones((2, 64), np.float32)
    np.testing.assert_array_equal(loaded(x), compiled(x))
    # A loaded model saves too (the .so and its header are copied).
    loaded.save(tmp_path / "copy.so")
    assert (tmp_path / "copy.h").read_text() == (tmp_path / "mlp.h").read_text()


def test_failed_save_leaves_nothing(mlp, tmp_path):
    _, compiled = mlp
    with pytest.raises(OSError):
        compiled.save(tmp_path / "missing-folder" / "mlp.so")
    assert os.listdir(tmp_path) == []


def test_load_and_call_without_torch(mlp, tmp_path, package_dir):
    _, compiled = mlp
    path = compiled.save(tmp_path / "mlp.so")
    x = np.linspace(-1, 1, 2 * 64, dtype=np.float32).reshape(2, 64)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", compiled(x))
    script = f"""
import sys
sys.modules["torch"] = None  # any `import torch` now fails
sys.path.insert(0, {package_dir!r})
import numpy as np
import cuvil
model = cuvil.load({os.fspath(path)!r})
y = model(np.load({os.fspath(tmp_path / 'x.npy')!r}))
assert np.array_equal(y, np.load({os.fspath(tmp_path / 'y.npy')!r}))
assert "cuvil._C" not in sys.modules, "loading must not need the compiler"
print("ok without torch")
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stderr
    assert "ok without torch" in result.stdout


def test_ctypes_example_runs_without_cuvil(tmp_path):
    @torch.jit.script
    def simple_classifier(x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x @ torch.eye(10) * 0.1, dim=1)

    compiled = cuvil.compile(simple_classifier,
                             [("x", torch.float32, (1, 10))])
    path = compiled.save(tmp_path / "classifier.so")
    example = os.path.join(os.path.dirname(__file__), "..", "..", "examples",
                           "ctypes_example.py")
    # -I: isolated, so nothing but the standard library and Debian's numpy.
    result = subprocess.run([sys.executable, "-I", example, os.fspath(path)],
                            capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    x = np.random.default_rng(0).standard_normal((1, 10)).astype(np.float32)
    expected = simple_classifier(torch.from_numpy(x)).numpy()
    printed = result.stdout.split("output:")[1].replace("[", " ").replace("]", " ")
    np.testing.assert_allclose(np.array(printed.split(), np.float32),
                               expected.ravel(), atol=1e-4)
